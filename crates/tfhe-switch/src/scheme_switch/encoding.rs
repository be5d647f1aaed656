//! How real CKKS slot values become LWE messages.

use super::error::{Error, Result};

/// The affine map from a slot value `x` to the real LWE message `μ = scale·x + offset`,
/// encoded as the phase `μ · q/(2p)` (the padding-bit encoding of [`crate::lwe::encode`],
/// extended to reals); the PBS rounds `μ` to the nearest message `m ∈ [0, p)`. Built only when
/// every `|x| ≤ bound` gives `μ ∈ [0, p − 1]`, so that each rounded message stays half a
/// step inside the message space (and clear of the padding half).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LweEncoding {
    scale: f64,
    offset: f64,
    bound: f64,
}

impl LweEncoding {
    /// `μ = scale·x + offset` for `|x| ≤ bound` in a space of `p` messages.
    ///
    /// Errors ([`Error::Range`]): a non-finite or non-positive bound or scale, or a range
    /// reaching outside `[0, p − 1]`.
    pub fn new(p: u64, scale: f64, offset: f64, bound: f64) -> Result<Self> {
        if !(bound > 0.0 && bound.is_finite() && scale > 0.0 && scale.is_finite()) {
            return Err(Error::Range {
                reason: format!("bound {bound} and scale {scale} must be positive and finite"),
            });
        }
        let (lo, hi) = (offset - scale * bound, offset + scale * bound);
        if lo < 0.0 || hi > (p - 1) as f64 {
            return Err(Error::Range {
                reason: format!(
                    "|x| <= {bound} maps to messages [{lo}, {hi}], outside [0, {}]",
                    p - 1
                ),
            });
        }
        Ok(LweEncoding {
            scale,
            offset,
            bound,
        })
    }

    /// The sign encoding: `|x| ≤ bound` onto `[½, p − 3/2]` with `x = 0` on the rounding
    /// boundary between `p/2 − 1` and `p/2`, so message `m ≥ p/2` means `x > 0`:
    /// `scale = (p/2 − 1)/bound`, `offset = (p − 1)/2`. Exact for `|x| ≥` [`Self::gap`].
    pub fn sign(p: u64, bound: f64) -> Result<Self> {
        if p < 4 {
            return Err(Error::Range {
                reason: format!("a sign needs at least 4 messages, the space has {p}"),
            });
        }
        let half = (p / 2) as f64;
        Self::new(p, (half - 1.0) / bound, half - 0.5, bound)
    }

    /// The scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The offset.
    pub fn offset(&self) -> f64 {
        self.offset
    }

    /// The bound on `|x|`.
    pub fn bound(&self) -> f64 {
        self.bound
    }

    /// The real message of `x`.
    pub fn message(&self, x: f64) -> f64 {
        self.scale * x + self.offset
    }

    /// The gap `½ / scale`: a value this far from a rounding boundary lands half a message
    /// step inside its window, where the PBS's noise (standard deviation well below a tenth
    /// of a step at the sets here, [`crate::params`]) cannot move it.
    pub fn gap(&self) -> f64 {
        0.5 / self.scale
    }
}
