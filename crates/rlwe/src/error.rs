//! Errors of the RLWE layer.

use crate::wire::BlobKind;

/// Everything a caller can get wrong in `rlwe`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of the math layer.
    #[error(transparent)]
    Math(#[from] fhe_math::Error),
    /// A blob does not start with the `GFHE` magic.
    #[error("cannot decode {kind}: bad magic")]
    BadMagic {
        /// The kind the caller expected.
        kind: BlobKind,
    },
    /// A blob is shorter than its header or its payload claims.
    #[error("cannot decode {kind}: truncated data ({len} bytes)")]
    Truncated {
        /// The kind the caller expected.
        kind: BlobKind,
        /// How many bytes were given.
        len: usize,
    },
    /// A blob was written by an unknown format version.
    #[error(
        "cannot decode {kind}: format version {found} is not supported (this build reads version {supported})"
    )]
    UnsupportedVersion {
        /// The kind the caller expected.
        kind: BlobKind,
        /// The version in the blob.
        found: u16,
        /// The version this build reads and writes.
        supported: u16,
    },
    /// A blob holds another kind of object than the one asked for.
    #[error("cannot decode {expected}: the blob holds {}", BlobKind::describe_tag(*found))]
    WrongKind {
        /// The kind the caller expected.
        expected: BlobKind,
        /// The kind tag found in the blob.
        found: u8,
    },
    /// Bytes remain after the payload.
    #[error("cannot decode {kind}: {extra} trailing bytes after the payload")]
    TrailingBytes {
        /// The kind the caller expected.
        kind: BlobKind,
        /// How many bytes are left over.
        extra: usize,
    },
    /// A blob is larger than the caller's limit.
    #[error("cannot decode {kind}: blob of {len} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// The kind the caller expected.
        kind: BlobKind,
        /// The blob length.
        len: usize,
        /// The caller's limit.
        max: usize,
    },
    /// Serialized data is malformed: the payload does not decode as the expected type, or its
    /// content fails validation.
    #[error("cannot decode {what}: {reason}")]
    Malformed {
        /// What was being decoded.
        what: &'static str,
        /// Why it is rejected.
        reason: String,
    },
    /// A value could not be encoded.
    #[error("cannot encode {what}")]
    Encode {
        /// What failed, starting with the kind of object.
        what: String,
    },
    /// Operands (or loaded data) were made under different parameter sets.
    #[error("cannot {op}: operands belong to different parameter sets ({left:#x} vs {right:#x})")]
    ParameterMismatch {
        /// The operation.
        op: &'static str,
        /// Fingerprint of the first operand.
        left: u64,
        /// Fingerprint of the second operand.
        right: u64,
    },
    /// A key needed by an operation is missing.
    #[error("cannot {op}: no key for Galois element {galois}")]
    MissingGaloisKey {
        /// The operation.
        op: &'static str,
        /// The missing Galois element.
        galois: u64,
    },
    /// An operand is in the wrong form or shape.
    #[error("cannot {op}: {reason}")]
    InvalidOperand {
        /// The operation.
        op: &'static str,
        /// Why.
        reason: String,
    },
}

/// Why a scale cannot be carried by a plaintext or ciphertext at a level (see
/// [`crate::ciphertext::check_scale`]). The scheme crates wrap it in their own errors; loading
/// reports it as [`Error::Malformed`].
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum ScaleError {
    /// The scale is NaN, infinite, zero or negative.
    #[error("scale {scale} is not finite and positive")]
    NotFinite {
        /// The scale.
        scale: f64,
    },
    /// The scale is below 1 (beyond f64 round-off): the message has lost its integer part.
    #[error("scale {scale:e} is below 1")]
    BelowOne {
        /// The scale.
        scale: f64,
    },
    /// The scale is at least the modulus `Q_l = q_0·…·q_l` of the level: no message fits.
    #[error("scale 2^{log2_scale:.1} exceeds the modulus at level {level} (2^{log2_modulus:.1})")]
    ExceedsModulus {
        /// log2 of the scale.
        log2_scale: f64,
        /// The level.
        level: usize,
        /// log2 of `Q_l`.
        log2_modulus: f64,
    },
}

/// Result with the RLWE layer's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Checks that two fingerprints agree: [`Error::ParameterMismatch`] for `op` (with `left` and
/// `right`) when they differ. Every scheme's evaluator checks its operands with it.
pub fn check_same(op: &'static str, left: u64, right: u64) -> Result<()> {
    if left != right {
        return Err(Error::ParameterMismatch { op, left, right });
    }
    Ok(())
}
