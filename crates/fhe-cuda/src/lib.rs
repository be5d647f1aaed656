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
//!
//! # Design notes (current state)
//!
//! - Tables: `CudaBackend::new` packs every table of the [`fhe_math::RingContext`] (moduli with
//!   Barrett constants, NTT twiddles with Shoup companions, rescale constants, the `mod_up` and
//!   `mod_down` basis converters per level and digit, `P^-1 mod q_i`, the Gaussian CDT) into one
//!   device buffer; Galois index maps are uploaded once per element on first use.
//! - NTT: radix-2 over all limbs of a buffer in one launch sequence: one global-memory launch per
//!   stage whose butterfly span is at least a 2048-coefficient tile, then one shared-memory
//!   launch for the remaining stages (the inverse mirrors this). The two-kernel hierarchical NTT
//!   is not done yet.
//! - Fused: the tensor product (one kernel, 128-bit middle term); the key inner product
//!   (all digits accumulated exactly in 128-bit registers, automorphism index map folded in);
//!   basis conversion (exact 128-bit sums, one reduction). `mod_down_into(.., rescale = true)`
//!   runs `mod_down` then `rescale` sequentially (same bits; not yet one fused kernel).
//! - Samplers: ChaCha20 on the GPU in fhe-math's layout (one thread per ChaCha block).
//! - Memory: buffers come from the driver's stream-ordered pool on the backend's stream; event
//!   tracking is disabled, so a buffer must only be used on its backend's stream (or ordered with
//!   explicit events). Operators' internal temporaries are borrowed from the backend's
//!   [`scratch`] workspace (reused in stream order, no host synchronization), so after the first
//!   call of an operator only the buffers it returns are allocated.

pub mod backend;
pub mod device;
pub mod error;
pub mod kernels;
pub mod poly;
pub mod scratch;
mod tables;

pub use backend::CudaBackend;
pub use device::{Device, PoolStats};
pub use error::{Error, Result};
pub use poly::DevicePoly;
pub use scratch::ScratchStats;
