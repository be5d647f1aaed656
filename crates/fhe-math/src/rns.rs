//! Residue number system (RNS) bases: CRT reconstruction and decomposition, and the fast
//! (approximate, HPS-style) basis conversion used by modulus raising and key switching.
//!
//! An integer `x` modulo `Q = q_0 · … · q_{L-1}` (pairwise coprime `q_i`) is stored as its
//! residues `x_i = x mod q_i`. The CRT gives `x = Σ_i [x_i · q̂_i^{-1}]_{q_i} · q̂_i mod Q` with
//! `q̂_i = Q / q_i`; dropping the final `mod Q` gives the fast basis conversion of
//! [`BasisConverter`], whose result is `x + α·Q` for a small integer `0 <= α < L`.

use crate::error::{Error, Result};
use crate::modulus::Modulus;
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::Zero;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Greatest common divisor of two words.
pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `x mod m` for a non-negative big integer, by Horner over its 64-bit digits (most significant
/// first): `r <- (r · 2^64 + d) mod m`.
pub(crate) fn biguint_mod(x: &BigUint, m: &Modulus) -> u64 {
    x.iter_u64_digits()
        .rev()
        .fold(0u64, |r, d| m.reduce_u128(((r as u128) << 64) | d as u128))
}

/// Correctly rounded (to nearest, ties to even) conversion of a big integer to `f64`;
/// `±inf` when the magnitude exceeds `f64::MAX`.
fn bigint_to_f64(x: &BigInt) -> f64 {
    let mag = x.magnitude();
    let bits = mag.bits();
    let abs = if bits <= 64 {
        // `u64 as f64` rounds to nearest even.
        mag.iter_u64_digits().next().unwrap_or(0) as f64
    } else {
        let shift = bits - 64;
        let top = (mag >> shift).iter_u64_digits().next().unwrap_or(0);
        // Sticky bit: OR any discarded non-zero bit into the lowest bit of the 64-bit window.
        // The window keeps 11 bits below f64's 53, so this only breaks exact ties correctly.
        let sticky = mag.trailing_zeros().is_some_and(|tz| tz < shift);
        let t = (top | u64::from(sticky)) as f64;
        if shift > 1023 {
            f64::INFINITY
        } else {
            // 2^shift built from its bits: exact.
            t * f64::from_bits((shift + 1023) << 52)
        }
    };
    if x.sign() == Sign::Minus { -abs } else { abs }
}

/// An RNS basis `{q_0, …, q_{L-1}}` of pairwise coprime moduli with its CRT constants:
/// `Q = Π q_i`, `q̂_i = Q / q_i`, `q̂_i^{-1} mod q_i`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "Vec<Modulus>", into = "Vec<Modulus>")]
pub struct RnsBasis {
    pub(crate) moduli: Vec<Modulus>,
    /// `Q = Π q_i`.
    pub(crate) product: BigUint,
    /// `floor(Q / 2)`: the centred range is `(-Q/2, Q/2]`, i.e. `x > floor(Q/2)` maps to `x - Q`.
    half_product: BigUint,
    /// `q̂_i = Q / q_i`.
    pub(crate) q_hat: Vec<BigUint>,
    /// `q̂_i^{-1} mod q_i`.
    pub(crate) q_hat_inv: Vec<u64>,
    /// Shoup companions of `q_hat_inv`.
    pub(crate) q_hat_inv_shoup: Vec<u64>,
    /// `1 / q_i` as `f64` (for the fast centred `f64` conversion).
    q_inv_f64: Vec<f64>,
    /// `q̂_i mod 2^128`.
    q_hat_low: Vec<u128>,
    /// `Q mod 2^128`.
    product_low: u128,
    /// Whether `Q < 2^120` (then every centred value is computed exactly in `i128`).
    small: bool,
}

impl TryFrom<Vec<Modulus>> for RnsBasis {
    type Error = Error;
    fn try_from(moduli: Vec<Modulus>) -> Result<Self> {
        RnsBasis::new(moduli)
    }
}

impl From<RnsBasis> for Vec<Modulus> {
    fn from(b: RnsBasis) -> Vec<Modulus> {
        b.moduli
    }
}

/// The low 128 bits of a big unsigned integer.
fn low_u128(x: &BigUint) -> u128 {
    let mut it = x.iter_u64_digits();
    let lo = it.next().unwrap_or(0) as u128;
    let hi = it.next().unwrap_or(0) as u128;
    lo | (hi << 64)
}

impl RnsBasis {
    /// Builds the basis of `moduli`, which must be non-empty and pairwise coprime
    /// (`gcd(q_i, q_j) = 1` for `i != j`), else [`Error::InvalidModulus`].
    pub fn new(moduli: Vec<Modulus>) -> Result<Self> {
        if moduli.is_empty() {
            return Err(Error::InvalidModulus {
                modulus: 0,
                reason: "an RNS basis needs at least one modulus",
            });
        }
        for (i, a) in moduli.iter().enumerate() {
            for b in &moduli[..i] {
                if gcd(a.value(), b.value()) != 1 {
                    return Err(Error::InvalidModulus {
                        modulus: a.value(),
                        reason: "RNS moduli must be pairwise coprime",
                    });
                }
            }
        }
        let product: BigUint = moduli.iter().map(|m| BigUint::from(m.value())).product();
        let half_product = &product >> 1u32;
        let q_hat: Vec<BigUint> = moduli.iter().map(|m| &product / m.value()).collect();
        let mut q_hat_inv = Vec::with_capacity(moduli.len());
        for (m, h) in moduli.iter().zip(&q_hat) {
            q_hat_inv.push(m.inv(biguint_mod(h, m))?);
        }
        let q_hat_inv_shoup = moduli
            .iter()
            .zip(&q_hat_inv)
            .map(|(m, &w)| m.shoup(w))
            .collect();
        let q_inv_f64 = moduli.iter().map(|m| 1.0 / m.value() as f64).collect();
        let q_hat_low = q_hat.iter().map(low_u128).collect();
        let product_low = low_u128(&product);
        let small = product.bits() < 120;
        Ok(RnsBasis {
            moduli,
            product,
            half_product,
            q_hat,
            q_hat_inv,
            q_hat_inv_shoup,
            q_inv_f64,
            q_hat_low,
            product_low,
            small,
        })
    }

    /// The moduli `q_0, …, q_{L-1}`.
    #[inline]
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// Number of moduli `L`.
    #[inline]
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Always `false`: a basis has at least one modulus.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// The product `Q = Π q_i`.
    #[inline]
    pub fn product(&self) -> &BigUint {
        &self.product
    }

    /// `q̂_i = Q / q_i`.
    ///
    /// # Panics
    /// If `i >= len()`.
    #[inline]
    pub fn q_hat(&self, i: usize) -> &BigUint {
        &self.q_hat[i]
    }

    /// `q̂_i^{-1} mod q_i = (Q / q_i)^{-1} mod q_i`.
    ///
    /// # Panics
    /// If `i >= len()`.
    #[inline]
    pub fn q_hat_inv(&self, i: usize) -> u64 {
        self.q_hat_inv[i]
    }

    /// Shoup companion `floor(q̂_i^{-1} · 2^64 / q_i)` of [`RnsBasis::q_hat_inv`].
    ///
    /// # Panics
    /// If `i >= len()`.
    #[inline]
    pub fn q_hat_inv_shoup(&self, i: usize) -> u64 {
        self.q_hat_inv_shoup[i]
    }

    /// `v_i = [x_i · q̂_i^{-1}]_{q_i}` for every limb (Shoup multiply).
    #[inline]
    fn crt_digits<'a>(&'a self, residues: &'a [u64]) -> impl Iterator<Item = u64> + 'a {
        assert_eq!(
            residues.len(),
            self.len(),
            "RNS residue count does not match the basis"
        );
        self.moduli
            .iter()
            .zip(residues)
            .zip(self.q_hat_inv.iter().zip(&self.q_hat_inv_shoup))
            .map(|((m, &x), (&w, &ws))| m.mul_shoup(x, w, ws))
    }

    /// CRT reconstruction: the unique `x` in `[0, Q)` with `x ≡ residues[i] (mod q_i)`;
    /// `x = Σ_i [x_i q̂_i^{-1}]_{q_i} q̂_i mod Q`.
    ///
    /// # Panics
    /// If `residues.len() != len()`.
    pub fn reconstruct(&self, residues: &[u64]) -> BigUint {
        let mut acc = BigUint::zero();
        for (v, h) in self.crt_digits(residues).zip(&self.q_hat) {
            acc += h * v;
        }
        // acc = x + αQ with 0 <= α < L.
        if acc >= self.product {
            acc %= &self.product;
        }
        acc
    }

    /// Centred CRT reconstruction: the unique `x` in `(-Q/2, Q/2]` with `x ≡ residues[i] (mod q_i)`.
    ///
    /// # Panics
    /// If `residues.len() != len()`.
    pub fn reconstruct_centered(&self, residues: &[u64]) -> BigInt {
        let x = self.reconstruct(residues);
        if x > self.half_product {
            BigInt::from_biguint(Sign::Minus, &self.product - x)
        } else {
            BigInt::from(x)
        }
    }

    /// RNS decomposition of any (signed) integer: `x mod q_i` in `[0, q_i)` for every `i`.
    pub fn decompose(&self, x: &BigInt) -> Vec<u64> {
        let neg = x.sign() == Sign::Minus;
        self.moduli
            .iter()
            .map(|m| {
                let r = biguint_mod(x.magnitude(), m);
                if neg { m.neg(r) } else { r }
            })
            .collect()
    }

    /// RNS decomposition of an `i128`: `x mod q_i` in `[0, q_i)` for every `i`.
    pub fn decompose_i128(&self, x: i128) -> Vec<u64> {
        let mag = x.unsigned_abs();
        self.moduli
            .iter()
            .map(|m| {
                let r = m.reduce_u128(mag);
                if x < 0 { m.neg(r) } else { r }
            })
            .collect()
    }

    /// The centred value `x` in `(-Q/2, Q/2]` (see [`RnsBasis::reconstruct_centered`]) as the
    /// nearest `f64` (ties to even; `±inf` beyond `f64::MAX`).
    ///
    /// Fast path, `O(L)` word operations: with `v_i = [x_i q̂_i^{-1}]_{q_i}`,
    /// `k = round(Σ v_i / q_i)` in `f64` and `r = Σ v_i q̂_i - k Q` computed modulo `2^128`
    /// (wrapping). When `Q < 2^120` `r` is exact up to a multiple of `Q`, fixed by comparison.
    /// Otherwise `r` is accepted only if `|r| < 2^118` and `r ≡ x_i (mod q_i)` for every `i`,
    /// which proves `r = x` (both lie in the centred range and agree modulo `Q`); this covers
    /// every value of practical size in CKKS decoding. Values that fail the check (`|x| ≥ 2^118`
    /// or a wrong `k`) take an exact big-integer path. Either way the result is correctly rounded.
    ///
    /// # Panics
    /// If `residues.len() != len()`.
    pub fn to_f64_centered(&self, residues: &[u64]) -> f64 {
        match self.centered_i128(residues) {
            Some(r) => r as f64,
            None => bigint_to_f64(&self.reconstruct_centered(residues)),
        }
    }

    /// The centred value as an `i128` when it is cheaply provable, else `None` (see
    /// [`RnsBasis::to_f64_centered`]).
    fn centered_i128(&self, residues: &[u64]) -> Option<i128> {
        let mut s = 0.0f64;
        let mut acc = 0u128;
        for ((v, &qi), &h) in self
            .crt_digits(residues)
            .zip(&self.q_inv_f64)
            .zip(&self.q_hat_low)
        {
            s += v as f64 * qi;
            acc = acc.wrapping_add((v as u128).wrapping_mul(h));
        }
        let k = s.round() as u128;
        let r = acc.wrapping_sub(k.wrapping_mul(self.product_low)) as i128;
        if self.small {
            // |Σ v_i q̂_i - kQ| <= (L + 1)Q < 2^126: r is exact; move it into (-Q/2, Q/2].
            let q = self.product_low as i128;
            let half = q / 2;
            let mut r = r;
            while r > half {
                r -= q;
            }
            while r <= half - q {
                r += q;
            }
            return Some(r);
        }
        const BOUND: u128 = 1 << 118;
        let mag = r.unsigned_abs();
        if mag >= BOUND {
            return None;
        }
        let ok = self.moduli.iter().zip(residues).all(|(m, &x)| {
            let rm = m.reduce_u128(mag);
            let rm = if r < 0 { m.neg(rm) } else { rm };
            rm == x || rm == m.reduce(x)
        });
        ok.then_some(r)
    }
}

/// Inverses `x^{-1} mod m` for every modulus `m` of `value_mod` (e.g. `q_l^{-1} mod q_i` for
/// rescaling); [`Error::NotInvertible`] if `gcd(x, m) != 1` for some `m`.
pub fn inv_mod_each(value_mod: &[Modulus], x: u64) -> Result<Vec<u64>> {
    value_mod.iter().map(|m| m.inv(x)).collect()
}

/// Coefficients per work item of [`BasisConverter::convert`].
const CONVERT_CHUNK: usize = 256;

/// Fast basis conversion from `{q_0, …, q_{L-1}}` (product `Q`) to `{p_0, …, p_{K-1}}`:
/// `y_j = (Σ_i [x_i q̂_i^{-1}]_{q_i} · (q̂_i mod p_j)) mod p_j = (x + α Q) mod p_j`, `0 <= α < L`.
///
/// # The contract (reproduced bit for bit by the GPU)
///
/// For every coefficient index `c`, with `x_i = input[i][c]` (any `u64`; canonical residues of
/// an integer `x` in `[0, Q)` in normal use):
/// 1. `v_i = mul_shoup(x_i, q_hat_inv[i], q_hat_inv_shoup[i]) = [x_i · q̂_i^{-1}]_{q_i}`,
///    canonical in `[0, q_i)`;
/// 2. `S_j = Σ_i v_i · h[j][i]` accumulated **exactly** in `u128` (no overflow: checked at
///    construction), where `h[j][i] = q̂_i mod p_j` (canonical);
/// 3. `output[j][c] = S_j mod p_j` in `[0, p_j)` (one `Modulus::reduce_u128`).
///
/// Since the sum is exact, `output[j][c]` depends on nothing but the inputs (not on summation
/// order or lazy reduction): it is `(Σ_i v_i q̂_i) mod p_j`, and `Σ_i v_i q̂_i = x + α·Q` for
/// one integer `0 <= α < L`, the **same** `α` for every `j`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "ConverterModuli", into = "ConverterModuli")]
pub struct BasisConverter {
    from: RnsBasis,
    to: Vec<Modulus>,
    /// Row-major `[to][from]`: `q_hat_mod_p[j * from.len() + i] = q̂_i mod p_j`.
    q_hat_mod_p: Vec<u64>,
    /// `Q mod p_j` for every target modulus (for [`BasisConverter::convert_exact`]).
    q_mod_p: Vec<u64>,
}

/// Serialized form of a [`BasisConverter`]: its two lists of moduli (tables are recomputed).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ConverterModuli {
    from: Vec<Modulus>,
    to: Vec<Modulus>,
}

impl TryFrom<ConverterModuli> for BasisConverter {
    type Error = Error;
    fn try_from(m: ConverterModuli) -> Result<Self> {
        BasisConverter::new(&m.from, &m.to)
    }
}

impl From<BasisConverter> for ConverterModuli {
    fn from(c: BasisConverter) -> ConverterModuli {
        ConverterModuli {
            from: c.from.moduli,
            to: c.to,
        }
    }
}

impl BasisConverter {
    /// Precomputes the conversion from `from` (non-empty, pairwise coprime) to `to` (non-empty,
    /// every `p_j` coprime to every `q_i`): tables `q̂_i^{-1} mod q_i` and `q̂_i mod p_j`.
    ///
    /// Errors: [`Error::InvalidModulus`] for an empty list or a shared factor;
    /// [`Error::ShapeMismatch`] if `Σ_i (q_i - 1)(p_j - 1) >= 2^128` for some `j` (the exact
    /// `u128` accumulation would overflow; with 61-bit moduli this allows 64 source limbs).
    pub fn new(from: &[Modulus], to: &[Modulus]) -> Result<Self> {
        let from = RnsBasis::new(from.to_vec())?;
        if to.is_empty() {
            return Err(Error::InvalidModulus {
                modulus: 0,
                reason: "basis conversion needs at least one target modulus",
            });
        }
        for p in to {
            if from.moduli.iter().any(|q| gcd(q.value(), p.value()) != 1) {
                return Err(Error::InvalidModulus {
                    modulus: p.value(),
                    reason: "target moduli of a basis conversion must be coprime to the source",
                });
            }
            let bound = from.moduli.iter().try_fold(0u128, |s, q| {
                s.checked_add((q.value() - 1) as u128 * (p.value() - 1) as u128)
            });
            if bound.is_none() {
                return Err(Error::ShapeMismatch {
                    what: format!(
                        "cannot convert from {} limbs: the exact u128 sum would overflow",
                        from.len()
                    ),
                });
            }
        }
        let l = from.len();
        let mut q_hat_mod_p = Vec::with_capacity(to.len() * l);
        let q_mod_p = to
            .iter()
            .map(|p| {
                from.moduli
                    .iter()
                    .fold(1 % p.value(), |a, q| p.mul(a, p.reduce(q.value())))
            })
            .collect();
        for p in to {
            let q_mod_p: Vec<u64> = from.moduli.iter().map(|q| p.reduce(q.value())).collect();
            for i in 0..l {
                let h = (0..l)
                    .filter(|&k| k != i)
                    .fold(1 % p.value(), |a, k| p.mul(a, q_mod_p[k]));
                q_hat_mod_p.push(h);
            }
        }
        Ok(BasisConverter {
            from,
            to: to.to_vec(),
            q_hat_mod_p,
            q_mod_p,
        })
    }

    /// The source basis `{q_i}`.
    #[inline]
    pub fn from(&self) -> &[Modulus] {
        &self.from.moduli
    }

    /// The source basis with its CRT constants.
    #[inline]
    pub fn from_basis(&self) -> &RnsBasis {
        &self.from
    }

    /// The target moduli `{p_j}`.
    #[inline]
    pub fn to(&self) -> &[Modulus] {
        &self.to
    }

    /// `q̂_i^{-1} mod q_i` per source limb `i` (GPU upload).
    #[inline]
    pub fn q_hat_inv(&self) -> &[u64] {
        &self.from.q_hat_inv
    }

    /// Shoup companions `floor(q̂_i^{-1} · 2^64 / q_i)` per source limb `i` (GPU upload).
    #[inline]
    pub fn q_hat_inv_shoup(&self) -> &[u64] {
        &self.from.q_hat_inv_shoup
    }

    /// Row-major `[to][from]` matrix: element `j * from().len() + i` is `q̂_i mod p_j`
    /// (GPU upload).
    #[inline]
    pub fn q_hat_mod_p(&self) -> &[u64] {
        &self.q_hat_mod_p
    }

    /// Converts every coefficient: `output[j][c] = (Σ_i [input[i][c] q̂_i^{-1}]_{q_i} · (q̂_i mod p_j))
    /// mod p_j` (see the type-level contract).
    ///
    /// `input` has one slice per source limb and `output` one per target modulus, all of the
    /// same length (the number of coefficients). This is a hot path: shapes are only checked
    /// with `debug_assert!`; in release builds extra input limbs are ignored and mismatched
    /// lengths give unspecified (but memory-safe) results or a panic on slice indexing.
    /// Parallel over chunks of coefficients (rayon).
    pub fn convert(&self, input: &[&[u64]], output: &mut [&mut [u64]]) {
        self.convert_impl(input, output, false)
    }

    /// `Q mod p_j` per target modulus (GPU upload for [`BasisConverter::convert_exact`]).
    pub fn q_mod_p(&self) -> &[u64] {
        &self.q_mod_p
    }

    /// Like [`BasisConverter::convert`] but removes the overflow: `y_j = (S_j - α·Q) mod p_j`
    /// with `α = ⌊F / 2^64⌋`, `F = Σ_i f_i` summed exactly in u128 and
    /// `f_i = v_i·b_hi,i + ⌊v_i·b_lo,i / 2^64⌋` (≈ `v_i·2^64/q_i`), where `(b_hi, b_lo)` is the
    /// Barrett constant `⌊2^128/q_i⌋` of the source modulus. Each `f_i` underestimates
    /// `v_i·2^64/q_i` by less than 2, so `α` is the true `⌊Σ v_i/q_i⌋` except when `x < 2L·Q/2^64`,
    /// where it may be one less and the result is `x + Q`: `y ≡ x (mod p_j)` for all other `x` in
    /// `[0, Q)`. Integer-only, so the GPU reproduces it bit for bit.
    pub fn convert_exact(&self, input: &[&[u64]], output: &mut [&mut [u64]]) {
        self.convert_impl(input, output, true)
    }

    fn convert_impl(&self, input: &[&[u64]], output: &mut [&mut [u64]], exact: bool) {
        let lf = self.from.len();
        let lt = self.to.len();
        debug_assert_eq!(input.len(), lf, "source limb count");
        debug_assert_eq!(output.len(), lt, "target limb count");
        let n = output.first().map_or(0, |o| o.len());
        debug_assert!(input.iter().all(|s| s.len() == n), "input lengths");
        debug_assert!(output.iter().all(|s| s.len() == n), "output lengths");
        if n == 0 {
            return;
        }
        let n_chunks = n.div_ceil(CONVERT_CHUNK);
        // chunks[k][j]: the k-th chunk of output limb j.
        let mut chunks: Vec<Vec<&mut [u64]>> =
            (0..n_chunks).map(|_| Vec::with_capacity(lt)).collect();
        for out in output.iter_mut() {
            for (k, c) in out.chunks_mut(CONVERT_CHUNK).enumerate() {
                chunks[k].push(c);
            }
        }
        chunks.into_par_iter().enumerate().for_each_init(
            || vec![0u64; CONVERT_CHUNK * lf],
            |v, (k, mut outs)| {
                let start = k * CONVERT_CHUNK;
                self.convert_chunk(input, start, &mut outs, v, exact);
            },
        );
    }

    /// One chunk of [`BasisConverter::convert`] (or `convert_exact` when `exact`): coefficients `start..start + outs[0].len()`.
    /// `v` is scratch of `CONVERT_CHUNK * L` words, laid out `[coefficient][source limb]`.
    fn convert_chunk(
        &self,
        input: &[&[u64]],
        start: usize,
        outs: &mut [&mut [u64]],
        v: &mut [u64],
        exact: bool,
    ) {
        let lf = self.from.len();
        let len = outs[0].len();
        let v = &mut v[..len * lf];
        for (i, inp) in input.iter().take(lf).enumerate() {
            let m = &self.from.moduli[i];
            let (w, ws) = (self.from.q_hat_inv[i], self.from.q_hat_inv_shoup[i]);
            for (c, &x) in inp[start..start + len].iter().enumerate() {
                v[c * lf + i] = m.mul_shoup(x, w, ws);
            }
        }
        let alphas: Vec<u64> = if exact {
            v.chunks_exact(lf)
                .map(|vc| {
                    let mut f = 0u128;
                    for (&a, m) in vc.iter().zip(&self.from.moduli) {
                        let (b_hi, b_lo) = m.barrett_constant();
                        f += a as u128 * b_hi as u128 + ((a as u128 * b_lo as u128) >> 64);
                    }
                    (f >> 64) as u64
                })
                .collect()
        } else {
            Vec::new()
        };
        for (j, ((out, p), row)) in outs
            .iter_mut()
            .zip(&self.to)
            .zip(self.q_hat_mod_p.chunks_exact(lf))
            .enumerate()
        {
            for (c, (y, vc)) in out.iter_mut().zip(v.chunks_exact(lf)).enumerate() {
                let mut acc = 0u128;
                for (&a, &h) in vc.iter().zip(row) {
                    acc += a as u128 * h as u128;
                }
                *y = p.reduce_u128(acc);
                if exact {
                    *y = p.sub(*y, p.mul(p.reduce(alphas[c]), self.q_mod_p[j]));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use num_traits::ToPrimitive;
    use proptest::prelude::*;

    /// Distinct NTT primes, one per entry of `bits`.
    fn primes(bits: &[u32]) -> Vec<Modulus> {
        let mut taken = Vec::new();
        for &b in bits {
            let p = ntt_primes(b, 1 << 12, 1, &taken).unwrap()[0];
            taken.push(p);
        }
        taken
            .into_iter()
            .map(|p| Modulus::new(p).unwrap())
            .collect()
    }

    fn residues_strategy(moduli: Vec<Modulus>) -> impl Strategy<Value = (Vec<Modulus>, Vec<u64>)> {
        let strat: Vec<_> = moduli.iter().map(|m| 0..m.value()).collect();
        (Just(moduli), strat)
    }

    fn basis_strategy(
        count: std::ops::RangeInclusive<usize>,
    ) -> impl Strategy<Value = Vec<Modulus>> {
        prop::collection::vec(40u32..=60, count).prop_map(|b| primes(&b))
    }

    fn random_below(q: &BigUint, words: &[u64]) -> BigUint {
        let mut x = BigUint::zero();
        for &w in words {
            x = (x << 64u32) + w;
        }
        x % q
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn reconstruct_decompose_round_trip(
            (moduli, res) in basis_strategy(3..=8).prop_flat_map(residues_strategy)
        ) {
            let b = RnsBasis::new(moduli).unwrap();
            let x = b.reconstruct(&res);
            prop_assert!(x < *b.product());
            prop_assert_eq!(b.decompose(&BigInt::from(x)), res.clone());
            let xc = b.reconstruct_centered(&res);
            let q = BigInt::from(b.product().clone());
            prop_assert!(&xc * 2 > -&q && &xc * 2 <= q);
            prop_assert_eq!(b.decompose(&xc), res);
        }

        #[test]
        fn decompose_reconstruct_bigint(
            moduli in basis_strategy(3..=8),
            words in prop::collection::vec(any::<u64>(), 1..8),
            neg in any::<bool>(),
        ) {
            let b = RnsBasis::new(moduli).unwrap();
            // Anywhere in the centred range, both signs.
            let half = b.product() >> 1u32;
            let mag = random_below(&half, &words);
            let x = if neg { -BigInt::from(mag) } else { BigInt::from(mag) };
            let res = b.decompose(&x);
            for (r, m) in res.iter().zip(b.moduli()) {
                prop_assert!(*r < m.value());
            }
            prop_assert_eq!(b.reconstruct_centered(&res), x.clone());
            let q = BigInt::from(b.product().clone());
            let pos = ((&x % &q) + &q) % &q;
            prop_assert_eq!(BigInt::from(b.reconstruct(&res)), pos);
        }

        #[test]
        fn decompose_i128_matches(moduli in basis_strategy(3..=8), x in any::<i128>()) {
            let b = RnsBasis::new(moduli).unwrap();
            prop_assert_eq!(b.decompose_i128(x), b.decompose(&BigInt::from(x)));
        }

        #[test]
        fn conversion_is_x_plus_alpha_q(
            from in basis_strategy(1..=6),
            to_bits in prop::collection::vec(40u32..=60, 1..=4),
            seeds in prop::collection::vec(prop::collection::vec(any::<u64>(), 8), 1..40),
        ) {
            let mut all_bits: Vec<u32> = from.iter().map(|m| m.bits()).collect();
            all_bits.extend(&to_bits);
            let all = primes(&all_bits); // same `from` primes first, then distinct `to` primes
            prop_assert_eq!(&all[..from.len()], &from[..]);
            let to = all[from.len()..].to_vec();
            let conv = BasisConverter::new(&from, &to).unwrap();
            let bf = conv.from_basis().clone();
            let bt = RnsBasis::new(to.clone()).unwrap();
            let q = bf.product().clone();
            let xs: Vec<BigUint> = seeds.iter().map(|w| random_below(&q, w)).collect();
            let input: Vec<Vec<u64>> = (0..from.len())
                .map(|i| xs.iter().map(|x| bf.decompose(&BigInt::from(x.clone()))[i]).collect())
                .collect();
            let mut output = vec![vec![0u64; xs.len()]; to.len()];
            {
                let inp: Vec<&[u64]> = input.iter().map(|v| v.as_slice()).collect();
                let mut out: Vec<&mut [u64]> = output.iter_mut().map(|v| v.as_mut_slice()).collect();
                conv.convert(&inp, &mut out);
            }
            for (c, x) in xs.iter().enumerate() {
                let y: Vec<u64> = output.iter().map(|o| o[c]).collect();
                let yv = bt.reconstruct(&y);
                // y ≡ x + αQ (mod P) for a single α in [0, L).
                let found = (0..from.len() as u64)
                    .any(|alpha| (x + &q * alpha) % bt.product() == yv);
                prop_assert!(found, "no alpha for coefficient {}", c);
                for (j, p) in to.iter().enumerate() {
                    prop_assert!(y[j] < p.value());
                }
            }
        }

        #[test]
        fn to_f64_random(
            (moduli, res) in basis_strategy(1..=8).prop_flat_map(residues_strategy)
        ) {
            let b = RnsBasis::new(moduli).unwrap();
            let exact = bigint_to_f64(&b.reconstruct_centered(&res));
            let got = b.to_f64_centered(&res);
            prop_assert!((got - exact).abs() <= 1e-15 * exact.abs() + 1e-300, "{} vs {}", got, exact);
        }

        #[test]
        fn to_f64_small_values(
            moduli in basis_strategy(1..=8),
            words in prop::collection::vec(any::<u64>(), 1..3),
            shift in 0u32..140,
            neg in any::<bool>(),
        ) {
            let b = RnsBasis::new(moduli).unwrap();
            let half = b.product() >> 1u32;
            let mag = random_below(&half, &words) >> shift;
            let x = if neg { -BigInt::from(mag) } else { BigInt::from(mag) };
            let res = b.decompose(&x);
            let exact = x.to_f64().unwrap();
            let got = b.to_f64_centered(&res);
            prop_assert!((got - exact).abs() <= 1e-15 * exact.abs(), "{} vs {}", got, exact);
            if x.bits() < 118 {
                // The fast path proves small values without big integers.
                prop_assert_eq!(b.centered_i128(&res), x.to_i128());
            }
            prop_assert_eq!(got, bigint_to_f64(&x));
        }
    }

    #[test]
    fn bigint_to_f64_rounds_correctly() {
        // 2^70 + 2^17 + 1: above the halfway point between 2^70 and its successor 2^70 + 2^18.
        let x = (BigInt::from(1) << 70u32) + (BigInt::from(1) << 17u32) + 1;
        assert_eq!(bigint_to_f64(&x), 2f64.powi(70) + 2f64.powi(18));
        // Exact tie: to even (2^70).
        let x = (BigInt::from(1) << 70u32) + (BigInt::from(1) << 17u32);
        assert_eq!(bigint_to_f64(&x), 2f64.powi(70));
        assert_eq!(
            bigint_to_f64(&-(BigInt::from(3) << 1000u32)),
            -3.0 * 2f64.powi(1000)
        );
        assert_eq!(bigint_to_f64(&(BigInt::from(1) << 1100u32)), f64::INFINITY);
    }

    #[test]
    fn rejects_bad_bases() {
        let m = |q| Modulus::new(q).unwrap();
        assert!(RnsBasis::new(vec![]).is_err());
        assert!(RnsBasis::new(vec![m(6), m(9)]).is_err());
        assert!(RnsBasis::new(vec![m(7), m(7)]).is_err());
        assert!(BasisConverter::new(&[m(7), m(11)], &[m(13), m(11)]).is_err());
        assert!(BasisConverter::new(&[m(7)], &[]).is_err());
        let big = primes(&[61; 66]);
        assert!(BasisConverter::new(&big[..64], &big[64..]).is_ok());
        assert!(matches!(
            BasisConverter::new(&big[..65], &big[65..]),
            Err(Error::ShapeMismatch { .. })
        ));
        assert_eq!(inv_mod_each(&[m(7), m(11)], 3).unwrap(), vec![5, 4]);
        assert!(inv_mod_each(&[m(7), m(9)], 3).is_err());
    }

    #[test]
    fn serde_round_trip_via_moduli() {
        let ms = primes(&[50, 50, 45]);
        let b = RnsBasis::try_from(ms.clone()).unwrap();
        let v: Vec<Modulus> = b.clone().into();
        assert_eq!(v, ms);
        let c = BasisConverter::new(&ms[..2], &ms[2..]).unwrap();
        let back = BasisConverter::try_from(ConverterModuli::from(c.clone())).unwrap();
        assert_eq!(back.q_hat_mod_p(), c.q_hat_mod_p());
    }

    #[test]
    fn convert_exact_removes_the_overflow() {
        let from: Vec<Modulus> = crate::primes::ntt_primes(60, 1 << 12, 3, &[])
            .unwrap()
            .into_iter()
            .map(|q| Modulus::new(q).unwrap())
            .collect();
        let to: Vec<Modulus> = crate::primes::ntt_primes(50, 1 << 12, 2, &[])
            .unwrap()
            .into_iter()
            .map(|q| Modulus::new(q).unwrap())
            .collect();
        let conv = BasisConverter::new(&from, &to).unwrap();
        let basis = RnsBasis::new(from.clone()).unwrap();
        let n = 512;
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let input: Vec<Vec<u64>> = from
            .iter()
            .map(|m| (0..n).map(|_| m.reduce(next())).collect())
            .collect();
        let refs: Vec<&[u64]> = input.iter().map(|v| v.as_slice()).collect();
        let mut out = vec![vec![0u64; n]; to.len()];
        let mut outs: Vec<&mut [u64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
        conv.convert_exact(&refs, &mut outs);
        for c in 0..n {
            let residues: Vec<u64> = input.iter().map(|l| l[c]).collect();
            let x = basis.reconstruct(&residues);
            for (j, p) in to.iter().enumerate() {
                let want = (&x % p.value())
                    .to_u64_digits()
                    .first()
                    .copied()
                    .unwrap_or(0);
                assert_eq!(out[j][c], want, "coefficient {c}, target {j}");
            }
        }
    }
}
