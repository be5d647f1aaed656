//! The BFV ciphertext product with exact, integer-only scale-and-round:
//! `d = ⌊(t/Q)·(a ⊗ b)⌉ mod Q` for two 2-component ciphertexts `a`, `b` modulo
//! `Q = q_0 ⋯ q_l` (HPS-style, Halevi-Polyakov-Shoup 2018/2019, with integer fixed point).
//!
//! # Method
//!
//! 1. **Extend** each input polynomial from `Q` to an auxiliary basis `B = b_0 ⋯ b_{k-1}`
//!    (60-bit NTT primes not in the ring), on centred values: `x + ⌊Q/2⌋` is converted exactly
//!    with [`BasisConverter::convert_exact`] and `⌊Q/2⌋` subtracted again, so the extension of
//!    a residue vector is its centred representative in `(-Q/2, Q/2]`.
//! 2. **Tensor** over `Q ∪ B` in NTT form: `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)`, then inverse
//!    NTT. `B` is chosen with `B > 4·t·N·Q`, so `Q·B` exceeds `2·max|d| = N·Q²` and the
//!    integer product `d` is represented exactly.
//! 3. **Scale and round into `B`**: with `y_i = [d_i·(QB/q_i)^{-1}]_{q_i}` for `i ∈ Q` and
//!    `t·B/q_i = ω_i + θ_i` (`ω_i` integer, `0 ≤ θ_i < 1`),
//!    `⌊t·d/Q⌉ ≡ Σ_i y_i·[ω_i]_{b_k} + R + d_k·[t·Q^{-1}]_{b_k} (mod b_k)` with
//!    `R = ⌊Σ_i y_i·θ_i⌉`. `θ_i` is stored as the 64-bit fixed-point integer
//!    `Θ_i = ⌊θ_i·2^64⌋` and `R = ⌊(Σ_i y_i·Θ_i + 2^63) / 2^64⌋`, summed exactly in two `u128`
//!    accumulators (high and low halves of each product). The fixed point underestimates
//!    `Σ y_i θ_i` by less than `(l+1)·max q_i / 2^64`, so the rounding error of each output
//!    coefficient is at most [`ScaleRoundTables::max_round_error`] `= 1/2 + (l+1)·2^{-3}` (for
//!    primes below 2^61), not 1/2: the noise model accounts for it.
//! 4. **Return to `Q`**: `|⌊t·d/Q⌉| < B/4`, so the centred value is converted exactly from `B`
//!    to `Q` (the same offset trick as step 1).
//!
//! Every step is integer arithmetic with a fixed order of exact sums, so any backend that
//! follows this contract gives the same bits. The default body of
//! [`crate::IntegerBackend::tensor_scale_round`] runs [`ScaleRoundTables::tensor_scale_round_host`]
//! on the host; the CUDA backend overrides it with device kernels that upload these tables
//! (`fhe-cuda`'s `kernels/scale_round.cu` and the exact basis conversion) and give the same bits.
//!
//! `convert_exact` may be off by `Q` when its input is below `2L·Q/2^64` (probability about
//! `2^-58` per coefficient): in step 1 this adds a tiny multiple of the other operand to the
//! result's noise, in step 4 it cannot happen (the shifted value is near `B/2`).

use crate::error::{Error, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use crate::poly::RnsPoly;
use crate::primes::ntt_primes;
use crate::ring::RingContext;
use crate::rns::BasisConverter;
use num_bigint::BigUint;
use num_traits::{One, ToPrimitive};
use rayon::prelude::*;

/// Precomputed tables of the BFV scale-and-round product at one level (see the module docs).
#[derive(Clone, Debug)]
pub struct ScaleRoundTables {
    n: usize,
    level: usize,
    t: u64,
    q: Vec<Modulus>,
    b: Vec<Modulus>,
    b_ntt: Vec<NttTable>,
    q_to_b: BasisConverter,
    b_to_q: BasisConverter,
    /// `⌊Q/2⌋ mod q_i`, then `⌊Q/2⌋ mod b_k`.
    half_q_q: Vec<u64>,
    half_q_b: Vec<u64>,
    /// `⌊B/2⌋ mod b_k`, then `⌊B/2⌋ mod q_i`.
    half_b_b: Vec<u64>,
    half_b_q: Vec<u64>,
    /// `(QB/q_i)^{-1} mod q_i` and its Shoup companion.
    qb_hat_inv: Vec<(u64, u64)>,
    /// Row-major `[k][i]`: `⌊t·B/q_i⌋ mod b_k`.
    omega: Vec<u64>,
    /// `⌊θ_i·2^64⌋` with `θ_i = (t·B mod q_i)/q_i`.
    theta: Vec<u64>,
    /// `t·Q^{-1} mod b_k`.
    t_q_inv: Vec<u64>,
}

fn mod_big(x: &BigUint, m: u64) -> u64 {
    (x % m).to_u64().expect("below a u64 modulus")
}

/// Coefficients per parallel task of the host scale-and-round.
const SCALE_ROUND_RUN: usize = 1024;

impl ScaleRoundTables {
    /// Tables for ciphertexts at `level` of `ring` with plaintext modulus `t` (`2 <= t < 2^32`):
    /// chooses the auxiliary basis `B` (60-bit NTT primes outside the ring, `B > 4·t·N·Q_l`).
    pub fn new(ring: &RingContext, level: usize, t: u64) -> Result<Self> {
        if level > ring.max_level() {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "scale-and-round level {level} is above the ring's top level {}",
                    ring.max_level()
                ),
            });
        }
        if !(2..1u64 << 32).contains(&t) {
            return Err(Error::InvalidModulus {
                modulus: t,
                reason: "the plaintext modulus of scale-and-round must be in 2..2^32",
            });
        }
        let n = ring.n();
        let q: Vec<Modulus> = (0..=level).map(|s| *ring.modulus(s)).collect();
        let q_big = q.iter().fold(BigUint::one(), |a, m| a * m.value());
        let bound = &q_big * (4 * t as u128 * n as u128);
        // The fewest 60-bit primes whose product exceeds the bound: each is above 2^59, so
        // ⌈bits/59⌉ + 1 candidates always suffice, and every extra prime would add a limb to the
        // extension, the tensor and both conversions.
        let candidates = (bound.bits() as usize).div_ceil(59) + 1;
        let exclude: Vec<u64> = ring.moduli().iter().map(|m| m.value()).collect();
        let mut b_vals = Vec::with_capacity(candidates);
        let mut product = BigUint::one();
        for v in ntt_primes(60, 2 * n as u64, candidates, &exclude)? {
            if product > bound {
                break;
            }
            product *= v;
            b_vals.push(v);
        }
        let b: Vec<Modulus> = b_vals
            .iter()
            .map(|&v| Modulus::new(v))
            .collect::<Result<_>>()?;
        let b_big = b.iter().fold(BigUint::one(), |a, m| a * m.value());
        debug_assert!(b_big > bound);
        let b_ntt = b
            .iter()
            .map(|m| NttTable::new(*m, n))
            .collect::<Result<Vec<_>>>()?;
        let q_to_b = BasisConverter::new(&q, &b)?;
        let b_to_q = BasisConverter::new(&b, &q)?;
        let half_q = &q_big >> 1u32;
        let half_b = &b_big >> 1u32;
        let half_q_q = q.iter().map(|m| mod_big(&half_q, m.value())).collect();
        let half_q_b = b.iter().map(|m| mod_big(&half_q, m.value())).collect();
        let half_b_b = b.iter().map(|m| mod_big(&half_b, m.value())).collect();
        let half_b_q = q.iter().map(|m| mod_big(&half_b, m.value())).collect();
        let qb = &q_big * &b_big;
        let mut qb_hat_inv = Vec::new();
        let mut theta = Vec::new();
        let tb = &b_big * t;
        for m in &q {
            let hat = mod_big(&(&qb / m.value()), m.value());
            let inv = m.inv(hat)?;
            qb_hat_inv.push((inv, m.shoup(inv)));
            let r = mod_big(&tb, m.value()) as u128;
            theta.push(((r << 64) / m.value() as u128) as u64);
        }
        let mut omega = Vec::with_capacity(b.len() * q.len());
        for bk in &b {
            for m in &q {
                omega.push(mod_big(&(&tb / m.value()), bk.value()));
            }
        }
        let t_q_inv = b
            .iter()
            .map(|m| Ok(m.mul(m.reduce(t), m.inv(mod_big(&q_big, m.value()))?)))
            .collect::<Result<_>>()?;
        Ok(ScaleRoundTables {
            n,
            level,
            t,
            q,
            b,
            b_ntt,
            q_to_b,
            b_to_q,
            half_q_q,
            half_q_b,
            half_b_b,
            half_b_q,
            qb_hat_inv,
            omega,
            theta,
            t_q_inv,
        })
    }

    /// The level the tables are for.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The plaintext modulus `t`.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// The auxiliary primes `b_0 … b_{k-1}`.
    pub fn aux_moduli(&self) -> &[Modulus] {
        &self.b
    }

    /// The ring moduli `q_0 … q_l` (GPU upload).
    pub fn moduli(&self) -> &[Modulus] {
        &self.q
    }

    /// The NTT tables of the auxiliary primes (GPU upload).
    pub fn aux_ntt(&self) -> &[NttTable] {
        &self.b_ntt
    }

    /// The exact `Q -> B` converter of step 1 (GPU upload).
    pub fn q_to_b(&self) -> &BasisConverter {
        &self.q_to_b
    }

    /// The exact `B -> Q` converter of step 4 (GPU upload).
    pub fn b_to_q(&self) -> &BasisConverter {
        &self.b_to_q
    }

    /// Centring offsets (GPU upload): `(⌊Q/2⌋ mod q_i, ⌊Q/2⌋ mod b_k, ⌊B/2⌋ mod b_k,
    /// ⌊B/2⌋ mod q_i)`.
    pub fn half_offsets(&self) -> (&[u64], &[u64], &[u64], &[u64]) {
        (
            &self.half_q_q,
            &self.half_q_b,
            &self.half_b_b,
            &self.half_b_q,
        )
    }

    /// `((QB/q_i)^{-1} mod q_i, Shoup companion)` per `i` (GPU upload).
    pub fn qb_hat_inv(&self) -> &[(u64, u64)] {
        &self.qb_hat_inv
    }

    /// Row-major `[k][i]`: `⌊t·B/q_i⌋ mod b_k` (GPU upload).
    pub fn omega(&self) -> &[u64] {
        &self.omega
    }

    /// `⌊θ_i·2^64⌋` per `i` (GPU upload).
    pub fn theta(&self) -> &[u64] {
        &self.theta
    }

    /// `t·Q^{-1} mod b_k` per `k` (GPU upload).
    pub fn t_q_inv(&self) -> &[u64] {
        &self.t_q_inv
    }

    /// The largest rounding error of one output coefficient: `1/2 + (l+1)/8`.
    pub fn max_round_error(&self) -> f64 {
        0.5 + self.q.len() as f64 / 8.0
    }

    /// Extends one polynomial (`l+1` limbs, coefficient form) to `Q ∪ B` (centred lift) and
    /// returns its `l+1+k` limbs in NTT form.
    fn extend_ntt(&self, ring: &RingContext, limbs: &[&[u64]]) -> Vec<Vec<u64>> {
        let shifted: Vec<Vec<u64>> = limbs
            .iter()
            .zip(&self.q)
            .zip(&self.half_q_q)
            .map(|((l, m), &h)| l.iter().map(|&x| m.add(x, h)).collect())
            .collect();
        let mut ext_b = vec![vec![0u64; self.n]; self.b.len()];
        {
            let inp: Vec<&[u64]> = shifted.iter().map(|v| v.as_slice()).collect();
            let mut out: Vec<&mut [u64]> = ext_b.iter_mut().map(|v| v.as_mut_slice()).collect();
            self.q_to_b.convert_exact(&inp, &mut out);
        }
        for ((v, m), &h) in ext_b.iter_mut().zip(&self.b).zip(&self.half_q_b) {
            v.iter_mut().for_each(|x| *x = m.sub(*x, h));
        }
        let mut all: Vec<Vec<u64>> = limbs.iter().map(|l| l.to_vec()).collect();
        all.extend(ext_b);
        let q_len = self.q.len();
        all.par_iter_mut().enumerate().for_each(|(s, v)| {
            if s < q_len {
                ring.ntt(s).forward(v)
            } else {
                self.b_ntt[s - q_len].forward(v)
            }
        });
        all
    }

    fn modulus(&self, s: usize) -> &Modulus {
        if s < self.q.len() {
            &self.q[s]
        } else {
            &self.b[s - self.q.len()]
        }
    }

    /// The reference computation: `a`, `b` are 2-component buffers in **coefficient** form at
    /// level ≥ [`level`](Self::level) (limbs `0..=level` are used); `out` (3 components, level
    /// `level`, coefficient form) receives `⌊(t/Q)·(a ⊗ b)⌉ mod Q`.
    pub fn tensor_scale_round_host(
        &self,
        ring: &RingContext,
        a: &RnsPoly,
        b: &RnsPoly,
        out: &mut RnsPoly,
    ) -> Result<()> {
        let l = self.level;
        if a.components() != 2
            || b.components() != 2
            || a.level() < l
            || b.level() < l
            || out.components() != 3
            || out.level() != l
            || ring.n() != self.n
            || a.n() != self.n
        {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "tensor with scale-and-round at level {l} needs two 2-component inputs and a \
                     3-component output at that level"
                ),
            });
        }
        let ext = |p: &RnsPoly, c: usize| {
            let limbs: Vec<&[u64]> = (0..=l).map(|s| p.limb(c, s)).collect();
            self.extend_ntt(ring, &limbs)
        };
        let (a0, a1, b0, b1) = (ext(a, 0), ext(a, 1), ext(b, 0), ext(b, 1));
        let total = self.q.len() + self.b.len();
        let q_len = self.q.len();
        // d[c][s]: the tensor over Q ∪ B, back in coefficient form.
        let mut d: Vec<Vec<Vec<u64>>> = (0..3).map(|_| vec![Vec::new(); total]).collect();
        let limbs: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)> = (0..total)
            .into_par_iter()
            .map(|s| {
                let m = self.modulus(s);
                let (x0, x1, y0, y1) = (&a0[s], &a1[s], &b0[s], &b1[s]);
                let mut d0 = vec![0u64; self.n];
                let mut d1 = vec![0u64; self.n];
                let mut d2 = vec![0u64; self.n];
                for j in 0..self.n {
                    d0[j] = m.mul(x0[j], y0[j]);
                    d1[j] = m.add(m.mul(x0[j], y1[j]), m.mul(x1[j], y0[j]));
                    d2[j] = m.mul(x1[j], y1[j]);
                }
                let inv = |v: &mut Vec<u64>| {
                    if s < q_len {
                        ring.ntt(s).inverse(v)
                    } else {
                        self.b_ntt[s - q_len].inverse(v)
                    }
                };
                inv(&mut d0);
                inv(&mut d1);
                inv(&mut d2);
                (d0, d1, d2)
            })
            .collect();
        for (s, (d0, d1, d2)) in limbs.into_iter().enumerate() {
            d[0][s] = d0;
            d[1][s] = d1;
            d[2][s] = d2;
        }
        let results: Vec<Vec<Vec<u64>>> = d
            .par_iter()
            .map(|dc| self.scale_round_component(dc))
            .collect();
        for (c, limbs) in results.iter().enumerate() {
            for (s, v) in limbs.iter().enumerate() {
                out.limb_mut(c, s).copy_from_slice(v);
            }
        }
        Ok(())
    }

    /// Steps 3 and 4 for one component (`l+1+k` limbs in coefficient form over `Q ∪ B`):
    /// returns the `l+1` limbs of `⌊t·d/Q⌉ mod Q`.
    fn scale_round_component(&self, d: &[Vec<u64>]) -> Vec<Vec<u64>> {
        let (ql, bl) = (self.q.len(), self.b.len());
        let mut r = vec![vec![0u64; self.n]; bl];
        // Parallel over runs of coefficients (each run writes its part of every r[k]), not only
        // over the three components: their sequential loop kept a 16-core machine on 3 cores.
        let runs = self.n.div_ceil(SCALE_ROUND_RUN);
        let mut parts: Vec<Vec<&mut [u64]>> = (0..runs).map(|_| Vec::with_capacity(bl)).collect();
        for rk in r.iter_mut() {
            for (c, part) in rk.chunks_mut(SCALE_ROUND_RUN).enumerate() {
                parts[c].push(part);
            }
        }
        parts.into_par_iter().enumerate().for_each_init(
            || vec![0u64; ql],
            |y, (c, mut outs)| {
                let start = c * SCALE_ROUND_RUN;
                let len = outs.first().map_or(0, |o| o.len());
                for jj in 0..len {
                    let j = start + jj;
                    let (mut hi, mut lo) = (0u128, 0u128);
                    for i in 0..ql {
                        let (w, ws) = self.qb_hat_inv[i];
                        y[i] = self.q[i].mul_shoup(d[i][j], w, ws);
                        let p = y[i] as u128 * self.theta[i] as u128;
                        hi += p >> 64;
                        lo += p & u128::from(u64::MAX);
                    }
                    let round = hi + ((lo + (1u128 << 63)) >> 64);
                    for (k, out) in outs.iter_mut().enumerate() {
                        let bk = &self.b[k];
                        let row = &self.omega[k * ql..(k + 1) * ql];
                        let mut acc = round;
                        for i in 0..ql {
                            acc += y[i] as u128 * row[i] as u128;
                        }
                        acc += d[ql + k][j] as u128 * self.t_q_inv[k] as u128;
                        out[jj] = bk.add(bk.reduce_u128(acc), self.half_b_b[k]);
                    }
                }
            },
        );
        let mut out = vec![vec![0u64; self.n]; ql];
        {
            let inp: Vec<&[u64]> = r.iter().map(|v| v.as_slice()).collect();
            let mut o: Vec<&mut [u64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
            self.b_to_q.convert_exact(&inp, &mut o);
        }
        for ((v, m), &h) in out.iter_mut().zip(&self.q).zip(&self.half_b_q) {
            v.iter_mut().for_each(|x| *x = m.sub(*x, h));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::Shape;
    use crate::primes::ntt_primes;
    use num_bigint::BigInt;
    use num_traits::Zero;

    /// Schoolbook negacyclic product over the integers.
    fn negacyclic(a: &[BigInt], b: &[BigInt]) -> Vec<BigInt> {
        let n = a.len();
        let mut out = vec![BigInt::zero(); n];
        for i in 0..n {
            for j in 0..n {
                let p = &a[i] * &b[j];
                if i + j < n {
                    out[i + j] += p;
                } else {
                    out[i + j - n] -= p;
                }
            }
        }
        out
    }

    /// `B` exceeds `4·t·N·Q_l` (the bound of the module docs) with no prime to spare: without
    /// its last prime it would not.
    #[test]
    fn auxiliary_basis_is_the_fewest_primes_above_the_bound() {
        let n = 1 << 10;
        let q = ntt_primes(50, 2 * n as u64, 6, &[]).unwrap();
        let p = ntt_primes(55, 2 * n as u64, 1, &q).unwrap();
        let ring = RingContext::new(n, &q, &p, vec![0..2, 2..4, 4..6]).unwrap();
        for (level, t) in [(5, 65537u64), (2, 65537), (0, 2), (5, (1 << 32) - 5)] {
            let tables = ScaleRoundTables::new(&ring, level, t).unwrap();
            let q_big = q[..=level].iter().fold(BigUint::one(), |a, &v| a * v);
            let bound = q_big * (4 * t as u128 * n as u128);
            let b = tables.aux_moduli();
            let without_last = b[..b.len() - 1]
                .iter()
                .fold(BigUint::one(), |a, m| a * m.value());
            assert!(
                &without_last * b[b.len() - 1].value() > bound,
                "level {level}, t {t}"
            );
            assert!(
                without_last <= bound,
                "level {level}, t {t}: a prime to spare"
            );
        }
    }

    #[test]
    fn matches_big_integer_reference() {
        let n = 16;
        let q = ntt_primes(50, 2 * n as u64, 3, &[]).unwrap();
        let p = ntt_primes(55, 2 * n as u64, 1, &q).unwrap();
        let ring = RingContext::new(n, &q, &p, vec![0..1, 1..2, 2..3]).unwrap();
        let t = 65537;
        let level = 2;
        let tables = ScaleRoundTables::new(&ring, level, t).unwrap();
        let basis =
            crate::rns::RnsBasis::new(q.iter().map(|&v| Modulus::new(v).unwrap()).collect())
                .unwrap();
        let qb = basis.product().clone();
        let shape = Shape {
            components: 2,
            level,
            extended: false,
        };
        let mut a = ring.zeros(shape).unwrap();
        let mut b = ring.zeros(shape).unwrap();
        let mut x = 0x1234_5678_9abc_def0u64;
        for poly in [&mut a, &mut b] {
            for c in 0..2 {
                for j in 0..n {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let v: BigUint = BigUint::from(x) * BigUint::from(x.rotate_left(17)) * x;
                    let v = v % &qb;
                    for (s, &qs) in q.iter().enumerate() {
                        poly.limb_mut(c, s)[j] = mod_big(&v, qs);
                    }
                }
            }
        }
        let mut out = ring
            .zeros(Shape {
                components: 3,
                level,
                extended: false,
            })
            .unwrap();
        tables
            .tensor_scale_round_host(&ring, &a, &b, &mut out)
            .unwrap();
        let centred = |p: &RnsPoly, c: usize| -> Vec<BigInt> {
            (0..n)
                .map(|j| {
                    let r: Vec<u64> = (0..=level).map(|s| p.limb(c, s)[j]).collect();
                    basis.reconstruct_centered(&r)
                })
                .collect()
        };
        let (a0, a1, b0, b1) = (
            centred(&a, 0),
            centred(&a, 1),
            centred(&b, 0),
            centred(&b, 1),
        );
        let d0 = negacyclic(&a0, &b0);
        let mut d1 = negacyclic(&a0, &b1);
        for (x, y) in d1.iter_mut().zip(negacyclic(&a1, &b0)) {
            *x += y;
        }
        let d2 = negacyclic(&a1, &b1);
        let qi = BigInt::from(qb.clone());
        let mut max_err = 0i64;
        for (c, d) in [d0, d1, d2].iter().enumerate() {
            let got = centred(&out, c);
            for j in 0..n {
                // Exact rounding of t·d/Q (half up).
                let num = &d[j] * t * 2 + &qi;
                let den = &qi * 2;
                let mut want = &num / &den;
                if (&num % &den) < BigInt::zero() {
                    want -= 1;
                }
                let diff: BigInt = (&got[j] - &want) % &qi;
                let half: BigInt = &qi / 2;
                let diff: BigInt = if diff > half {
                    diff - &qi
                } else if diff < -half {
                    diff + &qi
                } else {
                    diff
                };
                let e = diff.to_i64().unwrap();
                max_err = max_err.max(e.abs());
            }
        }
        assert!(
            (max_err as f64) <= tables.max_round_error().ceil(),
            "max error {max_err}"
        );
    }
}
