//! Errors of the CKKS scheme.

/// Everything a caller can get wrong in `ckks`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of the math layer.
    #[error(transparent)]
    Math(#[from] fhe_math::Error),
    /// An error of the RLWE layer (including malformed blobs).
    #[error(transparent)]
    Rlwe(#[from] rlwe::Error),
    /// A parameter literal is invalid.
    #[error("invalid CKKS parameters: {what}")]
    InvalidParameters {
        /// What is wrong.
        what: String,
    },
    /// Parameters exceed the 128-bit security bound and were not marked insecure.
    #[error(
        "parameters are not 128-bit secure: log2 QP = {log2_qp:.3} > bound {bound} at N = 2^{log_n}"
    )]
    NotSecure {
        /// log2 of the product of all primes.
        log2_qp: f64,
        /// The largest secure log2 QP at this ring degree.
        bound: f64,
        /// log2 N.
        log_n: u32,
    },
    /// A level is above the top of the modulus chain.
    #[error("invalid level {level}: the maximum level is {max_level}")]
    InvalidLevel {
        /// The requested level.
        level: usize,
        /// The parameters' maximum level.
        max_level: usize,
    },
    /// Loaded data does not match the parameters it claims.
    #[error("parameter mismatch: {what}")]
    ParameterMismatch {
        /// What disagrees.
        what: String,
    },
}

/// Result with the CKKS [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
