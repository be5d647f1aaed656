//! Paterson–Stockmeyer evaluation of polynomials mod `t` on BGV ciphertexts (slot-wise: with
//! batching every slot is an element of `F_t`), several polynomials sharing one set of powers.
//!
//! # The algorithm
//!
//! For a baby step `k` ([`PsPlan`]) the evaluator computes
//! - the **baby steps** `x^1, …, x^k`, each with the least depth `⌈log2 i⌉`: `x^{2^a}` by
//!   squaring, `x^i = x^{2^a}·x^{i-2^a}` for `2^a < i < 2^{a+1}` (`k - 1` products);
//! - the **giant steps** `G_j = x^{2^j·k}` (`G_0 = x^k`), `G_j = G_{j-1}²`, of depth
//!   `⌈log2 k⌉ + j`, as far as the largest degree needs them.
//!
//! A polynomial `p` of degree `d ≤ k` is one fused linear combination of baby steps
//! ([`fhe_math::backend::RingBackend::linear_combination`]) plus its constant term. Above `k`,
//! with `m = 2^j·k` the largest giant exponent below `d`, `p = q·G_j + r` (`deg r < m`,
//! `deg q = d - m ≤ m`), `q` and `r` evaluated recursively and one product `q·G_j` (none when
//! `q` is a constant). By induction a polynomial of degree `≤ 2^j·k` has depth
//! `≤ ⌈log2 k⌉ + j`, so for `k` a power of two the depth is the least possible, `⌈log2 d⌉`
//! (`x^d` alone needs that much; `⌈log2 d⌉ ≤ ⌈log2(d+1)⌉`). [`PsPlan::new`] searches every `k`
//! and keeps, among those reaching that depth, one with the fewest products
//! (for one dense polynomial: degree 7 → 4 products, 15 → 7, 31 → 11, 63 → 16; the depth is 3,
//! 4, 5, 6).
//!
//! # Constants in BGV
//!
//! A ciphertext with correction factor `f` decrypts to `f·m`. To give the linear combination
//! `Σ a_i·x^i` a common factor `F`, input `i` (factor `f_i`) is multiplied by the integer
//! `w_i = [a_i·F·f_i^{-1}]_t` (centred), passed to the backend as the residues `w_i mod q_s`
//! of every limb: then `Σ w_i·(f_i·m_i + t·e_i) = F·Σ a_i m_i + t·(…)`. The constant term is the
//! constant polynomial `[a_0·F]_t` added to `c_0` (NTT form: to every evaluation). The inputs
//! are first switched to the lowest level among them; when the block is the remainder `r` of
//! `q·G + r`, `F` is chosen so that, switched down to the level of `q·G`, it has exactly that
//! product's factor and the addition needs no correction.

use crate::ciphertext::Ciphertext;
use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::noise::{add_bits, check_capacity};
use crate::poly::Polynomial;
use fhe_math::backend::IntegerBackend;
use rlwe::RelinKey;
use rlwe::ciphertext::scalar_residues;
use std::collections::HashMap;

/// `⌈log2 n⌉` (0 for `n ≤ 1`): the least multiplicative depth of `x^n`.
pub fn ceil_log2(n: usize) -> usize {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as usize
    }
}

/// For `d > k`: the largest `j` with `2^j·k < d` (the giant step `q·G_j + r` splits at).
fn split_index(d: usize, k: usize) -> Option<usize> {
    (d > k).then(|| {
        let mut j = 0;
        while k << (j + 1) < d {
            j += 1;
        }
        j
    })
}

/// Products and depth of the recursion on a dense polynomial of degree `d` with baby step `k`
/// (baby and giant steps not included).
fn recursion_cost(d: usize, k: usize) -> (usize, usize) {
    let Some(j) = split_index(d, k) else {
        return (0, ceil_log2(d));
    };
    let m = k << j;
    let (mq, dq) = recursion_cost(d - m, k);
    let (mr, dr) = recursion_cost(m - 1, k);
    let dg = ceil_log2(k) + j;
    (mq + mr + 1, (dq.max(dg) + 1).max(dr))
}

/// The shape of a Paterson–Stockmeyer evaluation of polynomials of given degrees (module
/// documentation): the baby step `k`, the giant squarings, the depth and the products, counted
/// for dense polynomials (sparse ones may need fewer products, never more, nor more depth).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PsPlan {
    baby_step: usize,
    giant_squarings: usize,
    depth: usize,
    multiplications: usize,
}

impl PsPlan {
    /// The plan with the least depth and, at that depth, the fewest products (ciphertext
    /// multiplications, each relinearized and switched down), over every baby step
    /// `k = 1..=max degree`, for polynomials of `degrees` sharing baby and giant steps.
    pub fn new(degrees: &[usize]) -> PsPlan {
        let top = degrees.iter().copied().max().unwrap_or(0).max(1);
        (1..=top)
            .map(|k| Self::with_baby_step_unchecked(degrees, k))
            .min_by_key(|p| (p.depth, p.multiplications, p.baby_step))
            .expect("at least one baby step")
    }

    /// The plan with baby step `k` (`k ≥ 1`, else [`Error::InvalidArgument`]).
    pub fn with_baby_step(degrees: &[usize], k: usize) -> Result<PsPlan> {
        if k == 0 {
            return Err(Error::InvalidArgument {
                op: "plan a polynomial evaluation",
                reason: "the baby step must be at least 1".into(),
            });
        }
        Ok(Self::with_baby_step_unchecked(degrees, k))
    }

    fn with_baby_step_unchecked(degrees: &[usize], k: usize) -> PsPlan {
        let top = degrees.iter().copied().max().unwrap_or(0);
        let giant_squarings = split_index(top, k).unwrap_or(0);
        let (mut mults, mut depth) = (k - 1 + giant_squarings, 0);
        for &d in degrees {
            let (m, dp) = recursion_cost(d, k);
            mults += m;
            depth = depth.max(dp);
        }
        PsPlan {
            baby_step: k,
            giant_squarings,
            depth,
            multiplications: mults,
        }
    }

    /// The baby step `k`: the powers `x^1..x^k` are computed.
    pub fn baby_step(&self) -> usize {
        self.baby_step
    }

    /// The giant squarings: `x^{2k}, x^{4k}, …` beyond `x^k`.
    pub fn giant_squarings(&self) -> usize {
        self.giant_squarings
    }

    /// The levels the evaluation consumes (the largest over the polynomials).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The ciphertext products: `k - 1` baby, the giant squarings and one per split.
    pub fn multiplications(&self) -> usize {
        self.multiplications
    }
}

/// A power of `x` held by the evaluation: baby step `x^i` or giant step `G_j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Power {
    Baby(usize),
    Giant(usize),
}

/// The state of one evaluation: the powers, their copies switched down, the product count.
struct PsState<'a, B: IntegerBackend> {
    ev: &'a Evaluator<B>,
    rlk: &'a RelinKey<B>,
    k: usize,
    /// `baby[i - 1] = x^i`.
    baby: Vec<Ciphertext<B>>,
    /// `giant[j - 1] = G_j` for `j ≥ 1` (`G_0` is `x^k`).
    giant: Vec<Ciphertext<B>>,
    switched: HashMap<(Power, usize), Ciphertext<B>>,
    multiplications: usize,
}

impl<'a, B: IntegerBackend> PsState<'a, B> {
    fn new(
        ev: &'a Evaluator<B>,
        x: &Ciphertext<B>,
        plan: &PsPlan,
        rlk: &'a RelinKey<B>,
    ) -> Result<Self> {
        let be = ev.context().backend();
        let mut s = PsState {
            ev,
            rlk,
            k: plan.baby_step,
            baby: vec![x.duplicate(be)?],
            giant: Vec::new(),
            switched: HashMap::new(),
            multiplications: 0,
        };
        for i in 2..=s.k {
            let low = 1usize << (usize::BITS - 1 - i.leading_zeros());
            let (a, b) = if low == i {
                (i / 2, i / 2)
            } else {
                (low, i - low)
            };
            let p = s.mul(&s.baby[a - 1], &s.baby[b - 1])?;
            s.baby.push(p);
        }
        for j in 1..=plan.giant_squarings {
            let g = s.power(Power::Giant(j - 1));
            let p = s.mul(g, g)?;
            s.giant.push(p);
        }
        Ok(s)
    }

    fn mul(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.ev.mul_relin(a, b, self.rlk)
    }

    fn power(&self, p: Power) -> &Ciphertext<B> {
        match p {
            Power::Baby(i) => &self.baby[i - 1],
            Power::Giant(0) => &self.baby[self.k - 1],
            Power::Giant(j) => &self.giant[j - 1],
        }
    }

    /// `p` at `level` (below or at its own), switched down once and kept.
    fn at_level(&mut self, p: Power, level: usize) -> Result<&Ciphertext<B>> {
        if self.power(p).level() == level {
            return Ok(self.power(p));
        }
        if !self.switched.contains_key(&(p, level)) {
            let c = self.ev.mod_switch_to(self.power(p), level)?;
            self.switched.insert((p, level), c);
        }
        Ok(&self.switched[&(p, level)])
    }

    /// `Σ a·power + constant` as one linear combination (module documentation), at the lowest
    /// level of the powers; with `target = (level, factor)` (a level at or below that), the
    /// result is switched down to `level` and has factor `factor` there.
    fn combine(
        &mut self,
        terms: &[(Power, u64)],
        constant: u64,
        target: Option<(usize, u64)>,
    ) -> Result<Ciphertext<B>> {
        let op = "evaluate a polynomial";
        let ctx = self.ev.context().clone();
        let (be, plain) = (ctx.backend(), ctx.plain());
        let tm = plain.modulus();
        let level = terms
            .iter()
            .map(|&(p, _)| self.power(p).level())
            .min()
            .expect("at least one term");
        let factor = match target {
            Some((tl, tf)) if tl <= level => {
                // Switching from `level` down to `tl` multiplies the factor by Π q_l^{-1}.
                let mut f = tf;
                for l in tl + 1..=level {
                    f = tm.mul(f, tm.inv(ctx.params().q_inv_mod_t(l)?)?);
                }
                f
            }
            _ => self.power(terms[0].0).factor,
        };
        let mut coeffs = Vec::with_capacity(terms.len() * (level + 1));
        let mut bits = f64::NEG_INFINITY;
        let mut meta = None;
        for &(p, a) in terms {
            let ct = self.at_level(p, level)?;
            let w = plain.center(tm.mul(tm.mul(a, factor), tm.inv(ct.factor)?));
            if w != 0 {
                bits = add_bits(bits, ct.noise_bits + (w.unsigned_abs() as f64).log2());
            }
            coeffs.extend(scalar_residues(be.ring(), level, w));
            meta = Some(ct.inner.meta());
        }
        let refs: Vec<&B::Poly> = terms
            .iter()
            .map(|&(p, _)| {
                let c = if self.power(p).level() == level {
                    self.power(p)
                } else {
                    &self.switched[&(p, level)]
                };
                c.inner.poly()
            })
            .collect();
        let mut poly = be
            .linear_combination(&refs, &coeffs, 1)?
            .pop()
            .expect("one output");
        let v = plain.center(tm.mul(constant, factor));
        if v != 0 {
            be.add_scalar_assign(&mut poly, 0, &scalar_residues(be.ring(), level, v))?;
            bits = add_bits(bits, (v.unsigned_abs() as f64).log2());
        }
        let bits = bits.max(0.0);
        check_capacity(op, bits, ctx.noise().capacity(level), level)?;
        let ct = Ciphertext {
            inner: rlwe::Ciphertext::new(be, poly, meta.expect("at least one term"))?,
            factor,
            noise_bits: bits,
        };
        match target {
            Some((tl, _)) if tl < level => self.ev.mod_switch_to(&ct, tl),
            _ => Ok(ct),
        }
    }

    /// `p(x)` for the coefficients `coeffs` (`a_0` first), `None` for the zero polynomial;
    /// `target` as for [`PsState::combine`] when the polynomial is a single block.
    fn eval(
        &mut self,
        coeffs: &[u64],
        target: Option<(usize, u64)>,
    ) -> Result<Option<Ciphertext<B>>> {
        let len = coeffs.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
        let coeffs = &coeffs[..len];
        if coeffs.is_empty() {
            return Ok(None);
        }
        let d = len - 1;
        let Some(j) = split_index(d, self.k) else {
            let terms: Vec<(Power, u64)> = (1..=d)
                .filter(|&i| coeffs[i] != 0)
                .map(|i| (Power::Baby(i), coeffs[i]))
                .collect();
            // A constant block still needs one ciphertext: `0·x`.
            let terms = if terms.is_empty() {
                vec![(Power::Baby(1), 0)]
            } else {
                terms
            };
            return self.combine(&terms, coeffs[0], target).map(Some);
        };
        let m = self.k << j;
        let (r, q) = coeffs.split_at(m);
        let qg = if q.iter().skip(1).all(|&c| c == 0) {
            self.combine(&[(Power::Giant(j), q[0])], 0, None)?
        } else {
            let qc = self.eval(q, None)?.expect("q has a nonzero coefficient");
            self.multiplications += 1;
            self.mul(&qc, self.power(Power::Giant(j)))?
        };
        match self.eval(r, Some((qg.level(), qg.factor)))? {
            Some(rc) => self.ev.add(&qg, &rc).map(Some),
            None => Ok(Some(qg)),
        }
    }
}

impl<B: IntegerBackend> Evaluator<B> {
    /// `p(x)` slot-wise mod `t` by Paterson–Stockmeyer ([`crate::poly_eval`]), with the plan
    /// of [`PsPlan::new`]: `⌈log2 deg p⌉` levels consumed.
    pub fn evaluate_polynomial(
        &self,
        x: &Ciphertext<B>,
        p: &Polynomial,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        let mut out = self.evaluate_polynomials(x, std::slice::from_ref(p), rlk)?;
        Ok(out.pop().expect("one output per polynomial"))
    }

    /// `p_i(x)` for each polynomial, sharing the baby and giant steps: one ciphertext per
    /// polynomial, in order; the plan of [`PsPlan::new`] for their degrees.
    pub fn evaluate_polynomials(
        &self,
        x: &Ciphertext<B>,
        ps: &[Polynomial],
        rlk: &RelinKey<B>,
    ) -> Result<Vec<Ciphertext<B>>> {
        let degrees: Vec<usize> = ps.iter().map(Polynomial::degree).collect();
        let plan = PsPlan::new(&degrees);
        Ok(self.evaluate_polynomials_with_plan(x, ps, &plan, rlk)?.0)
    }

    /// [`Evaluator::evaluate_polynomials`] with a given plan (e.g. another baby step, from
    /// [`PsPlan::with_baby_step`]); also returns the ciphertext products made (at most
    /// [`PsPlan::multiplications`]).
    ///
    /// Errors: no polynomial, a polynomial modulo another `t`, or `x` not a 2-component NTT
    /// form ciphertext, a plan made for lower degrees ([`Error::InvalidArgument`]); a depth
    /// above `x`'s level ([`Error::PolynomialTooDeep`]); a noise bound reaching the
    /// capacity ([`Error::NoiseBudgetExceeded`]).
    pub fn evaluate_polynomials_with_plan(
        &self,
        x: &Ciphertext<B>,
        ps: &[Polynomial],
        plan: &PsPlan,
        rlk: &RelinKey<B>,
    ) -> Result<(Vec<Ciphertext<B>>, usize)> {
        let op = "evaluate a polynomial";
        let bad = |reason: String| Error::InvalidArgument { op, reason };
        let t = self.context().params().t();
        if ps.is_empty() {
            return Err(bad("no polynomial given".into()));
        }
        if let Some(p) = ps.iter().find(|p| p.modulus() != t) {
            return Err(bad(format!(
                "a polynomial is modulo {}, the plaintext modulus is {t}",
                p.modulus()
            )));
        }
        let be = self.context().backend();
        if x.components(be) != 2 || !x.inner.is_ntt() {
            return Err(bad(
                "the ciphertext must have 2 components in NTT form (relinearize first)".into(),
            ));
        }
        let degrees: Vec<usize> = ps.iter().map(Polynomial::degree).collect();
        let degree = degrees.iter().copied().max().unwrap_or(0);
        let needed = PsPlan::with_baby_step(&degrees, plan.baby_step)?;
        if needed.giant_squarings > plan.giant_squarings {
            return Err(bad(format!(
                "the plan was made for lower degrees than {degree} (too few giant steps)"
            )));
        }
        if needed.depth > x.level() {
            return Err(Error::PolynomialTooDeep {
                degree,
                needed: needed.depth,
                available: x.level(),
            });
        }
        let mut state = PsState::new(self, x, plan, rlk)?;
        let mut outputs = Vec::with_capacity(ps.len());
        for p in ps {
            let out = match state.eval(p.coeffs(), None)? {
                Some(c) => c,
                None => state.combine(&[(Power::Baby(1), 0)], 0, None)?,
            };
            outputs.push(out);
        }
        let products = state.multiplications + state.baby.len() - 1 + state.giant.len();
        Ok((outputs, products))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_reach_the_least_depth() {
        for (d, mults, depth) in [(7, 4, 3), (15, 7, 4), (31, 11, 5), (63, 16, 6)] {
            let p = PsPlan::new(&[d]);
            assert_eq!(
                (p.multiplications(), p.depth()),
                (mults, depth),
                "degree {d}"
            );
        }
        for d in 1..200 {
            assert_eq!(PsPlan::new(&[d]).depth(), ceil_log2(d), "degree {d}");
        }
        assert_eq!(ceil_log2(1), 0);
        assert_eq!(ceil_log2(8), 3);
        assert_eq!(ceil_log2(9), 4);
    }
}
