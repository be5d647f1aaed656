//! Parameter sets, their validation, and the failure probability of a bootstrap.
//!
//! # The sets and where their security comes from
//!
//! No lattice estimator runs here; every secure set is a published set whose security was
//! estimated by its authors, transported to our modulus (an NTT prime instead of a power of
//! two) by keeping the **relative** noise `σ / q` of the original, which is what the attack
//! cost models (primal uSVP, dual) depend on to first order; the GLWE side is also checked
//! against the HomomorphicEncryption.org standard. Noise is drawn uniformly from `[-B, B]`
//! (variance `B(B + 1) / 3`), the "bounded uniform" distribution tfhe-rs calls TUniform, whose
//! security the estimator treats through its standard deviation.
//!
//! * [`CLASSIC_918_2048`]: tfhe-rs 1.x `V1_0_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`
//!   (defined under `tfhe/src/shortint/parameters/` of tfhe-rs 1.x; 128-bit security per
//!   Zama's estimate): LWE `n = 918` binary, noise TUniform bound `2^45`
//!   mod `2^64`; GLWE `k = 1`, `N = 2048`, TUniform bound `2^17` mod `2^64`; PBS gadget base
//!   `2^23`, 1 level; key switching base `2^4`, 4 levels. Here `q = 2^50 − 16383`
//!   (`1125899906826241`, prime, `≡ 1 mod 4096`); the bounds scale by `q / 2^64 ≈ 2^-14`:
//!   LWE bound `2^31` (relative `2^31 / q ≥ 2^45 / 2^64`), GLWE bound `2^3 = 8`. The GLWE
//!   secret is **ternary** (tfhe-rs: binary), so that the GLWE side also meets the
//!   HomomorphicEncryption.org Security Standard (Albrecht et al., 2018, table 1, uniform
//!   ternary secrets, 128-bit classical): at `N = 2048`, `log2 q ≤ 54` with σ = 3.2; ours has
//!   `log2 q = 50` and σ = `sqrt(8 · 9 / 3) ≈ 4.9`.
//! * [`LPF_STD128_556_1024`]: OpenFHE's FHEW/GINX `LPF_STD128` row
//!   (`src/binfhe/lib/binfhecontext.cpp`, table `paramsMap`; the same `n`, `N`, `log2 Q` and
//!   key-switching modulus as its `STD128_3_LMKCDEY` row): `n = 556`, `N = 1024`,
//!   `log2 Q = 27`, key-switching modulus `2^15`, σ = 3.19, uniform ternary secrets, 128-bit
//!   per OpenFHE's estimate. (OpenFHE's plain `STD128` row is `n = 503` with a key-switching
//!   modulus `2^14`: twice the relative LWE noise, which our key switch, a signed-digit
//!   product rather than OpenFHE's table of digit multiples, cannot absorb at a useful failure
//!   rate.) Here `q = 2^27 − 2047` (`134215681`) for the ring (at `N = 1024` the HE standard's
//!   bound is `log2 q ≤ 27`; GLWE noise bound 6, σ ≈ 3.7 ≥ 3.2) and for the LWE side, whose
//!   noise keeps OpenFHE's relative `3.19 / 2^15`: bound `22632` (σ ≈ 13066 ≈ 3.19 · q / 2^15).
//!   Gadgets: PBS base `2^7`, 3 levels (OpenFHE: 4 digits of base `2^7` over its 27-bit `Q`);
//!   key switching base `2^2`, 7 levels. One-bit messages (Boolean gates, as FHEW): its
//!   key-switching noise is too large for more.
//! * [`MULTI_BIT3_918_2048`]: [`CLASSIC_918_2048`] with a multi-bit blind rotation (groups of
//!   `g = 3` LWE coefficients, Joye and Walter's "Blind rotation in fully homomorphic
//!   encryption with extended keys", CSCML 2022, the grouping tfhe-rs's multi-bit PBS uses):
//!   the same secrets, noise and modulus, so the same security argument (the bootstrapping key
//!   holds `7 · 306` RGSW encryptions under the same GLWE key instead of 918; more encryptions
//!   under one key do not enter the estimate). 306 sequential steps instead of 918, for a key
//!   7/3 as large (140 MB of spectra against 60 MB): the latency-oriented set.
//! * [`TEST_256_INSECURE`], [`TEST_TERNARY_256_INSECURE`], [`TEST_MULTI_BIT_256_INSECURE`]:
//!   tiny rings for fast tests, **not secure**; refused unless [`Parameters::opt_in_insecure`]
//!   is called on them.
//!
//! [`Parameters::validate`] checks the GLWE side of every set not marked insecure against the
//! standard's table ([`Parameters::check_glwe_standard`]). The LWE side rests on the transport
//! alone. The argument is a transport, not a new estimate: re-running the lattice estimator on the
//! exact sets here is left to do where it can be installed.
//!
//! # Failure probability
//!
//! A bootstrap of a message `m` of a space of `p = 2^message_bits` values (plus a padding bit)
//! is correct when the deviation `δ` of the switched phase `φ̃ ∈ Z_2N` from `m · N / p` stays in
//! `[−N/(2p), N/(2p))`. With `E2(s)` the mean square of a secret coefficient (binary 1/2,
//! ternary 2/3), `V(B) = B(B + 1)/3` the variance of bounded-uniform noise, and
//! `D(b) = (2^(2b) + 2) / 12` the mean square of a signed digit of base `2^b`:
//!
//! * key switching from `k · N` to `n` (gadget `b_ks`, `l_ks`):
//!   `V_ks = kN · l_ks · D(b_ks) · V(B_lwe) + kN · E2(s_glwe) · q² / (12 · 2^(2 b_ks l_ks))`;
//! * blind rotation (`c = 1` binary, 2 ternary RGSW per coefficient):
//!   `V_br = n · c · (k + 1) · l · N · D(b) · V(B_glwe) + n · c · (1 + kN · E2(s_glwe)) · q² / (12 · 2^(2 b l))`;
//!   multi-bit (groups of `g`): `n / g` steps, each with `2 · (2^g − 1)` key-noise terms in
//!   place of `c` (every pattern's key noise times `X^t − 1`) and 2 rounding terms (the one
//!   selected `X^t − 1`);
//! * the f64 FFT of the external product (fhe-math's `backend::blind_rotate::fft`) adds to
//!   every coefficient of every CMux's product the rounding error of its transforms. Model: with
//!   `S = c · (k + 1) · l · N · D(b) · q²/12` the mean square of an exact product coefficient
//!   (key coefficients uniform in `(−q/2, q/2]`) and `ε = 2^-53`, the error's variance is at
//!   most `S · ε² · (4 log2(N/2) + 8)` (three transforms of `log2(N/2)` stages, each butterfly
//!   a few roundings of relative size `ε`, plus the pointwise products; the test
//!   `rounding_error_of_classic_products_is_bounded` of that module measures a third of it at
//!   the classic set, maximum `2^26.3` over 6144 coefficients, RMS `2^24.4` against exact
//!   values of RMS `2^75.4`). Every mask coefficient's error reaches the phase through the GLWE
//!   secret, so over `n` steps `V_fft = n · S · ε² · (4 log2(N/2) + 8) · (1 + kN · E2(s_glwe))`,
//!   part of `V_br` ([`Parameters::fft_variance`]). It is tiny against the other terms (in
//!   `Z_2N` units: classic set `0.025` of its `σ² = 42.4` below; `LPF_STD128_556_1024`
//!   `1.2·10^-12`, its products staying far below `2^53`): the transform's error relative to
//!   `q` is the same as tfhe-rs's relative to `2^64`;
//! * the input of a bootstrap is the output of the previous one: `V_in = V_br + V_ks`;
//! * modulus switching adds `(1 + n · E2(s_lwe)) / 12` in units of `Z_2N`, so
//!   `σ² = (2N / q)² · V_in + (1 + n · E2(s_lwe)) / 12`;
//! * in the Gaussian (central-limit) model, `P(fail) ≤ P(|δ| ≥ t) ≤ exp(−t² / (2σ²))` with
//!   `t = N / (2p)` (the bound `erfc(x) ≤ exp(−x²)`); [`Parameters::log2_failure_probability`]
//!   returns `log2` of this bound.
//!
//! The values (from the function; the unit tests check each against the set's
//! `max_log2_failure`):
//!
//! | set | messages | `σ²` in `Z_2N` units | `log2 P(fail)` ≤ | stated bound |
//! | --- | --- | --- | --- | --- |
//! | `CLASSIC_918_2048` | 4 bits | 42.4 (modulus switch 38.3, key switch 4.0) | −69.7 | −64 |
//! | `MULTI_BIT3_918_2048` | 4 bits | 42.5 (modulus switch 38.3, key switch 4.0, blind rotation 0.2 of which FFT rounding 0.12) | −69.5 | −64 |
//! | `LPF_STD128_556_1024` | 1 bit | 490 (key switch 428, modulus switch 31, blind rotation 30) | −96.5 | −64 |
//! | `TEST_256_INSECURE` | 4 bits | | −32.1 | −20 |
//! | `TEST_TERNARY_256_INSECURE` | 3 bits | | −96.3 | −20 |
//! | `TEST_MULTI_BIT_256_INSECURE` | 4 bits | | −31.3 | −20 |
//!
//! The classic set's failure is dominated by the modulus switch (`n / 24` for a binary
//! secret); tfhe-rs states `2^-129.2` for this set with its modulus-switch noise reduction
//! (`modulus_switch_noise_reduction_params`: encryptions of zero added before the switch),
//! which is not implemented here; its previous set without it
//! (`V0_11_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M64`, `n = 879`) states `2^-71.6`, in line
//! with the bound here. The model is an upper bound: it charges the
//! decomposition's rounding to every CMux, while only those with a selector of 1 carry it; a
//! test measures the output noise of 256 bootstraps at the test set at about 0.6 of the model.

use crate::error::{Error, Result};
use fhe_math::Modulus;
use fhe_math::backend::blind_rotate::{BlindRotateParams, Gadget, KeySwitchParams};

/// The distribution of a secret key's coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SecretKind {
    /// Uniform in `{0, 1}`.
    Binary,
    /// Uniform in `{−1, 0, 1}`.
    Ternary,
}

impl SecretKind {
    /// Mean square of a coefficient.
    pub fn mean_square(self) -> f64 {
        match self {
            SecretKind::Binary => 0.5,
            SecretKind::Ternary => 2.0 / 3.0,
        }
    }

    fn tag(self) -> u8 {
        match self {
            SecretKind::Binary => 1,
            SecretKind::Ternary => 2,
        }
    }
}

/// A TFHE parameter set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parameters {
    /// The set's name (not part of the fingerprint).
    pub name: &'static str,
    /// LWE dimension `n`.
    pub lwe_dimension: usize,
    /// Distribution of the LWE secret.
    pub lwe_secret: SecretKind,
    /// LWE noise: uniform in `[-B, B]` with this `B`.
    pub lwe_noise_bound: u64,
    /// Ring degree `N`.
    pub ring_degree: usize,
    /// Number `k` of GLWE mask polynomials.
    pub glwe_dimension: usize,
    /// Distribution of the GLWE secret.
    pub glwe_secret: SecretKind,
    /// GLWE (bootstrapping-key) noise bound.
    pub glwe_noise_bound: u64,
    /// The prime modulus `q ≡ 1 (mod 2N)` of every ciphertext.
    pub modulus: u64,
    /// Gadget of the bootstrapping key.
    pub pbs_gadget: Gadget,
    /// Gadget of the key-switching key.
    pub ks_gadget: Gadget,
    /// LWE coefficients per blind-rotation step: 1 (a CMux per coefficient), or 2..=3 for a
    /// multi-bit blind rotation of a binary key (`2^g − 1` RGSW per group, `n / g` steps:
    /// fewer sequential steps, so less latency, for a key `(2^g − 1) / g` times larger).
    pub pbs_group_size: usize,
    /// Messages are in `0..2^message_bits`, below a padding bit.
    pub message_bits: u32,
    /// `log2` of the largest failure probability this set promises for its message space.
    pub max_log2_failure: f64,
    /// Whether the set is a small insecure test set.
    pub insecure: bool,
    /// Whether the caller opted in to an insecure set.
    pub insecure_opt_in: bool,
}

/// tfhe-rs's classic shape (n = 918, N = 2048, k = 1, PBS gadget 2^23 × 1) over
/// `q = 2^50 − 16383`; 4-bit messages. See the module documentation for the source.
pub const CLASSIC_918_2048: Parameters = Parameters {
    name: "CLASSIC_918_2048",
    lwe_dimension: 918,
    lwe_secret: SecretKind::Binary,
    lwe_noise_bound: 1 << 31,
    ring_degree: 2048,
    glwe_dimension: 1,
    glwe_secret: SecretKind::Ternary,
    glwe_noise_bound: 8,
    modulus: 1_125_899_906_826_241,
    pbs_gadget: Gadget {
        base_log: 23,
        levels: 1,
    },
    ks_gadget: Gadget {
        base_log: 4,
        levels: 4,
    },
    pbs_group_size: 1,
    message_bits: 4,
    max_log2_failure: -64.0,
    insecure: false,
    insecure_opt_in: false,
};

/// [`CLASSIC_918_2048`] with a multi-bit blind rotation of groups of 3 (306 steps of 7 RGSW
/// each instead of 918 CMuxes): the same keys' distributions and security, a bootstrapping key
/// 7/3 as large, a third of the sequential steps (the latency-oriented set; tfhe-rs's
/// multi-bit sets group 4 at n = 920). See the module documentation for the failure bound.
pub const MULTI_BIT3_918_2048: Parameters = Parameters {
    name: "MULTI_BIT3_918_2048",
    pbs_group_size: 3,
    ..CLASSIC_918_2048
};

/// OpenFHE's FHEW `LPF_STD128` shape (n = 556 ternary, N = 1024) over `q = 2^27 − 2047`;
/// 1-bit messages. See the module documentation for the source.
pub const LPF_STD128_556_1024: Parameters = Parameters {
    name: "LPF_STD128_556_1024",
    lwe_dimension: 556,
    lwe_secret: SecretKind::Ternary,
    lwe_noise_bound: 22_632,
    ring_degree: 1024,
    glwe_dimension: 1,
    glwe_secret: SecretKind::Ternary,
    glwe_noise_bound: 6,
    modulus: 134_215_681,
    pbs_gadget: Gadget {
        base_log: 7,
        levels: 3,
    },
    ks_gadget: Gadget {
        base_log: 2,
        levels: 7,
    },
    pbs_group_size: 1,
    message_bits: 1,
    max_log2_failure: -64.0,
    insecure: false,
    insecure_opt_in: false,
};

/// A tiny, **insecure** set for tests: n = 32 binary, N = 256, `q = 2^30 − 3071`, 4-bit
/// messages. Needs [`Parameters::opt_in_insecure`].
pub const TEST_256_INSECURE: Parameters = Parameters {
    name: "TEST_256_INSECURE",
    lwe_dimension: 32,
    lwe_secret: SecretKind::Binary,
    lwe_noise_bound: 1 << 8,
    ring_degree: 256,
    glwe_dimension: 1,
    glwe_secret: SecretKind::Binary,
    glwe_noise_bound: 4,
    modulus: 1_073_738_753,
    pbs_gadget: Gadget {
        base_log: 8,
        levels: 2,
    },
    ks_gadget: Gadget {
        base_log: 4,
        levels: 4,
    },
    pbs_group_size: 1,
    message_bits: 4,
    max_log2_failure: -20.0,
    insecure: true,
    insecure_opt_in: false,
};

/// [`TEST_256_INSECURE`] with ternary LWE and GLWE secrets (two RGSW per LWE coefficient),
/// 3-bit messages. **Insecure**; needs [`Parameters::opt_in_insecure`].
pub const TEST_TERNARY_256_INSECURE: Parameters = Parameters {
    name: "TEST_TERNARY_256_INSECURE",
    lwe_secret: SecretKind::Ternary,
    glwe_secret: SecretKind::Ternary,
    message_bits: 3,
    ..TEST_256_INSECURE
};

/// [`TEST_256_INSECURE`] at n = 33 with a multi-bit blind rotation of groups of 3.
/// **Insecure**; needs [`Parameters::opt_in_insecure`].
pub const TEST_MULTI_BIT_256_INSECURE: Parameters = Parameters {
    name: "TEST_MULTI_BIT_256_INSECURE",
    lwe_dimension: 33,
    pbs_group_size: 3,
    ..TEST_256_INSECURE
};

fn uniform_variance(bound: u64) -> f64 {
    let b = bound as f64;
    b * (b + 1.0) / 3.0
}

fn digit_mean_square(base_log: u32) -> f64 {
    ((4f64).powi(base_log as i32) + 2.0) / 12.0
}

impl Parameters {
    /// The same set with the opt-in to an insecure test set.
    pub const fn opt_in_insecure(mut self) -> Self {
        self.insecure_opt_in = true;
        self
    }

    /// Size `p` of the message space.
    pub fn message_space(&self) -> u64 {
        1u64.checked_shl(self.message_bits).unwrap_or(0)
    }

    /// The modulus `q`.
    pub fn q(&self) -> Result<Modulus> {
        Ok(Modulus::new(self.modulus)?)
    }

    fn invalid(&self, reason: impl Into<String>) -> Error {
        Error::InvalidParameters {
            name: self.name,
            reason: reason.into(),
        }
    }

    /// Checks the set: the blind-rotation and key-switching shapes (prime `q ≡ 1 mod 2N`,
    /// gadgets), `1 <= message_bits` with `2^(message_bits + 1) <= N`, noise bounds below
    /// `q / 4`, and the opt-in for an insecure set.
    pub fn validate(&self) -> Result<()> {
        if self.insecure && !self.insecure_opt_in {
            return Err(Error::InsecureWithoutOptIn { name: self.name });
        }
        if self.modulus.is_multiple_of(2) {
            return Err(self.invalid("the modulus must be odd"));
        }
        if self.message_bits == 0
            || self.message_bits > 16
            || (2u64 << self.message_bits) > self.ring_degree as u64
        {
            return Err(self.invalid(format!(
                "{} message bits: need 1..=16 and 2^(bits + 1) <= N = {}",
                self.message_bits, self.ring_degree
            )));
        }
        let quarter = self.modulus / 4;
        if self.lwe_noise_bound >= quarter || self.glwe_noise_bound >= quarter {
            return Err(self.invalid("noise bounds must be below q / 4"));
        }
        self.blind_rotate_params()
            .and_then(|p| p.check().map_err(Error::from))
            .map_err(|e| self.invalid(e.to_string()))?;
        if !self.insecure {
            self.check_glwe_standard()?;
        }
        self.key_switch_params()
            .and_then(|p| p.check().map_err(Error::from))
            .map_err(|e| self.invalid(e.to_string()))?;
        Ok(())
    }

    /// The GLWE side against the HomomorphicEncryption.org standard's 128-bit bound
    /// ([`fhe_math::security::max_log_qp_128`]: uniform ternary secret, σ = 3.19): a ternary
    /// GLWE secret, `k · N` covered by the table, `log2 q` at most the bound for `k · N`
    /// (a GLWE of `k` polynomials of degree `N` is treated as a module lattice of dimension
    /// `k · N`), and a noise standard deviation of at least 3.19. Checked by
    /// [`Self::validate`] for every set not marked insecure.
    pub fn check_glwe_standard(&self) -> Result<()> {
        if self.glwe_secret != SecretKind::Ternary {
            return Err(self.invalid(
                "a secure set needs a ternary GLWE secret (the standard's table is for ternary)",
            ));
        }
        let dim = self.glwe_dimension * self.ring_degree;
        let bound = dim
            .is_power_of_two()
            .then(|| fhe_math::security::max_log_qp_128(dim.trailing_zeros()))
            .flatten()
            .ok_or_else(|| {
                self.invalid(format!("no 128-bit bound is tabulated for k·N = {dim}"))
            })?;
        let log_q = (self.modulus as f64).log2();
        if log_q > bound {
            return Err(self.invalid(format!(
                "log2 q = {log_q:.2} exceeds the 128-bit bound {bound} at k·N = {dim}"
            )));
        }
        if uniform_variance(self.glwe_noise_bound) < 3.19 * 3.19 {
            return Err(self.invalid(format!(
                "GLWE noise bound {} has a standard deviation below 3.19",
                self.glwe_noise_bound
            )));
        }
        Ok(())
    }

    /// The shape of the bootstrapping key.
    pub fn blind_rotate_params(&self) -> Result<BlindRotateParams> {
        Ok(BlindRotateParams {
            lwe_dimension: self.lwe_dimension,
            ring_degree: self.ring_degree,
            glwe_dimension: self.glwe_dimension,
            modulus: self.q()?,
            gadget: self.pbs_gadget,
            keys_per_coefficient: match self.lwe_secret {
                SecretKind::Binary => 1,
                SecretKind::Ternary => 2,
            },
            group_size: self.pbs_group_size,
        })
    }

    /// The shape of the key-switching key (from `k · N` back to `n`).
    pub fn key_switch_params(&self) -> Result<KeySwitchParams> {
        Ok(KeySwitchParams {
            input_dimension: self.glwe_dimension * self.ring_degree,
            output_dimension: self.lwe_dimension,
            modulus: self.q()?,
            gadget: self.ks_gadget,
        })
    }

    /// A 64-bit fingerprint of every field but the name and the opt-in (FNV-1a over the
    /// little-endian fields), written into serialized keys and ciphertexts.
    pub fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for v in [
            self.lwe_dimension as u64,
            self.lwe_noise_bound,
            self.ring_degree as u64,
            self.glwe_dimension as u64,
            self.glwe_noise_bound,
            self.modulus,
            u64::from(self.pbs_gadget.base_log),
            u64::from(self.pbs_gadget.levels),
            u64::from(self.ks_gadget.base_log),
            u64::from(self.ks_gadget.levels),
            u64::from(self.message_bits),
        ] {
            eat(&v.to_le_bytes());
        }
        eat(&[
            self.lwe_secret.tag(),
            self.glwe_secret.tag(),
            u8::from(self.insecure),
        ]);
        // Mixed in only for multi-bit sets, so that the fingerprints of the others stay.
        if self.pbs_group_size != 1 {
            eat(&(self.pbs_group_size as u64).to_le_bytes());
        }
        h
    }

    /// Variance (in units of `q²`-scaled residues) of the key switch, see the module docs.
    pub fn key_switch_variance(&self) -> f64 {
        let q = self.modulus as f64;
        let kn = (self.glwe_dimension * self.ring_degree) as f64;
        let g = self.ks_gadget;
        let kept = (2.0f64).powi((2 * g.base_log * g.levels) as i32);
        kn * f64::from(g.levels)
            * digit_mean_square(g.base_log)
            * uniform_variance(self.lwe_noise_bound)
            + kn * self.glwe_secret.mean_square() * q * q / (12.0 * kept)
    }

    /// Variance of the blind rotation's output (sample-extracted), the FFT's rounding
    /// ([`Self::fft_variance`]) included, see the module docs.
    pub fn blind_rotation_variance(&self) -> f64 {
        let q = self.modulus as f64;
        let big_n = self.ring_degree as f64;
        let k = self.glwe_dimension as f64;
        let (steps, key_terms, rounding_terms) = self.step_terms();
        let g = self.pbs_gadget;
        let kept = (2.0f64).powi((2 * g.base_log * g.levels) as i32);
        steps
            * (key_terms
                * (k + 1.0)
                * f64::from(g.levels)
                * big_n
                * digit_mean_square(g.base_log)
                * uniform_variance(self.glwe_noise_bound)
                + rounding_terms * (1.0 + k * big_n * self.glwe_secret.mean_square()) * q * q
                    / (12.0 * kept))
            + self.fft_variance()
    }

    /// The blind rotation's steps and, per step, the key-noise terms and the decomposition
    /// rounding terms in variance units: a binary key `(n, 1, 1)`, a ternary one `(n, 2, 2)`
    /// (`s_i = s_i⁺ − s_i⁻`), a multi-bit one `(n/g, 2·(2^g − 1), 2)` (each key's noise times
    /// `X^t − 1`, whose two terms double its variance; the rounding of `Dec(ACC)` times the
    /// one selected `X^t − 1`).
    fn step_terms(&self) -> (f64, f64, f64) {
        let n = self.lwe_dimension as f64;
        let g = self.pbs_group_size;
        if g > 1 {
            let patterns = ((1u32 << g) - 1) as f64;
            return (n / g as f64, 2.0 * patterns, 2.0);
        }
        match self.lwe_secret {
            SecretKind::Binary => (n, 1.0, 1.0),
            SecretKind::Ternary => (n, 2.0, 2.0),
        }
    }

    /// Variance of the f64 FFT's rounding error in the blind rotation's output (module docs):
    /// `steps · S · 2^-106 · (4 log2(N/2) + 8) · (1 + kN · E2(s_glwe))`,
    /// `S = c · (k + 1) · l · N · D(b) · q²/12` with `c` the key terms of a step (1 binary,
    /// 2 ternary, `2·(2^g − 1)` multi-bit).
    pub fn fft_variance(&self) -> f64 {
        let q = self.modulus as f64;
        let big_n = self.ring_degree as f64;
        let k = self.glwe_dimension as f64;
        let (steps, c, _) = self.step_terms();
        let g = self.pbs_gadget;
        let s = c * (k + 1.0) * f64::from(g.levels) * big_n * digit_mean_square(g.base_log) * q * q
            / 12.0;
        let stages = (big_n / 2.0).log2();
        steps
            * s
            * 2f64.powi(-106)
            * (4.0 * stages + 8.0)
            * (1.0 + k * big_n * self.glwe_secret.mean_square())
    }

    /// Variance of the switched phase's deviation in `Z_2N` at the input of a bootstrap whose
    /// input is the output of another one.
    pub fn switched_phase_variance(&self) -> f64 {
        let q = self.modulus as f64;
        let two_n = 2.0 * self.ring_degree as f64;
        let v_in = self.blind_rotation_variance() + self.key_switch_variance();
        (two_n / q).powi(2) * v_in
            + (1.0 + self.lwe_dimension as f64 * self.lwe_secret.mean_square()) / 12.0
    }

    /// `log2` of the bound `exp(−t² / (2σ²))` on the failure probability of one bootstrap of
    /// a `message_bits`-bit message, `t = N / 2^(message_bits + 1)` (module docs).
    pub fn log2_failure_probability(&self) -> f64 {
        let t = self.ring_degree as f64 / (2.0 * (self.message_bits as f64).exp2());
        -(t * t) / (2.0 * self.switched_phase_variance()) / std::f64::consts::LN_2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secure_sets_validate_and_meet_their_failure_bound() {
        for p in [CLASSIC_918_2048, MULTI_BIT3_918_2048, LPF_STD128_556_1024] {
            p.validate().unwrap();
            let lf = p.log2_failure_probability();
            let to_z2n = (2.0 * p.ring_degree as f64 / p.modulus as f64).powi(2);
            println!(
                "{}: sigma^2 = {:.2} (Z_2N units^2; FFT rounding {:.3e}), log2 p_fail <= {lf:.2}",
                p.name,
                p.switched_phase_variance(),
                p.fft_variance() * to_z2n
            );
            assert!(lf < p.max_log2_failure, "{}: log2 p_fail = {lf}", p.name);
        }
    }

    #[test]
    fn test_sets_need_opt_in_and_meet_their_bound() {
        for p in [
            TEST_256_INSECURE,
            TEST_TERNARY_256_INSECURE,
            TEST_MULTI_BIT_256_INSECURE,
        ] {
            assert_eq!(
                p.validate(),
                Err(Error::InsecureWithoutOptIn { name: p.name })
            );
            let p = p.opt_in_insecure();
            p.validate().unwrap();
            println!(
                "{}: log2 p_fail <= {:.2}",
                p.name,
                p.log2_failure_probability()
            );
            assert!(p.log2_failure_probability() < p.max_log2_failure);
        }
    }

    #[test]
    fn moduli_are_the_documented_ntt_primes() {
        for p in [CLASSIC_918_2048, LPF_STD128_556_1024, TEST_256_INSECURE] {
            assert!(fhe_math::primes::is_prime(p.modulus));
            assert_eq!(p.modulus % (2 * p.ring_degree as u64), 1);
        }
        assert_eq!(CLASSIC_918_2048.modulus, (1 << 50) - 16383);
        assert_eq!(LPF_STD128_556_1024.modulus, (1 << 27) - 2047);
    }

    #[test]
    fn invalid_sets_are_refused() {
        let base = TEST_256_INSECURE.opt_in_insecure();
        let bad = [
            Parameters {
                modulus: 1_073_738_752,
                ..base
            },
            Parameters {
                modulus: 1_073_738_755,
                ..base
            },
            Parameters {
                message_bits: 0,
                ..base
            },
            Parameters {
                message_bits: 8,
                ..base
            },
            Parameters {
                ring_degree: 384,
                ..base
            },
            Parameters {
                lwe_dimension: 0,
                ..base
            },
            Parameters {
                pbs_gadget: Gadget {
                    base_log: 0,
                    levels: 2,
                },
                ..base
            },
            Parameters {
                ks_gadget: Gadget {
                    base_log: 16,
                    levels: 2,
                },
                ..base
            },
            Parameters {
                lwe_noise_bound: 1 << 29,
                ..base
            },
            // Multi-bit: n not a multiple of the group, a group too large, a ternary key.
            Parameters {
                pbs_group_size: 3,
                ..base
            },
            Parameters {
                pbs_group_size: 4,
                ..base
            },
            Parameters {
                pbs_group_size: 2,
                lwe_secret: SecretKind::Ternary,
                ..base
            },
            Parameters {
                pbs_group_size: 0,
                ..base
            },
        ];
        for p in bad {
            assert!(
                matches!(p.validate(), Err(Error::InvalidParameters { .. })),
                "{p:?} accepted"
            );
        }
    }

    #[test]
    fn secure_sets_are_checked_against_the_standard() {
        let too_wide = Parameters {
            modulus: 36_028_797_018_820_609, // prime below 2^55, 1 mod 4096
            ..CLASSIC_918_2048
        };
        let binary = Parameters {
            glwe_secret: SecretKind::Binary,
            ..CLASSIC_918_2048
        };
        let quiet = Parameters {
            glwe_noise_bound: 4,
            ..CLASSIC_918_2048
        };
        for p in [too_wide, binary, quiet] {
            assert!(
                matches!(p.validate(), Err(Error::InvalidParameters { .. })),
                "{p:?} accepted"
            );
        }
    }

    #[test]
    fn fingerprints_differ() {
        assert_ne!(
            CLASSIC_918_2048.fingerprint(),
            LPF_STD128_556_1024.fingerprint()
        );
        assert_ne!(
            TEST_256_INSECURE.fingerprint(),
            TEST_TERNARY_256_INSECURE.fingerprint()
        );
        assert_ne!(
            CLASSIC_918_2048.fingerprint(),
            MULTI_BIT3_918_2048.fingerprint()
        );
    }
}
