//! [`BlindRotateBackend`]: batched blind rotation, sample extraction and LWE key switching,
//! the device operations of TFHE-style programmable bootstrapping.
//!
//! This trait is separate from the RLWE traits ([`super::RingBackend`] and the others): its
//! objects are LWE ciphertexts (vectors mod `q`), RGSW bootstrapping keys and LWE key-switching
//! keys over one NTT-friendly prime `q < 2^53` and a ring `Z_q[X]/(X^N + 1)`, with the blind rotation
//! indexed by exponents modulo `2N`, which is not an NTT prime. A backend keeps the keys in its
//! own memory ([`BlindRotateBackend::BootstrapKey`], [`BlindRotateBackend::KeySwitchKey`]) and
//! processes whole batches of LWE ciphertexts ([`BlindRotateBackend::LweBatch`]) per call.
//!
//! [`crate::cpu::CpuBackend`] implements it (rayon over the batch, in `blind_rotate/cpu.rs`),
//! and so does `fhe_cuda::CudaBackend` (one launch rotates a whole batch through all steps, a
//! thread block per ciphertext, the key spectra shared through L2; `fhe_cuda`'s
//! `kernels/blind_rotate.cu`), with the same words.
//!
//! # Bit-exactness rules
//!
//! Every implementation produces the same output words as the CPU reference for the same keys
//! and inputs, in a batch or alone. Everything is exact modular arithmetic mod the prime `q`
//! except the polynomial products of the external product, which use one specified f64 FFT
//! ([`fft`]: the same IEEE operations in the same order on every backend, no fused
//! multiply-add); the roundings are fixed here:
//!
//! * **Modulus switch to `2N`** ([`mod_switch`]): `x ↦ floor((x · 2N + floor(q / 2)) / q) mod 2N`,
//!   i.e. `x · 2N / q` rounded half up. Because `q` is odd and `x < q`, `x · 2N / q` is never
//!   exactly half-way between integers unless `x = 0`, so no tie rule is ever exercised.
//! * **Signed gadget decomposition** ([`Gadget::decompose`]) with base `B = 2^base_log` and
//!   `l` levels: first `y = floor((x · B^l + floor(q / 2)) / q) mod B^l` (the dropped low part
//!   rounded half up; again no ties for odd `q`), then the base-`B` digits of `y` from the least
//!   significant one up, each digit `d` plus the incoming carry turned into `d - B` with carry 1
//!   when it is `>= B/2` (so a digit equal to `B/2` becomes `-B/2` and carries): digits lie in
//!   `[-B/2, B/2)`. The carry out of the most significant digit is dropped: it stands for
//!   `B^l · q / B^l = q ≡ 0`. Digit `j = 1..=l` (most significant first) multiplies the gadget
//!   value `g_j = round-half-up(q / B^j)` ([`Gadget::values`]), so `Σ d_j g_j ≈ x` with error at
//!   most `q / (2 B^l) + l · B / 4`.
//! * **Monomials**: multiplication by `X^t`, `0 <= t < 2N`, is the negacyclic rotation
//!   (coefficient `i` moves to `i + t`, negated once for each wrap past `N`).
//! * **External product**: every GLWE component is decomposed coefficient-wise; each digit
//!   polynomial (signed digits) is folded and transformed by the forward FFT of [`fft`],
//!   multiplied pointwise with the key row's spectrum ([`fft::NegacyclicFft::key_spectrum`] of
//!   the row's polynomial, which the host key stores in NTT form) and summed in the order of the
//!   [`fft`] module; the sums go through the inverse FFT and each coefficient is rounded to the
//!   nearest integer and reduced mod `q` ([`fft::f64_to_residue`]). The result is the exact
//!   product mod `q` plus the transform's rounding error (a noise term; `tfhe-switch`'s
//!   parameters bound it).
//! * **Blind rotation** of `(a, b)` (dimension `n`) with test polynomial `v`: `ã_i`, `b̃` by
//!   the modulus switch; the accumulator starts as the trivial GLWE `(0, …, 0, X^{-b̃} · v)`;
//!   for `i = 0..n`: with a binary key, `ACC ← ACC + BSK_i ⊡ (X^{ã_i} · ACC − ACC)` (a CMux);
//!   with a ternary key (two RGSW per coefficient, of `[s_i = 1]` and `[s_i = −1]`),
//!   `ACC ← ACC + BSK_i⁺ ⊡ (X^{ã_i} · ACC − ACC) + BSK_i⁻ ⊡ (X^{−ã_i} · ACC − ACC)`, both
//!   differences taken from the same `ACC` and both products summed in one spectrum (the `⁺`
//!   key's terms first) before one inverse FFT per component.
//!   A step with `ã_i = 0` may be skipped: its update is exactly zero.
//! * **Multi-bit blind rotation** (`group_size` `g` in `2..=3`, binary LWE key; Joye and
//!   Walter's grouping, as tfhe-rs's multi-bit PBS): the `n` coefficients form `n / g` groups;
//!   group `i` has `2^g − 1` RGSW ciphertexts, pattern `p = 1 … 2^g − 1` encrypting
//!   `Π_j [s_{gi+j} = bit_j(p)]`. With `t_p = Σ_{j: bit_j(p) = 1} ã_{gi+j} mod 2N`, a step is
//!   `ACC ← ACC + Dec(ACC) · Σ_p (X^{t_p} − 1) · BSK_{i,p}`: exactly one pattern (or none, for
//!   `s = 0` on the group) selects, so `ACC` becomes `X^{Σ_j ã_{gi+j} s_{gi+j}} · ACC`. The
//!   accumulator itself is decomposed (not a difference), and the combined key is formed in
//!   the spectral domain ([`fft`], "Multi-bit key product"), one forward and one inverse
//!   transform per component a step as in a CMux. A group whose `ã` are all zero may be
//!   skipped (every factor `X^0 − 1` is exactly zero).
//! * **Sample extraction** of coefficient 0 from `(A_1, …, A_k, B)`: LWE mask entry
//!   `c · N + j` is `A_c[0]` for `j = 0` and `−A_c[N − j]` otherwise, body `B[0]`.
//! * **LWE key switching** with key rows `K_{i,j}` (LWE encryptions of `s_i · g_j` under the
//!   output key): `a' = −Σ_{i,j} d_{i,j} · K_{i,j}.a`, `b' = b − Σ_{i,j} d_{i,j} · K_{i,j}.b`,
//!   where `d_{i,j}` are the signed digits of `a_i`.
//!
//! # Conventions and layouts
//!
//! An LWE ciphertext of dimension `n` is `n + 1` residues: the mask `a_0 … a_{n−1}` then the
//! body `b`, with phase `b − Σ a_i s_i`. A GLWE ciphertext is `k + 1` polynomials, the masks
//! then the body, phase `B − Σ A_c · S_c`. An RGSW encryption of `μ` has `(k + 1) · l` rows; row
//! `c · l + (j − 1)` is a GLWE encryption of zero with `μ · g_j` added to component `c`.
//! A bootstrapping key stores, for each step `i` (an LWE coefficient, or a group of `g` of them)
//! and each of its `R` RGSW ciphertexts ([`BlindRotateParams::rgsws_per_step`]: `kpc`, or
//! `2^g − 1` ordered by pattern), the rows in order, each row's `k + 1` polynomials in NTT
//! form: `data[((i · R + t) · (k + 1) · l + row) · (k + 1) · N + c · N + coefficient]`.
//! A key-switching key stores row `i · l + (j − 1)` as an LWE ciphertext of the output dimension.

use crate::error::{Error, Result};
use crate::modulus::Modulus;
use serde::{Deserialize, Serialize};

mod cpu;
pub mod fft;

pub use cpu::{
    CpuBootstrapKey, CpuKeySwitchKey, blind_rotate_extract_one, cmux, external_product,
    key_spectra, key_switch_one, monomial_mul, sample_extract,
};

/// `x · 2N / q` rounded half up, modulo `2N` (`two_n` a power of two, `x < q`, `q` odd).
///
/// See the module's bit-exactness rules; this is the only modulus switch of the blind rotation.
#[inline]
pub fn mod_switch(x: u64, q: u64, two_n: u64) -> u64 {
    let num = u128::from(x) * u128::from(two_n) + u128::from(q / 2);
    ((num / u128::from(q)) as u64) & (two_n - 1)
}

/// A signed gadget: base `B = 2^base_log`, `levels` digits, for a modulus `q`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Gadget {
    /// `log2` of the base.
    pub base_log: u32,
    /// Number of digits `l`.
    pub levels: u32,
}

impl Gadget {
    /// Checks the gadget against the modulus `q`: `base_log >= 1`, `levels >= 1`, and
    /// `B^l <= q` (every digit has a nonzero gadget value).
    pub fn check(&self, q: &Modulus) -> Result<()> {
        let total = u64::from(self.base_log) * u64::from(self.levels);
        if self.base_log == 0 || self.levels == 0 || total >= 64 || (1u64 << total) > q.value() {
            return Err(Error::Unsupported {
                what: format!(
                    "gadget base 2^{} with {} levels for modulus {}: need base_log >= 1, \
                     levels >= 1 and base^levels <= q",
                    self.base_log,
                    self.levels,
                    q.value()
                ),
            });
        }
        Ok(())
    }

    /// The gadget values `g_j = round-half-up(q / B^j)`, `j = 1..=l`, most significant first.
    pub fn values(&self, q: u64) -> Vec<u64> {
        (1..=self.levels)
            .map(|j| {
                let bj = 1u128 << (self.base_log * j);
                ((u128::from(q) + bj / 2) / bj) as u64
            })
            .collect()
    }

    /// The signed digits of `x < q` into `out[0..l]` (most significant first), each in
    /// `[-B/2, B/2)`, following the module's rules. `out.len()` must be `levels`.
    #[inline]
    pub fn decompose(&self, x: u64, q: u64, out: &mut [i64]) {
        let bits = self.base_log * self.levels;
        let y = ((u128::from(x) << bits) + u128::from(q / 2)) / u128::from(q);
        signed_digits(*self, (y as u64) & ((1u64 << bits) - 1), out);
    }
}

/// [`Gadget::decompose`] with a constant for one modulus precomputed: the same digits, with
/// the 128-bit division by `q` replaced by a multiplication with `c = floor(2^(64 + bits) / q)`
/// (`bits = base_log · levels`, so `c < 2^64` because `2^bits < q`) and an exact correction.
#[derive(Clone, Copy, Debug)]
pub struct Decomposer {
    gadget: Gadget,
    q: u64,
    c: u64,
}

impl Decomposer {
    /// The decomposer of `gadget` for `q`; the gadget must satisfy [`Gadget::check`].
    pub fn new(gadget: Gadget, q: Modulus) -> Result<Self> {
        gadget.check(&q)?;
        let bits = gadget.base_log * gadget.levels;
        let c = ((1u128 << (64 + bits)) / u128::from(q.value())) as u64;
        Ok(Decomposer {
            gadget,
            q: q.value(),
            c,
        })
    }

    /// The gadget.
    pub fn gadget(&self) -> Gadget {
        self.gadget
    }

    /// The signed digits of `x < q`, equal to [`Gadget::decompose`]`(x, q, out)`.
    #[inline]
    pub fn decompose(&self, x: u64, out: &mut [i64]) {
        let g = self.gadget;
        let bits = g.base_log * g.levels;
        let num = (u128::from(x) << bits) + u128::from(self.q / 2);
        // floor(x · 2^bits / q) or one less; then at most three steps up to floor(num / q).
        let mut y = ((u128::from(x) * u128::from(self.c)) >> 64) as u64;
        let mut r = num - u128::from(y) * u128::from(self.q);
        while r >= u128::from(self.q) {
            y += 1;
            r -= u128::from(self.q);
        }
        signed_digits(g, y & ((1u64 << bits) - 1), out);
    }
}

/// The signed base-`2^base_log` digits of `y < B^l` (most significant first), the carry out of
/// the top digit dropped.
#[inline]
fn signed_digits(g: Gadget, mut y: u64, out: &mut [i64]) {
    let base = 1i64 << g.base_log;
    let half = base / 2;
    let digit_mask = (1u64 << g.base_log) - 1;
    let mut carry = 0i64;
    for slot in out.iter_mut().rev() {
        let mut d = (y & digit_mask) as i64 + carry;
        y >>= g.base_log;
        if d >= half {
            d -= base;
            carry = 1;
        } else {
            carry = 0;
        }
        *slot = d;
    }
}

/// The shape of a blind rotation: LWE input dimension, ring, modulus, gadget and secret kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindRotateParams {
    /// Dimension `n` of the input LWE ciphertexts (the LWE secret's length).
    pub lwe_dimension: usize,
    /// Ring degree `N` (a power of two); exponents of the rotation live mod `2N`.
    pub ring_degree: usize,
    /// Number `k` of GLWE mask polynomials.
    pub glwe_dimension: usize,
    /// The NTT prime `q ≡ 1 (mod 2N)` of ring and LWE ciphertexts.
    pub modulus: Modulus,
    /// The gadget of the RGSW rows.
    pub gadget: Gadget,
    /// RGSW ciphertexts per LWE secret coefficient: 1 (binary secret) or 2 (ternary secret).
    pub keys_per_coefficient: usize,
    /// LWE coefficients per step: 1 (a CMux per coefficient) or 2..=[`MAX_GROUP_SIZE`]
    /// (multi-bit blind rotation of a binary key, `2^g − 1` RGSW per group; module docs).
    pub group_size: usize,
}

/// The largest multi-bit group: `2^3 − 1 = 7` RGSW ciphertexts a step.
pub const MAX_GROUP_SIZE: usize = 3;

impl BlindRotateParams {
    /// `2N`, the modulus of the rotation exponents.
    pub fn two_n(&self) -> u64 {
        2 * self.ring_degree as u64
    }

    /// Rows of one RGSW ciphertext: `(k + 1) · l`.
    pub fn rows_per_rgsw(&self) -> usize {
        (self.glwe_dimension + 1) * self.gadget.levels as usize
    }

    /// Residues in one RGSW ciphertext: rows times `(k + 1) · N`.
    pub fn rgsw_len(&self) -> usize {
        self.rows_per_rgsw() * (self.glwe_dimension + 1) * self.ring_degree
    }

    /// Steps of a blind rotation: `n / g`.
    pub fn steps(&self) -> usize {
        self.lwe_dimension / self.group_size.max(1)
    }

    /// RGSW ciphertexts of one step: `keys_per_coefficient`, or `2^g − 1` for a multi-bit key.
    pub fn rgsws_per_step(&self) -> usize {
        if self.group_size > 1 {
            (1 << self.group_size) - 1
        } else {
            self.keys_per_coefficient
        }
    }

    /// Key terms summed into one spectral product a step, counted with their magnitude:
    /// `kpc`, or `2 · (2^g − 1)` for a multi-bit key (each factor `X^t − 1` has magnitude at
    /// most 2).
    pub fn spectral_terms(&self) -> usize {
        if self.group_size > 1 {
            2 * self.rgsws_per_step()
        } else {
            self.keys_per_coefficient
        }
    }

    /// Residues in a whole bootstrapping key.
    pub fn key_len(&self) -> usize {
        self.steps() * self.rgsws_per_step() * self.rgsw_len()
    }

    /// Dimension of the extracted LWE ciphertexts: `k · N`.
    pub fn output_dimension(&self) -> usize {
        self.glwe_dimension * self.ring_degree
    }

    /// Checks the shape: `N` a power of two in `2..=2^17`, `q` prime, `1 mod 2N` and below
    /// `2^53`, `n >= 1`, `k >= 1`, the gadget valid for `q` with `(k + 1) · l <= 64`, 1 or 2
    /// keys per coefficient, a group size in `1..=MAX_GROUP_SIZE` (above 1: one key per
    /// coefficient and `g | n`), and `2 · terms · (k + 1) · l · N · B/2 · (q/2 + 1)` below
    /// `2^100` and `2^50 · q` with `terms` = [`Self::spectral_terms`] (the f64 products, with
    /// a margin for the transform's error, reduce exactly: [`fft::f64_to_residue`], and on a
    /// device from one quotient estimate).
    pub fn check(&self) -> Result<()> {
        if self.glwe_dimension > 1 << 16 {
            return Err(Error::ShapeMismatch {
                what: format!("GLWE dimension {} (at most 2^16)", self.glwe_dimension),
            });
        }
        let n = self.ring_degree;
        if !n.is_power_of_two() || !(2..=1 << 17).contains(&n) {
            return Err(Error::InvalidDegree {
                n,
                min_log: 1,
                max_log: 17,
            });
        }
        let q = self.modulus.value();
        if !crate::primes::is_prime(q) || !(q - 1).is_multiple_of(2 * n as u64) {
            return Err(Error::InvalidModulus {
                modulus: q,
                reason: "the blind-rotation modulus must be a prime 1 mod 2N",
            });
        }
        self.gadget.check(&self.modulus)?;
        if self.lwe_dimension == 0 || self.glwe_dimension == 0 {
            return Err(Error::ShapeMismatch {
                what: "blind rotation needs lwe_dimension >= 1 and glwe_dimension >= 1".into(),
            });
        }
        if self.rows_per_rgsw() > 64 {
            return Err(Error::Unsupported {
                what: format!(
                    "(k + 1) * levels = {} RGSW rows (at most 64)",
                    self.rows_per_rgsw()
                ),
            });
        }
        if q >= 1 << 53 {
            return Err(Error::InvalidModulus {
                modulus: q,
                reason: "the blind-rotation modulus must be below 2^53 (exact key coefficients in f64)",
            });
        }
        if !(1..=2).contains(&self.keys_per_coefficient) {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "keys_per_coefficient must be 1 (binary) or 2 (ternary), not {}",
                    self.keys_per_coefficient
                ),
            });
        }
        if !(1..=MAX_GROUP_SIZE).contains(&self.group_size)
            || (self.group_size > 1
                && (self.keys_per_coefficient != 1
                    || !self.lwe_dimension.is_multiple_of(self.group_size)))
        {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "group size {} with {} keys per coefficient and n = {}: need 1..={} and, \
                     above 1, a binary key (1 key per coefficient) and n a multiple of it",
                    self.group_size, self.keys_per_coefficient, self.lwe_dimension, MAX_GROUP_SIZE
                ),
            });
        }
        // The f64 products: terms · (k + 1) · l · N terms of |digit| <= B/2 times |key| <= q/2,
        // with a factor 2 for the transform's error, stay below 2^100 and 2^50 · q: a rounded
        // sum reduces exactly from 128 bits, or (a device) from one quotient estimate.
        let magnitude = (2 * self.spectral_terms() * self.rows_per_rgsw() * n) as u128;
        let magnitude = magnitude
            .checked_mul(1u128 << (self.gadget.base_log - 1))
            .and_then(|x| x.checked_mul(u128::from(q / 2 + 1)));
        if magnitude.is_none_or(|x| x >= 1 << 100 || x >= u128::from(q) << 50) {
            return Err(Error::Unsupported {
                what: format!(
                    "blind rotation with N = {n}, {} rows of base 2^{} mod {q}: the f64 \
                     products reach 2^100 or 2^50 * q",
                    self.rows_per_rgsw(),
                    self.gadget.base_log
                ),
            });
        }
        let len = self
            .steps()
            .checked_mul(self.rgsws_per_step() * self.rows_per_rgsw())
            .and_then(|x| x.checked_mul((self.glwe_dimension + 1) * self.ring_degree));
        if len.is_none() {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "a bootstrapping key for n = {}, k = {} does not fit in memory",
                    self.lwe_dimension, self.glwe_dimension
                ),
            });
        }
        Ok(())
    }
}

/// A bootstrapping key on the host: RGSW rows in NTT form, laid out as the module describes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootstrapKeyHost {
    /// The shape.
    pub params: BlindRotateParams,
    /// `params.key_len()` residues mod `q`.
    pub data: Vec<u64>,
}

impl BootstrapKeyHost {
    /// Checks the shape and that the data has the right length and canonical residues.
    pub fn check(&self) -> Result<()> {
        self.params.check()?;
        check_residues(
            &self.data,
            self.params.key_len(),
            &self.params.modulus,
            "bootstrap key",
        )
    }
}

/// The shape of an LWE key switch: input and output dimensions, modulus and gadget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeySwitchParams {
    /// Dimension of the input ciphertexts (e.g. `k · N` after sample extraction).
    pub input_dimension: usize,
    /// Dimension of the output ciphertexts.
    pub output_dimension: usize,
    /// The modulus of both.
    pub modulus: Modulus,
    /// The gadget decomposing the input mask.
    pub gadget: Gadget,
}

impl KeySwitchParams {
    /// Residues in the whole key: `input · l · (output + 1)`.
    pub fn key_len(&self) -> usize {
        self.input_dimension * self.gadget.levels as usize * (self.output_dimension + 1)
    }

    /// Checks dimensions (both at least 1) and the gadget.
    pub fn check(&self) -> Result<()> {
        self.gadget.check(&self.modulus)?;
        if self.input_dimension == 0 || self.output_dimension == 0 {
            return Err(Error::ShapeMismatch {
                what: "key switching needs input and output dimensions >= 1".into(),
            });
        }
        let len = self
            .input_dimension
            .checked_mul(self.gadget.levels as usize)
            .and_then(|x| x.checked_mul(self.output_dimension.checked_add(1)?));
        if len.is_none() {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "a key-switching key from {} to {} does not fit in memory",
                    self.input_dimension, self.output_dimension
                ),
            });
        }
        // The exact accumulation sums input · l products of |d| <= B/2 with residues below q.
        let bound = (self.input_dimension as u128)
            .checked_mul(u128::from(self.gadget.levels))
            .and_then(|x| x.checked_mul(1u128 << (self.gadget.base_log - 1)))
            .and_then(|x| x.checked_mul(u128::from(self.modulus.value())));
        if bound.is_none() {
            return Err(Error::Unsupported {
                what: format!(
                    "key switching from dimension {} with {} levels of base 2^{} overflows                      the 128-bit accumulation",
                    self.input_dimension, self.gadget.levels, self.gadget.base_log
                ),
            });
        }
        Ok(())
    }
}

/// An LWE key-switching key on the host: row `i · l + (j − 1)` is an LWE ciphertext (mask,
/// body) of the output dimension encrypting `s_i · g_j`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeySwitchKeyHost {
    /// The shape.
    pub params: KeySwitchParams,
    /// `params.key_len()` residues mod `q`.
    pub data: Vec<u64>,
}

impl KeySwitchKeyHost {
    /// Checks the shape and that the data has the right length and canonical residues.
    pub fn check(&self) -> Result<()> {
        self.params.check()?;
        check_residues(
            &self.data,
            self.params.key_len(),
            &self.params.modulus,
            "key-switching key",
        )
    }
}

/// A batch of LWE ciphertexts of one dimension on the host, each `dimension + 1` residues
/// (mask, then body), one after the other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LweBatchHost {
    /// The dimension `n` of every ciphertext.
    pub dimension: usize,
    /// The modulus of the residues.
    pub modulus: Modulus,
    /// `count · (n + 1)` residues.
    pub data: Vec<u64>,
}

impl LweBatchHost {
    /// Number of ciphertexts in the batch.
    pub fn len(&self) -> usize {
        self.data.len() / self.dimension.saturating_add(1)
    }

    /// Whether the batch holds no ciphertext.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Ciphertext `i` (mask then body).
    pub fn get(&self, i: usize) -> Option<&[u64]> {
        let w = self.dimension + 1;
        self.data.get(i * w..(i + 1) * w)
    }

    /// Checks that the data is whole ciphertexts of canonical residues.
    pub fn check(&self) -> Result<()> {
        let w = self.dimension.saturating_add(1);
        if !self.data.len().is_multiple_of(w) {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "LWE batch of {} residues is not whole ciphertexts of dimension {}",
                    self.data.len(),
                    self.dimension
                ),
            });
        }
        check_residues(&self.data, self.data.len(), &self.modulus, "LWE batch")
    }
}

fn check_residues(data: &[u64], len: usize, q: &Modulus, what: &str) -> Result<()> {
    if data.len() != len {
        return Err(Error::ShapeMismatch {
            what: format!("{what}: {} residues, expected {len}", data.len()),
        });
    }
    if let Some(pos) = data.iter().position(|&x| x >= q.value()) {
        return Err(Error::ShapeMismatch {
            what: format!(
                "{what}: residue {pos} is not below the modulus {}",
                q.value()
            ),
        });
    }
    Ok(())
}

/// The words from which the LWE samples of every coefficient of one RLWE ciphertext
/// `(b, a)` of ring dimension `N` (phase `b + a·s`, as `rlwe`'s `c0 + c1·s`) are read, already
/// in the LWE modulus: `words = [a (N) | ā (N) | b (N)]`, with `ā` standing for `−a` (given
/// separately, since a caller's modulus switch need not be odd-symmetric). The sample of
/// coefficient `k` is `a'_j = words[N + k − j]` for `j < N` — `ā_{k−j}` for `j ≤ k`,
/// `a_{N+k−j}` above — and `b' = words[2N + k]`: its phase `b' − ⟨a', s⟩` is coefficient `k`
/// of `b + a·s` in `Z_q[X]/(X^N + 1)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractionEntries {
    /// The ring dimension `N`, which is the samples' dimension.
    pub dimension: usize,
    /// The modulus of the residues.
    pub modulus: Modulus,
    /// `3·N` residues: `a`, `ā`, `b`.
    pub words: Vec<u64>,
}

impl ExtractionEntries {
    /// Checks the length (`3·N`, `N > 0`) and that every word is a canonical residue.
    pub fn check(&self) -> Result<()> {
        if self.dimension == 0 {
            return Err(Error::ShapeMismatch {
                what: "extraction entries of dimension 0".into(),
            });
        }
        let len = self
            .dimension
            .checked_mul(3)
            .ok_or_else(|| Error::ShapeMismatch {
                what: format!("extraction entries of dimension {}", self.dimension),
            })?;
        check_residues(&self.words, len, &self.modulus, "extraction entries")
    }

    /// Checks the coefficient indices (each below `N`).
    pub fn check_coefficients(&self, coeffs: &[usize]) -> Result<()> {
        match coeffs.iter().find(|&&k| k >= self.dimension) {
            Some(k) => Err(Error::ShapeMismatch {
                what: format!(
                    "sample extraction of coefficient {k} from a ring of dimension {}",
                    self.dimension
                ),
            }),
            None => Ok(()),
        }
    }

    /// The sample of coefficient `k < N` into `out` (`N + 1` words, mask then body); an error
    /// for `k ≥ N`, another length of `out` or entries of another length than `3·N`.
    pub fn sample_into(&self, k: usize, out: &mut [u64]) -> Result<()> {
        let n = self.dimension;
        self.check_coefficients(&[k])?;
        if out.len() != n + 1 || self.words.len() != 3 * n {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "sample extraction into {} words from {} entries of dimension {n}",
                    out.len(),
                    self.words.len()
                ),
            });
        }
        self.fill_sample(k, out);
        Ok(())
    }

    /// [`Self::sample_into`] for checked `k` and `out`.
    fn fill_sample(&self, k: usize, out: &mut [u64]) {
        let n = self.dimension;
        for (j, o) in out[..n].iter_mut().enumerate() {
            *o = self.words[n + k - j];
        }
        out[n] = self.words[2 * n + k];
    }

    /// The samples of the coefficients `coeffs` as a host batch (checked first).
    pub fn batch(&self, coeffs: &[usize]) -> Result<LweBatchHost> {
        use rayon::prelude::*;
        self.check()?;
        self.check_coefficients(coeffs)?;
        let w = self.dimension + 1;
        let mut data = vec![0u64; coeffs.len() * w];
        data.par_chunks_mut(w)
            .zip(coeffs.par_iter())
            .for_each(|(out, &k)| self.fill_sample(k, out));
        Ok(LweBatchHost {
            dimension: self.dimension,
            modulus: self.modulus,
            data,
        })
    }
}

/// Batched blind rotation, sample extraction and LWE key switching on a device.
///
/// Keys are uploaded once and stay in the backend's memory; every call processes a batch.
/// Results are bit-identical to [`crate::cpu::CpuBackend`]'s (the module's rules), whatever the
/// batch size. Implemented by the CPU backend and by `fhe_cuda::CudaBackend`.
pub trait BlindRotateBackend {
    /// A bootstrapping key in the backend's memory.
    type BootstrapKey: Send + Sync;
    /// An LWE key-switching key in the backend's memory.
    type KeySwitchKey: Send + Sync;
    /// A batch of LWE ciphertexts in the backend's memory.
    type LweBatch: Send + Sync;

    /// Uploads (and checks) a bootstrapping key.
    fn upload_bootstrap_key(&self, key: &BootstrapKeyHost) -> Result<Self::BootstrapKey>;

    /// Uploads (and checks) a key-switching key.
    fn upload_key_switch_key(&self, key: &KeySwitchKeyHost) -> Result<Self::KeySwitchKey>;

    /// Uploads (and checks) a batch of LWE ciphertexts.
    fn upload_lwe_batch(&self, batch: &LweBatchHost) -> Result<Self::LweBatch>;

    /// Downloads a batch of LWE ciphertexts.
    fn download_lwe_batch(&self, batch: &Self::LweBatch) -> Result<LweBatchHost>;

    /// For each input LWE (dimension `n`, modulus `q` of the key): modulus switch to `2N`,
    /// blind rotation of the test polynomial `test_poly` (`N` residues, the body of the
    /// initial accumulator), and extraction of coefficient 0 as an LWE of dimension `k · N`.
    fn blind_rotate_extract(
        &self,
        key: &Self::BootstrapKey,
        test_poly: &[u64],
        input: &Self::LweBatch,
    ) -> Result<Self::LweBatch>;

    /// LWE key switching of every ciphertext of the batch.
    fn key_switch(
        &self,
        key: &Self::KeySwitchKey,
        input: &Self::LweBatch,
    ) -> Result<Self::LweBatch>;

    /// Sample extraction of the coefficients `coeffs` of one RLWE ciphertext, then LWE key
    /// switching: the words of [`Self::key_switch`] of [`ExtractionEntries::batch`]. A device
    /// backend may form the samples where it switches them, so that only the `3·N` entries,
    /// not `coeffs.len()·(N + 1)` words, cross to it.
    fn key_switch_extracted(
        &self,
        key: &Self::KeySwitchKey,
        entries: &ExtractionEntries,
        coeffs: &[usize],
    ) -> Result<Self::LweBatch> {
        let batch = self.upload_lwe_batch(&entries.batch(coeffs)?)?;
        self.key_switch(key, &batch)
    }

    /// Programmable bootstrapping: [`Self::blind_rotate_extract`] then [`Self::key_switch`]
    /// back to the input dimension. A backend may fuse the two; the result stays the same.
    fn programmable_bootstrap(
        &self,
        bootstrap_key: &Self::BootstrapKey,
        key_switch_key: &Self::KeySwitchKey,
        test_poly: &[u64],
        input: &Self::LweBatch,
    ) -> Result<Self::LweBatch> {
        let extracted = self.blind_rotate_extract(bootstrap_key, test_poly, input)?;
        self.key_switch(key_switch_key, &extracted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const Q: u64 = 1_125_899_906_826_241; // 2^50 - 16383, 1 mod 4096

    fn recompose(g: &Gadget, digits: &[i64], q: u64) -> i128 {
        g.values(q)
            .iter()
            .zip(digits)
            .map(|(&v, &d)| i128::from(d) * i128::from(v))
            .sum()
    }

    proptest! {
        #[test]
        fn digits_in_range_and_recompose(x in 0..Q, base_log in 1u32..12, levels in 1u32..5) {
            let g = Gadget { base_log, levels };
            prop_assume!(g.check(&Modulus::new(Q).unwrap()).is_ok());
            let mut d = vec![0i64; levels as usize];
            g.decompose(x, Q, &mut d);
            let half = 1i64 << (base_log - 1);
            prop_assert!(d.iter().all(|&v| (-half..half).contains(&v)));
            // Error mod q: at most q / (2 B^l) + l * B / 4 (+1 for the rounded gadget values).
            let r = (recompose(&g, &d, Q) - i128::from(x)).rem_euclid(i128::from(Q));
            let err = r.min(i128::from(Q) - r);
            let bound = (i128::from(Q) >> (base_log * levels + 1))
                + i128::from(levels) * (1i128 << base_log) / 4 + 1;
            prop_assert!(err <= bound, "error {} > bound {}", err, bound);
        }

        #[test]
        fn decomposer_equals_reference(x in 0..Q, base_log in 1u32..24, levels in 1u32..4) {
            let g = Gadget { base_log, levels };
            let q = Modulus::new(Q).unwrap();
            prop_assume!(g.check(&q).is_ok());
            let (mut a, mut b) = (vec![0i64; levels as usize], vec![0i64; levels as usize]);
            g.decompose(x, Q, &mut a);
            Decomposer::new(g, q).unwrap().decompose(x, &mut b);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn mod_switch_is_rounding(x in 0..Q) {
            let two_n = 4096u64;
            let got = mod_switch(x, Q, two_n);
            let exact = x as f64 * two_n as f64 / Q as f64;
            let diff = (got as f64 - exact).rem_euclid(two_n as f64);
            prop_assert!(diff <= 0.5 + 1e-6 || diff >= two_n as f64 - 0.5 - 1e-6);
        }
    }

    #[test]
    fn digits_are_the_signed_representation_of_the_rounded_value() {
        // Every x of a small modulus: the digits recompose round(x · B^l / q) mod B^l exactly.
        let g = Gadget {
            base_log: 4,
            levels: 2,
        };
        let q = 257u64;
        for x in 0..q {
            let mut d = [0i64; 2];
            g.decompose(x, q, &mut d);
            let y = ((u128::from(x) << 8) + u128::from(q / 2)) / u128::from(q);
            let y = (y & 255) as i64;
            assert_eq!((d[0] * 16 + d[1]).rem_euclid(256), y);
            assert!(d.iter().all(|&v| (-8..8).contains(&v)));
        }
    }

    #[test]
    fn tie_goes_negative_with_carry() {
        // q = 257, B = 16, l = 2: x = 8 gives y = round(8 · 256 / 257) = 8, whose low digit 8
        // equals B/2 and so becomes -8 with a carry into the high digit: [1, -8].
        let g = Gadget {
            base_log: 4,
            levels: 2,
        };
        let mut d = [0i64; 2];
        g.decompose(8, 257, &mut d);
        assert_eq!(d, [1, -8]);
    }

    #[test]
    fn bad_gadget_rejected() {
        let q = Modulus::new(Q).unwrap();
        assert!(
            Gadget {
                base_log: 0,
                levels: 1
            }
            .check(&q)
            .is_err()
        );
        assert!(
            Gadget {
                base_log: 8,
                levels: 0
            }
            .check(&q)
            .is_err()
        );
        assert!(
            Gadget {
                base_log: 17,
                levels: 3
            }
            .check(&q)
            .is_err()
        );
        assert!(
            Gadget {
                base_log: 23,
                levels: 1
            }
            .check(&q)
            .is_ok()
        );
    }

    /// Entries of `(b, a)` mod 97 at `N = 8` (small pseudo-random words).
    fn entries_97(a: &[u64], b: &[u64]) -> ExtractionEntries {
        let q = 97;
        let words = a
            .iter()
            .copied()
            .chain(a.iter().map(|&x| (q - x) % q))
            .chain(b.iter().copied())
            .collect();
        ExtractionEntries {
            dimension: a.len(),
            modulus: Modulus::new(q).unwrap(),
            words,
        }
    }

    /// The sample of coefficient `k` has the phase of coefficient `k` of `b + a·s` in
    /// `Z_q[X]/(X^N + 1)`, for every `k` and a secret with entries in `{−1, 0, 1}`.
    #[test]
    fn extracted_samples_carry_the_ring_phase() {
        let (q, n) = (97i64, 8usize);
        let a: Vec<u64> = (0..n as u64).map(|i| (i * 37 + 11) % 97).collect();
        let b: Vec<u64> = (0..n as u64).map(|i| (i * 53 + 5) % 97).collect();
        let s: Vec<i64> = (0..n).map(|i| [1, 0, -1, 1, -1][i % 5]).collect();
        let e = entries_97(&a, &b);
        e.check().unwrap();
        let coeffs: Vec<usize> = (0..n).collect();
        let batch = e.batch(&coeffs).unwrap();
        for (k, &bk) in b.iter().enumerate() {
            // Coefficient k of a·s: Σ_{i+j=k} a_i s_j − Σ_{i+j=k+N} a_i s_j.
            let mut as_k = 0i64;
            for (i, &ai) in a.iter().enumerate() {
                for (j, &sj) in s.iter().enumerate() {
                    let t = ai as i64 * sj;
                    if i + j == k {
                        as_k += t;
                    } else if i + j == k + n {
                        as_k -= t;
                    }
                }
            }
            let want = (bk as i64 + as_k).rem_euclid(q);
            let x = batch.get(k).unwrap();
            let dot: i64 = x[..n].iter().zip(&s).map(|(&w, &sj)| w as i64 * sj).sum();
            assert_eq!((x[n] as i64 - dot).rem_euclid(q), want, "coefficient {k}");
        }
    }

    #[test]
    fn bad_extraction_entries_rejected() {
        let a = [1u64, 2, 3, 4];
        let e = entries_97(&a, &a);
        assert!(e.batch(&[0, 3, 3]).is_ok());
        assert!(e.batch(&[4]).is_err(), "a coefficient past N");
        let mut out = [0u64; 5];
        e.sample_into(3, &mut out).unwrap();
        assert_eq!(out, [93, 94, 95, 96, 4], "ā_{{3−j}} for j ≤ 3, then b_3");
        assert!(e.sample_into(4, &mut out).is_err(), "a coefficient past N");
        assert!(
            e.sample_into(0, &mut [0u64; 4]).is_err(),
            "N words for N + 1"
        );
        let mut short = e.clone();
        short.words.pop();
        assert!(short.check().is_err(), "3N − 1 words");
        let mut big = e.clone();
        big.words[5] = 97;
        assert!(big.check().is_err(), "a word not below q");
        let empty = ExtractionEntries {
            dimension: 0,
            modulus: e.modulus,
            words: Vec::new(),
        };
        assert!(empty.check().is_err(), "dimension 0");
    }
}
