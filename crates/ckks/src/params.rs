//! CKKS parameters: the literal a user writes, its validation into [`Parameters`] (primes,
//! the per-level scale ladder, the key-switching digit partition), named presets, and the
//! serialized form.
//!
//! # Prime and scale selection
//!
//! With `n = 2^log_n`, all primes are `≡ 1 (mod 2n)` and distinct:
//!
//! 1. the `K` special primes `P = p_0 … p_{K-1}`: the `K` largest primes of
//!    `special_prime_bits` bits;
//! 2. `q_0`: the largest prime of `first_prime_bits` bits not among the special primes (the
//!    special primes are chosen first so that, at equal bit sizes, `P` is not smaller than a
//!    digit holding `q_0`);
//! 3. the scale ladder (as OpenFHE's FLEXIBLEAUTO): `Δ_L = 2^scale_bits`; for `l = L … 1`,
//!    `q_l` is the prime nearest to `Δ_l` and `Δ_{l-1} = Δ_l² / q_l` (in `f64`).
//!
//! Encoding at level `l` uses `Δ_l`; a product at level `l` has scale `Δ_l²` and rescaling by
//! `q_l` gives exactly `Δ_{l-1}`, so all ciphertexts at one level share one scale.
//!
//! # Mixed chains
//!
//! With [`ParametersLiteral::application_primes`] `= Some(a)` the chain has two prime sizes:
//! the ladder above restarts at level `A = a.count` with `Δ_A = 2^{a.scale_bits}`, so
//! `q_1 … q_A` (the levels an application computes on after bootstrapping) have about
//! `a.scale_bits` bits and `q_{A+1} … q_L` (bootstrapping's levels) about `scale_bits`.
//! `Δ_{l-1} = Δ_l² / q_l` holds at every level except the **step** `l = A + 1`
//! ([`Parameters::ladder_step`]): there a product rescales to `Δ_{A+1}²/q_{A+1} ≠ Δ_A`.
//! What crosses the step lands on the ladder by a plaintext (or constant) of scale
//! [`Parameters::landing_scale`]`(A + 1) = Δ_A·q_{A+1}/Δ_{A+1}` (bootstrapping's last
//! SlotToCoeff matrix), or by [`crate::Evaluator::drop_to_level`].

use std::ops::Range;
use std::sync::Arc;

use fhe_math::primes::ntt_prime_nearest;
use rlwe::chain;
use rlwe::wire::{self, BlobKind};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use rlwe::chain::{MAX_PARAMETERS_BLOB, MAX_PRIMES, Security};

/// The user-facing description of a CKKS parameter set; validated by [`Parameters::new`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParametersLiteral {
    /// log2 of the ring degree `N` (10..=17).
    pub log_n: u32,
    /// `L`, the number of rescales: the chain has `L + 1` ciphertext primes `q_0 … q_L`.
    pub levels: usize,
    /// Bit size of `q_0` (20..=60).
    pub first_prime_bits: u32,
    /// log2 of the top-level scale `Δ_L` (20..=`first_prime_bits`; 20..=60 for a mixed chain);
    /// the scaling primes `q_1 … q_L` (above the application primes of a mixed chain) track
    /// the scale ladder and have about this many bits.
    pub scale_bits: u32,
    /// `K`, the number of special (key-switching) primes (at least 1).
    pub special_primes: usize,
    /// Bit size of the special primes (20..=60).
    pub special_prime_bits: u32,
    /// Number of key-switching digits (1..=`L + 1`); each digit holds
    /// `ceil((L + 1) / dnum)` consecutive ciphertext primes (the last may hold fewer).
    pub dnum: usize,
    /// The security requirement.
    pub security: Security,
    /// A mixed chain: the lowest primes `q_1 … q_A` at their own scale (module documentation,
    /// "Mixed chains"); `None` for one prime size.
    pub application_primes: Option<ApplicationPrimes>,
}

/// The low ("application") primes of a mixed chain: `q_1 … q_count` follow a ladder that starts
/// at `Δ_count = 2^scale_bits`; the primes above follow the top ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplicationPrimes {
    /// `A`, the number of application primes (1..`levels`).
    pub count: usize,
    /// log2 of `Δ_A` (20..=`first_prime_bits`).
    pub scale_bits: u32,
}

/// CAT's operator-table parameters (our `CAT` preset, design brief §4).
///
/// `N = 2^15`, `L + 1 = 17` ciphertext primes (60 + 16 × 40 bits), `K = 3` special primes of
/// 60 bits, `dnum = 6` (digits of 3 primes, largest digit ≈ 140 bits ≤ log2 P ≈ 180).
/// log2 QP ≈ 880.0 ≤ 881, the HomomorphicEncryption.org 2018 standard bound at `N = 2^15`
/// (128-bit classical, uniform ternary secret): margin ≈ 1.0 bit.
pub const CAT: ParametersLiteral = ParametersLiteral {
    log_n: 15,
    levels: 16,
    first_prime_bits: 60,
    scale_bits: 40,
    special_primes: 3,
    special_prime_bits: 60,
    dnum: 6,
    security: Security::Bits128,
    application_primes: None,
};

/// Like-for-like with the configuration CAT's own benchmark program runs at `N = 2^15`.
///
/// CAT (Li and Zong, "CAT: A GPU-Accelerated FHE Framework", 2025; source
/// `github.com/Rayman96/CAT`) is built on Microsoft SEAL. Its benchmark program
/// `native/bench/bench.cpp` registers one benchmark family per entry of
/// `seal::util::global_variables::GetDefaultCoeffModulus128()` (defined in
/// `native/src/seal/util/globals.cpp`, SEAL's default 128-bit coefficient moduli), and
/// `native/examples/8_performance.cpp` uses `CoeffModulus::BFVDefault` (the same table) for
/// CKKS. The `N = 32768` entry is 16 primes, "881 = 15 × 55 + 56" bits. In SEAL the last prime
/// is the single special prime and every other prime is its own key-switching digit, so:
///
/// `N = 2^15`, `L + 1 = 15` ciphertext primes of 55 bits (`L = 14`), `K = 1` special prime of
/// 56 bits, `dnum = 15` (one prime per digit). Our primes are chosen by our own rule (the
/// scaling primes follow the 2^55 scale ladder), not SEAL's exact values. log2 QP ≈ 881.0
/// against the standard's 881-bit bound at `N = 2^15`: margin ≈ 0 (see the test
/// `cat_compat_matches_seal_default`).
pub const CAT_COMPAT: ParametersLiteral = ParametersLiteral {
    log_n: 15,
    levels: 14,
    first_prime_bits: 55,
    scale_bits: 55,
    special_primes: 1,
    special_prime_bits: 56,
    dnum: 15,
    security: Security::Bits128,
    application_primes: None,
};

/// CKKS at scale, the main GPU benchmark set.
///
/// `N = 2^16`, `L + 1 = 25` ciphertext primes (60 + 24 × 40 bits), `K = 7` special primes of
/// 60 bits, `dnum = 3` (digits of 9, 9, 7 primes; largest ≈ 380 bits ≤ log2 P ≈ 420).
/// log2 QP ≈ 1440 ≤ 1772, OpenFHE's `HEStd_128_classic` bound at `N = 2^16` (uniform ternary
/// secret): margin ≈ 332 bits.
pub const N16_L24_D3: ParametersLiteral = ParametersLiteral {
    log_n: 16,
    levels: 24,
    first_prime_bits: 60,
    scale_bits: 40,
    special_primes: 7,
    special_prime_bits: 60,
    dnum: 3,
    security: Security::Bits128,
    application_primes: None,
};

/// Like-for-like with the Phantom figures.
///
/// `N = 2^16`, `L + 1 = 27` ciphertext primes (60 + 26 × 40 bits), `K = 3` special primes of
/// 60 bits, `dnum = 9` (digits of 3 primes, largest ≈ 140 bits ≤ log2 P ≈ 180).
/// log2 QP ≈ 1280 ≤ 1772, OpenFHE's `HEStd_128_classic` bound at `N = 2^16`: margin ≈ 492 bits.
pub const PHANTOM_N16: ParametersLiteral = ParametersLiteral {
    log_n: 16,
    levels: 26,
    first_prime_bits: 60,
    scale_bits: 40,
    special_primes: 3,
    special_prime_bits: 60,
    dnum: 9,
    security: Security::Bits128,
    application_primes: None,
};

/// A small secure set for tests.
///
/// `N = 2^13`, `L + 1 = 3` ciphertext primes (60 + 2 × 40 bits), `K = 1` special prime of
/// 60 bits, `dnum = 3` (one prime per digit; largest digit `q_0` < `p_0`, both 60 bits).
/// log2 QP ≈ 200 ≤ 218, the HomomorphicEncryption.org 2018 standard bound at `N = 2^13`:
/// margin ≈ 18 bits.
pub const N13: ParametersLiteral = ParametersLiteral {
    log_n: 13,
    levels: 2,
    first_prime_bits: 60,
    scale_bits: 40,
    special_primes: 1,
    special_prime_bits: 60,
    dnum: 3,
    security: Security::Bits128,
    application_primes: None,
};

/// **Insecure** fast set for 10-deep multiplication chains in CI.
///
/// `N = 2^11`, `L + 1 = 11` ciphertext primes (60 + 10 × 40 bits), `K = 2` special primes of
/// 60 bits, `dnum = 11` (one prime per digit; largest digit 60 bits ≤ log2 P ≈ 120).
/// log2 QP ≈ 580, far above the 54-bit bound at `N = 2^11`: **not secure**, hence
/// [`Security::InsecureForTestingOnly`].
pub const TEST_N11_INSECURE: ParametersLiteral = ParametersLiteral {
    log_n: 11,
    levels: 10,
    first_prime_bits: 60,
    scale_bits: 40,
    special_primes: 2,
    special_prime_bits: 60,
    dnum: 11,
    security: Security::InsecureForTestingOnly,
    application_primes: None,
};

/// **Insecure** CI-sized set for bootstrapping on the CPU
/// ([`crate::bootstrap::BOOT_N12_CONFIG`]; use a sparse secret of weight
/// [`BOOT_SECRET_WEIGHT`], [`rlwe::KeyGenerator::sparse_secret_key_from_seed`]).
///
/// `N = 2^12` (2048 slots), `L + 1 = 20` ciphertext primes (60 + 19 × 54 bits), `K = 5` special
/// primes of 60 bits, `dnum = 4` (digits of 5 primes, largest ≈ 276 bits ≤ log2 P ≈ 300).
/// Bootstrapping takes 16 levels (CoeffToSlot 3, EvalMod 10 with the
/// arcsine, SlotToCoeff 3) and leaves 3 of 54 bits. The message ratio `q_0/Δ_0 ≈ 2^6`.
/// log2 QP ≈ 1386, far
/// above the 109-bit bound at `N = 2^12`: **not secure**, hence
/// [`Security::InsecureForTestingOnly`].
pub const BOOT_N12_INSECURE: ParametersLiteral = ParametersLiteral {
    log_n: 12,
    levels: 19,
    first_prime_bits: 60,
    scale_bits: 54,
    special_primes: 5,
    special_prime_bits: 60,
    dnum: 4,
    security: Security::InsecureForTestingOnly,
    application_primes: None,
};

/// Hamming weight of the sparse secrets of bootstrapping: the main secret at
/// [`BOOT_N12_INSECURE`] without encapsulation, and the ephemeral secret of sparse-secret
/// encapsulation ([`crate::bootstrap::EncapsulationKeys`], e.g. at [`BOOT_N16`]). `|I_k|` has
/// standard deviation about `√(32/12) ≈ 1.6`, so EvalMod's `K = 12` is 7 standard deviations
/// away (per coefficient about `2^-42`).
pub const BOOT_SECRET_WEIGHT: usize = 32;

/// A bootstrappable 128-bit set at `N = 2^16` (2^15 slots), for
/// [`crate::bootstrap::BOOT_N16_CONFIG`] with a **dense** uniform ternary secret and
/// sparse-secret encapsulation ([`crate::bootstrap::EncapsulationKeys`]).
///
/// `N = 2^16`, `L + 1 = 26` ciphertext primes (60 + 25 × 57 bits), `K = 4` special primes of 60
/// bits, `dnum = 7` (digits of 4 primes, largest ≈ 231 bits ≤ log2 P ≈ 240). log2 QP ≈ 1725
/// ≤ 1772, OpenFHE's `HEStd_128_classic` bound at `N = 2^16` for uniform ternary secrets
/// (`stdlatticeparms.cpp`): margin ≈ 47 bits. Bootstrapping takes 16 levels (CoeffToSlot 4,
/// EvalMod 9, SlotToCoeff 3) and leaves **9 levels of 57 bits**; `q_0/Δ_0 ≈ 2^3` (the arcsine
/// removes the sine's cubic error). The ephemeral sparse secret (weight 32) appears only in the
/// level-0 key over `q_0·P` (300 bits), whose error is spread over `2^(log2(P/p_0) + 4)`
/// ([`crate::bootstrap::encapsulation`]): its ratio of modulus to error is below that of a
/// key over `q_0·p_0` (120 bits) with σ = 3.2, the shape of eprint 2022/024's own
/// implementation (Bossuat, Troncoso-Pastoriza, Hubaux, ACNS 2022). Key
/// memory: each switching key is `7 · 2 · 30 · 2^16 · 8` bytes ≈ 220 MB (half on the wire
/// with seeded `a`); the rotation-key count is
/// [`crate::bootstrap::BootstrapPlan::rotation_key_count`].
pub const BOOT_N16: ParametersLiteral = ParametersLiteral {
    log_n: 16,
    levels: 25,
    first_prime_bits: 60,
    scale_bits: 57,
    special_primes: 4,
    special_prime_bits: 60,
    dnum: 7,
    security: Security::Bits128,
    application_primes: None,
};

/// A bootstrappable 128-bit set at `N = 2^16` with a **mixed chain**
/// ([`ParametersLiteral::application_primes`]), for [`crate::bootstrap::BOOT_N16_MIXED_CONFIG`]
/// (the same stages as [`BOOT_N16`]) with a dense secret and sparse-secret encapsulation.
///
/// `N = 2^16`, `L + 1 = 26` ciphertext primes: `q_0` of 48 bits, 9 application primes of 45
/// bits (`q_1 … q_9`, the levels left after bootstrapping; the issue asks ≥ 40), 16
/// bootstrapping primes of 57 bits (`q_10 … q_25`); `K = 7` special primes of 58 bits,
/// `dnum = 4` (digits of 7, 7, 7, 5 primes, largest ≈ 399 bits ≤ log2 P ≈ 406). log2 QP ≈ 1771
/// ≤ 1772, OpenFHE's `HEStd_128_classic` bound at `N = 2^16` for uniform ternary secrets
/// (`stdlatticeparms.cpp`): margin ≈ 1 bit (checked exactly on the integer product). The
/// ladder steps from 57 to 45 bits at level 10 ([`Parameters::ladder_step`]), crossed by
/// SlotToCoeff's last matrix; `q_0/Δ_0 ≈ 2^3` as at [`BOOT_N16`], so EvalMod is the same. The
/// ephemeral sparse secret appears only in the level-0 key over `q_0·P` (454 bits), whose
/// error is spread over `2^(log2(P/p_0) + 4)` ([`crate::bootstrap::encapsulation`]): its ratio
/// of modulus to error is below that of a key over `q_0·p_0` (106 bits) with σ = 3.2, as at
/// [`BOOT_N16`]. Why this chain: a key switch at EvalMod's input level
/// (21) raises 4 digits instead of 6 ([`crate::bootstrap::BootstrapPlan::ntt_limbs`] models
/// the NTT work of a bootstrap; a model, not a measurement), and the H200 measured 36.3 ms
/// against 42.7 for [`BOOT_N16`] (2026-11-29, f30c181). Each switching key is
/// `4 · 2 · 33 · 2^16 · 8` bytes ≈ 138 MB.
pub const BOOT_N16_MIXED: ParametersLiteral = ParametersLiteral {
    log_n: 16,
    levels: 25,
    first_prime_bits: 48,
    scale_bits: 57,
    special_primes: 7,
    special_prime_bits: 58,
    dnum: 4,
    security: Security::Bits128,
    application_primes: Some(ApplicationPrimes {
        count: 9,
        scale_bits: 45,
    }),
};

/// A bootstrappable 128-bit set at `N = 2^16` for SlotToCoeff first
/// ([`crate::bootstrap::BOOT_N16_STC_FIRST_CONFIG`]: SlotToCoeff's 3 matrices on the input at
/// levels 3 … 1, where a key switch has 4 limbs; then ModRaise, CoeffToSlot, EvalMod without
/// the arcsine, and one landing level), with a dense secret and sparse-secret encapsulation.
///
/// `N = 2^16`, `L + 1 = 26` ciphertext primes: `q_0` of 52 bits, 12 application primes of 40
/// bits (`q_1 … q_12`: SlotToCoeff's 3 and the 9 levels between bootstraps), 13 bootstrapping
/// primes of 56 bits (`q_13 … q_25`: CoeffToSlot 4, EvalMod 8, the landing matrix, which
/// crosses the ladder step at level 13); `K = 7` special primes of 57 bits, `dnum = 4` (digits
/// of at most 7 primes, largest ≈ 392 bits ≤ log2 P ≈ 399). log2 QP ≈ 1659 ≤ 1772, OpenFHE's
/// `HEStd_128_classic` bound at `N = 2^16` (checked exactly). `q_0/Δ_0 ≈ 2^12`: SlotToCoeff
/// first puts the slot values themselves into the coefficients (up to `Δ_0`), so EvalMod's
/// input `m/q_0` stays below `2^-12` and `sin(2πx)/(2π)` is `x` to `2^-21.3` of it without
/// the arcsine; EvalMod's error reaches the slots without SlotToCoeff's `√N` growth. A
/// bootstrap takes its input at level 3 and returns it at level 12: 9 levels of 40 bits
/// between bootstraps. The encapsulation key is built as at [`BOOT_N16_MIXED`]. Each switching
/// key is `4 · 2 · 33 · 2^16 · 8` bytes ≈ 138 MB; with [`crate::bootstrap::BOOT_N16_STC_FIRST_CONFIG`]
/// 49 rotation keys (6.78 GB) and 1.47 GB of DFT plaintexts. Precision on the H200 (2026-11-29,
/// 83a67d5): 19.3 bits max, 22.3 median, in 27.3 ms.
pub const BOOT_N16_STC_FIRST: ParametersLiteral = ParametersLiteral {
    log_n: 16,
    levels: 25,
    first_prime_bits: 52,
    scale_bits: 56,
    special_primes: 7,
    special_prime_bits: 57,
    dnum: 4,
    security: Security::Bits128,
    application_primes: Some(ApplicationPrimes {
        count: 12,
        scale_bits: 40,
    }),
};

/// **Insecure** CI-sized analogue of [`BOOT_N16_STC_FIRST`] for SlotToCoeff first on the CPU
/// with [`crate::bootstrap::BOOT_N12_STC_FIRST_CONFIG`] (sparse secret of weight
/// [`BOOT_SECRET_WEIGHT`]): `N = 2^12`, `q_0` of 54 bits, 6 application primes of 45 bits
/// (SlotToCoeff's 3 and 3 between bootstraps), 14 bootstrapping primes of 54 bits; `K = 5`
/// special primes of 60 bits, `dnum = 5`; `q_0/Δ_0 ≈ 2^9`. **Not secure**.
pub const BOOT_N12_STC_FIRST_INSECURE: ParametersLiteral = ParametersLiteral {
    log_n: 12,
    levels: 20,
    first_prime_bits: 54,
    scale_bits: 54,
    special_primes: 5,
    special_prime_bits: 60,
    dnum: 5,
    security: Security::InsecureForTestingOnly,
    application_primes: Some(ApplicationPrimes {
        count: 6,
        scale_bits: 45,
    }),
};

/// **Insecure** CI-sized analogue of [`BOOT_N16_MIXED`] for bootstrapping on the CPU with
/// [`crate::bootstrap::BOOT_N12_CONFIG`] (sparse secret of weight [`BOOT_SECRET_WEIGHT`]).
///
/// `N = 2^12`, `L + 1 = 20` ciphertext primes: `q_0` of 51 bits, 3 application primes of 45
/// bits, 16 bootstrapping primes of 54 bits; `K = 5` special primes of 60 bits, `dnum = 4`.
/// `q_0/Δ_0 ≈ 2^6` and 54-bit bootstrapping scales as at [`BOOT_N12_INSECURE`]; the ladder
/// steps at level 4, SlotToCoeff's last matrix. log2 QP = 1350, far above the 109-bit bound
/// at `N = 2^12`: **not secure**, hence [`Security::InsecureForTestingOnly`].
pub const BOOT_N12_MIXED_INSECURE: ParametersLiteral = ParametersLiteral {
    log_n: 12,
    levels: 19,
    first_prime_bits: 51,
    scale_bits: 54,
    special_primes: 5,
    special_prime_bits: 60,
    dnum: 4,
    security: Security::InsecureForTestingOnly,
    application_primes: Some(ApplicationPrimes {
        count: 3,
        scale_bits: 45,
    }),
};

/// Validated CKKS parameters: the chosen primes, the scale ladder and the digit partition.
///
/// Built with [`Parameters::new`]; shared as `Arc<Parameters>`. Serializes as its literal, the
/// chosen primes and the fingerprint; deserializing rebuilds from the literal and checks both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ParametersWire", into = "ParametersWire")]
pub struct Parameters {
    literal: ParametersLiteral,
    n: usize,
    moduli_q: Vec<u64>,
    moduli_p: Vec<u64>,
    scales: Vec<f64>,
    digits: Vec<Range<usize>>,
    log2_q: f64,
    log2_p: f64,
    fingerprint: u64,
}

/// The serialized form of [`Parameters`].
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ParametersWire {
    literal: ParametersLiteral,
    moduli_q: Vec<u64>,
    moduli_p: Vec<u64>,
    fingerprint: u64,
}

/// The serialized form of [`Parameters`] before mixed chains: the literal without
/// `application_primes` (read by [`Parameters::from_bytes`], never written).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct LegacyParametersWire {
    literal: LegacyLiteral,
    moduli_q: Vec<u64>,
    moduli_p: Vec<u64>,
    fingerprint: u64,
}

/// [`ParametersLiteral`]'s fields before mixed chains, in their order.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct LegacyLiteral {
    log_n: u32,
    levels: usize,
    first_prime_bits: u32,
    scale_bits: u32,
    special_primes: usize,
    special_prime_bits: u32,
    dnum: usize,
    security: Security,
}

impl From<LegacyParametersWire> for ParametersWire {
    fn from(w: LegacyParametersWire) -> Self {
        let l = w.literal;
        ParametersWire {
            literal: ParametersLiteral {
                log_n: l.log_n,
                levels: l.levels,
                first_prime_bits: l.first_prime_bits,
                scale_bits: l.scale_bits,
                special_primes: l.special_primes,
                special_prime_bits: l.special_prime_bits,
                dnum: l.dnum,
                security: l.security,
                application_primes: None,
            },
            moduli_q: w.moduli_q,
            moduli_p: w.moduli_p,
            fingerprint: w.fingerprint,
        }
    }
}

impl From<Parameters> for ParametersWire {
    fn from(p: Parameters) -> Self {
        ParametersWire {
            literal: p.literal,
            moduli_q: p.moduli_q,
            moduli_p: p.moduli_p,
            fingerprint: p.fingerprint,
        }
    }
}

impl TryFrom<ParametersWire> for Parameters {
    type Error = Error;

    fn try_from(w: ParametersWire) -> Result<Self> {
        let p = Parameters::build(&w.literal)?;
        let stored = chain::ChainId::new(&w.moduli_q, &w.moduli_p, w.fingerprint);
        chain::check_rebuilt(stored, p.chain_id())
            .map_err(|what| Error::ParameterMismatch { what })?;
        Ok(p)
    }
}

fn invalid(what: impl Into<String>) -> Error {
    Error::InvalidParameters { what: what.into() }
}

/// A scale of `bits` bits must lie in `20..=first_prime_bits` (`Δ_0` below `q_0`).
fn check_scale_bits(name: &str, bits: u32, first_prime_bits: u32) -> Result<()> {
    if !(20..=first_prime_bits).contains(&bits) {
        return Err(invalid(format!(
            "{name} = {bits} is outside 20..=first_prime_bits ({first_prime_bits})"
        )));
    }
    Ok(())
}

impl Parameters {
    /// Validates `literal`, chooses the primes and the scale ladder, and returns the
    /// parameters. Fails (never panics) on out-of-range fields, missing primes, a special
    /// modulus smaller than the largest digit, or, with [`Security::Bits128`], when log2 QP
    /// exceeds the 128-bit bound.
    pub fn new(literal: &ParametersLiteral) -> Result<Arc<Parameters>> {
        Ok(Arc::new(Self::build(literal)?))
    }

    fn build(lit: &ParametersLiteral) -> Result<Parameters> {
        chain::check_log_n(lit.log_n).map_err(invalid)?;
        chain::check_prime_bits("first_prime_bits", lit.first_prime_bits).map_err(invalid)?;
        match lit.application_primes {
            None => check_scale_bits("scale_bits", lit.scale_bits, lit.first_prime_bits)?,
            Some(a) => {
                chain::check_prime_bits("scale_bits", lit.scale_bits).map_err(invalid)?;
                check_scale_bits(
                    "application_primes.scale_bits",
                    a.scale_bits,
                    lit.first_prime_bits,
                )?;
                if !(1..lit.levels).contains(&a.count) {
                    return Err(invalid(format!(
                        "application_primes.count = {} is outside 1..levels ({})",
                        a.count, lit.levels
                    )));
                }
            }
        }
        chain::check_prime_bits("special_prime_bits", lit.special_prime_bits).map_err(invalid)?;
        let (q_count, digits) =
            chain::chain_layout(lit.levels, lit.special_primes, lit.dnum).map_err(invalid)?;

        let n = 1usize << lit.log_n;
        let two_n = 2 * n as u64;
        let (moduli_p, q0, mut chosen) = chain::special_and_first_primes(
            two_n,
            lit.special_prime_bits,
            lit.special_primes,
            lit.first_prime_bits,
        )?;

        // Scale ladder, from the top level down.
        let mut scales = vec![0.0f64; q_count];
        let mut moduli_q = vec![0u64; q_count];
        moduli_q[0] = q0;
        let mut delta = 2f64.powi(lit.scale_bits as i32);
        for l in (1..q_count).rev() {
            if let Some(a) = lit.application_primes.filter(|a| a.count == l) {
                delta = 2f64.powi(a.scale_bits as i32);
            }
            scales[l] = delta;
            let q = ntt_prime_nearest(delta.round() as u64, two_n, &chosen)?;
            chosen.push(q);
            moduli_q[l] = q;
            delta = delta * delta / q as f64;
        }
        scales[0] = delta;

        let log2_q = chain::log2_product(&moduli_q);
        let log2_p = chain::log2_product(&moduli_p);
        chain::check_special_covers_digits(&moduli_q, &moduli_p, &digits).map_err(invalid)?;
        if let Some((log2_qp, bound)) = lit.security.violation(lit.log_n, &moduli_q, &moduli_p) {
            return Err(Error::NotSecure {
                log2_qp,
                bound,
                log_n: lit.log_n,
            });
        }

        let mut p = Parameters {
            literal: lit.clone(),
            n,
            moduli_q,
            moduli_p,
            scales,
            digits,
            log2_q,
            log2_p,
            fingerprint: 0,
        };
        p.fingerprint = p.compute_fingerprint();
        Ok(p)
    }

    /// FNV-1a over: `b"ckks"`, then as `u64` little-endian: `n`, the number of Q primes and
    /// each Q prime, the number of P primes and each P prime, `dnum`, the number of scales and
    /// each scale's IEEE-754 bit pattern.
    fn compute_fingerprint(&self) -> u64 {
        let mut h = chain::chain_fingerprint(
            b"ckks",
            self.n,
            &self.moduli_q,
            &self.moduli_p,
            self.literal.dnum,
        );
        let mut put = |v: u64| h = chain::fnv1a(h, &v.to_le_bytes());
        put(self.scales.len() as u64);
        self.scales.iter().for_each(|s| put(s.to_bits()));
        h
    }

    /// The number of slots, `N / 2`.
    pub fn slots(&self) -> usize {
        self.n / 2
    }

    /// The scale `Δ_level` used to encode at `level`; `Δ_{l-1} = Δ_l² / q_l`.
    pub fn scale(&self, level: usize) -> Result<f64> {
        self.scales.get(level).copied().ok_or(Error::InvalidLevel {
            level,
            max_level: self.max_level(),
        })
    }

    /// All scales, index = level.
    pub fn scales(&self) -> &[f64] {
        &self.scales
    }

    /// The level `l` where the ladder steps (`Δ_{l-1} ≠ Δ_l²/q_l`): `A + 1` for a mixed chain
    /// of `A` application primes, `None` for one prime size.
    pub fn ladder_step(&self) -> Option<usize> {
        self.literal.application_primes.map(|a| a.count + 1)
    }

    /// The plaintext scale `s` that takes a product at `level` (ciphertext at `Δ_level`) onto
    /// the ladder after the rescale: `Δ_level · s / q_level = Δ_{level-1}`. That is `Δ_level`
    /// itself except at the [`Parameters::ladder_step`], where it is
    /// `Δ_{level-1} · q_level / Δ_level`. Errors on level 0 or above `L`.
    pub fn landing_scale(&self, level: usize) -> Result<f64> {
        let delta = self.scale(level)?;
        if level == 0 {
            return Err(Error::InvalidLevel {
                level,
                max_level: self.max_level(),
            });
        }
        Ok(if self.ladder_step() == Some(level) {
            self.scales[level - 1] * self.moduli_q[level] as f64 / delta
        } else {
            delta
        })
    }

    rlwe::chain_parameter_accessors!(without_blob);

    /// Serializes as an [`rlwe::wire`] blob of kind `BlobKind::Parameters` (the literal with
    /// its [`ParametersLiteral::application_primes`]).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        Ok(wire::encode(
            BlobKind::Parameters,
            &ParametersWire::from(self.clone()),
        )?)
    }

    /// Reads a parameters blob (at most [`MAX_PARAMETERS_BLOB`] bytes), rebuilds the
    /// parameters from the stored literal and checks that the stored primes and fingerprint
    /// match. Blobs written before mixed chains (a literal without `application_primes`) load
    /// as one-prime-size chains; a blob that decodes in neither form gives the current form's
    /// error.
    pub fn from_bytes(bytes: &[u8]) -> Result<Arc<Parameters>> {
        let w = match wire::decode::<ParametersWire>(
            BlobKind::Parameters,
            bytes,
            MAX_PARAMETERS_BLOB,
        ) {
            Ok(w) => w,
            Err(e) => {
                match wire::decode::<LegacyParametersWire>(
                    BlobKind::Parameters,
                    bytes,
                    MAX_PARAMETERS_BLOB,
                ) {
                    Ok(old) => old.into(),
                    Err(_) => return Err(e.into()),
                }
            }
        };
        Ok(Arc::new(Parameters::try_from(w)?))
    }

    /// A 64-bit FNV-1a fingerprint of the scheme, ring degree, primes, dnum and scales, to
    /// detect objects loaded with other parameters. It detects mismatches; it is **not** a
    /// cryptographic hash and offers no security against deliberate forgeries.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

rlwe::impl_prime_chain!(Parameters);

#[cfg(test)]
mod tests {
    use super::*;

    const PRESETS: [(&str, ParametersLiteral); 8] = [
        ("BOOT_N16", BOOT_N16),
        ("BOOT_N12_INSECURE", BOOT_N12_INSECURE),
        ("CAT", CAT),
        ("CAT_COMPAT", CAT_COMPAT),
        ("N16_L24_D3", N16_L24_D3),
        ("PHANTOM_N16", PHANTOM_N16),
        ("N13", N13),
        ("TEST_N11_INSECURE", TEST_N11_INSECURE),
    ];

    fn build(lit: &ParametersLiteral) -> Arc<Parameters> {
        Parameters::new(lit).unwrap_or_else(|e| panic!("{lit:?}: {e}"))
    }

    #[test]
    fn presets_build_with_expected_shapes() {
        for (name, lit) in PRESETS {
            let p = build(&lit);
            assert_eq!(p.n(), 1 << lit.log_n, "{name}");
            assert_eq!(p.max_level(), lit.levels, "{name}");
            assert_eq!(p.moduli_q().len(), lit.levels + 1, "{name}");
            assert_eq!(p.moduli_p().len(), lit.special_primes, "{name}");
            assert_eq!(p.digits().len(), lit.dnum, "{name}");
            println!(
                "{name}: log2 Q = {:.6}, log2 P = {:.6}, log2 QP = {:.6}, fingerprint {:#018x}",
                p.log2_q(),
                p.log2_p(),
                p.log2_qp(),
                p.fingerprint()
            );
        }
    }

    #[test]
    fn secure_presets_are_secure() {
        for lit in [CAT, CAT_COMPAT, N16_L24_D3, PHANTOM_N16, N13, BOOT_N16] {
            assert_eq!(lit.security, Security::Bits128);
            let p = build(&lit);
            assert!(p.log2_qp() <= fhe_math::security::max_log_qp_128(lit.log_n).unwrap());
        }
        let nominal = [
            (CAT, 880.0),
            (N16_L24_D3, 1440.0),
            (PHANTOM_N16, 1280.0),
            (N13, 200.0),
        ];
        for (lit, want) in nominal {
            let p = build(&lit);
            assert!((p.log2_qp() - want).abs() < 0.01, "{}", p.log2_qp());
        }
    }

    #[test]
    fn cat_compat_matches_seal_default() {
        let p = build(&CAT_COMPAT);
        assert_eq!(p.moduli_q().len(), 15);
        assert_eq!(p.moduli_p().len(), 1);
        assert!(p.moduli_p()[0] >> 55 == 1, "56-bit special prime");
        assert!((p.log2_qp() - 881.0).abs() < 0.01);
        assert!(
            rlwe::chain::exceeds_security_bound(15, p.moduli_q(), p.moduli_p()).is_none(),
            "QP < 2^881 exactly"
        );
    }

    #[test]
    fn ladder_property() {
        for (name, lit) in PRESETS {
            let p = build(&lit);
            for l in 1..=p.max_level() {
                let dl = p.scale(l).unwrap();
                let below = p.scale(l - 1).unwrap();
                assert_eq!(below, dl * dl / p.moduli_q()[l] as f64, "{name} level {l}");
            }
            for l in 0..=p.max_level() {
                let s = p.scale(l).unwrap().log2();
                assert!(
                    (s - lit.scale_bits as f64).abs() < 0.1,
                    "{name} level {l}: log2 scale {s}"
                );
            }
            assert_eq!(
                p.scale(lit.levels).unwrap(),
                2f64.powi(lit.scale_bits as i32)
            );
            assert!(matches!(
                p.scale(lit.levels + 1),
                Err(Error::InvalidLevel { .. })
            ));
        }
    }

    #[test]
    fn primes_distinct_and_ntt_friendly() {
        for (name, lit) in PRESETS {
            let p = build(&lit);
            let two_n = 2 * p.n() as u64;
            let mut all: Vec<u64> = p.moduli_q().iter().chain(p.moduli_p()).copied().collect();
            for &q in &all {
                assert!(fhe_math::primes::is_prime(q), "{name}: {q}");
                assert_eq!(q % two_n, 1, "{name}: {q}");
            }
            let count = all.len();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), count, "{name}: repeated prime");
            assert_eq!(64 - p.moduli_q()[0].leading_zeros(), lit.first_prime_bits);
            for &sp in p.moduli_p() {
                assert_eq!(64 - sp.leading_zeros(), lit.special_prime_bits);
            }
        }
    }

    #[test]
    fn digits_partition_the_chain() {
        let p = build(&N16_L24_D3);
        assert_eq!(p.digits(), vec![0..9, 9..18, 18..25]);
        let p = build(&CAT);
        assert_eq!(p.digits().len(), 6);
        assert_eq!(p.digits()[5], 15..17);
        let p = build(&TEST_N11_INSECURE);
        assert!(p.digits().iter().all(|d| d.len() == 1));
    }

    #[test]
    fn insecure_set_rejected_when_security_required() {
        let lit = ParametersLiteral {
            security: Security::Bits128,
            ..TEST_N11_INSECURE
        };
        let e = Parameters::new(&lit).unwrap_err();
        assert!(matches!(e, Error::NotSecure { log_n: 11, .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("not 128-bit secure"), "{msg}");
        assert!(msg.contains("bound 54 at N = 2^11"), "{msg}");
        // One more 40-bit prime pushes CAT over 881.
        let lit = ParametersLiteral {
            levels: 17,
            dnum: 6,
            ..CAT
        };
        assert!(matches!(
            Parameters::new(&lit),
            Err(Error::NotSecure { .. })
        ));
    }

    #[test]
    fn bad_literals_give_errors() {
        let bad = [
            ParametersLiteral { log_n: 9, ..N13 },
            ParametersLiteral { log_n: 18, ..N13 },
            ParametersLiteral {
                log_n: u32::MAX,
                ..N13
            },
            ParametersLiteral {
                first_prime_bits: 19,
                ..N13
            },
            ParametersLiteral {
                first_prime_bits: 61,
                ..N13
            },
            ParametersLiteral {
                scale_bits: 19,
                ..N13
            },
            ParametersLiteral {
                scale_bits: 61,
                ..N13
            },
            ParametersLiteral {
                first_prime_bits: 30,
                scale_bits: 40,
                ..N13
            },
            ParametersLiteral {
                special_prime_bits: 19,
                ..N13
            },
            ParametersLiteral {
                special_prime_bits: 61,
                ..N13
            },
            ParametersLiteral {
                special_primes: 0,
                ..N13
            },
            ParametersLiteral { dnum: 0, ..N13 },
            ParametersLiteral { dnum: 4, ..N13 },
            ParametersLiteral {
                levels: usize::MAX,
                ..N13
            },
            ParametersLiteral {
                special_primes: usize::MAX,
                ..N13
            },
            // 10 primes, dnum 4 -> digits of 3 -> 4 digits: fine; dnum 6 -> digits of 2 -> 5.
            ParametersLiteral {
                dnum: 6,
                levels: 9,
                ..TEST_N11_INSECURE
            },
            // P (one 60-bit prime) below a digit of two primes.
            ParametersLiteral { dnum: 1, ..N13 },
        ];
        for lit in bad {
            let e = Parameters::new(&lit).expect_err(&format!("{lit:?} accepted"));
            assert!(
                matches!(e, Error::InvalidParameters { .. } | Error::NotSecure { .. }),
                "{lit:?}: {e:?}"
            );
        }
        let e = Parameters::new(&ParametersLiteral { dnum: 1, ..N13 }).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("log2 P = 60") && msg.contains("largest digit"),
            "{msg}"
        );
        // Level 0 (no rescale) is allowed.
        let p = build(&ParametersLiteral {
            levels: 0,
            dnum: 1,
            ..N13
        });
        assert_eq!(p.max_level(), 0);
    }

    #[test]
    fn not_enough_primes_is_an_error() {
        // 20-bit primes that are 1 mod 2^18: far fewer than 200 exist.
        let lit = ParametersLiteral {
            log_n: 17,
            levels: 0,
            first_prime_bits: 20,
            scale_bits: 20,
            special_primes: 200,
            special_prime_bits: 20,
            dnum: 1,
            security: Security::InsecureForTestingOnly,
            application_primes: None,
        };
        assert!(matches!(Parameters::new(&lit), Err(Error::Math(_))));
    }

    #[test]
    fn fingerprints_differ() {
        let fps: Vec<u64> = PRESETS
            .iter()
            .map(|(_, l)| build(l).fingerprint())
            .collect();
        let mut d = fps.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), fps.len());
        assert_eq!(build(&N13).fingerprint(), build(&N13).fingerprint());
    }

    #[test]
    fn bytes_round_trip() {
        for lit in [N13, TEST_N11_INSECURE, CAT] {
            let p = build(&lit);
            let b = p.to_bytes().unwrap();
            let q = Parameters::from_bytes(&b).unwrap();
            assert_eq!(*p, *q);
        }
    }

    fn wire_of(p: &Parameters) -> ParametersWire {
        ParametersWire::from(p.clone())
    }

    #[test]
    fn tampered_bytes_give_errors() {
        let p = build(&N13);
        let good = p.to_bytes().unwrap();
        // Every single-byte change is rejected, except one that flips the security flag
        // (which selects a validation policy, not the math: primes, scales and fingerprint
        // stay the same); never a panic.
        for i in 0..good.len() {
            for x in [1u8, 0x80, 0xff] {
                let mut b = good.clone();
                b[i] ^= x;
                if let Ok(q) = Parameters::from_bytes(&b) {
                    assert_eq!(q.security(), Security::InsecureForTestingOnly, "byte {i}");
                    assert_eq!(q.moduli_q(), p.moduli_q());
                    assert_eq!(q.moduli_p(), p.moduli_p());
                    assert_eq!(q.scales(), p.scales());
                    assert_eq!(q.fingerprint(), p.fingerprint());
                }
            }
        }
        for len in 0..good.len() {
            assert!(Parameters::from_bytes(&good[..len]).is_err());
        }
        // Wrong primes, wrong fingerprint, wrong kind.
        let mut w = wire_of(&p);
        w.moduli_q[1] += 2 * p.n() as u64;
        let b = wire::encode(BlobKind::Parameters, &w).unwrap();
        assert!(matches!(
            Parameters::from_bytes(&b),
            Err(Error::ParameterMismatch { .. })
        ));
        let mut w = wire_of(&p);
        w.fingerprint ^= 1;
        let b = wire::encode(BlobKind::Parameters, &w).unwrap();
        let e = Parameters::from_bytes(&b).unwrap_err();
        assert!(e.to_string().contains("fingerprint"), "{e}");
        let b = wire::encode(BlobKind::Ciphertext, &wire_of(&p)).unwrap();
        assert!(matches!(
            Parameters::from_bytes(&b),
            Err(Error::Rlwe(rlwe::Error::WrongKind { .. }))
        ));
        // A literal that fails validation.
        let mut w = wire_of(&p);
        w.literal.log_n = 40;
        let b = wire::encode(BlobKind::Parameters, &w).unwrap();
        assert!(matches!(
            Parameters::from_bytes(&b),
            Err(Error::InvalidParameters { .. })
        ));
    }

    const MIXED: [(&str, ParametersLiteral); 4] = [
        ("BOOT_N16_MIXED", BOOT_N16_MIXED),
        ("BOOT_N16_STC_FIRST", BOOT_N16_STC_FIRST),
        ("BOOT_N12_STC_FIRST_INSECURE", BOOT_N12_STC_FIRST_INSECURE),
        ("BOOT_N12_MIXED_INSECURE", BOOT_N12_MIXED_INSECURE),
    ];

    /// Mixed chains: `Δ_{l-1} = Δ_l²/q_l` everywhere but the step `A + 1`; the application
    /// primes and scales at `a.scale_bits`, the ones above at `scale_bits`; the landing scale
    /// takes a product at the step exactly onto `Δ_A`; fingerprints differ from every preset's.
    #[test]
    fn mixed_ladder_steps_once() {
        for (name, lit) in MIXED {
            let p = build(&lit);
            let a = lit.application_primes.unwrap();
            assert_eq!(p.max_level(), lit.levels, "{name}");
            assert_eq!(p.ladder_step(), Some(a.count + 1), "{name}");
            assert_eq!(p.scale(a.count).unwrap(), 2f64.powi(a.scale_bits as i32));
            assert_eq!(
                p.scale(lit.levels).unwrap(),
                2f64.powi(lit.scale_bits as i32)
            );
            assert_eq!(64 - p.moduli_q()[0].leading_zeros(), lit.first_prime_bits);
            for l in 1..=p.max_level() {
                let (dl, q) = (p.scale(l).unwrap(), p.moduli_q()[l] as f64);
                let want_bits = if l <= a.count {
                    a.scale_bits
                } else {
                    lit.scale_bits
                };
                assert!((q.log2() - want_bits as f64).abs() < 0.1, "{name} q_{l}");
                assert!((dl.log2() - want_bits as f64).abs() < 0.1, "{name} Δ_{l}");
                let landing = p.landing_scale(l).unwrap();
                if l == a.count + 1 {
                    let landed = dl * landing / q;
                    let below = p.scale(l - 1).unwrap();
                    assert!(((landed - below) / below).abs() < 1e-12, "{name} step {l}");
                    assert!((landing.log2() - a.scale_bits as f64).abs() < 0.1);
                } else {
                    assert_eq!(p.scale(l - 1).unwrap(), dl * dl / q, "{name} level {l}");
                    assert_eq!(landing, dl, "{name} level {l}");
                }
            }
            assert!(p.landing_scale(0).is_err());
            assert!(p.landing_scale(lit.levels + 1).is_err());
            let digits_cover = p
                .digits()
                .iter()
                .all(|d| chain::log2_product(&p.moduli_q()[d.clone()]) <= p.log2_p());
            assert!(digits_cover, "{name}");
            let b = p.to_bytes().unwrap();
            assert_eq!(*Parameters::from_bytes(&b).unwrap(), *p, "{name}");
            println!(
                "{name}: log2 Q = {:.3}, log2 P = {:.3}, log2 QP = {:.3}, Δ_0 = 2^{:.3}, q_0/Δ_0 = 2^{:.3}, fingerprint {:#018x}",
                p.log2_q(),
                p.log2_p(),
                p.log2_qp(),
                p.scale(0).unwrap().log2(),
                (p.moduli_q()[0] as f64 / p.scale(0).unwrap()).log2(),
                p.fingerprint()
            );
        }
        let p = build(&BOOT_N16_MIXED);
        assert_eq!(p.security(), Security::Bits128);
        assert!(p.log2_qp() <= fhe_math::security::max_log_qp_128(16).unwrap());
        assert!((p.log2_qp() - 1771.0).abs() < 1.0, "{}", p.log2_qp());
        assert_eq!(p.digits(), vec![0..7, 7..14, 14..21, 21..26]);
        let mut fps: Vec<u64> = PRESETS
            .iter()
            .chain(&MIXED)
            .map(|(_, l)| build(l).fingerprint())
            .collect();
        let count = fps.len();
        fps.sort_unstable();
        fps.dedup();
        assert_eq!(fps.len(), count);
        for (_, lit) in PRESETS {
            assert_eq!(build(&lit).ladder_step(), None);
        }
    }

    #[test]
    fn bad_mixed_literals_give_errors() {
        let mixed = |count, scale_bits| ParametersLiteral {
            application_primes: Some(ApplicationPrimes { count, scale_bits }),
            ..BOOT_N12_MIXED_INSECURE
        };
        let bad = [
            (
                mixed(0, 45),
                "application_primes.count = 0 is outside 1..levels (19)",
            ),
            (
                mixed(19, 45),
                "application_primes.count = 19 is outside 1..levels (19)",
            ),
            (
                mixed(3, 52),
                "application_primes.scale_bits = 52 is outside 20..=first_prime_bits (51)",
            ),
            (mixed(3, 19), "application_primes.scale_bits = 19"),
            (
                ParametersLiteral {
                    scale_bits: 61,
                    ..BOOT_N12_MIXED_INSECURE
                },
                "scale_bits = 61 is outside 20..=60",
            ),
        ];
        for (lit, want) in bad {
            let e = Parameters::new(&lit).expect_err(&format!("{lit:?} accepted"));
            assert!(matches!(e, Error::InvalidParameters { .. }), "{e:?}");
            assert!(e.to_string().contains(want), "{e} lacks {want:?}");
        }
        // One more 58-bit special prime breaks the 128-bit bound.
        let lit = ParametersLiteral {
            special_primes: 8,
            ..BOOT_N16_MIXED
        };
        assert!(matches!(
            Parameters::new(&lit),
            Err(Error::NotSecure { .. })
        ));
    }

    /// A blob written before mixed chains (the literal without `application_primes`) still
    /// loads, as the same parameters.
    #[test]
    fn blobs_without_application_primes_load() {
        for lit in [N13, BOOT_N12_INSECURE] {
            let p = build(&lit);
            let l = p.literal().clone();
            let old = LegacyParametersWire {
                literal: LegacyLiteral {
                    log_n: l.log_n,
                    levels: l.levels,
                    first_prime_bits: l.first_prime_bits,
                    scale_bits: l.scale_bits,
                    special_primes: l.special_primes,
                    special_prime_bits: l.special_prime_bits,
                    dnum: l.dnum,
                    security: l.security,
                },
                moduli_q: p.moduli_q().to_vec(),
                moduli_p: p.moduli_p().to_vec(),
                fingerprint: p.fingerprint(),
            };
            let b = wire::encode(BlobKind::Parameters, &old).unwrap();
            assert_ne!(b, p.to_bytes().unwrap());
            assert_eq!(*Parameters::from_bytes(&b).unwrap(), *p);
            for len in 0..b.len() {
                assert!(Parameters::from_bytes(&b[..len]).is_err());
            }
        }
    }

    #[test]
    fn parameters_are_send_sync() {
        fn check<T: Send + Sync>() {}
        check::<Parameters>();
        check::<ParametersLiteral>();
    }
}
