//! Serialized keys and ciphertexts ("blobs").
//!
//! | bytes | content |
//! | --- | --- |
//! | 0..4 | magic `b"GTFH"` |
//! | 4..6 | format version, `u16` little-endian ([`FORMAT_VERSION`]) |
//! | 6 | kind tag: 1 LWE ciphertext, 2 server key, 3 client key |
//! | 7.. | payload: bincode 2.0.1 serde encoding, fixed-width little-endian integers |
//!
//! Every payload starts with the [`Parameters::fingerprint`] of its set; loading takes the
//! parameter set and refuses another fingerprint. Loading refuses, with
//! [`Error::Malformed`] and never a panic: a bad magic, version or kind, a blob of another
//! length than the parameters imply (so truncated and trailing bytes), a payload that does not
//! decode, vectors of the wrong length, residues not below `q`, and secret coefficients
//! outside their distribution's support. The randomness layout of keys is that of
//! [`crate::sample`] (version [`fhe_math::sampler::LAYOUT_VERSION`]).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use fhe_math::backend::blind_rotate::{BootstrapKeyHost, KeySwitchKeyHost};
use rlwe::wire::config;

use crate::error::{Error, Result};
use crate::glwe::GlweSecretKey;
use crate::keys::{ClientKey, ServerKey};
use crate::lwe::{LweCiphertext, LweSecretKey};
use crate::params::Parameters;

/// The magic every blob starts with.
pub const MAGIC: [u8; 4] = *b"GTFH";
/// The format version written and read.
pub const FORMAT_VERSION: u16 = 1;
const HEADER_LEN: usize = 7;

#[derive(Clone, Copy)]
#[repr(u8)]
enum Kind {
    Ciphertext = 1,
    ServerKey = 2,
    ClientKey = 3,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Ciphertext => "LWE ciphertext",
            Kind::ServerKey => "server key",
            Kind::ClientKey => "client key",
        }
    }
}

fn malformed(kind: Kind, reason: impl Into<String>) -> Error {
    Error::Malformed {
        kind: kind.name(),
        reason: reason.into(),
    }
}

fn encode<T: Serialize>(kind: Kind, value: &T) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.push(kind as u8);
    bincode::serde::encode_into_std_write(value, &mut out, config()).map_err(|e| {
        Error::Encode {
            kind: kind.name(),
            reason: e.to_string(),
        }
    })?;
    Ok(out)
}

/// Decodes a blob whose total length must be one of `lens` (the lengths the parameters imply).
fn decode<T: DeserializeOwned>(kind: Kind, bytes: &[u8], lens: &[usize]) -> Result<T> {
    if bytes.len() < HEADER_LEN {
        return Err(malformed(
            kind,
            format!("{} bytes is shorter than the header", bytes.len()),
        ));
    }
    if bytes[..4] != MAGIC {
        return Err(malformed(kind, "bad magic"));
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != FORMAT_VERSION {
        return Err(malformed(
            kind,
            format!("format version {version}, this build reads {FORMAT_VERSION}"),
        ));
    }
    if bytes[6] != kind as u8 {
        return Err(malformed(
            kind,
            format!("kind tag {} instead of {}", bytes[6], kind as u8),
        ));
    }
    if !lens.contains(&bytes.len()) {
        return Err(malformed(
            kind,
            format!("{} bytes, the parameters imply {lens:?}", bytes.len()),
        ));
    }
    let (value, used) = bincode::serde::decode_from_slice::<T, _>(&bytes[HEADER_LEN..], config())
        .map_err(|e| malformed(kind, e.to_string()))?;
    if used != bytes.len() - HEADER_LEN {
        return Err(malformed(kind, "trailing bytes"));
    }
    Ok(value)
}

/// Bytes of a vector of `n` 8-byte words in the payload (length prefix included).
fn vec_len(n: usize) -> usize {
    8 + 8 * n
}

fn check_fingerprint(kind: Kind, found: u64, params: &Parameters) -> Result<()> {
    if found != params.fingerprint() {
        return Err(malformed(
            kind,
            format!(
                "made for other parameters than {} (fingerprint {found:#018x})",
                params.name
            ),
        ));
    }
    Ok(())
}

fn check_residues(kind: Kind, what: &str, data: &[u64], len: usize, q: u64) -> Result<()> {
    if data.len() != len {
        return Err(malformed(
            kind,
            format!("{what}: {} residues, expected {len}", data.len()),
        ));
    }
    if let Some(i) = data.iter().position(|&x| x >= q) {
        return Err(malformed(
            kind,
            format!("{what}: residue {i} is not below q = {q}"),
        ));
    }
    Ok(())
}

#[derive(Serialize, Deserialize)]
struct CiphertextWire {
    fingerprint: u64,
    data: Vec<u64>,
}

#[derive(Serialize, Deserialize)]
struct ServerKeyWire {
    fingerprint: u64,
    bootstrap: Vec<u64>,
    key_switch: Vec<u64>,
}

#[derive(Serialize, Deserialize)]
struct ClientKeyWire {
    fingerprint: u64,
    lwe: Vec<i64>,
    glwe: Vec<i64>,
}

/// Serializes an LWE ciphertext (of dimension `n` or `k · N`) made under `params`.
pub fn ciphertext_to_bytes(params: &Parameters, ct: &LweCiphertext) -> Result<Vec<u8>> {
    encode(
        Kind::Ciphertext,
        &CiphertextWire {
            fingerprint: params.fingerprint(),
            data: ct.as_residues().to_vec(),
        },
    )
}

/// Loads an LWE ciphertext of dimension `n` or `k · N` under `params`.
pub fn ciphertext_from_bytes(params: &Parameters, bytes: &[u8]) -> Result<LweCiphertext> {
    let k = Kind::Ciphertext;
    let dims = [
        params.lwe_dimension,
        params.glwe_dimension * params.ring_degree,
    ];
    let lens = dims.map(|d| HEADER_LEN + 8 + vec_len(d + 1));
    let w: CiphertextWire = decode(k, bytes, &lens)?;
    check_fingerprint(k, w.fingerprint, params)?;
    let q = params.q()?;
    if !dims.iter().any(|&d| w.data.len() == d + 1) {
        return Err(malformed(k, format!("{} residues", w.data.len())));
    }
    check_residues(k, "ciphertext", &w.data, w.data.len(), q.value())?;
    LweCiphertext::from_residues(q, w.data)
}

/// Serializes the server key.
pub fn server_key_to_bytes(key: &ServerKey) -> Result<Vec<u8>> {
    encode(
        Kind::ServerKey,
        &ServerKeyWire {
            fingerprint: key.params.fingerprint(),
            bootstrap: key.bootstrap.data.clone(),
            key_switch: key.key_switch.data.clone(),
        },
    )
}

/// Loads a server key made under `params`.
pub fn server_key_from_bytes(params: &Parameters, bytes: &[u8]) -> Result<ServerKey> {
    let k = Kind::ServerKey;
    params.validate()?;
    let br = params.blind_rotate_params()?;
    let ks = params.key_switch_params()?;
    let len = HEADER_LEN + 8 + vec_len(br.key_len()) + vec_len(ks.key_len());
    let w: ServerKeyWire = decode(k, bytes, &[len])?;
    check_fingerprint(k, w.fingerprint, params)?;
    let q = params.modulus;
    check_residues(k, "bootstrapping key", &w.bootstrap, br.key_len(), q)?;
    check_residues(k, "key-switching key", &w.key_switch, ks.key_len(), q)?;
    Ok(ServerKey {
        params: *params,
        bootstrap: BootstrapKeyHost {
            params: br,
            data: w.bootstrap,
        },
        key_switch: KeySwitchKeyHost {
            params: ks,
            data: w.key_switch,
        },
    })
}

/// Serializes the client key (secret: the bytes are zeroized on drop).
pub fn client_key_to_bytes(key: &ClientKey) -> Result<Zeroizing<Vec<u8>>> {
    let wire = Zeroizing::new(ClientKeyWire {
        fingerprint: key.params.fingerprint(),
        lwe: key.lwe.coefficients().to_vec(),
        glwe: key.glwe.coefficients().to_vec(),
    });
    encode(Kind::ClientKey, &*wire).map(Zeroizing::new)
}

impl zeroize::Zeroize for ClientKeyWire {
    fn zeroize(&mut self) {
        self.lwe.zeroize();
        self.glwe.zeroize();
    }
}

/// Loads a client key made under `params`.
pub fn client_key_from_bytes(params: &Parameters, bytes: &[u8]) -> Result<ClientKey> {
    let k = Kind::ClientKey;
    params.validate()?;
    let kn = params.glwe_dimension * params.ring_degree;
    let len = HEADER_LEN + 8 + vec_len(params.lwe_dimension) + vec_len(kn);
    let w = Zeroizing::new(decode::<ClientKeyWire>(k, bytes, &[len])?);
    check_fingerprint(k, w.fingerprint, params)?;
    if w.lwe.len() != params.lwe_dimension || w.glwe.len() != kn {
        return Err(malformed(
            k,
            "secret key lengths do not match the parameters",
        ));
    }
    let lwe = LweSecretKey::from_coefficients(params.lwe_secret, w.lwe.clone())
        .map_err(|e| malformed(k, e.to_string()))?;
    let glwe =
        GlweSecretKey::from_coefficients(params.glwe_secret, params.ring_degree, w.glwe.clone())
            .map_err(|e| malformed(k, e.to_string()))?;
    ClientKey::from_parts(params, lwe, glwe)
}
