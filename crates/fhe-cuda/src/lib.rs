//! CUDA backend of the FHE workspace.
//!
//! - [`Device`]: a CUDA device (context, stream pool, stream-ordered memory pool with its release
//!   threshold raised, per-device cache of NVRTC-compiled kernel modules, pool statistics).
//! - [`CudaBackend`]: [`fhe_math::backend::Backend`] on the device with [`DevicePoly`] buffers,
//!   bit-identical to [`fhe_math::CpuBackend`] for the same inputs and seeds.
//! - [`kernels`]: the `.cu` sources (embedded), their NVRTC compilation and launch wrappers.
//!
//! No cargo feature gates CUDA: the driver and NVRTC are loaded at run time, and their absence
//! is an [`Error`] ([`Error::NoDriver`], [`Error::NoDevice`], [`Error::NoNvrtc`]), never a panic.

pub mod backend;
pub mod device;
pub mod error;
pub mod kernels;
pub mod poly;
mod tables;

pub use backend::CudaBackend;
pub use device::{Device, PoolStats};
pub use error::{Error, Result};
pub use poly::DevicePoly;
