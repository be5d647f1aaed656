//! Errors of the math layer.

/// Everything a caller can get wrong in `fhe-math`.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A modulus is outside the supported range or not prime.
    #[error("invalid modulus {modulus}: {reason}")]
    InvalidModulus {
        /// The offending modulus.
        modulus: u64,
        /// Why it is rejected.
        reason: &'static str,
    },
    /// A ring degree is not a supported power of two.
    #[error("invalid ring degree {n}: must be a power of two in 2^{min_log}..=2^{max_log}")]
    InvalidDegree {
        /// The requested degree.
        n: usize,
        /// Smallest supported log2 N.
        min_log: u32,
        /// Largest supported log2 N.
        max_log: u32,
    },
    /// Not enough NTT-friendly primes exist with the requested properties.
    #[error("cannot find {count} NTT-friendly primes of {bits} bits for 2N = {two_n}")]
    NotEnoughPrimes {
        /// How many were requested.
        count: usize,
        /// Bit size requested.
        bits: u32,
        /// 2N (primes are 1 mod 2N).
        two_n: u64,
    },
    /// An element has no inverse modulo the modulus.
    #[error("{value} has no inverse modulo {modulus}")]
    NotInvertible {
        /// The value.
        value: u64,
        /// The modulus.
        modulus: u64,
    },
    /// Two operands have incompatible shapes (degree, limb count, components).
    #[error("shape mismatch: {what}")]
    ShapeMismatch {
        /// Which dimension disagrees.
        what: String,
    },
    /// A level or limb count is out of range.
    #[error("invalid level {level}: {reason}")]
    InvalidLevel {
        /// The requested level.
        level: usize,
        /// Why it is rejected.
        reason: &'static str,
    },
    /// A buffer was handed to a backend on another device (e.g. a host buffer to the CUDA
    /// side of a runtime-selected backend).
    #[error("device mismatch: a {buffer} buffer was given to the {backend} backend")]
    DeviceMismatch {
        /// The backend that received the buffer.
        backend: &'static str,
        /// Where the buffer lives.
        buffer: &'static str,
    },
    /// The device ran out of memory (an allocation of a buffer, a table or a workspace).
    #[error("cannot allocate device memory in {operation}: out of device memory")]
    OutOfDeviceMemory {
        /// What was being done.
        operation: String,
    },
    /// A kernel could not be launched (too many resources asked, a timeout) or faulted while
    /// running (an illegal address, an uncorrectable ECC error, ...), reported at the launch or
    /// at the next synchronizing call. After a fault the device context is unusable.
    #[error("device fault in {operation}: {message}")]
    DeviceFault {
        /// What was being done (for an asynchronous fault: the call that reported it).
        operation: String,
        /// The device's description of the fault.
        message: String,
    },
    /// No usable GPU: no driver library, no device, a driver too old for the toolkit, or no
    /// run-time compiler for the kernels.
    #[error("no usable GPU: {reason}")]
    NoDevice {
        /// Why the GPU cannot be used.
        reason: String,
    },
    /// The parameters exceed a limit of the backend's implementation (e.g. a ring degree or a
    /// limb count a device kernel does not support).
    #[error("unsupported by the backend: {what}")]
    Unsupported {
        /// What exceeds the limit.
        what: String,
    },
    /// Any other backend (device) failure.
    #[error("backend error: {message}")]
    Backend {
        /// What failed.
        message: String,
    },
}

/// Result with the math layer's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
