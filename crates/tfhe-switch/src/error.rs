//! Errors of the TFHE layer.

/// Everything a caller can get wrong in `tfhe-switch`.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A parameter set is inconsistent or out of the supported range.
    #[error("invalid parameters {name}: {reason}")]
    InvalidParameters {
        /// The parameter set's name.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// An insecure test parameter set was used without the explicit opt-in.
    #[error("parameter set {name} is insecure: call `.opt_in_insecure()` to use it in tests")]
    InsecureWithoutOptIn {
        /// The parameter set's name.
        name: &'static str,
    },
    /// A message is outside the message space.
    #[error("cannot encrypt {message}: the message space is 0..{space}")]
    MessageOutOfRange {
        /// The message.
        message: u64,
        /// The size of the message space.
        space: u64,
    },
    /// A lookup table has the wrong size or an entry outside the message space.
    #[error("invalid lookup table: {reason}")]
    InvalidLookupTable {
        /// What is wrong.
        reason: String,
    },
    /// Two objects do not belong together (dimensions, moduli, parameter sets).
    #[error("mismatch: {what}")]
    Mismatch {
        /// What disagrees.
        what: String,
    },
    /// A serialized blob is malformed: bad magic, version or kind, truncated, trailing
    /// bytes, wrong lengths, residues not below the modulus, or another parameter set.
    #[error("cannot load {kind}: {reason}")]
    Malformed {
        /// What was being loaded.
        kind: &'static str,
        /// Why it is refused.
        reason: String,
    },
    /// An object could not be serialized.
    #[error("cannot serialize {kind}: {reason}")]
    Encode {
        /// What was being serialized.
        kind: &'static str,
        /// The encoder's message.
        reason: String,
    },
    /// An error of the math layer or the backend.
    #[error(transparent)]
    Math(#[from] fhe_math::Error),
}

/// Result with the TFHE layer's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
