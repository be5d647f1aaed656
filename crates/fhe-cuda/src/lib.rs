//! CUDA backend of the FHE workspace.
//!
//! - [`Device`]: a CUDA device (context, stream pool, stream-ordered memory pool with its release
//!   threshold raised, per-device cache of NVRTC-compiled kernel modules, pool statistics).
//! - [`CudaBackend`]: [`fhe_math::backend::Backend`] on the device with [`DevicePoly`] buffers,
//!   bit-identical to [`fhe_math::CpuBackend`] for the same inputs and seeds.
//! - [`AnyBackend`]: the backend chosen at run time (the GPU when usable, else the CPU), with
//!   [`AnyPoly`] buffers that remember their device; mixing them is an error.
//! - [`kernels`]: the `.cu` sources (embedded), their NVRTC compilation to CUBINs and launch
//!   wrappers; [`kernel_cache`]: the on-disk cache of those CUBINs (`FHE_KERNEL_CACHE`).
//! - [`tuning`]: the launch choices (block shapes, thresholds) in one table, owned by the
//!   [`Device`].
//! - [`trace`]: a launch timeline (kernel, stream, device start and end) for performance work.
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
//! - NTT: two passes over all limbs of a list in one launch each (one pass up to 2^11): each
//!   thread keeps 8 elements in registers for up to three stages per round, with Shoup twiddles
//!   read as 16-byte (value, companion) pairs and lazy ranges; canonical output.
//! - Fused: the tensor product (one kernel, 128-bit middle term); basis conversion (exact
//!   128-bit sums, one reduction, unrolled by source count); a single key switch's last forward
//!   NTT pass with the key product (`ntt_keyprod_r8_S`: the NTT-form digits are never stored);
//!   mod_down's last forward NTT pass with its last step (`ntt_finish_r8_S`, with the rescale or
//!   the rotation's automorphism); CKKS rescale and BGV's modulus switch around the
//!   correction's NTT. The separate key inner product (hoisted rotations) accumulates all digits
//!   in 128-bit registers with the automorphism's index map folded in. ARCHITECTURE.md and
//!   PERF.md have the details and measurements.
//! - Decoding: decryption's CRT decoding into `Z_t` (`decode.cu`, one kernel with block-reduced
//!   noise summaries) and the slot NTT modulo `t` run on the device, as does batch encoding's
//!   inverse slot NTT and centred lift, so only `N` words cross for BGV/BFV encode and decrypt.
//! - Samplers: ChaCha20 on the GPU in fhe-math's layout (one thread per ChaCha block).
//! - Blind rotation ([`fhe_math::backend::blind_rotate::BlindRotateBackend`], TFHE-style
//!   programmable bootstrapping): keys uploaded once ([`CudaBootstrapKey`], [`CudaKeySwitchKey`]),
//!   batches of LWE ciphertexts ([`CudaLweBatch`]); the whole rotation of a batch is one launch
//!   (`blind_rotate_run`: a block per ciphertext holds its accumulator and digit spectra in
//!   shared memory through all `n` CMux steps, the key spectra read by every block through L2),
//!   key switching a second. Residues mod one 50-bit prime; the external product's polynomial
//!   products by fhe-math's specified negacyclic f64 FFT (the same binary64 operations in the
//!   same order as the CPU, never contracted), rounded and reduced exactly: the CPU reference's
//!   words. H200, CLASSIC_918_2048: 17.8k PBS/s in a batch of 4096, 18.2k in 16384, one alone
//!   15.8 ms; the FP64 floor is 79k/s (PERF.md, "Blind rotation"). [`Spread`]
//!   spreads a batch over several backends, e.g. every visible GPU ([`Spread::all_gpus`]).
//! - Memory: buffers come from the driver's stream-ordered pool on the backend's stream; event
//!   tracking is disabled, so a buffer must only be used on its backend's stream (or ordered with
//!   explicit events). Operators' internal temporaries are borrowed from the backend's
//!   [`scratch`] workspace (reused in stream order, no host synchronization), so after the first
//!   call of an operator only the buffers it returns are allocated.

pub mod any;
pub mod backend;
#[cfg(test)]
mod blind_rotate_fixtures;
pub mod device;
pub mod error;
pub mod kernel_cache;
pub mod kernels;
pub mod launch_stats;
pub mod poly;
pub mod scratch;
mod side;
pub mod spread;
mod tables;
pub mod trace;
pub mod tuning;

pub use any::{AnyBackend, AnyBootstrapKey, AnyKeySwitchKey, AnyLweBatch, AnyPoly};
pub use backend::CudaBackend;
pub use backend::{CudaBootstrapKey, CudaKeySwitchKey, CudaLweBatch};
pub use device::{Device, ModuleLoads, PoolStats};
pub use error::{Error, Result};
pub use poly::DevicePoly;
pub use scratch::ScratchStats;
pub use spread::{Spread, SpreadBatch};
pub use tuning::Tuning;
