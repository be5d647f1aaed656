//! The RLWE layer shared by CKKS, BGV and BFV: keys, encryption, decryption, hybrid key
//! switching (with hoisting), and ciphertext metadata. Everything is generic over a
//! [`fhe_math::backend::Backend`].
//!
//! # Conventions the schemes share
//!
//! - **Encryption** goes through the scheme's context: `ctx.encrypt_pk(&pk, &pt)`,
//!   `ctx.encrypt_pk_with_seed`, `ctx.encrypt_sk`, `ctx.encrypt_sk_with_seeds` in `ckks`, `bgv`
//!   and `bfv` alike (`ckks` also has `ctx.decrypt`; `bgv`/`bfv` decrypt with their
//!   `Decryptor`). The free functions of [`encrypt`] are the RLWE-level primitives they call.
//! - **Operator names**: `op` allocates its result (operands by reference; by value only where
//!   the operand's buffer is reused, as `relinearize`), `op_assign` works in place on its first
//!   operand, `op_into` writes into a buffer the caller provides. Every evaluator follows it.
//! - **Metadata** ([`Meta`]: level, scale, NTT form, parameter fingerprint) always describes the
//!   data: [`Ciphertext`] and [`Plaintext`] keep their fields private and check them whenever
//!   they are built, changed or loaded.

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
