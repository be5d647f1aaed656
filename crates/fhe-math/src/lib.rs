//! Exact, scheme-free math for RLWE-based homomorphic encryption.
//!
//! Word-sized modular arithmetic ([`Modulus`]), NTT-friendly primes, the negacyclic NTT, RNS
//! bases with CRT and fast basis conversion, Galois automorphisms, samplers following the
//! project's randomness layout, the CKKS complex FFT, and the [`Backend`] trait with its CPU
//! implementation. Everything the GPU uploads is computed here.

pub mod error;
pub mod galois;
pub mod modulus;
pub mod ntt;
pub mod primes;

pub use error::{Error, Result};
pub use modulus::Modulus;
pub use ntt::NttTable;
