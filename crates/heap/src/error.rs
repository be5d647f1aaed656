//! The errors of HEAP bootstrapping.

use thiserror::Error;

/// Errors of parameter validation, key generation and bootstrapping.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter set that cannot work (with the reason).
    #[error("invalid HEAP parameters: {what}")]
    InvalidParameters {
        /// What is wrong.
        what: String,
    },
    /// A key exceeds the 128-bit bound of the HE standard at its ring degree.
    #[error(
        "HEAP parameters not secure: the {key} spans {log2_q:.1} bits, above the bound {bound:.1} at N = 2^{log_n}"
    )]
    NotSecure {
        /// Which key.
        key: &'static str,
        /// Its modulus, in bits.
        log2_q: f64,
        /// The bound at this ring degree.
        bound: f64,
        /// log2 of the ring degree.
        log_n: u32,
    },
    /// The input ciphertext is not at level 0.
    #[error(
        "cannot bootstrap by blind rotation: the ciphertext is at level {level}, not 0 (drop it to level 0 first)"
    )]
    NotAtLevelZero {
        /// Its level.
        level: usize,
    },
    /// The ciphertext, a key or the context belong to another parameter set.
    #[error(
        "cannot {op}: {what} belongs to another parameter set (fingerprint {got:#x}, expected {expected:#x})"
    )]
    ParameterMismatch {
        /// The operation.
        op: &'static str,
        /// Which input.
        what: &'static str,
        /// Its fingerprint.
        got: u64,
        /// The expected fingerprint.
        expected: u64,
    },
    /// An operand of the wrong shape (components, slots, secret kind).
    #[error("cannot {op}: {reason}")]
    InvalidOperand {
        /// The operation.
        op: &'static str,
        /// Why.
        reason: String,
    },
    /// A serialized key set that cannot be loaded (framing, counts, residues).
    #[error("cannot load HEAP keys: {reason}")]
    Malformed {
        /// Why.
        reason: String,
    },
    /// From the math layer.
    #[error(transparent)]
    Math(#[from] fhe_math::Error),
    /// From the RLWE layer.
    #[error(transparent)]
    Rlwe(#[from] rlwe::Error),
    /// From CKKS.
    #[error(transparent)]
    Ckks(#[from] ckks::Error),
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;
