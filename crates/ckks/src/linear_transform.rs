//! Public linear transforms on the slots, given by their diagonals, evaluated by baby-step
//! giant-step (BSGS) with hoisted baby steps.
//!
//! # The transform
//!
//! An `n × n` complex matrix `M` acting on `n` slots (`n` a power of two up to `N/2`; a vector
//! encoded in `n < N/2` slots is repeated, so it is acted on period by period) is given by its
//! non-zero **diagonals** `d_k[i] = M[i][(i + k) mod n]`:
//!
//! `(M·x)_i = Σ_k d_k[i] · x_{(i + k) mod n}`, i.e. `M·x = Σ_k d_k ⊙ rot(x, k)`.
//!
//! # BSGS
//!
//! With a baby step `n_1` (a power of two) each index is split as `k = g + b`,
//! `b = k mod n_1`, `g = k − b`, and
//!
//! `M·x = Σ_g rot( Σ_b rot(d_{g+b}, −g) ⊙ rot(x, b), g )`.
//!
//! The baby rotations `rot(x, b)` all rotate the same ciphertext, so they share one
//! decomposition ([`Evaluator::rotate_hoisted`]); each inner sum is one fused plaintext
//! multiply-sum ([`fhe_math::backend::RingBackend::mul_plain_sum`]: every operand read once,
//! the sum written once; the plaintexts `rot(d_{g+b}, −g)` encoded once, at build time), then
//! rotated by its giant step `g` without a rescale. The giant-step key switches share one
//! `mod_down` and one rescale: each inner sum is raised at level `l` and its key product (with
//! `σ_g` folded in) accumulated over `Q_l·P`, and `⌊acc/P⌉` with the rescale by `q_l` is taken
//! once ([`fhe_math::backend::KeySwitchBackend::mod_down_into`]). Key switches: (distinct non-zero
//! `b`) + (distinct non-zero `g`); [`LinearTransform::new`] picks the `n_1` that minimizes
//! that count, the larger one on a tie (fewer giant steps, each of which has its own `mod_up`).
//!
//! # Levels and scales
//!
//! The plaintexts are encoded at the level `l` the transform is built for, with the scale `Δ_l`
//! of the parameter set's ladder by default; an input at level `l` with its ladder scale `Δ_l`
//! gives an output at level `l − 1` with scale `Δ_l·Δ_l / q_l = Δ_{l−1}`, the ladder again.
//! One level is consumed.

use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::fft::Complex64;
use fhe_math::poly::Shape;
use rlwe::{Ciphertext, GaloisKeys, Plaintext};
use std::collections::BTreeMap;

fn invalid(reason: impl Into<String>) -> Error {
    Error::InvalidTransform {
        reason: reason.into(),
    }
}

/// The diagonals of a dense `n × n` matrix (`matrix[i][j]`), keyed by `k` in
/// `(−n/2, n/2]`, all-zero diagonals left out: `d_k[i] = M[i][(i + k) mod n]`.
pub fn diagonals_of(matrix: &[Vec<Complex64>]) -> Result<BTreeMap<i64, Vec<Complex64>>> {
    let n = matrix.len();
    if n == 0 || matrix.iter().any(|row| row.len() != n) {
        return Err(invalid("the matrix is not square or is empty"));
    }
    let mut out = BTreeMap::new();
    for k in 0..n {
        let d: Vec<Complex64> = (0..n).map(|i| matrix[i][(i + k) % n]).collect();
        if d.iter().any(|v| v.norm() != 0.0) {
            out.insert(signed_index(k as i64, n), d);
        }
    }
    Ok(out)
}

/// `k mod n` as the representative in `(−n/2, n/2]`.
pub(crate) fn signed_index(k: i64, n: usize) -> i64 {
    let n = n as i64;
    let r = k.rem_euclid(n);
    if r > n / 2 { r - n } else { r }
}

/// The rotation steps a transform with these diagonal indices (taken modulo `slots`) applies
/// with the baby step [`LinearTransform::new`] would choose: the non-zero baby steps, then the
/// non-zero giant steps (for planning keys without encoding any plaintext).
pub fn planned_rotation_steps(indices: &[i64], slots: usize) -> Vec<i64> {
    let (mut steps, giants) = planned_bsgs(indices, slots);
    for g in giants {
        if !steps.contains(&g) {
            steps.push(g);
        }
    }
    steps
}

/// The non-zero baby steps and the non-zero giant steps of [`planned_rotation_steps`].
pub(crate) fn planned_bsgs(indices: &[i64], slots: usize) -> (Vec<i64>, Vec<i64>) {
    let mut idx: Vec<i64> = indices.iter().map(|&k| signed_index(k, slots)).collect();
    idx.sort_unstable();
    idx.dedup();
    let n1 = best_baby_step(&idx, slots);
    let (babies, giants) = split(&idx, n1, slots);
    (
        babies.into_iter().filter(|&b| b != 0).collect(),
        giants.into_iter().filter(|&g| g != 0).collect(),
    )
}

/// The power of two `n1 ≤ slots` of fewest key switches for these indices; among those, the
/// larger `n1` (fewer giant steps). The baby steps share one `mod_up` and each costs a key
/// product and a `mod_down`; a giant step costs its own `mod_up` (one NTT per digit and limb of
/// `Q_l·P`, several times a `mod_down`'s work), so at equal count more babies and fewer giants
/// are cheaper (`BOOT_N16` on the H200, 2026-11-29: CoeffToSlot's matrices of 31 diagonals
/// went from 3 babies and 7 giants to 7 and 3, the stage from 15.2 to 12.9 ms).
fn best_baby_step(indices: &[i64], slots: usize) -> usize {
    std::iter::successors(Some(1usize), |&n| Some(n * 2))
        .take_while(|&n| n <= slots)
        .min_by_key(|&n1| {
            let (b, g) = split(indices, n1, slots);
            (rotations(&b, &g), std::cmp::Reverse(n1))
        })
        .expect("slots >= 1")
}

/// The BSGS split of a set of diagonal indices for baby step `n1` on `slots` slots:
/// `(babies, giants)`, the distinct `b = k mod n1` and `g = k − b` taken modulo `slots` (in
/// `(−slots/2, slots/2]`: `g` and `g ± slots` are one rotation, so their inner sums are one).
fn split(indices: &[i64], n1: usize, slots: usize) -> (Vec<i64>, Vec<i64>) {
    let mut babies = Vec::new();
    let mut giants = Vec::new();
    for &k in indices {
        let b = k.rem_euclid(n1 as i64);
        if !babies.contains(&b) {
            babies.push(b);
        }
        let g = giant_of(k, n1, slots);
        if !giants.contains(&g) {
            giants.push(g);
        }
    }
    babies.sort_unstable();
    giants.sort_unstable();
    (babies, giants)
}

/// The giant step of index `k`: `k − (k mod n1)` as the representative modulo `slots` in
/// `(−slots/2, slots/2]`.
fn giant_of(k: i64, n1: usize, slots: usize) -> i64 {
    signed_index(k - k.rem_euclid(n1 as i64), slots)
}

/// Key switches of a split: the non-zero babies and giants.
fn rotations(babies: &[i64], giants: &[i64]) -> usize {
    babies.iter().filter(|&&b| b != 0).count() + giants.iter().filter(|&&g| g != 0).count()
}

/// One giant step: `rot(Σ_b p_{g,b} ⊙ rot(x, b), g)`.
struct Giant<B: KeySwitchBackend> {
    step: i64,
    /// `(index into the babies, rot(d_{g+b}, −g) encoded)`.
    terms: Vec<(usize, Plaintext<B>)>,
}

/// A linear transform on the slots with its plaintext diagonals encoded for one level
/// (module documentation: `M·x = Σ_g rot(Σ_b rot(d_{g+b}, −g) ⊙ rot(x, b), g)`).
pub struct LinearTransform<B: KeySwitchBackend> {
    n: usize,
    slots: usize,
    level: usize,
    scale: f64,
    baby_step: usize,
    babies: Vec<i64>,
    giants: Vec<Giant<B>>,
}

impl<B: KeySwitchBackend> LinearTransform<B> {
    /// The transform with the given diagonals (`d_k`, `k` taken modulo `slots`, each of length
    /// `slots`) for inputs at `level`, plaintexts at the ladder scale `Δ_level`, with the baby
    /// step of fewest key switches.
    ///
    /// Errors ([`Error::InvalidTransform`]): no diagonal, a diagonal of another length, two
    /// diagonals with one index modulo `slots`, `slots` not a power of two up to `N/2`; a bad
    /// level; a value too large for the scale.
    pub fn new(
        eval: &Evaluator<B>,
        diagonals: &BTreeMap<i64, Vec<Complex64>>,
        slots: usize,
        level: usize,
    ) -> Result<Self> {
        let scale = eval.encoder().context().params().scale(level)?;
        Self::with_options(eval, diagonals, slots, level, scale, None)
    }

    /// [`LinearTransform::new`] with an explicit plaintext scale and, optionally, an explicit
    /// baby step (a power of two up to `slots`). The output scale is
    /// `input scale · scale / q_level`.
    pub fn with_options(
        eval: &Evaluator<B>,
        diagonals: &BTreeMap<i64, Vec<Complex64>>,
        slots: usize,
        level: usize,
        scale: f64,
        baby_step: Option<usize>,
    ) -> Result<Self> {
        let max_slots = eval.encoder().max_slots();
        if !slots.is_power_of_two() || slots > max_slots {
            return Err(invalid(format!(
                "{slots} slots is not a power of two up to {max_slots}"
            )));
        }
        if diagonals.is_empty() {
            return Err(invalid("no diagonal given"));
        }
        let mut by_index: BTreeMap<i64, &[Complex64]> = BTreeMap::new();
        for (&k, d) in diagonals {
            if d.len() != slots {
                return Err(invalid(format!(
                    "diagonal {k} has {} values for {slots} slots",
                    d.len()
                )));
            }
            if by_index.insert(signed_index(k, slots), d).is_some() {
                return Err(invalid(format!(
                    "diagonal {k} repeats another index modulo {slots}"
                )));
            }
        }
        let indices: Vec<i64> = by_index.keys().copied().collect();
        let n1 = match baby_step {
            Some(n1) if n1.is_power_of_two() && n1 <= slots => n1,
            Some(n1) => {
                return Err(invalid(format!(
                    "baby step {n1} is not a power of two up to {slots}"
                )));
            }
            None => best_baby_step(&indices, slots),
        };
        let (babies, giant_steps) = split(&indices, n1, slots);
        let enc = eval.encoder();
        let mut giants: Vec<Giant<B>> = giant_steps
            .iter()
            .map(|&step| Giant {
                step,
                terms: Vec::new(),
            })
            .collect();
        // rot(d_k, −g)_i = d_{(i − g) mod n}, encoded together (host FFTs in parallel).
        let placed: Vec<(usize, usize, Vec<Complex64>)> = by_index
            .iter()
            .map(|(&k, d)| {
                let b = k.rem_euclid(n1 as i64);
                let g = giant_of(k, n1, slots);
                let bi = babies.binary_search(&b).expect("b is a baby step");
                let gi = giant_steps.binary_search(&g).expect("g is a giant step");
                let rotated = (0..slots)
                    .map(|i| d[(i as i64 - g).rem_euclid(slots as i64) as usize])
                    .collect();
                (gi, bi, rotated)
            })
            .collect();
        let values: Vec<&[Complex64]> = placed.iter().map(|(_, _, v)| v.as_slice()).collect();
        let encoded = enc.encode_many(&values, level, scale, slots)?;
        for ((gi, bi, _), pt) in placed.iter().zip(encoded) {
            giants[*gi].terms.push((*bi, pt));
        }
        Ok(LinearTransform {
            n: eval.encoder().context().params().n(),
            slots,
            level,
            scale,
            baby_step: n1,
            babies,
            giants,
        })
    }

    /// The slot count `n` the matrix acts on.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The level inputs must be at.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The plaintext scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The baby step `n_1`.
    pub fn baby_step(&self) -> usize {
        self.baby_step
    }

    /// The number of plaintext diagonals (plaintext multiply-accumulates per application).
    pub fn diagonal_count(&self) -> usize {
        self.giants.iter().map(|g| g.terms.len()).sum()
    }

    /// The rotation steps applied: the non-zero baby steps (hoisted) and giant steps.
    pub fn rotation_steps(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self.babies.iter().copied().filter(|&b| b != 0).collect();
        for g in &self.giants {
            if g.step != 0 && !steps.contains(&g.step) {
                steps.push(g.step);
            }
        }
        steps
    }

    /// Key switches per application (hoisted baby steps counted one each).
    pub fn key_switches(&self) -> usize {
        let giants: Vec<i64> = self.giants.iter().map(|g| g.step).collect();
        rotations(&self.babies, &giants)
    }

    /// The Galois elements whose keys [`Evaluator::linear_transform`] needs.
    pub fn galois_elements(&self, eval: &Evaluator<B>) -> Vec<u64> {
        eval.galois_elements(&self.rotation_steps(), false)
    }

    /// Bytes of the encoded plaintext diagonals (`diagonals · (level + 1) · N · 8`), on the
    /// backend's memory (host or device).
    pub fn plaintext_bytes(&self) -> usize {
        self.diagonal_count() * (self.level + 1) * self.n * 8
    }
}

impl<B: KeySwitchBackend> Evaluator<B> {
    /// `M·x` for the transform `lt` ([`crate::linear_transform`]): `x` at the transform's level
    /// and scale `s` gives `M·x` one level lower with scale `s·scale / q_l` (the ladder scale
    /// `Δ_{l−1}` for a ladder input and the default plaintext scale).
    ///
    /// Errors: `x` at another level ([`Error::LevelMismatch`]), a missing rotation key
    /// ([`Error::Rlwe`]), a scale the result cannot carry.
    pub fn linear_transform(
        &self,
        x: &Ciphertext<B>,
        lt: &LinearTransform<B>,
        keys: &GaloisKeys<B>,
    ) -> Result<Ciphertext<B>> {
        if x.level() != lt.level {
            return Err(Error::LevelMismatch {
                op: "apply a linear transform",
                left: x.level(),
                right: lt.level,
            });
        }
        if x.level() == 0 {
            return Err(Error::CannotRescale);
        }
        // Every key looked up before any work.
        for &s in &lt.rotation_steps() {
            keys.get(self.rotation_element(s), "apply a linear transform")?;
        }
        let be = self.encoder().context().backend();
        let mut x = x.duplicate(be)?;
        x.set_form(be, true)?;
        let steps: Vec<i64> = lt.babies.iter().copied().filter(|&b| b != 0).collect();
        let rotated = self.rotate_hoisted(&x, &steps, keys)?;
        let mut rotated = rotated.iter();
        let babies: Vec<&Ciphertext<B>> = lt
            .babies
            .iter()
            .map(|&b| {
                if b == 0 {
                    &x
                } else {
                    rotated.next().expect("one rotation per non-zero baby")
                }
            })
            .collect();
        let shape = Shape {
            components: 2,
            level: x.level(),
            extended: false,
        };
        // The giant-step rotations share one mod_down and one rescale: each inner sum y_g
        // (scale s·Δ, not rescaled) is raised (mod_up) and its key product accumulated into
        // one extended buffer; `σ_g(y_g,0)` is added directly, and `⌊acc / P⌉` with the
        // rescale by `q_l` once at the end.
        let mut total = be.zeros(shape)?;
        let mut acc: Option<B::Poly> = None;
        for giant in lt.giants.iter().filter(|g| !g.terms.is_empty()) {
            let terms: Vec<_> = giant
                .terms
                .iter()
                .map(|(bi, pt)| (babies[*bi].poly(), pt.poly()))
                .collect();
            let sum = be.mul_plain_sum(shape, &terms)?;
            if giant.step == 0 {
                be.add_assign(&mut total, &sum)?;
                continue;
            }
            let g = self.rotation_element(giant.step);
            let key = keys.get(g, "apply a linear transform")?;
            let ext = be.mod_up(&sum, 1)?;
            let acc = match acc.as_mut() {
                Some(a) => a,
                None => acc.insert(be.zeros(Shape {
                    extended: true,
                    ..shape
                })?),
            };
            be.key_product(&ext, &key.poly, Some(g), acc)?;
            let mut rotated = be.zeros(shape)?;
            be.automorphism_into(&sum, g, &mut rotated, 1)?;
            be.add_assign(&mut total, &rotated)?;
        }
        // The scale s·Δ checked at level l, then the rescaled metadata.
        let total = Ciphertext::new(be, total, x.meta().with_scale(x.scale() * lt.scale))?;
        let meta = self.rescaled_meta(&total)?;
        let (mut total, _) = total.into_parts();
        match &acc {
            Some(acc) => be.mod_down_into(acc, &mut total, true)?,
            None => be.rescale(&mut total)?,
        }
        Ok(Ciphertext::new(be, total, meta)?)
    }
}

#[cfg(test)]
mod tests;
