//! Serialization of a [`SwitchKeys`] bundle.
//!
//! | bytes | content |
//! | --- | --- |
//! | 0..4 | magic `b"GSWK"` |
//! | 4..6 | format version, `u16` little-endian ([`FORMAT_VERSION`]) |
//! | 6.. | payload: bincode 2.0.1 serde encoding, fixed-width little-endian integers |
//!
//! The payload holds the switching set's name, the slot count, the CKKS and TFHE parameter
//! fingerprints, the ring key (`q_sw`, `N`, gadget, `l · 2 · N` residues) and the nested blobs
//! of the other keys, each in its own format: the PBS server key (`b"GTFH"`,
//! [`crate::serialize`]), the CKKS encryption of the LWE secret, the rotation keys and the
//! relinearization key (`rlwe` blobs through [`ckks::Context`]'s serialization).
//!
//! Loading takes the CKKS context and the switching set and refuses, with an error and never
//! a panic: a bad magic or version, a payload that does not decode, trailing bytes, another
//! set, context or TFHE set, a slot count the set does not allow, a ring key of another
//! modulus, degree, gadget or length or with a residue not below `q_sw`, any nested blob its
//! own loader refuses, an LWE-secret ciphertext at another level or not of 2 components, and
//! rotation keys missing a step the switch uses.

use ckks::Context;
use fhe_math::Modulus;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::backend::blind_rotate::Gadget;
use serde::{Deserialize, Serialize};

use super::error::{Error, Result};
use super::keys::{SwitchKeys, ring_modulus, rotation_steps};
use super::params::SwitchParameters;
use super::ring::RingSwitchKey;
use crate::serialize::{server_key_from_bytes, server_key_to_bytes};
use rlwe::wire::config;

/// The magic every bundle starts with.
pub const MAGIC: [u8; 4] = *b"GSWK";
/// The format version written and read.
pub const FORMAT_VERSION: u16 = 1;
const HEADER_LEN: usize = 6;
const KIND: &str = "scheme-switching keys";

#[derive(Serialize, Deserialize)]
struct Wire {
    params: String,
    slots: u64,
    ckks_fingerprint: u64,
    tfhe_fingerprint: u64,
    ring_modulus: u64,
    ring_degree: u64,
    ring_gadget: Gadget,
    ring_ratio: u64,
    ring_rows: Vec<u64>,
    server: Vec<u8>,
    lwe_key: Vec<u8>,
    galois: Vec<u8>,
    relin: Vec<u8>,
}

fn malformed(reason: impl Into<String>) -> Error {
    Error::Tfhe(crate::Error::Malformed {
        kind: KIND,
        reason: reason.into(),
    })
}

impl<B: KeySwitchBackend> SwitchKeys<B> {
    /// The bundle as bytes (the module's layout); `ctx` is the context the keys were made for.
    ///
    /// Errors: a context of another parameter set, a key the nested serializers refuse.
    pub fn to_bytes(&self, ctx: &Context<B>) -> Result<Vec<u8>> {
        if ctx.params().fingerprint() != self.ckks_fingerprint {
            return Err(Error::Mismatch {
                what: "cannot serialize the switching keys: the context is another one".into(),
            });
        }
        let ring_degree = self.ring.ring_degree() as u64;
        let wire = Wire {
            params: self.params.name.to_string(),
            slots: self.slots as u64,
            ckks_fingerprint: self.ckks_fingerprint,
            tfhe_fingerprint: self.params.tfhe.fingerprint(),
            ring_modulus: self.ring.modulus().value(),
            ring_degree,
            ring_gadget: self.ring.gadget(),
            ring_ratio: self.ring.ratio() as u64,
            ring_rows: self.ring.rows().to_vec(),
            server: server_key_to_bytes(&self.server)?,
            lwe_key: ctx.ciphertext_to_bytes(&self.lwe_key)?,
            galois: ctx.galois_keys_to_bytes(&self.galois)?,
            relin: ctx.relin_key_to_bytes(&self.relin)?,
        };
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bincode::serde::encode_into_std_write(&wire, &mut out, config()).map_err(|e| {
            Error::Tfhe(crate::Error::Encode {
                kind: KIND,
                reason: e.to_string(),
            })
        })?;
        Ok(out)
    }

    /// Loads a bundle written by [`Self::to_bytes`] for `ctx` and the set `params`, with the
    /// checks of the module documentation.
    pub fn from_bytes(ctx: &Context<B>, params: &SwitchParameters, bytes: &[u8]) -> Result<Self> {
        if bytes.len() < HEADER_LEN {
            return Err(malformed(format!(
                "{} bytes is shorter than the header",
                bytes.len()
            )));
        }
        if bytes[..4] != MAGIC {
            return Err(malformed("bad magic"));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != FORMAT_VERSION {
            return Err(malformed(format!(
                "format version {version}, this build reads {FORMAT_VERSION}"
            )));
        }
        let (w, used) =
            bincode::serde::decode_from_slice::<Wire, _>(&bytes[HEADER_LEN..], config())
                .map_err(|e| malformed(e.to_string()))?;
        if used != bytes.len() - HEADER_LEN {
            return Err(malformed("trailing bytes"));
        }
        let cp = ctx.params();
        if w.params != params.name {
            return Err(malformed(format!(
                "keys of the set {}, expected {}",
                w.params, params.name
            )));
        }
        params.validate(cp.n(), cp.max_level())?;
        if w.ckks_fingerprint != cp.fingerprint() {
            return Err(malformed("keys of another CKKS context"));
        }
        if w.tfhe_fingerprint != params.tfhe.fingerprint() {
            return Err(malformed("keys of another TFHE parameter set"));
        }
        let slots = usize::try_from(w.slots).map_err(|_| malformed("slot count too large"))?;
        super::keys::check_slots(params, slots, cp.n())?;
        let q_sw = ring_modulus(params, cp.n())?;
        let ratio = cp.n() / params.tfhe.ring_degree;
        if w.ring_modulus != q_sw.value()
            || w.ring_degree != cp.n() as u64
            || w.ring_gadget != params.ring_key_gadget
            || w.ring_ratio != ratio as u64
        {
            return Err(malformed(
                "a ring key of another modulus, degree, gadget or ratio than the set implies",
            ));
        }
        let ring = RingSwitchKey::from_parts(
            cp.n(),
            Modulus::new(w.ring_modulus)?,
            w.ring_gadget,
            ratio,
            w.ring_rows,
        )?;
        let server = server_key_from_bytes(&params.tfhe, &w.server)?;
        let lwe_key = ctx.ciphertext_from_bytes(&w.lwe_key)?;
        let top = params.output_level + params.levels_back()?;
        if lwe_key.level() != top || lwe_key.components(ctx.backend()) != 2 {
            return Err(malformed(format!(
                "the LWE-secret ciphertext is at level {} with {} components, expected level {top} and 2",
                lwe_key.level(),
                lwe_key.components(ctx.backend())
            )));
        }
        let galois = ctx.galois_keys_from_bytes(&w.galois)?;
        let eval = ckks::Evaluator::new(ctx)?;
        for g in eval.galois_elements(&rotation_steps(params, slots, cp.n()), false) {
            if !galois.keys.contains_key(&g) {
                return Err(malformed(format!("no rotation key for Galois element {g}")));
            }
        }
        let relin = ctx.relin_key_from_bytes(&w.relin)?;
        Ok(SwitchKeys {
            params: *params,
            slots,
            ckks_fingerprint: w.ckks_fingerprint,
            ring,
            server,
            lwe_key,
            galois,
            relin,
        })
    }
}
