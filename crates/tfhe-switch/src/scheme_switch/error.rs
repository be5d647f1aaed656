//! Errors of scheme switching.

/// Everything a caller can get wrong when switching between CKKS and LWE.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The switching parameters do not fit together or with the CKKS context.
    #[error("invalid scheme-switching parameters {name}: {reason}")]
    InvalidParameters {
        /// The parameter set's name.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A ciphertext has too few levels for the operation.
    #[error("cannot {op}: the ciphertext is at level {level}, {needed} needed")]
    LevelTooLow {
        /// The operation.
        op: &'static str,
        /// The ciphertext's level.
        level: usize,
        /// The level the operation needs.
        needed: usize,
    },
    /// A slot or ciphertext count that the switch was not built for.
    #[error("cannot {op}: {given} values given, the switch is built for {expected} slots")]
    SlotCount {
        /// The operation.
        op: &'static str,
        /// The count given.
        given: usize,
        /// The switch's slot count.
        expected: usize,
    },
    /// An input range the LWE message space cannot hold.
    #[error("invalid value range: {reason}")]
    Range {
        /// What is wrong.
        reason: String,
    },
    /// A ciphertext or key of another context, parameter set or key bundle.
    #[error("mismatch: {what}")]
    Mismatch {
        /// What disagrees.
        what: String,
    },
    /// An error of the TFHE layer.
    #[error(transparent)]
    Tfhe(#[from] crate::Error),
    /// An error of the CKKS layer.
    #[error(transparent)]
    Ckks(#[from] ckks::Error),
    /// An error of the RLWE layer.
    #[error(transparent)]
    Rlwe(#[from] rlwe::Error),
    /// An error of the math layer or the backend.
    #[error(transparent)]
    Math(#[from] fhe_math::Error),
}

/// Result with the scheme-switching [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
