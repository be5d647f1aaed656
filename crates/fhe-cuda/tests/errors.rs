//! Device errors keep their kind on the way to a caller: classified from the driver's result
//! code in `fhe_cuda`, mapped to `fhe_math`'s typed variants, and carried unchanged by the
//! scheme crates' `#[from]` wrappers. The last test provokes a real out-of-memory on a GPU.

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;
use fhe_cuda::{AnyBackend, CudaBackend};
use fhe_math::backend::prelude::*;
use fhe_math::poly::Shape;
use fhe_math::primes::ntt_primes;
use fhe_math::ring::RingContext;

/// What a backend method returns for a failed driver call of `code`.
fn backend_error(code: CUresult) -> fhe_math::Error {
    fhe_math::Error::from(fhe_cuda::Error::from_driver("alloc", DriverError(code)))
}

fn in_ckks(e: fhe_math::Error) -> ckks::Result<()> {
    Err(e)?
}

fn in_bgv(e: fhe_math::Error) -> bgv::Result<()> {
    Err(e)?
}

fn in_rlwe(e: fhe_math::Error) -> rlwe::Result<()> {
    Err(e)?
}

#[test]
fn device_errors_keep_their_kind_through_the_scheme_errors() {
    use fhe_math::Error as M;
    let oom = || backend_error(CUresult::CUDA_ERROR_OUT_OF_MEMORY);
    let fault = || backend_error(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
    let launch = || backend_error(CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    let none = || backend_error(CUresult::CUDA_ERROR_NO_DEVICE);
    assert!(matches!(
        in_ckks(oom()),
        Err(ckks::Error::Math(M::OutOfDeviceMemory { .. }))
    ));
    assert!(matches!(
        in_bgv(fault()),
        Err(bgv::Error::Math(M::DeviceFault { .. }))
    ));
    assert!(matches!(
        in_rlwe(launch()),
        Err(rlwe::Error::Math(M::DeviceFault { .. }))
    ));
    assert!(matches!(
        in_ckks(none()),
        Err(ckks::Error::Math(M::NoDevice { .. }))
    ));
    // Through rlwe, then a scheme crate (key generation and encryption return rlwe errors).
    let nested: ckks::Result<()> = (|| Ok(in_rlwe(oom())?))();
    assert!(matches!(
        nested,
        Err(ckks::Error::Rlwe(rlwe::Error::Math(
            M::OutOfDeviceMemory { .. }
        )))
    ));
    // Opening a missing GPU is a `NoDevice` for the math layer as well.
    if let Err(e) = fhe_cuda::Device::new(usize::MAX) {
        assert!(matches!(M::from(e), M::NoDevice { .. }));
    }
}

/// Allocates until the GPU's memory is exhausted, through `AnyBackend` and `CudaBackend`: the
/// error is `OutOfDeviceMemory`, stays so through a scheme crate's error, and is not a fault
/// (an allocation succeeds once the buffers are freed).
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_out_of_memory_is_typed() {
    let dev = fhe_cuda::Device::new(0)
        .unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
    let n = 1usize << 16;
    let qs = ntt_primes(60, 2 * n as u64, 30, &[]).unwrap();
    let ps = ntt_primes(60, 2 * n as u64, 1, &qs).unwrap();
    let ring = RingContext::new(n, &qs, &ps, vec![0..15, 15..30]).unwrap();
    let be = CudaBackend::new(dev, ring.clone()).unwrap();
    let any = AnyBackend::Cuda(be.clone());
    // 4 components over Q·P: 4·31·2^16 words, 62 MiB a buffer.
    let shape = Shape {
        components: 4,
        level: ring.max_level(),
        extended: true,
    };
    let mut held = Vec::new();
    let err = loop {
        match any.zeros(shape) {
            Ok(p) => held.push(p),
            Err(e) => break e,
        }
        assert!(
            held.len() < 1 << 16,
            "no out-of-memory after {} buffers",
            held.len()
        );
    };
    assert!(
        matches!(err, fhe_math::Error::OutOfDeviceMemory { .. }),
        "{err}"
    );
    assert!(matches!(
        be.zeros(shape),
        Err(fhe_math::Error::OutOfDeviceMemory { .. })
    ));
    let through: ckks::Result<()> = (|| {
        any.zeros(shape)?;
        Ok(())
    })();
    assert!(matches!(
        through,
        Err(ckks::Error::Math(fhe_math::Error::OutOfDeviceMemory { .. }))
    ));
    drop(held);
    be.synchronize().unwrap();
    assert!(any.zeros(shape).is_ok());
}
