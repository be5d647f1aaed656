//! The RLWE layer shared by CKKS, BGV and BFV: keys, encryption, decryption, hybrid key
//! switching (with hoisting), and ciphertext metadata. Everything is generic over a
//! [`fhe_math::backend::Backend`].

pub mod chain;
pub mod ciphertext;
pub mod encrypt;
pub mod error;
pub mod keys;
pub mod keyswitch;
pub mod serialize;
pub mod wire;

pub use ciphertext::{Ciphertext, Meta, Plaintext};
pub use error::{Error, Result, ScaleError};
pub use keys::{GaloisKeys, KeyGenerator, PublicKey, RelinKey, SecretKey, SwitchingKey};
