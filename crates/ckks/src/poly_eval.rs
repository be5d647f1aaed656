//! Polynomial evaluation on CKKS ciphertexts, in the power basis or the Chebyshev basis of an
//! interval `[a, b]`, by a Paterson–Stockmeyer variant of least depth; several polynomials share
//! one set of powers.
//!
//! # The algorithm
//!
//! A polynomial `p = Σ c_i·B_i` (`B_i = x^i`, or `B_i = T_i(y)` with `y = (2x − a − b)/(b − a)`)
//! of degree `d` is split recursively at powers of two: with `M` the largest power of two
//! `≤ d`, `p = q·B_M + r` (`deg q = d − M < M`, `deg r < M`). In the power basis `q` and `r` are
//! the upper and lower coefficients; in the Chebyshev basis `T_{M+n} = 2·T_M·T_n − T_{M−n}`
//! gives `q = c_M + Σ_{n≥1} 2·c_{M+n}·T_n` and `r_{M−n} = c_{M−n} − c_{M+n}`. The recursion
//! stops at a constant, or at a **leaf**: a block of degree `< k` (the baby step) evaluated as
//! one linear combination of the **baby steps** `B_1 … B_{k−1}`
//! ([`fhe_math::backend::RingBackend::linear_combination`]: all leaves of all polynomials in a
//! single call). The **giant steps** are the powers of two `B_k, B_{2k}, …` (rounded up to
//! powers of two), each by one squaring: `x^{2m} = (x^m)²`, `T_{2m} = 2·T_m² − 1`; the baby steps
//! by `x^i = x^a·x^{i−a}` and `T_i = 2·T_a·T_{i−a} − T_{2a−i}` (`a` the largest power of two
//! below `i`), so `B_i` has depth `⌈log2 i⌉`.
//!
//! # Depth
//!
//! In CKKS a multiplication by a non-integer constant consumes a level (its rescale), so a
//! leaf costs `λ = ⌈log2(k − 1)⌉ + 1` levels and `c·B_M` costs `log2 M + 1`. Each polynomial is
//! given the budget `D = ⌈log2(d_max + 1)⌉`, the least depth of any evaluation of a degree-`d`
//! polynomial with rescaled constants; a block of degree `< k` becomes a leaf only when `λ`
//! fits its budget, else it is split further (`q` gets the budget minus one, `r` keeps it).
//! Splitting always fits (`B_M` has depth `log2 M ≤ D − 1` and `deg q + 1 ≤ M`), so every
//! plan reaches depth `D`; [`PolyPlan::new`] tries every baby step `k` and keeps the fewest
//! ciphertext products at that depth ([`PolyPlan::with_extra_depth`] trades levels for
//! products with a larger budget). The Chebyshev change of variable `y = αx + β` adds one
//! level when `α = 2/(b − a)` is not an integer (it is free on `[-1, 1]`).
//!
//! # Fused lower parts
//!
//! In `q·B_m + r` the lower part `r` is added to the tensor product before its rescale
//! ([`Evaluator::mul_add_relin_rescale`]) wherever `r` is at the product's level or above: a
//! leaf is formed for it at scale `Δ_l²` directly (its coefficients at `Δ_l²/Δ_j` for a baby
//! step of scale `Δ_j`, the surplus limbs dropped), a subtree is dropped to level `l` and
//! multiplied by the integer `round(Δ_l²/Δ_r)`. Likewise `T_i = 2·(T_a·T_b − T_c/2)`: `T_c`
//! negated, declared at twice its scale and multiplied by an integer joins its product. The
//! leaves read baby steps above their common level with the top limbs dropped (exact; the
//! coefficients absorb each one's scale). The product's one rescale then brings these down
//! too: at degree 111 (bootstrapping's cosine) 13 standalone rescales instead of 35.
//!
//! # Scales
//!
//! All ciphertexts stay on the parameter set's scale ladder (`Δ_l` at level `l`, with
//! `Δ_{l−1} = Δ_l² / q_l`): the input must have its level's ladder scale. A leaf at level `l`
//! is `Σ_i round(c_i·Δ_l)·B_i + round(c_0·Δ_l²)` (scale `Δ_l²`, the coefficients passed per
//! limb as canonical residues), rescaled by `q_l` to exactly `Δ_{l−1}`; products of ladder
//! ciphertexts rescale onto the ladder too. Aligning levels uses
//! [`Evaluator::drop_to_level`] (one rescale for any distance), whose scale
//! `Δ_l·M/q_{l'+1}` (`M = round(Δ_{l'}·q_{l'+1}/Δ_l)`) differs from the ladder's `Δ_{l'}` by a
//! relative `≤ 2^-40`; it is then recorded as the ladder scale (that discrepancy is a message
//! error far below the scheme's noise).
//!
//! # Caller's responsibility
//!
//! The approximation is only meaningful for slots inside the declared interval `[a, b]`
//! (`[-1, 1]` of `y`): outside it Chebyshev polynomials grow like `(|y| + √(y² − 1))^d` and the
//! result may overflow the scale. The evaluator cannot see the slots and does not check this.

use crate::error::{Error, Result};
use crate::evaluator::{Evaluator, SCALE_TOLERANCE};
use fhe_math::backend::KeySwitchBackend;
use rlwe::{Ciphertext, RelinKey};
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};

/// The basis a [`Polynomial`]'s coefficients refer to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// `p(x) = Σ c_i·x^i`.
    Power,
    /// `p(x) = Σ c_i·T_i(y)`, `y = (2x − a − b)/(b − a)`, for inputs in `[a, b]`.
    Chebyshev {
        /// Lower end of the interval.
        a: f64,
        /// Upper end of the interval.
        b: f64,
    },
}

/// A real polynomial in the power or Chebyshev basis (trailing zero coefficients dropped,
/// at least one coefficient kept).
#[derive(Clone, Debug, PartialEq)]
pub struct Polynomial {
    basis: Basis,
    coeffs: Vec<f64>,
}

fn invalid(reason: impl Into<String>) -> Error {
    Error::InvalidPolynomial {
        reason: reason.into(),
    }
}

impl Polynomial {
    /// `Σ coeffs[i]·x^i`. Errors: no coefficient, a non-finite coefficient.
    pub fn power(coeffs: Vec<f64>) -> Result<Self> {
        Self::new(Basis::Power, coeffs)
    }

    /// `Σ coeffs[i]·T_i((2x − a − b)/(b − a))` for `x` in `[a, b]`. Errors: no coefficient, a
    /// non-finite coefficient, `a`, `b` not finite or `a ≥ b`.
    pub fn chebyshev(coeffs: Vec<f64>, a: f64, b: f64) -> Result<Self> {
        Self::new(Basis::Chebyshev { a, b }, coeffs)
    }

    fn new(basis: Basis, mut coeffs: Vec<f64>) -> Result<Self> {
        if coeffs.is_empty() {
            return Err(invalid("no coefficient given"));
        }
        if let Some(i) = coeffs.iter().position(|c| !c.is_finite()) {
            return Err(invalid(format!(
                "coefficient {i} is not finite ({})",
                coeffs[i]
            )));
        }
        if let Basis::Chebyshev { a, b } = basis
            && !(a.is_finite() && b.is_finite() && a < b)
        {
            return Err(invalid(format!(
                "the interval [{a}, {b}] is not a finite interval with a < b"
            )));
        }
        let len = coeffs.iter().rposition(|&c| c != 0.0).map_or(1, |i| i + 1);
        coeffs.truncate(len);
        Ok(Polynomial { basis, coeffs })
    }

    /// The Chebyshev interpolant of `f` on `[a, b]` of degree `degree`: the polynomial through
    /// `f` at the `n = degree + 1` Chebyshev nodes `x_j = cos(π(j + ½)/n)` (mapped to `[a, b]`),
    /// `c_i = (2/n)·Σ_j f(x_j)·cos(π·i·(j + ½)/n)` (`c_0` halved). For a smooth `f` its error
    /// is close to the best uniform approximation's. Errors as [`Polynomial::chebyshev`], and
    /// a non-finite value of `f`.
    pub fn interpolate_chebyshev(
        f: impl Fn(f64) -> f64,
        a: f64,
        b: f64,
        degree: usize,
    ) -> Result<Self> {
        let n = degree + 1;
        let angle = |j: usize| std::f64::consts::PI * (j as f64 + 0.5) / n as f64;
        let values: Vec<f64> = (0..n)
            .map(|j| f((angle(j).cos() * (b - a) + a + b) / 2.0))
            .collect();
        let coeffs = (0..n)
            .map(|i| {
                let s: f64 = (0..n)
                    .map(|j| values[j] * (i as f64 * angle(j)).cos())
                    .sum();
                s * if i == 0 { 1.0 } else { 2.0 } / n as f64
            })
            .collect();
        Self::chebyshev(coeffs, a, b)
    }

    /// The degree (index of the last non-zero coefficient; 0 for a constant).
    pub fn degree(&self) -> usize {
        self.coeffs.len() - 1
    }

    /// The coefficients, constant first.
    pub fn coeffs(&self) -> &[f64] {
        &self.coeffs
    }

    /// The basis.
    pub fn basis(&self) -> Basis {
        self.basis
    }

    /// `p(x)` on the host (Horner; Clenshaw in the Chebyshev basis).
    pub fn eval(&self, x: f64) -> f64 {
        match self.basis {
            Basis::Power => self.coeffs.iter().rev().fold(0.0, |acc, &c| acc * x + c),
            Basis::Chebyshev { .. } => {
                let (alpha, beta) = self.affine();
                let y = alpha * x + beta;
                let (mut b1, mut b2) = (0.0, 0.0);
                for &c in self.coeffs[1..].iter().rev() {
                    (b1, b2) = (c + 2.0 * y * b1 - b2, b1);
                }
                self.coeffs[0] + y * b1 - b2
            }
        }
    }

    /// `(α, β)` with `y = αx + β` the variable of the basis.
    fn affine(&self) -> (f64, f64) {
        match self.basis {
            Basis::Power => (1.0, 0.0),
            Basis::Chebyshev { a, b } => (2.0 / (b - a), -(a + b) / (b - a)),
        }
    }

    fn is_chebyshev(&self) -> bool {
        matches!(self.basis, Basis::Chebyshev { .. })
    }
}

/// How the change of variable `y = αx + β` is done: nothing, an exact integer multiply, or a
/// constant multiply and rescale (one level).
fn affine_depth(alpha: f64) -> usize {
    usize::from(!is_small_integer(alpha))
}

fn is_small_integer(v: f64) -> bool {
    v.fract() == 0.0 && v.abs() <= (1u64 << 31) as f64
}

/// `⌈log2 n⌉` (0 for `n ≤ 1`): the depth of `B_n`.
fn ceil_log2(n: usize) -> usize {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as usize
    }
}

/// The recursion tree of one polynomial (module documentation).
enum Node {
    Const(f64),
    /// Index into the leaf list.
    Leaf(usize),
    /// `q·B_m + r`.
    Split {
        m: usize,
        q: Box<Node>,
        r: Box<Node>,
    },
}

/// `(q, r)` with `p = q·B_m + r` (`m ≤ deg p < 2m`).
fn split_at(c: &[f64], m: usize, chebyshev: bool) -> (Vec<f64>, Vec<f64>) {
    let mut r = c[..m].to_vec();
    let mut q = c[m..].to_vec();
    if chebyshev {
        for n in 1..q.len() {
            r[m - n] -= c[m + n];
            q[n] *= 2.0;
        }
    }
    (q, r)
}

/// The leaf depth `λ` for baby step `k ≥ 2`.
fn leaf_depth(k: usize) -> usize {
    ceil_log2(k - 1) + 1
}

fn build(
    coeffs: &[f64],
    budget: usize,
    k: usize,
    chebyshev: bool,
    leaves: &mut Vec<Vec<f64>>,
) -> Node {
    let len = coeffs.iter().rposition(|&c| c != 0.0).map_or(1, |i| i + 1);
    let c = &coeffs[..len];
    let d = len - 1;
    if d == 0 {
        return Node::Const(c[0]);
    }
    if d < k && leaf_depth(k) <= budget {
        let mut v = c.to_vec();
        v.resize(k, 0.0);
        leaves.push(v);
        return Node::Leaf(leaves.len() - 1);
    }
    let m = 1usize << (usize::BITS - 1 - d.leading_zeros());
    let (q, r) = split_at(c, m, chebyshev);
    Node::Split {
        m,
        q: Box::new(build(&q, budget.saturating_sub(1), k, chebyshev, leaves)),
        r: Box::new(build(&r, budget, k, chebyshev, leaves)),
    }
}

impl Node {
    /// Levels consumed below the basis variable (`None` for a constant).
    fn depth(&self, k: usize) -> Option<usize> {
        match self {
            Node::Const(_) => None,
            Node::Leaf(_) => Some(leaf_depth(k)),
            Node::Split { m, q, r } => {
                let qd = q.depth(k).unwrap_or(0).max(ceil_log2(*m)) + 1;
                Some(r.depth(k).map_or(qd, |rd| rd.max(qd)))
            }
        }
    }

    /// Ciphertext products of the splits (a constant `q` is a constant multiply instead).
    fn products(&self) -> usize {
        match self {
            Node::Split { q, r, .. } => {
                usize::from(!matches!(**q, Node::Const(_))) + q.products() + r.products()
            }
            _ => 0,
        }
    }

    /// The largest power `B_m` split at (0 if none).
    fn top_power(&self) -> usize {
        match self {
            Node::Split { m, q, r } => (*m).max(q.top_power()).max(r.top_power()),
            _ => 0,
        }
    }
}

/// The trees of several polynomials, their leaves, and the powers they need.
struct Forest {
    roots: Vec<Node>,
    leaves: Vec<Vec<f64>>,
    /// The powers `B_i` to compute (`1` always), in increasing order.
    powers: Vec<usize>,
    depth: usize,
    products: usize,
}

impl Forest {
    fn new(polys: &[&[f64]], chebyshev: bool, k: usize, budget: usize) -> Forest {
        let mut leaves = Vec::new();
        let roots: Vec<Node> = polys
            .iter()
            .map(|c| build(c, budget, k, chebyshev, &mut leaves))
            .collect();
        let mut powers = vec![1usize];
        if !leaves.is_empty() {
            powers.extend(2..k);
        }
        let top = roots.iter().map(Node::top_power).max().unwrap_or(0);
        let mut p = 2;
        while p <= top {
            if !powers.contains(&p) {
                powers.push(p);
            }
            p *= 2;
        }
        powers.sort_unstable();
        // A constant polynomial still yields a ciphertext: `0·B_1 + c`, one level.
        let depth = roots
            .iter()
            .map(|n| n.depth(k).unwrap_or(1))
            .max()
            .unwrap_or(0);
        let products = powers.len() - 1 + roots.iter().map(Node::products).sum::<usize>();
        Forest {
            roots,
            leaves,
            powers,
            depth,
            products,
        }
    }
}

/// The shape of an evaluation: baby step, depth and ciphertext products, for dense
/// polynomials of the given degrees (sparse ones need no more of either).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolyPlan {
    baby_step: usize,
    max_degree: usize,
    budget: usize,
    affine_depth: usize,
    depth: usize,
    multiplications: usize,
}

/// Dense coefficients of degree `d` (no cancellation in the Chebyshev split).
fn dense(d: usize) -> Vec<f64> {
    (0..=d)
        .map(|i| 1.0 + i as f64 * std::f64::consts::SQRT_2)
        .collect()
}

fn top_degree(degrees: &[usize]) -> Result<usize> {
    degrees
        .iter()
        .copied()
        .max()
        .ok_or_else(|| invalid("no polynomial given"))
}

/// The least depth of a degree-`top` polynomial with rescaled constants (basis variable
/// given): `⌈log2(top + 1)⌉`, at least 1.
fn least_depth(top: usize) -> usize {
    ceil_log2(top + 1).max(1)
}

impl PolyPlan {
    /// The plan of least depth, `⌈log2(d + 1)⌉` (plus one for a Chebyshev interval whose
    /// `2/(b − a)` is not an integer), and at that depth the fewest ciphertext products, over
    /// every baby step `k = 2..=d + 1`, for polynomials in `basis` of `degrees` sharing their
    /// powers. Errors: no degree given.
    pub fn new(basis: Basis, degrees: &[usize]) -> Result<PolyPlan> {
        Self::with_extra_depth(basis, degrees, 0)
    }

    /// The plan with the fewest ciphertext products among those of depth at most the least
    /// plus `extra` (e.g. degree 31: 13 products at depth 5, 11 at depth 6). Errors: no degree.
    pub fn with_extra_depth(basis: Basis, degrees: &[usize], extra: usize) -> Result<PolyPlan> {
        let top = top_degree(degrees)?;
        let budget = least_depth(top) + extra;
        Ok((2..=top.max(1) + 1)
            .map(|k| Self::build(basis, degrees, top, k, budget))
            .min_by_key(|p| (p.multiplications, p.depth, p.baby_step))
            .expect("at least one baby step"))
    }

    /// The plan of least depth with baby step `k ≥ 2` (leaves that do not fit the depth are
    /// split further). Errors: no degree, `k < 2`.
    pub fn with_baby_step(basis: Basis, degrees: &[usize], k: usize) -> Result<PolyPlan> {
        if k < 2 {
            return Err(invalid(format!(
                "the baby step must be at least 2, not {k}"
            )));
        }
        let top = top_degree(degrees)?;
        Ok(Self::build(basis, degrees, top, k, least_depth(top)))
    }

    fn build(basis: Basis, degrees: &[usize], top: usize, k: usize, budget: usize) -> PolyPlan {
        let coeffs: Vec<Vec<f64>> = degrees.iter().map(|&d| dense(d)).collect();
        let refs: Vec<&[f64]> = coeffs.iter().map(Vec::as_slice).collect();
        let chebyshev = matches!(basis, Basis::Chebyshev { .. });
        let forest = Forest::new(&refs, chebyshev, k, budget);
        let alpha = match basis {
            Basis::Power => 1.0,
            Basis::Chebyshev { a, b } => 2.0 / (b - a),
        };
        let affine_depth = affine_depth(alpha);
        PolyPlan {
            baby_step: k,
            max_degree: top,
            budget,
            affine_depth,
            depth: forest.depth + affine_depth,
            multiplications: forest.products,
        }
    }

    /// The baby step `k`: leaves are combinations of `B_1 … B_{k−1}`.
    pub fn baby_step(&self) -> usize {
        self.baby_step
    }

    /// The levels the evaluation consumes.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The ciphertext products (each relinearized and rescaled): powers and splits.
    pub fn multiplications(&self) -> usize {
        self.multiplications
    }
}

/// Residues of `round(v)` in the active limbs of `level` (an error beyond `2^126`).
pub(crate) fn residues<B: KeySwitchBackend>(
    be: &B,
    level: usize,
    value: f64,
    scale: f64,
) -> Result<Vec<u64>> {
    let v = (value * scale).round();
    if !v.is_finite() || v.abs() >= 2f64.powi(126) {
        return Err(Error::ValueTooLarge { value, scale });
    }
    let v = v as i128;
    Ok((0..=level)
        .map(|s| v.rem_euclid(be.ring().modulus(s).value() as i128) as u64)
        .collect())
}

/// One evaluation: the powers, their lowered copies, the product count.
struct State<'a, B: KeySwitchBackend> {
    ev: &'a Evaluator<B>,
    rlk: &'a RelinKey<B>,
    chebyshev: bool,
    powers: BTreeMap<usize, Ciphertext<B>>,
    lowered: HashMap<(usize, usize), Ciphertext<B>>,
    products: Cell<usize>,
}

impl<'a, B: KeySwitchBackend> State<'a, B> {
    fn be(&self) -> &B {
        self.ev.encoder().context().backend()
    }

    fn ladder(&self, level: usize) -> Result<f64> {
        self.ev.encoder().context().params().scale(level)
    }

    /// Records the ladder scale of `ct`'s level (after checking it is within tolerance).
    fn snap(&self, ct: &mut Ciphertext<B>) -> Result<()> {
        let s = self.ladder(ct.level())?;
        if ((ct.scale() - s) / s).abs() > 2.0 * SCALE_TOLERANCE {
            return Err(Error::ScaleMismatch {
                op: "evaluate a polynomial",
                left: ct.scale(),
                right: s,
            });
        }
        let meta = ct.meta().with_scale(s);
        Ok(ct.modify(self.be(), meta, |_| Ok::<(), rlwe::Error>(()))?)
    }

    /// `ct` brought down to `level` on the ladder in one rescale
    /// ([`Evaluator::drop_to_level`]), its scale recorded as the ladder's (so the round-off
    /// never accumulates).
    fn lower(&self, ct: &Ciphertext<B>, level: usize) -> Result<Ciphertext<B>> {
        let mut out = self.ev.drop_to_level(ct, level)?;
        self.snap(&mut out)?;
        Ok(out)
    }

    /// Makes `B_i` available at `level` ([`State::power_ref`]), lowered once and kept.
    fn power_at(&mut self, i: usize, level: usize) -> Result<()> {
        if self.powers[&i].level() != level && !self.lowered.contains_key(&(i, level)) {
            let c = self.lower(&self.powers[&i], level)?;
            self.lowered.insert((i, level), c);
        }
        Ok(())
    }

    /// `B_i` at `level` (after [`State::power_at`]).
    fn power_ref(&self, i: usize, level: usize) -> &Ciphertext<B> {
        if self.powers[&i].level() == level {
            &self.powers[&i]
        } else {
            &self.lowered[&(i, level)]
        }
    }

    /// `ct + c` (the constant at `ct`'s scale).
    fn add_constant(&self, ct: &mut Ciphertext<B>, c: f64) -> Result<()> {
        if c == 0.0 {
            return Ok(());
        }
        let be = self.be();
        let res = residues(be, ct.level(), c, ct.scale())?;
        Ok(ct.modify(be, ct.meta(), |p| be.add_scalar_assign(p, 0, &res))?)
    }

    /// `a` at `level`: itself, or its copy lowered by [`State::lower`] and kept in `held`.
    fn at_level<'c>(
        &self,
        a: &'c Ciphertext<B>,
        level: usize,
        held: &'c mut Option<Ciphertext<B>>,
    ) -> Result<&'c Ciphertext<B>> {
        if a.level() > level {
            Ok(held.insert(self.lower(a, level)?))
        } else {
            Ok(a)
        }
    }

    /// `a·b` relinearized and rescaled, at the lower of their levels.
    fn product(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        let level = a.level().min(b.level());
        let (mut la, mut lb) = (None, None);
        let a = self.at_level(a, level, &mut la)?;
        let b = self.at_level(b, level, &mut lb)?;
        self.products.set(self.products.get() + 1);
        self.ev.mul_relin_rescale(a, b, self.rlk)
    }

    /// `a·b + c` with `c` joined before the rescale ([`Evaluator::mul_add_relin_rescale`]):
    /// `a`, `b` brought to their lower level `l` as in [`State::product`], `c` (at level `l`
    /// or above) dropped to `l` (exact) and, unless its scale is already the product's,
    /// multiplied by the integer `round(Δ_l² / Δ_c)`: the one rescale of the product then
    /// also brings `c` down, where a separate [`State::lower`] would take a rescale of its
    /// own. `Err(c)` (nothing done) when `c` is below `l` or that integer does not fit: the
    /// caller adds `c` after the product.
    fn product_add(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        mut c: Ciphertext<B>,
    ) -> Result<std::result::Result<Ciphertext<B>, Ciphertext<B>>> {
        let level = a.level().min(b.level());
        if c.level() < level {
            return Ok(Err(c));
        }
        let target = self.ladder(level)?.powi(2);
        let m = (target / c.scale()).round();
        let rescaled = ((c.scale() - target) / target).abs() > SCALE_TOLERANCE;
        if rescaled && !(1.0..2f64.powi(62)).contains(&m) {
            return Ok(Err(c));
        }
        let be = self.be();
        if c.level() > level {
            c.modify(be, c.meta().with_level(level), |p| be.set_level(p, level))?;
        }
        if rescaled {
            let scalars = rlwe::ciphertext::scalar_residues(be.ring(), level, m as i64);
            let meta = c.meta().with_scale(c.scale() * m);
            c.modify(be, meta, |p| be.mul_scalar_assign(p, &scalars))?;
        }
        let (mut la, mut lb) = (None, None);
        let a = self.at_level(a, level, &mut la)?;
        let b = self.at_level(b, level, &mut lb)?;
        self.products.set(self.products.get() + 1);
        Ok(Ok(self.ev.mul_add_relin_rescale(a, b, &c, self.rlk)?))
    }

    /// `a ± b` at the lower of their levels.
    fn sum(&self, a: Ciphertext<B>, b: &Ciphertext<B>, subtract: bool) -> Result<Ciphertext<B>> {
        let level = a.level().min(b.level());
        let mut a = if a.level() > level {
            self.lower(&a, level)?
        } else {
            a
        };
        let lb;
        let b = if b.level() > level {
            lb = self.lower(b, level)?;
            &lb
        } else {
            b
        };
        if subtract {
            self.ev.sub_assign(&mut a, b)?;
        } else {
            self.ev.add_assign(&mut a, b)?;
        }
        Ok(a)
    }

    /// Computes `B_i` for every `i` of `powers` (increasing, `B_1` present). Every power an
    /// operand needs at a lower level is lowered once ([`State::power_at`]) and kept for the
    /// other powers and the leaves that need it there (the same words as lowering it each time).
    fn compute_powers(&mut self, powers: &[usize]) -> Result<()> {
        for &i in powers.iter().filter(|&&i| i >= 2) {
            let a = 1usize << (usize::BITS - 1 - (i - 1).leading_zeros());
            let level = self.powers[&a].level().min(self.powers[&(i - a)].level());
            self.power_at(a, level)?;
            self.power_at(i - a, level)?;
            let (pa, pb) = (self.power_ref(a, level), self.power_ref(i - a, level));
            let c = 2 * a - i;
            // T_i = 2·(T_a·T_{i−a} − T_c/2): −T_c/2 (T_c negated, its scale doubled) joins the
            // product before the rescale ([`State::product_add`]) instead of a lowered T_c
            // after it.
            let fused = if self.chebyshev && c > 0 && self.powers[&c].level() >= level {
                let be = self.be();
                let mut half = self.powers[&c].duplicate(be)?;
                let meta = half.meta().with_scale(2.0 * half.scale());
                half.modify(be, meta, |q| be.neg_assign(q))?;
                match self.product_add(pa, pb, half)? {
                    Ok(p) => Some(self.ev.mul_int(&p, 2)?),
                    Err(_) => None,
                }
            } else {
                None
            };
            let p = match fused {
                Some(p) => p,
                None if !self.chebyshev => self.product(pa, pb)?,
                None => {
                    // T_i = 2·T_a·T_{i−a} − T_{2a−i} (T_0 = 1).
                    let mut p = self.ev.mul_int(&self.product(pa, pb)?, 2)?;
                    match c {
                        0 => self.add_constant(&mut p, -1.0)?,
                        c => {
                            let level = p.level().min(self.powers[&c].level());
                            self.power_at(c, level)?;
                            p = self.sum(p, self.power_ref(c, level), true)?;
                        }
                    }
                    p
                }
            };
            self.powers.insert(i, p);
        }
        Ok(())
    }

    /// `Σ_j rows[r][j]·inputs[j] + constants[r]` for each row `r`, in one linear combination
    /// at the inputs' common level `l` (the products at `Δ_l²`: coefficients at `Δ_l²/Δ_j` for
    /// an input of scale `Δ_j`, constants at `Δ_l²`), each rescaled to `Δ_{l−1}`.
    fn combine(
        &self,
        inputs: &[&Ciphertext<B>],
        rows: &[Vec<f64>],
        constants: &[f64],
    ) -> Result<Vec<Ciphertext<B>>> {
        let targets = vec![None; rows.len()];
        self.combine_to(inputs, rows, constants, &targets)
    }

    /// [`State::combine`] with a target per row: `None` as there (rescaled to `Δ_{l−1}` at
    /// level `l − 1`); `Some(t)` (`t < l`) a row formed at scale `Δ_t²` (coefficients at
    /// `Δ_t²/Δ_j`, constant at `Δ_t²`) and dropped to level `t` without a rescale: the
    /// addend of a product at level `t` ([`State::product_add`]).
    fn combine_to(
        &self,
        inputs: &[&Ciphertext<B>],
        rows: &[Vec<f64>],
        constants: &[f64],
        targets: &[Option<usize>],
    ) -> Result<Vec<Ciphertext<B>>> {
        let be = self.be();
        let level = inputs[0].level();
        let delta = self.ladder(level)?;
        let mut coeffs = Vec::with_capacity(rows.len() * inputs.len() * (level + 1));
        let mut scales = Vec::with_capacity(rows.len());
        for (row, target) in rows.iter().zip(targets) {
            let out_scale = match target {
                None => delta * delta,
                Some(t) => self.ladder(*t)?.powi(2),
            };
            scales.push(out_scale);
            // Each input at its own scale (a power read at a lower level keeps its level's).
            for (&c, input) in row.iter().zip(inputs) {
                coeffs.extend(residues(be, level, c, out_scale / input.scale())?);
            }
        }
        let refs: Vec<&B::Poly> = inputs.iter().map(|c| c.poly()).collect();
        let polys = be.linear_combination(&refs, &coeffs, rows.len())?;
        polys
            .into_iter()
            .zip(constants)
            .zip(scales.into_iter().zip(targets))
            .map(|((poly, &c), (scale, target))| {
                let mut ct = Ciphertext::new(be, poly, inputs[0].meta().with_scale(scale))?;
                self.add_constant(&mut ct, c)?;
                match *target {
                    None => self.ev.rescale(&ct),
                    Some(t) => {
                        ct.modify(be, ct.meta().with_level(t), |p| be.set_level(p, t))?;
                        Ok(ct)
                    }
                }
            })
            .collect()
    }

    /// The leaves (coefficient vectors of length `k`): one linear combination of
    /// `B_1 … B_{k−1}` read at their common level, each leaf rescaled or, where `targets`
    /// says, formed as a product's addend ([`State::combine_to`]).
    fn leaves(
        &mut self,
        leaves: &[Vec<f64>],
        k: usize,
        targets: &[Option<usize>],
    ) -> Result<Vec<Ciphertext<B>>> {
        if leaves.is_empty() {
            return Ok(Vec::new());
        }
        let level = self.leaf_level(k);
        let be = self.be();
        // A power above the common level is read there with its top limbs dropped (exact, its
        // own scale kept; the coefficients absorb it), not lowered by a rescale.
        let dropped: Vec<Option<Ciphertext<B>>> = (1..k)
            .map(|i| {
                let p = &self.powers[&i];
                if p.level() == level {
                    return Ok(None);
                }
                let mut d = p.duplicate(be)?;
                d.modify(be, d.meta().with_level(level), |q| be.set_level(q, level))?;
                Ok(Some(d))
            })
            .collect::<Result<_>>()?;
        let inputs: Vec<&Ciphertext<B>> = (1..k)
            .zip(&dropped)
            .map(|(i, d)| d.as_ref().unwrap_or(&self.powers[&i]))
            .collect();
        let rows: Vec<Vec<f64>> = leaves.iter().map(|l| l[1..].to_vec()).collect();
        let constants: Vec<f64> = leaves.iter().map(|l| l[0]).collect();
        self.combine_to(&inputs, &rows, &constants, targets)
    }

    /// The level the leaves' linear combination runs at: the lowest of `B_1 … B_{k−1}`.
    fn leaf_level(&self, k: usize) -> usize {
        (1..k)
            .map(|i| self.powers[&i].level())
            .min()
            .expect("k ≥ 2")
    }

    /// The level [`State::eval`] leaves `node`'s value at (`None` for a constant), from the
    /// powers' levels and the leaves' `leaf_level`; marks in `targets` each leaf that
    /// [`State::eval`] adds into its sibling product (`Some(l)`: the product's level).
    fn planned_level(
        &self,
        node: &Node,
        leaf_level: usize,
        targets: &mut [Option<usize>],
    ) -> Option<usize> {
        match node {
            Node::Const(_) => None,
            // (Saturating: a plan deeper than the input is refused before any evaluation.)
            Node::Leaf(_) => Some(leaf_level.saturating_sub(1)),
            Node::Split { m, q, r } => {
                let power = self.powers[m].level();
                let (level, r_level) = match self.planned_level(q, leaf_level, targets) {
                    None => (
                        power.saturating_sub(1),
                        self.planned_level(r, leaf_level, targets),
                    ),
                    Some(ql) => {
                        let lp = ql.min(power);
                        if let Node::Leaf(i) = **r {
                            targets[i] = Some(lp);
                            return Some(lp.saturating_sub(1));
                        }
                        (
                            lp.saturating_sub(1),
                            self.planned_level(r, leaf_level, targets),
                        )
                    }
                };
                Some(r_level.map_or(level, |rl| rl.min(level)))
            }
        }
    }

    /// The value of `node` (a constant stays a constant). A giant power multiplied at a lower
    /// level is lowered once for all the products that need it there. The lower part `r` of
    /// `q·B_m + r` joins the product before its rescale where it can
    /// ([`State::product_add`]; a leaf was formed for it, [`State::planned_level`]).
    fn eval(&mut self, node: &Node, leaves: &mut [Option<Ciphertext<B>>]) -> Result<Value<B>> {
        match node {
            Node::Const(c) => Ok(Value::Const(*c)),
            Node::Leaf(i) => Ok(Value::Ct(leaves[*i].take().expect("each leaf used once"))),
            Node::Split { m, q, r } => {
                let qc = match self.eval(q, leaves)? {
                    Value::Const(c) => {
                        let qg = self
                            .combine(&[&self.powers[m]], &[vec![c]], &[0.0])?
                            .remove(0);
                        let rest = self.eval(r, leaves)?;
                        return self.add_value(qg, rest);
                    }
                    Value::Ct(qc) => qc,
                };
                let level = qc.level().min(self.powers[m].level());
                self.power_at(*m, level)?;
                let rest = match self.eval(r, leaves)? {
                    Value::Ct(rc) => match self.product_add(&qc, self.power_ref(*m, level), rc)? {
                        Ok(fused) => return Ok(Value::Ct(fused)),
                        Err(rc) => Value::Ct(rc),
                    },
                    constant => constant,
                };
                let qg = self.product(&qc, self.power_ref(*m, level))?;
                self.add_value(qg, rest)
            }
        }
    }

    /// `qg + r` for a node's two parts (a constant added at `qg`'s scale).
    fn add_value(&self, mut qg: Ciphertext<B>, r: Value<B>) -> Result<Value<B>> {
        match r {
            Value::Const(c) => {
                self.add_constant(&mut qg, c)?;
                Ok(Value::Ct(qg))
            }
            Value::Ct(rc) => Ok(Value::Ct(self.sum(qg, &rc, false)?)),
        }
    }
}

/// A node's value: a ciphertext, or a constant not yet applied.
enum Value<B: KeySwitchBackend> {
    Const(f64),
    Ct(Ciphertext<B>),
}

impl<B: KeySwitchBackend> Evaluator<B> {
    /// `p(x)` slot-wise ([`crate::poly_eval`]), with the plan of [`PolyPlan::new`]: it consumes
    /// [`PolyPlan::depth`] levels and returns a ciphertext on the ladder scale of its level.
    /// Slots must lie in the polynomial's interval (the caller's responsibility).
    pub fn evaluate_polynomial(
        &self,
        x: &Ciphertext<B>,
        p: &Polynomial,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        let mut out = self.evaluate_polynomials(x, std::slice::from_ref(p), rlk)?;
        Ok(out.remove(0))
    }

    /// `p_i(x)` for each polynomial (all in one basis), sharing the powers and one linear
    /// combination for all leaves; one ciphertext per polynomial, in order, all at one level.
    pub fn evaluate_polynomials(
        &self,
        x: &Ciphertext<B>,
        ps: &[Polynomial],
        rlk: &RelinKey<B>,
    ) -> Result<Vec<Ciphertext<B>>> {
        let first = ps.first().ok_or_else(|| invalid("no polynomial given"))?;
        let degrees: Vec<usize> = ps.iter().map(Polynomial::degree).collect();
        let plan = PolyPlan::new(first.basis(), &degrees)?;
        Ok(self.evaluate_polynomials_with_plan(x, ps, &plan, rlk)?.0)
    }

    /// [`Evaluator::evaluate_polynomials`] with a given plan (e.g. another baby step from
    /// [`PolyPlan::with_baby_step`]); also returns the ciphertext products made (at most
    /// [`PolyPlan::multiplications`]).
    ///
    /// Errors: no polynomial, polynomials in different bases, a degree above the plan's
    /// ([`Error::InvalidPolynomial`]); more levels needed than `x` has
    /// ([`Error::PolynomialTooDeep`]); `x` not at its level's ladder scale
    /// ([`Error::ScaleMismatch`]); a coefficient too large for the scale
    /// ([`Error::ValueTooLarge`]).
    pub fn evaluate_polynomials_with_plan(
        &self,
        x: &Ciphertext<B>,
        ps: &[Polynomial],
        plan: &PolyPlan,
        rlk: &RelinKey<B>,
    ) -> Result<(Vec<Ciphertext<B>>, usize)> {
        let first = ps.first().ok_or_else(|| invalid("no polynomial given"))?;
        if ps.iter().any(|p| p.basis() != first.basis()) {
            return Err(invalid("the polynomials are in different bases"));
        }
        let degree = ps.iter().map(Polynomial::degree).max().unwrap_or(0);
        if degree > plan.max_degree {
            return Err(invalid(format!(
                "degree {degree} is above the plan's {}",
                plan.max_degree
            )));
        }
        let (alpha, beta) = first.affine();
        if affine_depth(alpha) != plan.affine_depth {
            return Err(invalid("the plan was made for another interval"));
        }
        if plan.depth > x.level() {
            return Err(Error::PolynomialTooDeep {
                degree,
                needed: plan.depth,
                available: x.level(),
            });
        }
        let be = self.encoder().context().backend();
        let out_level = x.level() - plan.depth;
        let mut state = State {
            ev: self,
            rlk,
            chebyshev: first.is_chebyshev(),
            powers: BTreeMap::new(),
            lowered: HashMap::new(),
            products: Cell::new(0),
        };
        let mut x = x.duplicate(be)?;
        // Constants are added to every NTT evaluation: work in NTT form.
        x.set_form(be, true)?;
        state.snap(&mut x)?;
        // The basis variable y = αx + β.
        let mut y = if alpha == 1.0 {
            x
        } else if is_small_integer(alpha) {
            self.mul_int(&x, alpha as i64)?
        } else {
            state.combine(&[&x], &[vec![alpha]], &[0.0])?.remove(0)
        };
        state.add_constant(&mut y, beta)?;
        state.powers.insert(1, y);

        let coeffs: Vec<&[f64]> = ps.iter().map(|p| p.coeffs()).collect();
        let forest = Forest::new(&coeffs, state.chebyshev, plan.baby_step, plan.budget);
        state.compute_powers(&forest.powers)?;
        let mut targets = vec![None; forest.leaves.len()];
        if !forest.leaves.is_empty() {
            let leaf_level = state.leaf_level(plan.baby_step);
            for root in &forest.roots {
                state.planned_level(root, leaf_level, &mut targets);
            }
        }
        let mut leaves: Vec<Option<Ciphertext<B>>> = state
            .leaves(&forest.leaves, plan.baby_step, &targets)?
            .into_iter()
            .map(Some)
            .collect();
        let mut outputs = Vec::with_capacity(ps.len());
        for root in &forest.roots {
            let ct = match state.eval(root, &mut leaves)? {
                Value::Ct(ct) => ct,
                Value::Const(c) => state
                    .combine(&[&state.powers[&1]], &[vec![0.0]], &[c])?
                    .remove(0),
            };
            outputs.push(ct);
        }
        // All outputs at the level the plan promises (a sparse polynomial may end higher).
        let outputs = outputs
            .into_iter()
            .map(|c| {
                if c.level() > out_level {
                    state.lower(&c, out_level)
                } else {
                    Ok(c)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((outputs, state.products.get()))
    }
}
