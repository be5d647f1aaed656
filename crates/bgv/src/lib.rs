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
//! - [`Polynomial`] ([`poly`]): polynomials over `F_t` with interpolation from values on
//!   points and the even/odd split; [`poly_eval`]: their slot-wise evaluation on ciphertexts.
//!
//! Polynomial evaluation ([`Evaluator::evaluate_polynomials`]) is Paterson–Stockmeyer over
//! the backend's fused [`fhe_math::backend::RingBackend::linear_combination`]: baby steps
//! `x^1..x^k` and giant steps `x^k, x^{2k}, x^{4k}, …` shared by all the polynomials of a
//! call, each block of `k` coefficients one linear combination (a BGV constant `c` becomes the
//! per-limb residues of `[c·F·f_i^{-1}]_t`, so that inputs with different correction factors
//! `f_i` sum to a result with factor `F`), a product per split. A degree-`d` polynomial
//! consumes the least possible `⌈log2 d⌉` levels; [`PsPlan`] chooses `k` and counts the
//! products (degree 7, 15, 31, 63: 4, 7, 11, 16). With batching a slot is an element of
//! `F_t`, so this evaluates any function on a slot's domain (comparisons of small digits:
//! EQ and LT interpolated on the differences).
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
