//! Scheme-switching parameter sets: the PBS set, the ring key-switching key from the CKKS
//! secret to the subring secret, the SlotToCoeff grouping and the sine of the way back.

use ckks::{ParametersLiteral, Security};
use fhe_math::backend::blind_rotate::Gadget;

use super::error::{Error, Result};
use crate::params::{CLASSIC_918_2048, Parameters, TEST_256_INSECURE};

/// How CKKS ciphertexts switch to LWE under a PBS parameter set and back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwitchParameters {
    /// The set's name.
    pub name: &'static str,
    /// The PBS parameter set (`k = 1`; its GLWE secret `s_m` of degree `N_t` defines the
    /// subring secret `s_m(X^r)`, `r = N_ckks / N_t`).
    pub tfhe: Parameters,
    /// `q_sw`: the ring key-switching key's modulus is the NTT prime (`≡ 1 mod 2 N_ckks`) nearest
    /// `2^ring_key_bits`; for a secure set at most the HE standard's bound at `N_t`.
    pub ring_key_bits: u32,
    /// The signed gadget of the ring key-switching key (no special prime).
    pub ring_key_gadget: Gadget,
    /// The ring key-switching key's noise: uniform in `[−B, B]`.
    pub ring_key_noise_bound: u64,
    /// Levels (matrices) of SlotToCoeff, `1..=log2(slots)`.
    pub stc_levels: usize,
    /// The way back's interval: `|b − ⟨a, s⟩| / q ≤ K` (integer part included) for every slot.
    pub sine_k: f64,
    /// Degree of the Chebyshev interpolant of `cos(2π(K·y − ¼)/2^r)` on `y ∈ [−1, 1]`.
    pub sine_degree: usize,
    /// Double-angle steps `r`.
    pub sine_double_angle: usize,
    /// Level of the way back's output: the LWE secret is encrypted at
    /// `output_level + levels_back` (lower is cheaper: fewer limbs in the `n'` diagonals).
    pub output_level: usize,
}

/// **Insecure** CI set: [`TEST_256_INSECURE`] (n = 32, N = 256) with CKKS at
/// [`CKKS_SWITCH_TEST_INSECURE`] (`N = 2^11`, `r = 8`). `|b − ⟨a, s⟩|/q ≤ (1 + 32)/2 = 16.5`
/// always (binary secret, centred residues), standard deviation `√(17/12) ≈ 1.2`, so `K = 12`
/// is ten standard deviations; degree 31 and 3 double angles (plaintext error of the sine
/// below `2^-30`, [`super::sine`]).
pub const SWITCH_TEST_INSECURE: SwitchParameters = SwitchParameters {
    name: "SWITCH_TEST_INSECURE",
    tfhe: TEST_256_INSECURE,
    ring_key_bits: 50,
    ring_key_gadget: Gadget {
        base_log: 10,
        levels: 4,
    },
    ring_key_noise_bound: 8,
    stc_levels: 1,
    sine_k: 12.0,
    sine_degree: 31,
    sine_double_angle: 3,
    output_level: 2,
};

/// The production-shaped set: [`CLASSIC_918_2048`] (tfhe-rs's classic shape over a 50-bit
/// prime) with a 50-bit ring key-switching key (`q_sw ≤ 2^50 < 2^54`, the
/// HomomorphicEncryption.org standard's 128-bit bound at `N = 2048` for uniform ternary
/// secrets, σ ≥ 3.2: bound 8, σ ≈ 4.9), for CKKS at `N = 2^16` ([`CKKS_SWITCH_N16`]) or any
/// `N ≥ 2048`. `|b − ⟨a, s⟩|/q` has standard deviation `√((1 + 918/2)/12) ≈ 6.2`; `K = 56` is
/// nine of them (per slot `P(|z| > K) < 2^-60`); degree 59 and 5 double angles.
pub const SWITCH_CLASSIC: SwitchParameters = SwitchParameters {
    name: "SWITCH_CLASSIC",
    tfhe: CLASSIC_918_2048,
    ring_key_bits: 50,
    ring_key_gadget: Gadget {
        base_log: 10,
        levels: 4,
    },
    ring_key_noise_bound: 8,
    stc_levels: 3,
    sine_k: 56.0,
    sine_degree: 59,
    sine_double_angle: 5,
    output_level: 1,
};

/// **Insecure** CKKS chain for CI: `N = 2^11` (1024 slots), `L + 1 = 14` primes (60 + 13 × 40
/// bits), 2 special primes of 60 bits, `dnum = 7`. The way back takes 1 + 6 + 3 levels
/// ([`SWITCH_TEST_INSECURE`]) or 1 + 6 + 5 ([`SWITCH_CLASSIC`]).
pub const CKKS_SWITCH_TEST_INSECURE: ParametersLiteral = ParametersLiteral {
    log_n: 11,
    levels: 13,
    first_prime_bits: 60,
    scale_bits: 40,
    special_primes: 2,
    special_prime_bits: 60,
    dnum: 7,
    security: Security::InsecureForTestingOnly,
    application_primes: None,
};

/// The production CKKS chain for [`SWITCH_CLASSIC`]: `ckks::params::N16_L24_D3`
/// (`N = 2^16`, 24 levels of 40 bits, 128-bit per the HE standard; see its documentation).
pub const CKKS_SWITCH_N16: ParametersLiteral = ckks::params::N16_L24_D3;

impl SwitchParameters {
    fn invalid(&self, reason: impl Into<String>) -> Error {
        Error::InvalidParameters {
            name: self.name,
            reason: reason.into(),
        }
    }

    /// The same set with the PBS set's opt-in to an insecure test set.
    pub const fn opt_in_insecure(mut self) -> Self {
        self.tfhe = self.tfhe.opt_in_insecure();
        self
    }

    /// Levels of the way back: the linear transform (1), the cosine's polynomial, the double
    /// angles.
    pub fn levels_back(&self) -> Result<usize> {
        let plan = ckks::PolyPlan::new(
            ckks::Basis::Chebyshev { a: -1.0, b: 1.0 },
            &[self.sine_degree],
        )?;
        Ok(1 + plan.depth() + self.sine_double_angle)
    }

    /// Checks the set against a CKKS ring of degree `n_ckks` with `levels` levels: the PBS set,
    /// `k = 1`, `N_t | N_ckks`, `n' = 2^⌈log2 n⌉ ≤ N_ckks/2`, the gadget, the key modulus
    /// against the standard's bound at `N_t` (secure sets), enough levels.
    pub fn validate(&self, n_ckks: usize, levels: usize) -> Result<()> {
        self.tfhe.validate()?;
        let t = &self.tfhe;
        if t.glwe_dimension != 1 {
            return Err(self.invalid("the PBS set must have k = 1"));
        }
        if n_ckks < t.ring_degree || !n_ckks.is_multiple_of(t.ring_degree) {
            return Err(self.invalid(format!(
                "CKKS ring degree {n_ckks} is not a multiple of N_t = {}",
                t.ring_degree
            )));
        }
        if t.lwe_dimension.next_power_of_two() > n_ckks / 2 {
            return Err(self.invalid(format!(
                "LWE dimension {} does not fit the {} slots of the CKKS ring",
                t.lwe_dimension,
                n_ckks / 2
            )));
        }
        let bits = self.ring_key_bits;
        if !(20..=60).contains(&bits) {
            return Err(self.invalid(format!("ring_key_bits = {bits} is outside 20..=60")));
        }
        let g = self.ring_key_gadget;
        if g.base_log == 0 || g.levels == 0 || g.base_log * g.levels >= bits {
            return Err(self.invalid("the ring key gadget needs base^levels below q_sw"));
        }
        if !t.insecure {
            let bound = fhe_math::security::max_log_qp_128(t.ring_degree.trailing_zeros())
                .ok_or_else(|| self.invalid("no 128-bit bound is tabulated for N_t"))?;
            if f64::from(bits) > bound {
                return Err(self.invalid(format!(
                    "log2 q_sw = {bits} exceeds the 128-bit bound {bound} at N_t = {}",
                    t.ring_degree
                )));
            }
            let b = self.ring_key_noise_bound as f64;
            if b * (b + 1.0) / 3.0 < 3.19 * 3.19 {
                return Err(self.invalid("ring key noise below σ = 3.19"));
            }
        }
        if self.stc_levels == 0
            || self.sine_k.is_nan()
            || self.sine_k <= 0.0
            || self.sine_degree < 2
        {
            return Err(self.invalid("stc_levels, K and the sine degree must be positive"));
        }
        let back = self.levels_back()?;
        if levels < back + self.output_level || levels < self.stc_levels {
            return Err(self.invalid(format!(
                "the CKKS chain has {levels} levels; the way back needs {back} above its output \
                 level {}, SlotToCoeff {}",
                self.output_level, self.stc_levels
            )));
        }
        Ok(())
    }
}
