//! Setup shared by the GPU integration tests (`gpu_bgv`, `gpu_bfv`, `gpu_ckks`): the CUDA
//! device, a CUDA backend for a ring, and the CPU-versus-GPU comparison of operator results.

use gpufhe::cuda::{CudaBackend, Device};
use gpufhe::math::ring::RingContext;
use std::sync::{Arc, OnceLock};

/// CUDA device 0 with its kernel modules compiled, shared by all tests of the binary; panics
/// when no device is found, so the `gpu_*` tests never pass silently.
pub fn device() -> Arc<Device> {
    static DEV: OnceLock<Arc<Device>> = OnceLock::new();
    DEV.get_or_init(|| {
        let d = Device::new(0)
            .unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
        d.warm_up().expect("kernel modules compile");
        d
    })
    .clone()
}

/// A CUDA backend on [`device`] computing on `ring`.
pub fn cuda_backend(ring: Arc<RingContext>) -> CudaBackend {
    CudaBackend::new(device(), ring).unwrap()
}

/// Asserts that the named results of the CPU and the GPU backend are the same, one by one.
pub fn assert_bit_identical<T: PartialEq>(cpu: &[(String, T)], gpu: &[(String, T)]) {
    assert_eq!(cpu.len(), gpu.len());
    for ((name, c), (_, g)) in cpu.iter().zip(gpu) {
        assert!(c == g, "{name}: GPU result differs from the CPU backend");
    }
}
