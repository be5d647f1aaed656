//! HEAP parameter sets: the CKKS chain the blind rotation runs at, the LWE side, the staircase.
//!
//! The CKKS chain is `q_0 · q_1 ⋯ q_L`; the blind rotation, the packing and the raised
//! ciphertext live at the full `Q_BR = Q_L`; the top `rescale_limbs` limbs form `R` and are
//! consumed by the final rescales, so the output is at level `L − rescale_limbs`. The gadget of
//! every ring key is the RNS one: digits are groups of `digit_limbs` consecutive limbs,
//! `x = Σ_j [x·(Q/Q_j)^{-1}]_{Q_j} · (Q/Q_j) mod Q`, with no special prime.

use crate::error::{Error, Result};
use ckks::params::{ParametersLiteral, Security};

/// A HEAP parameter set (see `crates/tfhe-switch/HEAP.md` §3 for the choice of `HEAP_N13`).
#[derive(Clone, Debug, PartialEq)]
pub struct HeapParams {
    /// Name of the set.
    pub name: &'static str,
    /// The CKKS chain. Its `security` field is `InsecureForTestingOnly` for every HEAP set:
    /// CKKS checks `log2(Q_L·P)`, but HEAP never generates a key over `Q_L·P`; the keys and
    /// their moduli are checked by [`HeapParams::check_security`] instead.
    pub ckks: ParametersLiteral,
    /// Whether [`HeapParams::check_security`] must hold (the 128-bit sets) or is skipped (CI sets).
    pub security: Security,
    /// Limbs of `R`, removed by the final rescales (the output level is `L − rescale_limbs`).
    pub rescale_limbs: usize,
    /// Limbs per RNS digit of the ring gadget.
    pub digit_limbs: usize,
    /// LWE dimension `n_t` of the blind rotation's input (binary secret).
    pub lwe_dimension: usize,
    /// `log2 q_ks`, the power-of-two modulus of the LWE key switch (at most 32).
    pub log_q_ks: u32,
    /// Base `2^b` of the LWE key switch's signed digits.
    pub ks_base_log: u32,
    /// Levels of the LWE key switch (`base_log · levels ≤ log_q_ks`).
    pub ks_levels: usize,
    /// Bound `B` of the LWE key-switching key's noise, uniform in `[−B, B]`.
    pub lwe_noise_bound: u32,
    /// `K'`: the virtual modulus `M = K'·q_0` of the first modulus switch (the staircase has
    /// `K'` steps on the circle `Z_2N`, `|I_k| ≤ K'/4 − ½` usable).
    pub k_prime: u64,
    /// Hamming weight `h` of the ephemeral sparse secret the coefficients are extracted under.
    pub sparse_weight: usize,
}

/// The 128-bit design set of HEAP.md (`N = 2^13`), as far as the CKKS scale ladder can express
/// it: `q_0` 41 bits, five limbs of about 35 bits (the ladder keeps every limb above `q_0` at
/// the scale; HEAP.md's 37/37/34/34/34 split is not expressible), `log2 Q_BR ≈ 216 ≤ 218`,
/// special primes `2 × 41` bits for the user keys of levels `≤ 2` only (`Q_2·P ≈ 193` bits)
/// and the `to_sparse` key (`q_0·P ≈ 123` bits, HEAP.md §7 open question 1). LWE side: tfhe-rs
/// 1.x classic transported to `2^22` (`n_t = 918` binary, noise bound 8, base `2^2` × 7).
/// Output at level 2 (2 levels left), scale `≈ 2^35`. Security source: the HE standard
/// (ternary, 128-bit classical, 218 bits at `N = 2^13`) for every ring key, checked by
/// [`HeapParams::check_security`]; the LWE side as in HEAP.md §3.2.
pub const HEAP_N13: HeapParams = HeapParams {
    name: "HEAP_N13",
    ckks: ParametersLiteral {
        log_n: 13,
        levels: 5,
        first_prime_bits: 41,
        scale_bits: 35,
        special_primes: 2,
        special_prime_bits: 41,
        dnum: 3,
        security: Security::InsecureForTestingOnly,
        application_primes: None,
    },
    security: Security::Bits128,
    rescale_limbs: 3,
    digit_limbs: 2,
    lwe_dimension: 918,
    log_q_ks: 22,
    ks_base_log: 2,
    ks_levels: 7,
    lwe_noise_bound: 8,
    k_prime: 72,
    sparse_weight: 32,
};

/// **Insecure** CI-sized set: `HEAP_N13`'s chain shape at `N = 2^10` with `n_t = 32` and a
/// `2^26` LWE key switch (base `2^4` × 4, noise bound 16). For tests and the CPU example only.
pub const HEAP_N10_INSECURE: HeapParams = HeapParams {
    name: "HEAP_N10_INSECURE",
    ckks: ParametersLiteral {
        log_n: 10,
        ..HEAP_N13.ckks
    },
    security: Security::InsecureForTestingOnly,
    rescale_limbs: 3,
    digit_limbs: 2,
    lwe_dimension: 32,
    log_q_ks: 26,
    ks_base_log: 4,
    ks_levels: 4,
    lwe_noise_bound: 16,
    k_prime: 72,
    sparse_weight: 32,
};

fn invalid(what: impl Into<String>) -> Error {
    Error::InvalidParameters { what: what.into() }
}

impl HeapParams {
    /// `N`.
    pub fn n(&self) -> usize {
        1 << self.ckks.log_n
    }

    /// The level of the bootstrapped output, `L − rescale_limbs`.
    pub fn output_level(&self) -> usize {
        self.ckks.levels - self.rescale_limbs
    }

    /// The structural checks (no prime needed): limb counts, the LWE side's ranges, `K'`.
    pub fn check(&self) -> Result<()> {
        let limbs = self.ckks.levels + 1;
        if self.rescale_limbs == 0 || self.rescale_limbs >= self.ckks.levels {
            return Err(invalid(format!(
                "rescale_limbs = {} must be in 1..{} (levels)",
                self.rescale_limbs, self.ckks.levels
            )));
        }
        if self.digit_limbs == 0 || self.digit_limbs > 2 || self.digit_limbs > limbs {
            return Err(invalid(format!(
                "digit_limbs = {} must be 1 or 2 (a digit must fit 127 bits)",
                self.digit_limbs
            )));
        }
        if self.ckks.first_prime_bits > 62 || self.ckks.scale_bits > 62 {
            return Err(invalid("limbs above 62 bits"));
        }
        if !(8..=32).contains(&self.log_q_ks) || self.log_q_ks <= self.ckks.log_n + 1 {
            return Err(invalid(format!(
                "log_q_ks = {} must be in 8..=32 and above log2(2N)",
                self.log_q_ks
            )));
        }
        if self.ks_base_log == 0
            || self.ks_levels == 0
            || self.ks_base_log as usize * self.ks_levels > self.log_q_ks as usize
        {
            return Err(invalid(format!(
                "LWE key switch 2^{} x {} does not fit 2^{}",
                self.ks_base_log, self.ks_levels, self.log_q_ks
            )));
        }
        if self.lwe_dimension == 0 || !self.lwe_dimension.is_multiple_of(2) {
            return Err(invalid(format!(
                "lwe_dimension = {} must be even and positive (the blind-rotation key covers pairs of coefficients)",
                self.lwe_dimension
            )));
        }
        if self.k_prime < 4 || self.k_prime as usize > self.n() {
            return Err(invalid(format!(
                "k_prime = {} must be in 4..=N",
                self.k_prime
            )));
        }
        if self.sparse_weight == 0 || self.sparse_weight > self.n() {
            return Err(invalid(format!(
                "sparse_weight = {} must be in 1..=N",
                self.sparse_weight
            )));
        }
        Ok(())
    }

    /// For [`Security::Bits128`] sets: every key's modulus against the HE standard's bound at
    /// `N` — the ring keys at `Q_BR` (blind rotation, packing, `to_dense`), the user keys at
    /// `Q_out·P`, the `to_sparse` key at `q_0·P`. `moduli_q`, `moduli_p`: the chosen primes.
    pub fn check_security(&self, moduli_q: &[u64], moduli_p: &[u64]) -> Result<()> {
        if self.security == Security::InsecureForTestingOnly {
            return Ok(());
        }
        let log_n = self.ckks.log_n;
        let bound = fhe_math::security::max_log_qp_128(log_n)
            .ok_or_else(|| invalid(format!("no security bound at N = 2^{log_n}")))?;
        let bits = |p: &[u64]| p.iter().map(|&q| (q as f64).log2()).sum::<f64>();
        let out = self.output_level();
        let checks = [
            (
                "blind-rotation, packing and to_dense keys (Q_BR)",
                bits(moduli_q),
            ),
            (
                "user keys (Q_out·P)",
                bits(&moduli_q[..=out]) + bits(moduli_p),
            ),
            (
                "to_sparse key (q_0·P)",
                bits(&moduli_q[..1]) + bits(moduli_p),
            ),
        ];
        for (key, log2_q) in checks {
            if log2_q > bound {
                return Err(Error::NotSecure {
                    key,
                    log2_q,
                    bound,
                    log_n,
                });
            }
        }
        Ok(())
    }
}
