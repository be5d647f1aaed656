//! GPU-accelerated fully homomorphic encryption.
//!
//! This root crate re-exports the workspace crates so that one dependency gives the whole
//! library: [`math`] (exact arithmetic, NTT, RNS, the `Backend` trait and the CPU backend),
//! [`rlwe`] (keys, encryption, key switching), [`ckks`] (approximate arithmetic on
//! complex vectors), [`bgv`] and [`bfv`] (exact arithmetic on integers mod t) and [`cuda`] (the CUDA
//! backend, and [`cuda::AnyBackend`], which picks the GPU at run time when one is usable and
//! the CPU otherwise), [`tfhe`] (TFHE-style LWE/RGSW ciphertexts and programmable
//! bootstrapping over the `BlindRotateBackend` trait, on the CPU and the GPU, and CKKS ↔ LWE
//! scheme switching), [`heap`] (CKKS bootstrapping by blind rotation) and [`compare`]
//! (word-wise comparisons of encrypted integers in BGV). Private database queries are the
//! separate `pdq` crate and binary.

pub use bfv;
pub use bgv;
pub use ckks;
pub use compare;
pub use fhe_cuda as cuda;
pub use fhe_math as math;
pub use heap;
pub use rlwe;
pub use tfhe_switch as tfhe;
