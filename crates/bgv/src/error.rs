//! Errors of the BGV scheme.

/// Everything a caller can get wrong in `bgv`.
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
    #[error("invalid BGV parameters: {what}")]
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
    /// More values than slots (or coefficients).
    #[error("cannot encode {given} values into {slots} slots")]
    TooManyValues {
        /// Values given.
        given: usize,
        /// Slots (or coefficients) available.
        slots: usize,
    },
    /// A value outside `[0, t)` given to an unsigned encoding.
    #[error("cannot encode {value}: it is not below the plaintext modulus {t}")]
    ValueOutOfRange {
        /// The value.
        value: u64,
        /// The plaintext modulus.
        t: u64,
    },
    /// A value outside the centred range `(-t/2, t/2]` given to a signed encoding.
    #[error("cannot encode {value}: it is outside the centred range (-t/2, t/2] of t = {t}")]
    SignedValueOutOfRange {
        /// The value.
        value: i64,
        /// The plaintext modulus.
        t: u64,
    },
    /// Batching needs a prime `t ≡ 1 (mod 2N)`.
    #[error("cannot {op}: batching needs a prime t ≡ 1 (mod 2N), got t = {t} with N = {n}")]
    NoBatching {
        /// The operation.
        op: &'static str,
        /// The plaintext modulus.
        t: u64,
        /// The ring degree.
        n: usize,
    },
    /// Operands at different levels where no automatic alignment applies.
    #[error("cannot {op}: operands are at levels {left} and {right}")]
    LevelMismatch {
        /// The operation.
        op: &'static str,
        /// Level of the first operand.
        left: usize,
        /// Level of the second operand.
        right: usize,
    },
    /// The operation would make the analytic noise bound reach the ciphertext modulus.
    #[error(
        "cannot {op}: the noise bound would reach 2^{bound_bits:.1}, above the capacity 2^{capacity_bits:.1} at level {level}"
    )]
    NoiseBudgetExceeded {
        /// The operation.
        op: &'static str,
        /// log2 of the noise bound the result would have.
        bound_bits: f64,
        /// log2(Q_l / 2): the largest noise that still decrypts.
        capacity_bits: f64,
        /// The level of the result.
        level: usize,
    },
    /// Decryption found (almost) no noise budget left: the result would be garbage.
    #[error("cannot decrypt: the noise budget is exhausted ({budget_bits:.2} bits left)")]
    NoiseBudgetExhausted {
        /// The measured remaining budget in bits (below 1).
        budget_bits: f64,
    },
    /// Modulus switching at level 0.
    #[error("cannot switch modulus: ciphertext is at level 0")]
    CannotModSwitch,
    /// A polynomial with no coefficient.
    #[error("cannot use a polynomial with no coefficients")]
    EmptyPolynomial,
    /// A polynomial coefficient not below the plaintext modulus.
    #[error("cannot use coefficient {index} = {value} of a polynomial: it is not below t = {t}")]
    CoefficientOutOfRange {
        /// Its index (the power of `x` it multiplies).
        index: usize,
        /// Its value.
        value: u64,
        /// The plaintext modulus.
        t: u64,
    },
    /// A polynomial whose evaluation needs more levels than the ciphertext has.
    #[error(
        "cannot evaluate a degree-{degree} polynomial: needs {needed} levels, the ciphertext has {available}"
    )]
    PolynomialTooDeep {
        /// The (largest) degree.
        degree: usize,
        /// The levels the evaluation consumes.
        needed: usize,
        /// The ciphertext's level.
        available: usize,
    },
    /// An invalid argument (exponent, step, ...).
    #[error("cannot {op}: {reason}")]
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// Why.
        reason: String,
    },
}

/// Result with the BGV [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
