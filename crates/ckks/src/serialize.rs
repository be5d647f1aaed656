//! Serialization of CKKS keys, plaintexts and ciphertexts through a [`Context`].
//!
//! Thin wrappers over [`rlwe::serialize`] (see it for the blob layouts and everything loading
//! validates) bound to the context's backend and parameter fingerprint: writing refuses
//! objects of another parameter set, loading refuses blobs of another parameter set
//! ([`rlwe::Error::ParameterMismatch`]) and malformed blobs ([`rlwe::Error::Malformed`] and the
//! framing errors), all wrapped in [`Error::Rlwe`](crate::Error::Rlwe). Parameters themselves
//! are serialized with [`Parameters::to_bytes`](crate::Parameters::to_bytes).

use crate::context::Context;
use crate::error::Result;
use fhe_math::backend::KeySwitchBackend;
use rlwe::serialize as ser;
use rlwe::serialize::Zeroizing;
use rlwe::{Ciphertext, GaloisKeys, Plaintext, PublicKey, RelinKey, SecretKey};

impl<B: KeySwitchBackend> Context<B> {
    fn check_writes(&self, op: &'static str, fingerprint: u64) -> Result<()> {
        let own = self.params().fingerprint();
        if fingerprint != own {
            return Err(rlwe::Error::ParameterMismatch {
                op,
                left: fingerprint,
                right: own,
            }
            .into());
        }
        Ok(())
    }

    /// Serializes a secret key (47 bytes: fingerprint and seed).
    ///
    /// **The bytes are the secret key**: they are wiped when the returned buffer is dropped;
    /// keep them protected and wipe any copy.
    pub fn secret_key_to_bytes(&self, sk: &SecretKey<B>) -> Result<Zeroizing<Vec<u8>>> {
        self.check_writes("serialize a secret key", sk.fingerprint())?;
        Ok(ser::secret_key_to_bytes(sk)?)
    }

    /// Loads a secret key of this parameter set (re-expanded from its seed).
    pub fn secret_key_from_bytes(&self, bytes: &[u8]) -> Result<SecretKey<B>> {
        Ok(ser::secret_key_from_bytes(
            self.backend(),
            self.params().fingerprint(),
            bytes,
        )?)
    }

    /// Serializes a public key (`b` and the seed of `a`: about one polynomial at the top level).
    pub fn public_key_to_bytes(&self, pk: &PublicKey<B>) -> Result<Vec<u8>> {
        self.check_writes("serialize a public key", pk.fingerprint)?;
        Ok(ser::public_key_to_bytes(self.backend(), pk)?)
    }

    /// Loads a public key of this parameter set.
    pub fn public_key_from_bytes(&self, bytes: &[u8]) -> Result<PublicKey<B>> {
        Ok(ser::public_key_from_bytes(
            self.backend(),
            self.params().fingerprint(),
            bytes,
        )?)
    }

    /// Serializes a relinearization key (the `b_j` of every digit and the seed of the `a_j`).
    pub fn relin_key_to_bytes(&self, rlk: &RelinKey<B>) -> Result<Vec<u8>> {
        self.check_writes("serialize a relinearization key", rlk.0.fingerprint)?;
        Ok(ser::relin_key_to_bytes(self.backend(), rlk)?)
    }

    /// Loads a relinearization key of this parameter set.
    pub fn relin_key_from_bytes(&self, bytes: &[u8]) -> Result<RelinKey<B>> {
        Ok(ser::relin_key_from_bytes(
            self.backend(),
            self.params().fingerprint(),
            bytes,
        )?)
    }

    /// Serializes Galois keys (each key as a relinearization key is, with its Galois element).
    pub fn galois_keys_to_bytes(&self, keys: &GaloisKeys<B>) -> Result<Vec<u8>> {
        self.check_writes("serialize Galois keys", keys.fingerprint)?;
        for key in keys.keys.values() {
            self.check_writes("serialize Galois keys", key.fingerprint)?;
        }
        Ok(ser::galois_keys_to_bytes(self.backend(), keys)?)
    }

    /// Loads Galois keys of this parameter set.
    pub fn galois_keys_from_bytes(&self, bytes: &[u8]) -> Result<GaloisKeys<B>> {
        Ok(ser::galois_keys_from_bytes(
            self.backend(),
            self.params().fingerprint(),
            bytes,
        )?)
    }

    /// Serializes a plaintext (metadata and limbs at its level).
    pub fn plaintext_to_bytes(&self, pt: &Plaintext<B>) -> Result<Vec<u8>> {
        self.check_writes("serialize a plaintext", pt.fingerprint())?;
        Ok(ser::plaintext_to_bytes(self.backend(), pt)?)
    }

    /// Loads a plaintext of this parameter set.
    pub fn plaintext_from_bytes(&self, bytes: &[u8]) -> Result<Plaintext<B>> {
        Ok(ser::plaintext_from_bytes(
            self.backend(),
            self.params().fingerprint(),
            bytes,
        )?)
    }

    /// Serializes a ciphertext (metadata and limbs at its level; a fresh secret-key ciphertext
    /// stores `c_0` and the seed of `c_1`, about half the size).
    pub fn ciphertext_to_bytes(&self, ct: &Ciphertext<B>) -> Result<Vec<u8>> {
        self.check_writes("serialize a ciphertext", ct.fingerprint())?;
        Ok(ser::ciphertext_to_bytes(self.backend(), ct)?)
    }

    /// Loads a ciphertext of this parameter set.
    pub fn ciphertext_from_bytes(&self, bytes: &[u8]) -> Result<Ciphertext<B>> {
        Ok(ser::ciphertext_from_bytes(
            self.backend(),
            self.params().fingerprint(),
            bytes,
        )?)
    }
}

#[cfg(test)]
mod tests;
