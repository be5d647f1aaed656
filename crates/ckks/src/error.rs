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
    /// The backend's ring is not this parameter set's.
    #[error("cannot bind the backend: its ring does not match the parameters")]
    BackendMismatch,
    /// More values than slots, or a bad slot count.
    #[error("cannot encode {given} values into {slots} slots (a power of two up to {max_slots})")]
    TooManyValues {
        /// Values given.
        given: usize,
        /// Slots requested.
        slots: usize,
        /// N/2.
        max_slots: usize,
    },
    /// A slot span (of an inner sum or a replication) that is not a power of two dividing the
    /// slot count.
    #[error("cannot {op}: span {span} is not a power of two from 1 to the {slots} slots")]
    InvalidSlotSpan {
        /// The operation.
        op: &'static str,
        /// The span given.
        span: usize,
        /// The slot count `N/2`.
        slots: usize,
    },
    /// A sum of rotations over no steps.
    #[error("cannot {op}: no rotation steps given")]
    NoRotationSteps {
        /// The operation.
        op: &'static str,
    },
    /// A scale that is not finite or below 1.
    #[error("invalid scale {scale}")]
    InvalidScale {
        /// The scale.
        scale: f64,
    },
    /// A value too large to encode at the scale.
    #[error(
        "cannot encode {value} at scale {scale}: the scaled value exceeds 2^126 (or 2^62 for constants)"
    )]
    ValueTooLarge {
        /// The value.
        value: f64,
        /// The scale.
        scale: f64,
    },
    /// Operands at different levels.
    #[error(
        "cannot {op}: operands are at levels {left} and {right} (align them with drop_to_level)"
    )]
    LevelMismatch {
        /// The operation.
        op: &'static str,
        /// Level of the first operand.
        left: usize,
        /// Level of the second operand.
        right: usize,
    },
    /// Operands with different scales.
    #[error("cannot {op}: scales {left} and {right} differ beyond f64 round-off")]
    ScaleMismatch {
        /// The operation.
        op: &'static str,
        /// Scale of the first operand.
        left: f64,
        /// Scale of the second operand.
        right: f64,
    },
    /// A scale the level cannot carry: an operand's, or the result's of a product or rescale
    /// (not finite, below 1, or not below the modulus `Q_l` of the level).
    #[error("cannot {op}: {subject} {problem}")]
    ScaleOutOfRange {
        /// The operation.
        op: &'static str,
        /// Whose scale: "the product's", "the result's", "the operand's", ...
        subject: &'static str,
        /// What is wrong with it.
        problem: rlwe::ScaleError,
    },
    /// Rescale at level 0.
    #[error("cannot rescale: ciphertext is at level 0")]
    CannotRescale,
    /// A polynomial (or a set of them) that cannot be described or evaluated as given: no
    /// coefficient, a non-finite coefficient, a bad interval, no polynomial.
    #[error("invalid polynomial: {reason}")]
    InvalidPolynomial {
        /// What is wrong.
        reason: String,
    },
    /// A polynomial evaluation needs more levels than the ciphertext has.
    #[error(
        "cannot evaluate a polynomial of degree {degree}: it needs {needed} levels, the ciphertext has {available}"
    )]
    PolynomialTooDeep {
        /// The largest degree.
        degree: usize,
        /// Levels the evaluation consumes.
        needed: usize,
        /// The ciphertext's level.
        available: usize,
    },
    /// A linear transform that cannot be built or applied as given (a diagonal of the wrong
    /// length, a repeated diagonal, no diagonal, a bad slot count).
    #[error("invalid linear transform: {reason}")]
    InvalidTransform {
        /// What is wrong.
        reason: String,
    },
    /// Bootstrapping parameters or inputs that do not fit (too few levels, a bad slot count,
    /// a ciphertext of the wrong shape).
    #[error("cannot bootstrap: {reason}")]
    Bootstrap {
        /// What is wrong.
        reason: String,
    },
}

/// Result with the CKKS [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
