//! Named parameter sets of `pdq keygen --preset` and `pdq demo --preset`.

use crate::error::{Error, Result};
use bgv::ParametersLiteral;

/// The preset names, the default first.
pub const NAMES: [&str; 2] = ["cat", "test"];

/// The parameter literal of a preset.
///
/// - `cat`: BGV's `CAT` chain (`N = 2^15`, 16 levels, `t = 65537`, 128-bit security);
/// - `test`: `N = 2^11`, 10 levels, **insecure**, for tests and quick trials.
pub fn literal(name: &str) -> Result<ParametersLiteral> {
    match name {
        "cat" => Ok(bgv::params::CAT),
        "test" => Ok(bgv::params::TEST_N11_INSECURE),
        other => Err(Error::Table(format!(
            "unknown preset `{other}` (known: {})",
            NAMES.join(", ")
        ))),
    }
}
