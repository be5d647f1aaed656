//! Errors of the comparison crate.

/// Everything a caller can get wrong in `compare`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of the BGV layer (keys, levels, noise, encoding).
    #[error(transparent)]
    Bgv(#[from] bgv::Error),
    /// An error of the RLWE layer (key generation).
    #[error(transparent)]
    Rlwe(#[from] rlwe::Error),
    /// A digit layout that cannot be built.
    #[error("invalid digit layout: {reason}")]
    InvalidLayout {
        /// Why.
        reason: String,
    },
    /// A plaintext value outside the range of the word type.
    #[error("cannot encode {value}: a {word} word holds values in [{min}, {max}]")]
    ValueOutOfRange {
        /// The value.
        value: i128,
        /// The word type's name (`u64`, `i32`, ...).
        word: &'static str,
        /// The smallest value of the word type.
        min: i128,
        /// The largest value of the word type.
        max: i128,
    },
    /// Two operands of different lengths (or of different layouts).
    #[error("cannot {op}: {reason}")]
    Mismatch {
        /// The operation.
        op: &'static str,
        /// What differs.
        reason: String,
    },
    /// A ciphertext below the levels an operation consumes.
    #[error("cannot {op}: it needs {needed} levels, the ciphertext is at level {available}")]
    NotEnoughLevels {
        /// The operation.
        op: &'static str,
        /// The levels the operation consumes.
        needed: usize,
        /// The level of the input.
        available: usize,
    },
    /// A serialized vector that does not decode or does not fit the comparator.
    #[error("cannot load {what}: {reason}")]
    Malformed {
        /// What was loaded.
        what: &'static str,
        /// Why it was refused.
        reason: String,
    },
    /// Work started on another thread did not finish.
    #[error("cannot join a pending result: {reason}")]
    Worker {
        /// Why.
        reason: String,
    },
    /// An invalid argument (a range bound, an array size, ...).
    #[error("cannot {op}: {reason}")]
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// Why.
        reason: String,
    },
}

/// Result with the comparison [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
