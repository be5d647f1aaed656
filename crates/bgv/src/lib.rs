//! The BGV scheme: exact arithmetic on encrypted integers modulo a plaintext modulus `t`, with
//! `N` SIMD slots when `t` is a prime `≡ 1 (mod 2N)`, generic over the backend (CPU or CUDA)
//! and built only from the [`fhe_math::Backend`] operations and [`rlwe`].
//!
//! - [`params`]: parameters and presets; [`encoding`]: scheme-free encodings mod `t` (slots
//!   behind the [`SlotStructure`] trait, shared with a later `bfv`);
//! - [`Context`]: parameters on a backend, key generation (errors scaled by `t`), encryption;
//! - [`Encoder`], [`Evaluator`], [`Decryptor`]; [`noise`]: the analytic noise model;
//! - [`Ciphertext`] carries the level, the correction factor of modulus switching and the noise
//!   bound, and serializes through [`rlwe::wire`].
//!
//! BGV invariant: `[c_0 + c_1·s]_{Q_l} = f·m + t·e` with `f` the correction factor. Modulus
//! switching (`c -> t·⌊t^{-1}·c/q_l⌉`) and key switching (`rlwe::keyswitch::*_mod_t`) are exact
//! modular identities on top of the backend's `rescale` and `mod_down`, so every backend gives
//! the same bits.

pub mod ciphertext;
pub mod context;
pub mod decryptor;
pub mod encoder;
pub mod encoding;
pub mod error;
pub mod evaluator;
pub mod noise;
pub mod params;
pub mod poly;
pub mod poly_eval;
pub mod rotations;

pub use ciphertext::{Ciphertext, Plaintext};
pub use context::Context;
pub use decryptor::Decryptor;
pub use encoder::Encoder;
pub use encoding::{PlainModulus, PrimeFieldSlots, SlotStructure};
pub use error::{Error, Result};
pub use evaluator::Evaluator;
pub use params::{Parameters, ParametersLiteral, Security};
pub use poly::Polynomial;
pub use poly_eval::PsPlan;
pub use rotations::RowRotations;
