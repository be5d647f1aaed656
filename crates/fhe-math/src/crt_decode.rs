//! [`CrtDecoder`]: exact decryption-side decoding of RNS values in words (no big integers):
//! BFV's `⌊t·x/Q⌉ mod t`, BGV's `[x]_Q mod t`, and the exact size of the centred noise, by
//! 128-bit fixed-point fractions with a mixed-radix fallback near the decision boundaries.

use crate::error::{Error, Result};
use crate::modulus::Modulus;
use crate::rns::{RnsBasis, biguint_mod, gcd};
use rayon::prelude::*;

/// Coefficients per work item of [`CrtDecoder`]'s parallel loops.
const DECODE_CHUNK: usize = 1024;

/// Largest basis a [`CrtDecoder`] accepts (its lazy `u128` sums need `L·2^122 < 2^128`).
pub const MAX_DECODER_LIMBS: usize = 64;

/// Relative resolution at which [`CrtDecoder::max_log2`] trusts the fixed-point fraction:
/// it is used when the largest fraction is at least `2^24` times its error bound (log2 error
/// below `2^-24/ln 2 < 1e-7` bits); smaller noise takes the exact mixed-radix path.
pub const FRACTION_TRUST: u32 = 24;

/// Summary of the noise fractions of one [`CrtDecoder`] call: `ρ_j = ν_j / Q` in `(-1/2, 1/2)`
/// per coefficient, `ν_j` the centred noise (`[t·x_j]_Q` for [`CrtDecoder::scale_round`],
/// `[x_j]_Q` for [`CrtDecoder::centred_mod_t`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoiseFraction {
    /// `max_j |ρ̃_j|` in units of `2^-128`, `ρ̃_j` the computed fixed-point fraction.
    pub max_abs: u128,
    /// The error bound `E = Σ q_i` (units of `2^-128`): `0 ≤ ρ_j - ρ̃_j < E` for every `j`.
    pub error: u128,
    /// Exact (not from the fixed point): whether `max_j |ν_j| > Q/4`, i.e. the measured budget
    /// `log2(Q/2) - log2 max|ν|` is below 1 bit.
    pub above_quarter: bool,
}

impl NoiseFraction {
    /// `log2 max_j |ρ̃_j|` (`-inf` when every computed fraction is 0).
    pub fn log2_ratio(&self) -> f64 {
        (self.max_abs as f64).log2() - 128.0
    }

    /// Whether the fixed point resolves `max|ρ|` to a relative error below `2^-FRACTION_TRUST`.
    pub fn is_resolved(&self) -> bool {
        self.max_abs >> FRACTION_TRUST >= self.error.max(1)
    }
}

/// Which decoding [`CrtDecoder::decode`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeMode {
    /// BFV: `⌊t·x/Q⌉ mod t` ([`CrtDecoder::scale_round`]).
    ScaleRound,
    /// BGV: `scale·[x]_Q mod t` ([`CrtDecoder::centred_mod_t`]).
    Centred {
        /// The factor applied to the centred lift (reduced mod `t` by the decoder).
        scale: u64,
    },
}

/// The constants of one limb `q_i` of a [`CrtDecoder`] (what a device kernel needs to run the
/// same sums).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecoderLimb {
    /// `q_i`.
    pub q: u64,
    /// `q̂_i^{-1} mod q_i` and its Shoup companion.
    pub q_hat_inv: (u64, u64),
    /// `⌊t/q_i⌋`.
    pub t_int: u64,
    /// `⌊(t mod q_i)·2^128/q_i⌋`.
    pub t_frac: u128,
    /// `⌊2^128/q_i⌋`.
    pub one_frac: u128,
    /// `[q̂_i]_t`.
    pub q_hat_mod_t: u64,
}

/// Mixed-radix (MRC) tables of a basis: `x = Σ_k d_k·M_k`, `M_k = q_0 ⋯ q_{k-1}`, `d_k < q_k`.
#[derive(Clone, Debug)]
struct MixedRadix {
    moduli: Vec<Modulus>,
    /// Row `k` (length `k`): `[M_j]_{q_k}` for `j < k`, flattened.
    m_mod: Vec<u64>,
    /// `[M_k^{-1}]_{q_k}` and its Shoup companion.
    m_inv: Vec<(u64, u64)>,
    /// `log2 M_k` (`f64` sums of `log2 q_j`).
    log2_m: Vec<f64>,
}

impl MixedRadix {
    fn new(moduli: &[Modulus]) -> Result<Self> {
        let l = moduli.len();
        let mut m_mod = Vec::with_capacity(l * l.saturating_sub(1) / 2);
        let mut m_inv = Vec::with_capacity(l);
        for (k, qk) in moduli.iter().enumerate() {
            let mut acc = 1 % qk.value();
            for qj in &moduli[..k] {
                m_mod.push(acc);
                acc = qk.mul(acc, qk.reduce(qj.value()));
            }
            let inv = qk.inv(acc)?;
            m_inv.push((inv, qk.shoup(inv)));
        }
        let mut log2_m = Vec::with_capacity(l + 1);
        let mut s = 0.0f64;
        for q in moduli {
            log2_m.push(s);
            s += (q.value() as f64).log2();
        }
        log2_m.push(s);
        Ok(MixedRadix {
            moduli: moduli.to_vec(),
            m_mod,
            m_inv,
            log2_m,
        })
    }

    /// The digits `d_k` of `u` from its canonical residues `u_k`:
    /// `d_k = [(u_k - Σ_{j<k} d_j·[M_j]_{q_k})·M_k^{-1}]_{q_k}` (lazy `u128` sum, one reduction).
    fn digits(&self, u: &[u64], d: &mut [u64]) {
        let mut row = 0;
        for (k, q) in self.moduli.iter().enumerate() {
            let mut s = 0u128;
            for (&dj, &mj) in d[..k].iter().zip(&self.m_mod[row..row + k]) {
                s += dj as u128 * mj as u128;
            }
            row += k;
            let (w, ws) = self.m_inv[k];
            d[k] = q.mul_shoup(q.sub(u[k], q.reduce_u128(s)), w, ws);
        }
    }

    /// Replaces the digits `d` of `u ∈ [0, Q)` by those of `|[u]_Q|` minus `plus_one` (the
    /// centred magnitude is `e + plus_one`): for `u > Q - 1 - u` the magnitude is
    /// `Q - u = (Q - 1 - u) + 1`, whose digits are the complements `q_k - 1 - d_k`.
    fn centre(&self, d: &mut [u64]) -> bool {
        let upper = self
            .moduli
            .iter()
            .zip(d.iter())
            .rev()
            .map(|(q, &dk)| dk.cmp(&(q.value() - 1 - dk)))
            .find(|c| c.is_ne())
            == Some(std::cmp::Ordering::Greater);
        if upper {
            for (q, dk) in self.moduli.iter().zip(d.iter_mut()) {
                *dk = q.value() - 1 - *dk;
            }
        }
        upper
    }

    /// `log2(e + plus_one)` for the digits `e` (`-inf` for 0): Horner over the top digits in
    /// `u128` until the value reaches `2^64` (the dropped lower part is below one unit of it,
    /// relative error `< 2^-64`), then one `f64` conversion plus `log2 M_j`.
    fn log2(&self, e: &[u64], plus_one: bool) -> f64 {
        let Some(top) = e.iter().rposition(|&x| x != 0) else {
            return if plus_one { 0.0 } else { f64::NEG_INFINITY };
        };
        let mut val = e[top] as u128;
        let mut j = top;
        while j > 0 && val < 1u128 << 64 {
            j -= 1;
            val = val * self.moduli[j].value() as u128 + e[j] as u128;
        }
        if j == 0 {
            val += u128::from(plus_one);
        }
        (val as f64).log2() + self.log2_m[j]
    }
}

/// Compares the numbers with mixed-radix digits `a` and `b` (same basis).
fn cmp_digits(a: &[u64], b: &[u64]) -> std::cmp::Ordering {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .map(|(x, y)| x.cmp(y))
        .find(|c| c.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// Fixed-point CRT decoding of integers modulo `Q = Π q_i` into `Z_t` with word arithmetic
/// only (BFV and BGV decryption), and exact noise magnitudes by mixed-radix conversion.
///
/// With `y_i = [x_i·q̂_i^{-1}]_{q_i}`, `x = Σ_i y_i·q̂_i - α'·Q` (`0 ≤ α' < L`), so for `c ∈ {1, t}`
/// `c·x/Q = Σ_i y_i·c/q_i - c·α'`. Each `c/q_i` is stored as `⌊c/q_i⌋` plus the 128-bit
/// fraction `φ_i = ⌊(c mod q_i)·2^128/q_i⌋`; the products `y_i·φ_i` (192 bits) are summed
/// exactly, carries included, giving `F̃` with `0 ≤ F - F̃ < E = Σ_i q_i·2^-128 ≤ L·2^-67`,
/// `F = Σ_i y_i·c/q_i`. The centred fraction `ρ̃ = F̃ - round(F̃)` approximates
/// `ρ = [c·x]_Q / Q` (to within `E`, as `c·x ≡ Q·F (mod Q)`).
///
/// Rounding is exact whenever the budget is at least 1 bit: `round(F̃) ≠ round(F)` needs a
/// half-integer in `(F̃, F]`, i.e. `|ρ̃| > 1/2 - E`, which is reported as `|ν| > Q/4`. The
/// comparison with `Q/4` is itself exact: coefficients with `||ρ̃| - 1/4| < E` are decided by
/// the mixed-radix conversion (rare; `Q` is odd, so `|ν| = Q/4` never happens).
#[derive(Clone, Debug)]
pub struct CrtDecoder {
    basis: RnsBasis,
    t: Modulus,
    /// `⌊t/q_i⌋`.
    t_int: Vec<u64>,
    /// `⌊(t mod q_i)·2^128/q_i⌋`.
    t_frac: Vec<u128>,
    /// `⌊2^128/q_i⌋`.
    one_frac: Vec<u128>,
    /// `[t]_{q_i}` with its Shoup companion (residues of `t·x`).
    t_mod_q: Vec<(u64, u64)>,
    /// `[q̂_i]_t`.
    q_hat_mod_t: Vec<u64>,
    /// `[Q]_t`.
    q_mod_t: u64,
    /// `E = Σ q_i` (units of `2^-128`).
    error: u128,
    mrc: MixedRadix,
    /// Mixed-radix digits of `⌊Q/4⌋`.
    quarter: Vec<u64>,
}

/// `⌊c·2^128/q⌋` for `c < q` (`q ≥ 2`), from the Barrett constant `B = ⌊2^128/q⌋`.
fn frac_128(c: u64, q: &Modulus) -> u128 {
    let (hi, lo) = q.barrett_constant();
    let b = ((hi as u128) << 64) | lo as u128;
    // 2^128 = B·q + R, R < q: c·2^128/q = c·B + c·R/q.
    let r = 0u128.wrapping_sub(b.wrapping_mul(q.value() as u128));
    c as u128 * b + (c as u128 * r) / q.value() as u128
}

impl CrtDecoder {
    /// The decoder of the basis `moduli` (non-empty, pairwise coprime, at most
    /// [`MAX_DECODER_LIMBS`]) for the plaintext modulus `t` (coprime to every `q_i`).
    pub fn new(moduli: &[Modulus], t: Modulus) -> Result<Self> {
        if moduli.len() > MAX_DECODER_LIMBS {
            return Err(Error::ShapeMismatch {
                what: format!("a CRT decoder takes at most {MAX_DECODER_LIMBS} limbs"),
            });
        }
        let basis = RnsBasis::new(moduli.to_vec())?;
        if let Some(q) = moduli.iter().find(|q| gcd(q.value(), t.value()) != 1) {
            return Err(Error::InvalidModulus {
                modulus: q.value(),
                reason: "the plaintext modulus must be coprime to every ciphertext prime",
            });
        }
        let tv = t.value();
        let t_int = moduli.iter().map(|q| tv / q.value()).collect();
        let t_frac = moduli.iter().map(|q| frac_128(tv % q.value(), q)).collect();
        let one_frac = moduli.iter().map(|q| frac_128(1, q)).collect();
        let t_mod_q = moduli
            .iter()
            .map(|q| {
                let w = q.reduce(tv);
                (w, q.shoup(w))
            })
            .collect();
        let q_hat_mod_t = basis.q_hat.iter().map(|h| biguint_mod(h, &t)).collect();
        let q_mod_t = biguint_mod(&basis.product, &t);
        let error = moduli.iter().map(|q| q.value() as u128).sum();
        let mrc = MixedRadix::new(moduli)?;
        let quarter_res: Vec<u64> = moduli
            .iter()
            .map(|q| biguint_mod(&(&basis.product >> 2u32), q))
            .collect();
        let mut quarter = vec![0u64; moduli.len()];
        mrc.digits(&quarter_res, &mut quarter);
        Ok(CrtDecoder {
            basis,
            t,
            t_int,
            t_frac,
            one_frac,
            t_mod_q,
            q_hat_mod_t,
            q_mod_t,
            error,
            mrc,
            quarter,
        })
    }

    /// The basis `{q_i}` with its CRT constants.
    pub fn basis(&self) -> &RnsBasis {
        &self.basis
    }

    /// The plaintext modulus `t`.
    pub fn t(&self) -> &Modulus {
        &self.t
    }

    /// `log2 Q` (an `f64` sum of `log2 q_i`).
    pub fn log2_q(&self) -> f64 {
        self.mrc.log2_m[self.basis.len()]
    }

    /// The per-limb constants of the fixed-point sums, `q_0` first.
    pub fn limbs(&self) -> Vec<DecoderLimb> {
        (0..self.basis.len())
            .map(|i| DecoderLimb {
                q: self.basis.moduli[i].value(),
                q_hat_inv: (self.basis.q_hat_inv[i], self.basis.q_hat_inv_shoup[i]),
                t_int: self.t_int[i],
                t_frac: self.t_frac[i],
                one_frac: self.one_frac[i],
                q_hat_mod_t: self.q_hat_mod_t[i],
            })
            .collect()
    }

    /// `[Q]_t`.
    pub fn q_mod_t(&self) -> u64 {
        self.q_mod_t
    }

    /// The fraction's error bound `E = Σ q_i` (units of `2^-128`).
    pub fn error_bound(&self) -> u128 {
        self.error
    }

    /// `(maybe, sure)` in units of `2^-128`: a fraction `|ρ̃| ≥ sure` certainly has
    /// `|ν| > Q/4`; one in `[maybe, sure)` needs the exact mixed-radix test; below `maybe` it
    /// certainly has not (`maybe = 1/4 - E`, `sure = 1/4 + E`).
    pub fn quarter_bounds(&self) -> (u128, u128) {
        let quarter = 1u128 << 126;
        (
            quarter - self.error.min(quarter),
            quarter.saturating_add(self.error),
        )
    }

    /// [`CrtDecoder::scale_round`] or [`CrtDecoder::centred_mod_t`], as `mode` says.
    pub fn decode(&self, limbs: &[&[u64]], mode: DecodeMode, out: &mut [u64]) -> NoiseFraction {
        match mode {
            DecodeMode::ScaleRound => self.scale_round(limbs, out),
            DecodeMode::Centred { scale } => self.centred_mod_t(limbs, scale, out),
        }
    }

    /// BFV decoding: `out[j] = round(t·x_j/Q) mod t` for the residues `limbs[i][j]` of `x_j`
    /// (one slice per `q_i`, canonical); the noise is `ν_j = [t·x_j]_Q`. The result is exact
    /// unless the returned `above_quarter` is set. Parallel over chunks of coefficients.
    pub fn scale_round(&self, limbs: &[&[u64]], out: &mut [u64]) -> NoiseFraction {
        self.run::<true>(limbs, out, 1)
    }

    /// BGV decoding: `out[j] = scale·[x_j]_Q mod t`, `[x_j]_Q` the centred value in
    /// `(-Q/2, Q/2)`, via `[x]_Q = Σ_i y_i·q̂_i - α·Q`, `α = round(Σ_i y_i/q_i)`; the noise is
    /// `ν_j = [x_j]_Q`. Exact unless `above_quarter` is set. Parallel over chunks.
    pub fn centred_mod_t(&self, limbs: &[&[u64]], scale: u64, out: &mut [u64]) -> NoiseFraction {
        self.run::<false>(limbs, out, self.t.reduce(scale))
    }

    /// `log2 max_j |ν_j|` with `ν_j = [t·x_j]_Q` (`scaled`) or `[x_j]_Q`: from the fixed-point
    /// fraction when [`NoiseFraction::is_resolved`] (error `< 1e-7` bits), else exact
    /// ([`CrtDecoder::exact_max_log2`]). `-inf` when every `ν_j` is 0.
    pub fn max_log2(&self, limbs: &[&[u64]], scaled: bool) -> f64 {
        let n = limbs.first().map_or(0, |l| l.len());
        let mut scratch = vec![0u64; n];
        let f = if scaled {
            self.scale_round(limbs, &mut scratch)
        } else {
            self.centred_mod_t(limbs, 1, &mut scratch)
        };
        if f.is_resolved() {
            f.log2_ratio() + self.log2_q()
        } else {
            self.exact_max_log2(limbs, scaled)
        }
    }

    /// Exact `log2 max_j |ν_j|` (`ν_j = [t·x_j]_Q` when `scaled`, else `[x_j]_Q`, centred) by
    /// mixed-radix conversion in words (`O(L²)` per coefficient; the top digits give the
    /// magnitude to a relative `2^-53`). Parallel over chunks. `-inf` when every `ν_j` is 0.
    pub fn exact_max_log2(&self, limbs: &[&[u64]], scaled: bool) -> f64 {
        let l = self.basis.len();
        assert_eq!(limbs.len(), l, "limb count does not match the basis");
        let n = limbs[0].len();
        (0..n.div_ceil(DECODE_CHUNK))
            .into_par_iter()
            .map(|k| {
                let mut u = [0u64; MAX_DECODER_LIMBS];
                let mut d = [0u64; MAX_DECODER_LIMBS];
                let mut best: Option<(Vec<u64>, bool)> = None;
                for j in k * DECODE_CHUNK..((k + 1) * DECODE_CHUNK).min(n) {
                    self.residues(limbs, j, scaled, &mut u[..l]);
                    self.mrc.digits(&u[..l], &mut d[..l]);
                    let plus_one = self.mrc.centre(&mut d[..l]);
                    let better = match &best {
                        None => true,
                        Some((e, p)) => cmp_digits(&d[..l], e).then(plus_one.cmp(p)).is_gt(),
                    };
                    if better {
                        best = Some((d[..l].to_vec(), plus_one));
                    }
                }
                best.map_or(f64::NEG_INFINITY, |(e, p)| self.mrc.log2(&e, p))
            })
            .reduce(|| f64::NEG_INFINITY, f64::max)
    }

    /// The residues of `x_j` (times `t` when `scaled`).
    #[inline]
    fn residues(&self, limbs: &[&[u64]], j: usize, scaled: bool, u: &mut [u64]) {
        for (i, ((q, limb), &(w, ws))) in self
            .basis
            .moduli
            .iter()
            .zip(limbs)
            .zip(&self.t_mod_q)
            .enumerate()
        {
            u[i] = if scaled {
                q.mul_shoup(limb[j], w, ws)
            } else {
                limb[j]
            };
        }
    }

    /// Exact `|ν_j| > Q/4` by mixed-radix conversion.
    fn above_quarter_exact(&self, limbs: &[&[u64]], j: usize, scaled: bool) -> bool {
        let l = self.basis.len();
        let mut u = [0u64; MAX_DECODER_LIMBS];
        let mut d = [0u64; MAX_DECODER_LIMBS];
        self.residues(limbs, j, scaled, &mut u[..l]);
        self.mrc.digits(&u[..l], &mut d[..l]);
        // |ν| = e + plus_one > ⌊Q/4⌋  ⟺  e > ⌊Q/4⌋, or e ≥ ⌊Q/4⌋ when plus_one.
        let plus_one = self.mrc.centre(&mut d[..l]);
        let c = cmp_digits(&d[..l], &self.quarter);
        c.is_gt() || (plus_one && c.is_eq())
    }

    /// The shared loop: `SCALED` selects BFV (`c = t`, round) or BGV (`c = 1`, centred lift).
    fn run<const SCALED: bool>(
        &self,
        limbs: &[&[u64]],
        out: &mut [u64],
        scale: u64,
    ) -> NoiseFraction {
        let l = self.basis.len();
        assert_eq!(limbs.len(), l, "limb count does not match the basis");
        let n = out.len();
        assert!(limbs.iter().all(|s| s.len() == n), "limb lengths");
        let t = &self.t;
        // BGV constants with the scale folded in: [q̂_i]_t·scale and -[Q]_t·scale.
        let h: Vec<u64> = self.q_hat_mod_t.iter().map(|&h| t.mul(h, scale)).collect();
        let neg_q = t.neg(t.mul(self.q_mod_t, scale));
        let (maybe, sure) = self.quarter_bounds();
        let (max_abs, above) = out
            .par_chunks_mut(DECODE_CHUNK)
            .enumerate()
            .map(|(k, chunk)| {
                let start = k * DECODE_CHUNK;
                let m = chunk.len();
                let mut frac = [0u128; DECODE_CHUNK];
                let mut int = [0u128; DECODE_CHUNK];
                let mut carry = [0u64; DECODE_CHUNK];
                for (i, q) in self.basis.moduli.iter().enumerate() {
                    let (w, ws) = (self.basis.q_hat_inv[i], self.basis.q_hat_inv_shoup[i]);
                    let xs = &limbs[i][start..start + m];
                    if SCALED {
                        let phi = self.t_frac[i];
                        let (p_hi, p_lo) = ((phi >> 64) as u64 as u128, phi as u64 as u128);
                        let wi = self.t_int[i] as u128;
                        for j in 0..m {
                            let y = q.mul_shoup(xs[j], w, ws) as u128;
                            // y·φ (192 bits) = top·2^128 + low.
                            let p0 = y * p_lo;
                            let p1 = y * p_hi + (p0 >> 64);
                            let low = (p1 << 64) | (p0 as u64 as u128);
                            let (f, c) = frac[j].overflowing_add(low);
                            frac[j] = f;
                            int[j] += (p1 >> 64) + u128::from(c) + y * wi;
                        }
                    } else {
                        let phi = self.one_frac[i];
                        let hi = h[i] as u128;
                        for j in 0..m {
                            let y = q.mul_shoup(xs[j], w, ws);
                            // y < q_i: y·⌊2^128/q_i⌋ < 2^128.
                            let (f, c) = frac[j].overflowing_add(y as u128 * phi);
                            frac[j] = f;
                            carry[j] += u64::from(c);
                            int[j] += y as u128 * hi;
                        }
                    }
                }
                let mut max_abs = 0u128;
                let mut above = false;
                for j in 0..m {
                    let up = u64::from(frac[j] >> 127 != 0);
                    chunk[j] = if SCALED {
                        t.reduce_u128(int[j] + up as u128)
                    } else {
                        let alpha = t.reduce(carry[j] + up);
                        t.add(t.reduce_u128(int[j]), t.mul(alpha, neg_q))
                    };
                    let a = (frac[j] as i128).unsigned_abs();
                    max_abs = max_abs.max(a);
                    if !above && a >= maybe {
                        above = a >= sure || self.above_quarter_exact(limbs, start + j, SCALED);
                    }
                }
                (max_abs, above)
            })
            .reduce(|| (0, false), |a, b| (a.0.max(b.0), a.1 || b.1));
        NoiseFraction {
            max_abs,
            error: self.error,
            above_quarter: above,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use num_bigint::{BigInt, BigUint};
    use num_traits::{ToPrimitive, Zero};
    use proptest::prelude::*;

    /// Distinct NTT primes (2N = 2^11) of the given sizes, and `t = 65537`-like plaintext
    /// moduli below all of them.
    fn basis(bits: &[u32]) -> Vec<Modulus> {
        let mut out: Vec<u64> = Vec::new();
        for &b in bits {
            let p = ntt_primes(b, 1 << 11, 1, &out).unwrap()[0];
            out.push(p);
        }
        out.into_iter().map(|q| Modulus::new(q).unwrap()).collect()
    }

    const BASES: [&[u32]; 5] = [
        &[30],
        &[40, 35],
        &[60, 40, 40, 40],
        &[61, 61, 61, 61, 61, 61, 61],
        &[60, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50],
    ];
    const TS: [u64; 3] = [2, 65537, 786433];

    /// `x mod Q` for a big integer (any sign), in `[0, Q)`.
    fn modq(x: &BigInt, q: &BigUint) -> BigUint {
        let q = BigInt::from(q.clone());
        (((x % &q) + &q) % &q).magnitude().clone()
    }

    /// The reference BFV decoding by big integers: `(round(t·x/Q) mod t, [t·x]_Q centred)`.
    fn bfv_ref(b: &RnsBasis, t: u64, x: &BigUint) -> (u64, BigInt) {
        let q = b.product();
        let tx = x * t;
        let m = ((&tx + (q >> 1u32)) / q) % t;
        let nu = BigInt::from(&tx % q);
        let nu = if nu > BigInt::from(q >> 1u32) {
            nu - BigInt::from(q.clone())
        } else {
            nu
        };
        (m.to_u64().unwrap(), nu)
    }

    fn residues_of(b: &RnsBasis, xs: &[BigUint]) -> Vec<Vec<u64>> {
        let cols: Vec<Vec<u64>> = xs
            .iter()
            .map(|x| b.decompose(&BigInt::from(x.clone())))
            .collect();
        (0..b.len())
            .map(|i| cols.iter().map(|c| c[i]).collect())
            .collect()
    }

    fn log2_abs(x: &BigInt) -> f64 {
        if x.is_zero() {
            return f64::NEG_INFINITY;
        }
        let shift = x.bits().saturating_sub(64);
        ((x.magnitude() >> shift).to_u64().unwrap() as f64).log2() + shift as f64
    }

    /// Checks both decodings of `xs` against big integers: results, the exact `Q/4` flag, the
    /// fraction bound, and the exact and fast magnitudes.
    fn check(b: &RnsBasis, t: u64, xs: &[BigUint]) -> std::result::Result<(), TestCaseError> {
        let tm = Modulus::new(t).unwrap();
        let dec = CrtDecoder::new(b.moduli(), tm).unwrap();
        let q = b.product();
        let limbs = residues_of(b, xs);
        let refs: Vec<&[u64]> = limbs.iter().map(|v| v.as_slice()).collect();
        let quarter = BigInt::from(q >> 2u32);
        let two128 = BigInt::from(1u8) << 128u32;

        // BFV.
        let mut out = vec![0u64; xs.len()];
        let f = dec.scale_round(&refs, &mut out);
        let mut max_nu = BigInt::zero();
        for (x, &got) in xs.iter().zip(&out) {
            let (m, nu) = bfv_ref(b, t, x);
            if nu.magnitude() > max_nu.magnitude() {
                max_nu = nu.clone();
            }
            if nu.magnitude() <= quarter.magnitude() {
                prop_assert_eq!(got, m);
            }
        }
        prop_assert_eq!(f.above_quarter, max_nu.magnitude() > quarter.magnitude());
        // 0 <= ρ - ρ̃ < E for the largest: |ρ̃| within E of max|ρ|.
        let exact_frac =
            (BigInt::from(max_nu.magnitude().clone()) * &two128) / BigInt::from(q.clone());
        let diff = (exact_frac - BigInt::from(f.max_abs)).magnitude().clone();
        prop_assert!(
            diff <= BigUint::from(f.error),
            "fraction error {} > {}",
            diff,
            f.error
        );
        let exact = log2_abs(&max_nu);
        let got = dec.exact_max_log2(&refs, true);
        prop_assert!(
            got == exact || (got - exact).abs() < 1e-9,
            "{} vs {}",
            got,
            exact
        );
        let fast = dec.max_log2(&refs, true);
        prop_assert!(
            fast == exact || (fast - exact).abs() < 1e-6,
            "{} vs {}",
            fast,
            exact
        );

        // BGV, with a scale.
        let scale = 3 % t;
        let f = dec.centred_mod_t(&refs, scale, &mut out);
        let mut max_v = BigInt::zero();
        for (x, &got) in xs.iter().zip(&out) {
            let v = b.reconstruct_centered(&b.decompose(&BigInt::from(x.clone())));
            if v.magnitude() > max_v.magnitude() {
                max_v = v.clone();
            }
            let want = (((&v % t as i64) + t as i64) % t as i64).to_u64().unwrap();
            if v.magnitude() <= quarter.magnitude() {
                prop_assert_eq!(got, tm.mul(want, scale));
            }
        }
        prop_assert_eq!(f.above_quarter, max_v.magnitude() > quarter.magnitude());
        let exact = log2_abs(&max_v);
        let got = dec.exact_max_log2(&refs, false);
        prop_assert!(
            got == exact || (got - exact).abs() < 1e-9,
            "{} vs {}",
            got,
            exact
        );
        let fast = dec.max_log2(&refs, false);
        prop_assert!(
            fast == exact || (fast - exact).abs() < 1e-6,
            "{} vs {}",
            fast,
            exact
        );
        Ok(())
    }

    /// A value in `[0, bound)` from random words.
    fn below(bound: &BigUint, words: &[u64]) -> BigUint {
        let mut x = BigUint::zero();
        for &w in words {
            x = (x << 64u32) | BigUint::from(w);
        }
        x % bound
    }

    /// `x` with `[t·x]_Q = ν` (`t` invertible mod `Q`).
    fn with_noise(q: &BigUint, t: u64, nu: &BigInt) -> BigUint {
        // x = (ν + kQ)/t with k ≡ -ν·Q^{-1} (mod t).
        let tm = Modulus::new(t).unwrap();
        let nu_t = tm.reduce_i64((nu % t as i64).to_i64().unwrap());
        let qt = biguint_mod(q, &tm);
        let k = tm.mul(tm.neg(nu_t), tm.inv(qt).unwrap());
        let num = nu + BigInt::from(q * k);
        let x = num / t as i64;
        modq(&x, q)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn random_values(
            bi in 0..BASES.len(),
            ti in 0..TS.len(),
            words in prop::collection::vec(prop::collection::vec(any::<u64>(), 16), 1..40),
        ) {
            let b = RnsBasis::new(basis(BASES[bi])).unwrap();
            let xs: Vec<BigUint> = words.iter().map(|w| below(b.product(), w)).collect();
            check(&b, TS[ti], &xs)?;
        }

        /// Small noise (the budget of live ciphertexts): `ν` and `[x]_Q` of a few to a few
        /// hundred bits, where the fast fraction cannot resolve and the exact path answers.
        #[test]
        fn small_noise(
            bi in 0..BASES.len(),
            ti in 0..TS.len(),
            seeds in prop::collection::vec((any::<u64>(), any::<u64>(), 0u32..400, any::<bool>()), 1..30),
        ) {
            let b = RnsBasis::new(basis(BASES[bi])).unwrap();
            let t = TS[ti];
            let q = b.product().clone();
            let half = BigInt::from(&q >> 1u32);
            let xs: Vec<BigUint> = seeds
                .iter()
                .map(|&(a, c, sh, neg)| {
                    let mag = ((BigInt::from(a) << 64u32) | BigInt::from(c)) << sh;
                    let mag = mag % &half;
                    let nu = if neg { -mag } else { mag };
                    if a & 1 == 0 { with_noise(&q, t, &nu) } else { modq(&nu, &q) }
                })
                .collect();
            check(&b, t, &xs)?;
        }

        /// Noise next to the decision boundary `Q/4` and to the rounding boundary `Q/2`.
        #[test]
        fn near_boundaries(
            bi in 0..BASES.len(),
            ti in 0..TS.len(),
            offs in prop::collection::vec((-300i64..300, any::<bool>(), any::<bool>(), any::<bool>()), 1..8),
        ) {
            let b = RnsBasis::new(basis(BASES[bi])).unwrap();
            let t = TS[ti];
            let q = b.product().clone();
            for &(o, neg, half, scaled) in &offs {
                let base = BigInt::from(&q >> if half { 1u32 } else { 2u32 });
                let mut mag = base + o;
                if half && mag > BigInt::from(&q >> 1u32) {
                    mag = BigInt::from(&q >> 1u32);
                }
                let nu = if neg { -mag } else { mag };
                let x = if scaled { with_noise(&q, t, &nu) } else { modq(&nu, &q) };
                // One coefficient per call: the Q/4 decision is made on it alone.
                check(&b, t, std::slice::from_ref(&x))?;
            }
        }
    }

    #[test]
    fn zero_and_tiny() {
        let b = RnsBasis::new(basis(BASES[2])).unwrap();
        let t = Modulus::new(65537).unwrap();
        let dec = CrtDecoder::new(b.moduli(), t).unwrap();
        let zeros = vec![vec![0u64; 5]; b.len()];
        let refs: Vec<&[u64]> = zeros.iter().map(|v| v.as_slice()).collect();
        assert_eq!(dec.exact_max_log2(&refs, true), f64::NEG_INFINITY);
        assert_eq!(dec.max_log2(&refs, false), f64::NEG_INFINITY);
        let mut out = vec![1u64; 5];
        let f = dec.scale_round(&refs, &mut out);
        assert_eq!((out, f.max_abs, f.above_quarter), (vec![0; 5], 0, false));
        // x = -1: |[x]_Q| = 1, log2 = 0.
        let neg1: Vec<Vec<u64>> = b.moduli().iter().map(|q| vec![q.value() - 1]).collect();
        let refs: Vec<&[u64]> = neg1.iter().map(|v| v.as_slice()).collect();
        assert_eq!(dec.exact_max_log2(&refs, false), 0.0);
        assert!(CrtDecoder::new(b.moduli(), Modulus::new(b.moduli()[1].value()).unwrap()).is_err());
    }
}
