//! The homomorphic DFT of bootstrapping as a few sparse matrices, computed on the host.
//!
//! Decoding ([`fhe_math::fft::SpecialFft`]) maps the paired coefficients
//! `w_k = m_k + i·m_{k+s}` (`s` slots) to the slots by a bit reversal followed by the radix-2
//! stages `ℓ = 2, 4, …, s`: on each block of `ℓ` entries, `(a, b) → (a + t_j·b, a − t_j·b)` for
//! the pair `(j, j + ℓ/2)`, twiddle `t_j = exp(2πi·(5^j mod 4ℓ)/(4ℓ))`. Each stage is a matrix
//! with three diagonals (`0`, `±ℓ/2`). Its inverse stage is `(a, b) → (a + b, (a − b)·t̄_j)`
//! (up to the factor ½, collected in one constant).
//!
//! **SlotToCoeff** is the product of the forward stages applied to `bitrev(w)`; **CoeffToSlot**
//! the product of the inverse stages `ℓ = s, …, 2` times `1/s`, which yields `bitrev(w)`. The bit
//! reversal is never applied: EvalMod acts slot by slot, so the two reversals cancel. The stages
//! are grouped into as many matrices as the levels the transform may consume (consecutive
//! stages multiplied on the host), each a [`crate::LinearTransform`] by its diagonals. Every
//! constant here is computed once, in `f64`, on the host, so every backend encodes the same
//! plaintexts.

use crate::linear_transform::signed_index;
use fhe_math::fft::Complex64;
use std::collections::BTreeMap;

/// A matrix on `s` slots by its diagonals (`d_k[i]` multiplies `x_{i+k}`), `k` signed.
pub type Diagonals = BTreeMap<i64, Vec<Complex64>>;

/// The twiddles `t_j = exp(2πi·(5^j mod 4ℓ)/(4ℓ))` of stage `ℓ`, `j < ℓ/2`.
fn twiddles(len: usize) -> Vec<Complex64> {
    let m = 4 * len as u64;
    std::iter::successors(Some(1u64), |e| Some(e * 5 % m))
        .take(len / 2)
        .map(|e| {
            let angle = std::f64::consts::TAU * e as f64 / m as f64;
            Complex64::new(angle.cos(), angle.sin())
        })
        .collect()
}

/// Adds `v` at diagonal `k` (merged modulo `s`).
fn put(d: &mut Diagonals, k: i64, s: usize, i: usize, v: Complex64) {
    d.entry(signed_index(k, s))
        .or_insert_with(|| vec![Complex64::new(0.0, 0.0); s])[i] += v;
}

/// The forward (decoding) stage `ℓ` on `s` slots.
fn forward_stage(len: usize, s: usize) -> Diagonals {
    let h = len / 2;
    let tw = twiddles(len);
    let mut d = Diagonals::new();
    let one = Complex64::new(1.0, 0.0);
    for i in 0..s {
        let pos = i % len;
        if pos < h {
            put(&mut d, 0, s, i, one);
            put(&mut d, h as i64, s, i, tw[pos]);
        } else {
            put(&mut d, -(h as i64), s, i, one);
            put(&mut d, 0, s, i, -tw[pos - h]);
        }
    }
    d
}

/// The inverse stage `ℓ` on `s` slots (without its factor ½).
fn inverse_stage(len: usize, s: usize) -> Diagonals {
    let h = len / 2;
    let tw = twiddles(len);
    let mut d = Diagonals::new();
    let one = Complex64::new(1.0, 0.0);
    for i in 0..s {
        let pos = i % len;
        if pos < h {
            put(&mut d, 0, s, i, one);
            put(&mut d, h as i64, s, i, one);
        } else {
            let t = tw[pos - h].conj();
            put(&mut d, -(h as i64), s, i, t);
            put(&mut d, 0, s, i, -t);
        }
    }
    d
}

/// `A·B` (apply `B`, then `A`): `c_{k+m}[i] += a_k[i]·b_m[i+k]`.
pub(crate) fn product(a: &Diagonals, b: &Diagonals, s: usize) -> Diagonals {
    let mut c = Diagonals::new();
    for (&k, ak) in a {
        for (&m, bm) in b {
            for i in 0..s {
                let v = ak[i] * bm[(i as i64 + k).rem_euclid(s as i64) as usize];
                if v.norm() != 0.0 {
                    put(&mut c, k + m, s, i, v);
                }
            }
        }
    }
    c
}

fn scaled(mut d: Diagonals, c: f64) -> Diagonals {
    d.values_mut()
        .for_each(|v| v.iter_mut().for_each(|x| *x *= c));
    d
}

/// Splits `stages` into `groups` consecutive runs (the earlier runs one longer) and multiplies
/// each run, every product scaled by `constant^(1/groups)`; returned in application order.
fn grouped(stages: Vec<Diagonals>, groups: usize, s: usize, constant: f64) -> Vec<Diagonals> {
    let count = stages.len();
    let per = constant.abs().powf(1.0 / groups as f64);
    let mut out = Vec::with_capacity(groups);
    let mut it = stages.into_iter();
    for g in 0..groups {
        let len = count / groups + usize::from(g < count % groups);
        let mut m: Option<Diagonals> = None;
        for st in it.by_ref().take(len) {
            m = Some(match m {
                None => st,
                Some(prev) => product(&st, &prev, s),
            });
        }
        let mut m = m.unwrap_or_else(|| identity(s));
        if g == 0 && constant < 0.0 {
            m = scaled(m, -1.0);
        }
        out.push(scaled(m, per));
    }
    out
}

fn identity(s: usize) -> Diagonals {
    [(0, vec![Complex64::new(1.0, 0.0); s])].into()
}

fn stage_lengths(s: usize) -> Vec<usize> {
    std::iter::successors(Some(2usize), |&l| Some(l * 2))
        .take_while(|&l| l <= s)
        .collect()
}

/// CoeffToSlot's matrices (application order) on `s` slots in `groups` levels:
/// `constant/s · Inv_2 ⋯ Inv_s`, which maps the decoded slots of `w` to `constant·bitrev(w)`.
pub(crate) fn coeff_to_slot(s: usize, groups: usize, constant: f64) -> Vec<Diagonals> {
    let stages: Vec<Diagonals> = stage_lengths(s)
        .into_iter()
        .rev()
        .map(|l| inverse_stage(l, s))
        .collect();
    grouped(stages, groups, s, constant / s as f64)
}

/// SlotToCoeff's matrices (application order) on `s` slots in `groups` levels:
/// `constant · Fwd_s ⋯ Fwd_2`, which maps `bitrev(w)` to `constant ·` the decoded slots of `w`.
pub(crate) fn slot_to_coeff(s: usize, groups: usize, constant: f64) -> Vec<Diagonals> {
    let stages: Vec<Diagonals> = stage_lengths(s)
        .into_iter()
        .map(|l| forward_stage(l, s))
        .collect();
    grouped(stages, groups, s, constant)
}

/// SlotToCoeff's matrices (application order, by their diagonals) on `s` slots in `groups`
/// levels, for use outside bootstrapping: `constant · Fwd_s ⋯ Fwd_2` maps the slots
/// `bitrev(w)` to `constant ·` the decoded slots of the coefficients `w`, so a ciphertext whose
/// slots are `u` comes out with message coefficients `constant · Δ · u_{bitrev(k)}` (real parts at
/// `k·N/(2s)`, imaginary parts at `(k + s)·N/(2s)`). `s` a power of two, `1 <= groups <= log2 s`.
pub fn slot_to_coeff_diagonals(s: usize, groups: usize, constant: f64) -> Vec<Diagonals> {
    slot_to_coeff(s, groups, constant)
}

/// For sparse slots (`n < N/2`, the input repeated with period `n`): `M` on `n` slots as a
/// matrix on `2n` slots that writes `M·u` into the first half and zeros into the second,
/// `[[M/2, M/2], [0, 0]]` (on the period-`n` input `[u, u]` it gives `[M·u, 0]`).
pub(crate) fn masked_to_first_half(m: &Diagonals, n: usize) -> Diagonals {
    let mut out = Diagonals::new();
    for i in 0..n {
        for (&k, d) in m {
            let j = (i as i64 + k).rem_euclid(n as i64);
            let v = d[i] * 0.5;
            put(&mut out, j - i as i64, 2 * n, i, v);
            put(&mut out, j + n as i64 - i as i64, 2 * n, i, v);
        }
    }
    out
}

/// For sparse slots: `M` on `n` slots as a matrix on `2n` slots reading the input `[a, b]` as
/// `a + i·b` and writing `M·(a + i·b)` into both halves (period `n` again):
/// `[[M, i·M], [M, i·M]]`.
pub(crate) fn merged_halves(m: &Diagonals, n: usize) -> Diagonals {
    let mut out = Diagonals::new();
    let i_unit = Complex64::new(0.0, 1.0);
    for i in 0..2 * n {
        let ii = i % n;
        for (&k, d) in m {
            let j = (ii as i64 + k).rem_euclid(n as i64);
            put(&mut out, j - i as i64, 2 * n, i, d[ii]);
            put(&mut out, j + n as i64 - i as i64, 2 * n, i, d[ii] * i_unit);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_math::fft::SpecialFft;

    fn apply(d: &Diagonals, x: &[Complex64]) -> Vec<Complex64> {
        let s = x.len();
        (0..s)
            .map(|i| {
                d.iter()
                    .map(|(&k, v)| v[i] * x[(i as i64 + k).rem_euclid(s as i64) as usize])
                    .sum()
            })
            .collect()
    }

    fn bitrev(x: &[Complex64]) -> Vec<Complex64> {
        let bits = x.len().trailing_zeros();
        (0..x.len())
            .map(|i| {
                x[if bits == 0 {
                    0
                } else {
                    i.reverse_bits() >> (usize::BITS - bits)
                }]
            })
            .collect()
    }

    fn max_err(a: &[Complex64], b: &[Complex64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max)
    }

    /// The factors reproduce the special FFT: SlotToCoeff of `bitrev(w)` is the decoding of
    /// the coefficients `w`, CoeffToSlot of the slots gives `bitrev(w)` back, for every
    /// grouping.
    #[test]
    fn factors_match_the_special_fft() {
        for log_s in [1usize, 3, 6] {
            let s = 1 << log_s;
            let n = 4 * s; // sparse packing inside a larger ring: the same stages.
            let fft = SpecialFft::new(n).unwrap();
            let gap = n / (2 * s);
            let w: Vec<Complex64> = (0..s)
                .map(|k| Complex64::new((k as f64 * 0.37).sin(), (k as f64 * 1.3).cos()))
                .collect();
            let mut coeffs = vec![0.0; n];
            for (k, v) in w.iter().enumerate() {
                coeffs[k * gap] = v.re;
                coeffs[(k + s) * gap] = v.im;
            }
            let slots = fft.decode(&coeffs, s).unwrap();
            for groups in 1..=log_s {
                let mut x = bitrev(&w);
                for m in slot_to_coeff(s, groups, 3.0) {
                    x = apply(&m, &x);
                }
                let want: Vec<Complex64> = slots.iter().map(|v| v * 3.0).collect();
                assert!(max_err(&x, &want) < 1e-12, "s {s} groups {groups}");
                let mut y = slots.clone();
                for m in coeff_to_slot(s, groups, -0.5) {
                    y = apply(&m, &y);
                }
                let want: Vec<Complex64> = bitrev(&w).iter().map(|v| v * -0.5).collect();
                assert!(max_err(&y, &want) < 1e-12, "s {s} groups {groups}");
            }
        }
    }
}
