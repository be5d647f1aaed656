//! Errors of the CUDA backend.

/// Everything that can go wrong on the device side.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The CUDA driver library (libcuda) could not be loaded.
    #[error("cannot use the GPU: the CUDA driver library (libcuda) is not installed")]
    NoDriver,
    /// The NVRTC library could not be loaded (kernels are compiled at run time).
    #[error("cannot compile kernels: the NVRTC library (libnvrtc) is not installed")]
    NoNvrtc,
    /// No CUDA device with this ordinal.
    #[error("cannot open CUDA device {ordinal}: {count} device(s) present")]
    NoDevice {
        /// The requested ordinal.
        ordinal: usize,
        /// Number of devices found.
        count: usize,
    },
    /// A driver call failed (including asynchronous kernel faults and out-of-memory, reported at
    /// the next synchronizing call).
    #[error("CUDA driver error in {operation}: {message}")]
    Driver {
        /// What was being done.
        operation: &'static str,
        /// The driver's error.
        message: String,
    },
    /// NVRTC failed to compile a kernel module.
    #[error("cannot compile kernel module {module}: {log}")]
    Compile {
        /// The module (`.cu` file stem).
        module: String,
        /// The compiler's log.
        log: String,
    },
    /// An unknown kernel module was requested.
    #[error("no kernel module named {module}")]
    UnknownModule {
        /// The requested name.
        module: String,
    },
    /// A limit of the device implementation was exceeded.
    #[error("unsupported on the GPU: {what}")]
    Unsupported {
        /// What exceeds the limit.
        what: String,
    },
    /// An error of the math layer (shapes, levels).
    #[error(transparent)]
    Math(#[from] fhe_math::Error),
}

impl Error {
    pub(crate) fn driver(
        operation: &'static str,
    ) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
        move |e| Error::Driver {
            operation,
            message: format!("{e:?}"),
        }
    }
}

impl From<Error> for fhe_math::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Math(m) => m,
            other => fhe_math::Error::Backend {
                message: other.to_string(),
            },
        }
    }
}

/// Result with the CUDA backend's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
