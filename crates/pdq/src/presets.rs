//! Named parameter sets of `pdq keygen --preset` and `pdq demo --preset`.

use crate::error::{Error, Result};
use bgv::ParametersLiteral;

/// The preset names, the default first.
pub const NAMES: [&str; 2] = ["cat", "test"];

/// **Insecure** `N = 2^11` ring with 12 levels of 40-bit primes (`t = 65537`): the depth of
/// CAT's queries (a 9-level comparison, `AND`, the mask product) for fast tests; 256 rows
/// per ciphertext.
pub const TEST: ParametersLiteral = ParametersLiteral {
    log_n: 11,
    levels: 12,
    first_prime_bits: 60,
    prime_bits: 40,
    special_primes: 2,
    special_prime_bits: 60,
    dnum: 13,
    plaintext_modulus: 65537,
    security: bgv::Security::InsecureForTestingOnly,
};

/// The parameter literal of a preset.
///
/// - `cat`: BGV's `CAT` chain (`N = 2^15`, 16 levels, `t = 65537`, 128-bit security);
/// - `test`: [`TEST`], **insecure**, for tests and quick trials.
pub fn literal(name: &str) -> Result<ParametersLiteral> {
    match name {
        "cat" => Ok(bgv::params::CAT),
        "test" => Ok(TEST),
        other => Err(Error::Table(format!(
            "unknown preset `{other}` (known: {})",
            NAMES.join(", ")
        ))),
    }
}
