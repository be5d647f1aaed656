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
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `x mod m` for a non-negative big integer, by Horner over its 64-bit digits (most significant
/// first): `r <- (r · 2^64 + d) mod m`.
fn biguint_mod(x: &BigUint, m: &Modulus) -> u64 {
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
    moduli: Vec<Modulus>,
    /// `Q = Π q_i`.
    product: BigUint,
    /// `floor(Q / 2)`: the centred range is `(-Q/2, Q/2]`, i.e. `x > floor(Q/2)` maps to `x - Q`.
    half_product: BigUint,
    /// `q̂_i = Q / q_i`.
    q_hat: Vec<BigUint>,
    /// `q̂_i^{-1} mod q_i`.
    q_hat_inv: Vec<u64>,
    /// Shoup companions of `q_hat_inv`.
    q_hat_inv_shoup: Vec<u64>,
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

    /// Timings: `cargo test --release -p fhe-math rns::tests::timing -- --ignored --nocapture`.
    #[test]
    #[ignore = "timing, run by hand"]
    fn timing() {
        use std::time::Instant;
        let n = 1usize << 16;
        let all = primes(&[[60u32; 9].as_slice(), &[61u32; 16]].concat());
        let conv = BasisConverter::new(&all[..9], &all[9..]).unwrap();
        let input: Vec<Vec<u64>> = all[..9]
            .iter()
            .enumerate()
            .map(|(i, m)| {
                (0..n as u64)
                    .map(|c| (c * 0x9e37_79b9 + i as u64 * 77) % m.value())
                    .collect()
            })
            .collect();
        let mut output = vec![vec![0u64; n]; 16];
        let inp: Vec<&[u64]> = input.iter().map(|v| v.as_slice()).collect();
        let mut out: Vec<&mut [u64]> = output.iter_mut().map(|v| v.as_mut_slice()).collect();
        conv.convert(&inp, &mut out);
        let reps = 20;
        let t = Instant::now();
        for _ in 0..reps {
            conv.convert(&inp, &mut out);
        }
        println!(
            "convert 9 -> 16 limbs, N = 2^16, {} rayon threads: {:.2} ms",
            rayon::current_num_threads(),
            t.elapsed().as_secs_f64() * 1e3 / reps as f64
        );

        let b = RnsBasis::new(all.clone()).unwrap(); // 25 limbs, ~1510 bits
        let m = 4096;
        let small: Vec<Vec<u64>> = (0..m)
            .map(|c| b.decompose_i128((c as i128 - 2048) * 0x1234_5678_9abc_def1_2345))
            .collect();
        let big: Vec<Vec<u64>> = (0..m)
            .map(|c| {
                b.moduli()
                    .iter()
                    .enumerate()
                    .map(|(i, q)| {
                        let h = (c as u64 * 25 + i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                        (h ^ (h >> 29)) % q.value()
                    })
                    .collect()
            })
            .collect();
        for (name, set) in [
            ("|x| < 2^118 (fast path)", &small),
            ("random in Q (big-integer path)", &big),
        ] {
            let t = Instant::now();
            let mut s = 0.0;
            for _ in 0..5 {
                for r in set {
                    s += b.to_f64_centered(r);
                }
            }
            println!(
                "to_f64_centered, 25 limbs, {name}: {:.3} us/coeff ({s:e})",
                t.elapsed().as_secs_f64() * 1e6 / (5 * m) as f64
            );
        }
        let t = Instant::now();
        let mut s = 0.0;
        for r in &big {
            s += bigint_to_f64(&b.reconstruct_centered(r));
        }
        println!(
            "reconstruct_centered + to f64, 25 limbs: {:.3} us/coeff ({s:e})",
            t.elapsed().as_secs_f64() * 1e6 / m as f64
        );
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
        let quarter = 1u128 << 126;
        let (sure, maybe) = (
            quarter.saturating_add(self.error),
            quarter - self.error.min(quarter),
        );
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
mod decoder_tests {
    use super::*;
    use crate::primes::ntt_primes;
    use num_bigint::BigInt;
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

    /// Timings: `cargo test --release -p fhe-math decoder_tests::timing -- --ignored --nocapture`.
    #[test]
    #[ignore = "timing, run by hand"]
    fn timing() {
        use std::time::Instant;
        let n = 1usize << 15;
        let b = RnsBasis::new(basis(BASES[4])).unwrap(); // 60 + 13 × 50 bits
        let dec = CrtDecoder::new(b.moduli(), Modulus::new(65537).unwrap()).unwrap();
        let limbs: Vec<Vec<u64>> = b
            .moduli()
            .iter()
            .enumerate()
            .map(|(i, q)| {
                (0..n as u64)
                    .map(|c| (c * 0x9e37_79b9_7f4a_7c15 + i as u64 * 77) % q.value())
                    .collect()
            })
            .collect();
        let refs: Vec<&[u64]> = limbs.iter().map(|v| v.as_slice()).collect();
        let mut out = vec![0u64; n];
        let reps = 20;
        let time = |name: &str, f: &mut dyn FnMut()| {
            f();
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            println!(
                "{name}, N = 2^15, 14 limbs, {} threads: {:.3} ms",
                rayon::current_num_threads(),
                t.elapsed().as_secs_f64() * 1e3 / reps as f64
            );
        };
        time("scale_round", &mut || {
            dec.scale_round(&refs, &mut out);
        });
        time("centred_mod_t", &mut || {
            dec.centred_mod_t(&refs, 3, &mut out);
        });
        time("exact_max_log2", &mut || {
            dec.exact_max_log2(&refs, true);
        });
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
