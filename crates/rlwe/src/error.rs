//! Errors of the RLWE layer.

/// Everything a caller can get wrong in `rlwe`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error from the math layer or the backend.
    #[error(transparent)]
    Math(#[from] fhe_math::Error),
    /// Operands were made under different parameters.
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
    /// Serialized data is malformed.
    #[error("cannot decode {what}: {reason}")]
    Malformed {
        /// What was being decoded.
        what: &'static str,
        /// Why it is rejected.
        reason: String,
    },
}

/// Result with the RLWE layer's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Checks that two fingerprints agree.
pub(crate) fn check_same(op: &'static str, left: u64, right: u64) -> Result<()> {
    if left != right {
        return Err(Error::ParameterMismatch { op, left, right });
    }
    Ok(())
}
