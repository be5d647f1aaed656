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
    /// The device ran out of memory (`CUDA_ERROR_OUT_OF_MEMORY`).
    #[error("cannot allocate device memory in {operation}: out of device memory")]
    OutOfMemory {
        /// What was being done.
        operation: &'static str,
    },
    /// A kernel could not be launched: too many resources asked for, a launch timeout, a
    /// cooperative grid too large.
    #[error("cannot launch a kernel in {operation}: {message}")]
    Launch {
        /// What was being done.
        operation: &'static str,
        /// The driver's error.
        message: String,
    },
    /// A kernel faulted while running (illegal address or instruction, misaligned address,
    /// device-side assert, uncorrectable ECC error, ...). Faults are asynchronous: they are
    /// reported by the next call that synchronizes, and the context is unusable afterwards.
    #[error("kernel fault reported in {operation}: {message}")]
    KernelFault {
        /// The call that reported the fault.
        operation: &'static str,
        /// The driver's error.
        message: String,
    },
    /// The driver reports no usable device (none present, a stub or mismatched driver, a
    /// device not supported by this driver).
    #[error("cannot use the GPU in {operation}: {message}")]
    Unavailable {
        /// What was being done.
        operation: &'static str,
        /// The driver's error.
        message: String,
    },
    /// Any other failed driver call.
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
    /// The classifier of a failed driver call made for `operation`, for `map_err`: see
    /// [`Error::from_driver`].
    pub(crate) fn driver(
        operation: &'static str,
    ) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
        move |e| Error::from_driver(operation, e)
    }

    /// A failed driver call made for `operation`, by the kind of its result code: out of
    /// memory ([`Error::OutOfMemory`]), a launch failure ([`Error::Launch`]), a kernel fault
    /// ([`Error::KernelFault`]), no usable device ([`Error::Unavailable`]), else
    /// [`Error::Driver`].
    pub fn from_driver(operation: &'static str, e: cudarc::driver::DriverError) -> Error {
        use cudarc::driver::sys::CUresult as R;
        let message = describe(&e);
        match e.0 {
            R::CUDA_ERROR_OUT_OF_MEMORY => Error::OutOfMemory { operation },
            R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
            | R::CUDA_ERROR_LAUNCH_TIMEOUT
            | R::CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING
            | R::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE => Error::Launch { operation, message },
            R::CUDA_ERROR_ILLEGAL_ADDRESS
            | R::CUDA_ERROR_ASSERT
            | R::CUDA_ERROR_HARDWARE_STACK_ERROR
            | R::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | R::CUDA_ERROR_MISALIGNED_ADDRESS
            | R::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | R::CUDA_ERROR_INVALID_PC
            | R::CUDA_ERROR_LAUNCH_FAILED
            | R::CUDA_ERROR_ECC_UNCORRECTABLE
            | R::CUDA_ERROR_NVLINK_UNCORRECTABLE => Error::KernelFault { operation, message },
            R::CUDA_ERROR_NO_DEVICE
            | R::CUDA_ERROR_INVALID_DEVICE
            | R::CUDA_ERROR_DEVICE_NOT_LICENSED
            | R::CUDA_ERROR_STUB_LIBRARY
            | R::CUDA_ERROR_NOT_INITIALIZED
            | R::CUDA_ERROR_DEINITIALIZED
            | R::CUDA_ERROR_SYSTEM_NOT_READY
            | R::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
            | R::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE => {
                Error::Unavailable { operation, message }
            }
            _ => Error::Driver { operation, message },
        }
    }
}

/// The driver's description of `e`: the result code's name, and the driver's own string when
/// the driver library is loaded (asking it otherwise would panic in cudarc).
fn describe(e: &cudarc::driver::DriverError) -> String {
    let name = format!("{:?}", e.0);
    if !crate::device::driver_present() {
        return name;
    }
    match e.error_string() {
        Ok(s) => format!("{name}: {}", s.to_string_lossy()),
        Err(_) => name,
    }
}

impl From<Error> for fhe_math::Error {
    /// Out of memory, launch failures and kernel faults, and a missing GPU keep their kind
    /// ([`fhe_math::Error::OutOfDeviceMemory`], [`fhe_math::Error::DeviceFault`],
    /// [`fhe_math::Error::NoDevice`]), as does a limit of the device implementation
    /// ([`fhe_math::Error::Unsupported`]); math errors pass through; the rest (a kernel that
    /// does not compile, another driver error) is [`fhe_math::Error::Backend`].
    fn from(e: Error) -> Self {
        match e {
            Error::Math(m) => m,
            Error::OutOfMemory { operation } => fhe_math::Error::OutOfDeviceMemory {
                operation: operation.to_string(),
            },
            Error::Launch { operation, .. } | Error::KernelFault { operation, .. } => {
                fhe_math::Error::DeviceFault {
                    operation: operation.to_string(),
                    message: e.to_string(),
                }
            }
            Error::NoDriver
            | Error::NoNvrtc
            | Error::NoDevice { .. }
            | Error::Unavailable { .. } => fhe_math::Error::NoDevice {
                reason: e.to_string(),
            },
            Error::Unsupported { what } => fhe_math::Error::Unsupported { what },
            other => fhe_math::Error::Backend {
                message: other.to_string(),
            },
        }
    }
}

/// Result with the CUDA backend's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::driver::DriverError;
    use cudarc::driver::sys::CUresult as R;

    fn classify(code: R) -> Error {
        Error::driver("test operation")(DriverError(code))
    }

    // Each driver result code lands in its kind, named after the operation; unknown codes stay
    // a plain driver error.
    #[test]
    fn driver_codes_are_classified() {
        assert_eq!(
            classify(R::CUDA_ERROR_OUT_OF_MEMORY),
            Error::OutOfMemory {
                operation: "test operation"
            }
        );
        for code in [
            R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            R::CUDA_ERROR_LAUNCH_TIMEOUT,
            R::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
        ] {
            assert!(
                matches!(
                    classify(code),
                    Error::Launch {
                        operation: "test operation",
                        ..
                    }
                ),
                "{code:?}"
            );
        }
        for code in [
            R::CUDA_ERROR_ILLEGAL_ADDRESS,
            R::CUDA_ERROR_LAUNCH_FAILED,
            R::CUDA_ERROR_MISALIGNED_ADDRESS,
            R::CUDA_ERROR_ILLEGAL_INSTRUCTION,
            R::CUDA_ERROR_ASSERT,
            R::CUDA_ERROR_ECC_UNCORRECTABLE,
        ] {
            assert!(
                matches!(classify(code), Error::KernelFault { .. }),
                "{code:?}"
            );
        }
        for code in [
            R::CUDA_ERROR_NO_DEVICE,
            R::CUDA_ERROR_INVALID_DEVICE,
            R::CUDA_ERROR_STUB_LIBRARY,
            R::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
        ] {
            assert!(
                matches!(classify(code), Error::Unavailable { .. }),
                "{code:?}"
            );
        }
        for code in [
            R::CUDA_ERROR_INVALID_VALUE,
            R::CUDA_ERROR_NOT_FOUND,
            R::CUDA_ERROR_UNKNOWN,
        ] {
            assert!(matches!(classify(code), Error::Driver { .. }), "{code:?}");
        }
        // The message names the code (and, with a driver, its description).
        let Error::KernelFault { message, .. } = classify(R::CUDA_ERROR_ILLEGAL_ADDRESS) else {
            unreachable!("classified above")
        };
        assert!(
            message.starts_with("CUDA_ERROR_ILLEGAL_ADDRESS"),
            "{message}"
        );
    }

    // Each kind maps to its math-layer variant, with messages of the form "cannot ...: ...".
    #[test]
    fn kinds_map_to_math_variants() {
        let oom = fhe_math::Error::from(classify(R::CUDA_ERROR_OUT_OF_MEMORY));
        assert_eq!(
            oom,
            fhe_math::Error::OutOfDeviceMemory {
                operation: "test operation".into()
            }
        );
        assert_eq!(
            oom.to_string(),
            "cannot allocate device memory in test operation: out of device memory"
        );
        for code in [
            R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            R::CUDA_ERROR_ILLEGAL_ADDRESS,
        ] {
            let e = classify(code);
            let text = e.to_string();
            match fhe_math::Error::from(e) {
                fhe_math::Error::DeviceFault { operation, message } => {
                    assert_eq!(operation, "test operation");
                    assert_eq!(message, text);
                }
                other => panic!("{code:?} became {other:?}"),
            }
        }
        for e in [
            classify(R::CUDA_ERROR_NO_DEVICE),
            Error::NoDriver,
            Error::NoNvrtc,
            Error::NoDevice {
                ordinal: 1,
                count: 1,
            },
        ] {
            let text = e.to_string();
            assert_eq!(
                fhe_math::Error::from(e),
                fhe_math::Error::NoDevice { reason: text }
            );
        }
        assert!(matches!(
            fhe_math::Error::from(classify(R::CUDA_ERROR_INVALID_VALUE)),
            fhe_math::Error::Backend { .. }
        ));
        assert_eq!(
            fhe_math::Error::from(Error::Unsupported {
                what: "N = 2^18".into()
            }),
            fhe_math::Error::Unsupported {
                what: "N = 2^18".into()
            }
        );
        let shape = fhe_math::Error::ShapeMismatch { what: "x".into() };
        assert_eq!(fhe_math::Error::from(Error::Math(shape.clone())), shape);
    }
}
