//! Exact, scheme-free math for RLWE-based homomorphic encryption.
//!
//! Word-sized modular arithmetic ([`Modulus`]), NTT-friendly primes, the negacyclic NTT, RNS
//! bases with CRT and fast basis conversion, Galois automorphisms, samplers following the
//! project's randomness layout, the CKKS complex FFT, and the [`backend::Backend`] trait with
//! its CPU implementation ([`cpu::CpuBackend`]). Everything the GPU uploads is computed here.

pub mod backend;
pub mod cpu;
pub mod crt_decode;
pub mod error;
pub mod fft;
pub mod galois;
pub mod modulus;
pub mod ntt;
mod ntt_simd;
pub mod poly;
pub mod primes;
pub mod ring;
pub mod rns;
pub mod sampler;
pub mod scale_round;
pub mod security;
#[cfg(test)]
mod test_util;

pub use backend::{Backend, IntegerBackend, KeySwitchBackend, RingBackend};
pub use cpu::CpuBackend;
pub use error::{Error, Result};
pub use modulus::Modulus;
pub use ntt::NttTable;
pub use poly::{RnsPoly, Shape};
pub use ring::RingContext;
pub use rns::{BasisConverter, RnsBasis};
pub use scale_round::ScaleRoundTables;
