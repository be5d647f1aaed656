//! The shared RLWE layer: keys, encryption, decryption, hybrid key switching, ciphertext
//! metadata, and the framing of serialized blobs ([`wire`]).

pub mod error;
pub mod wire;

pub use error::{Error, Result};
