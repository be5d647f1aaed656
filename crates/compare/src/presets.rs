//! Parameter presets for comparisons at 128-bit security.
//!
//! Every preset's `log2 QP` is at most the bound of the HomomorphicEncryption.org security
//! standard (Albrecht et al., "Homomorphic Encryption Standard", 2018, Table 1: uniform
//! ternary secret, 128-bit classical security: 881 bits at `N = 2^15`;
//! [`fhe_math::security::max_log_qp_128`]); `bgv::Parameters::new` refuses anything above it
//! and `tests/presets.rs` checks each preset against it. All use `t = 65537`
//! (`≡ 1 mod 2N`: `N` slots) and 40-bit ciphertext primes (one multiplication per level).
//!
//! | preset | `N` | `log2 QP` | levels | word | digits | block | words/ct | LT levels | LT key switches |
//! |---|---|---|---|---|---|---|---|---|---|
//! | [`U32_THROUGHPUT`] | 2^15 | 880 | 16 | 32-bit | 8 × 4 bits | 8 | 4096 | 9 | 21 |
//! | [`U64_THROUGHPUT`] | 2^15 | 660 | 12 | 64-bit | 16 × 4 bits | 16 | 2048 | 10 | 25 |
//! | [`U64_LATENCY`] | 2^15 | 540 | 9 | 64-bit | 32 × 2 bits | 32 | 1024 | 8 | 23 |
//!
//! Every preset keeps at least one level beyond its comparison: the analytic noise bound of
//! the last product (which carries the plaintext mask, about 20 bits of `ℓ1` norm) does not
//! fit the 99-bit modulus of level 1; likewise `select` (`min`, `max`) needs its condition at
//! level 2 or above (measured: the product of a level-1 condition exceeds level 1's bound).
//! `U32_THROUGHPUT` leaves 7 levels after a comparison (room for `select`, and for the sort of
//! 16 words by the comparison matrix); `U64_THROUGHPUT` 2 (`min`, `max`, `select`);
//! `U64_LATENCY` 1 (the comparison alone). At `N = 2^14` the 438-bit
//! bound holds only 8 levels of 39 bits besides `q_0` and `P`, one short of base-2^2 64-bit
//! comparisons with that spare level, so the latency preset is at `N = 2^15` too.

use crate::error::Result;
use crate::layout::{DigitLayout, WordType};
use bgv::ParametersLiteral;
use bgv::params::Security;

/// A parameter set with the word type and digit width it is made for.
#[derive(Clone, Debug, PartialEq)]
pub struct Preset {
    /// The name.
    pub name: &'static str,
    /// The BGV parameters.
    pub params: ParametersLiteral,
    /// The word type.
    pub word: WordType,
    /// The digit width in bits.
    pub digit_bits: u32,
}

impl Preset {
    /// The digit layout over all `N` slots.
    pub fn layout(&self) -> Result<DigitLayout> {
        DigitLayout::new(self.word, self.digit_bits, 1 << self.params.log_n)
    }
}

/// 32-bit words, base-2^4 digits, on the `CAT` chain: `N = 2^15`, `L = 16` (60 + 16 × 40 bits),
/// `K = 3` special primes of 60 bits, `dnum = 6`; `log2 QP ≈ 880 ≤ 881`.
pub const U32_THROUGHPUT: Preset = Preset {
    name: "U32_THROUGHPUT",
    params: bgv::params::CAT,
    word: WordType::U32,
    digit_bits: 4,
};

/// 64-bit words, base-2^4 digits: `N = 2^15`, `L = 12` (60 + 12 × 40 bits), `K = 2` special
/// primes of 60 bits, `dnum = 7` (digits of 2 primes, at most 100 ≤ 120 bits);
/// `log2 QP ≈ 660 ≤ 881`.
pub const U64_THROUGHPUT: Preset = Preset {
    name: "U64_THROUGHPUT",
    params: ParametersLiteral {
        log_n: 15,
        levels: 12,
        first_prime_bits: 60,
        prime_bits: 40,
        special_primes: 2,
        special_prime_bits: 60,
        dnum: 7,
        plaintext_modulus: 65537,
        security: Security::Bits128,
    },
    word: WordType::U64,
    digit_bits: 4,
};

/// 64-bit words, base-2^2 digits, one pair with few key switches: `N = 2^15`, `L = 9`
/// (60 + 9 × 40 bits), `K = 2` special primes of 60 bits, `dnum = 5` (digits of 2 primes,
/// 100 ≤ 120 bits); `log2 QP ≈ 540 ≤ 881`.
pub const U64_LATENCY: Preset = Preset {
    name: "U64_LATENCY",
    params: ParametersLiteral {
        log_n: 15,
        levels: 9,
        first_prime_bits: 60,
        prime_bits: 40,
        special_primes: 2,
        special_prime_bits: 60,
        dnum: 5,
        plaintext_modulus: 65537,
        security: Security::Bits128,
    },
    word: WordType::U64,
    digit_bits: 2,
};

/// All presets.
pub const ALL: [Preset; 3] = [U32_THROUGHPUT, U64_THROUGHPUT, U64_LATENCY];
