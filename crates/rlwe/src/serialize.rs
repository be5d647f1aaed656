//! Serialization of keys, plaintexts and ciphertexts as [`wire`] blobs.
//!
//! Every blob is framed by [`wire::encode`] (magic, format version, kind tag) around a bincode
//! payload. Polynomials are stored as their active limbs only, one `Vec<u64>` of `N` canonical
//! residues per (component, active slot), in NTT form when the object is; never the capacity
//! padding of the device buffer. Uniform polynomials that can be re-expanded from a seed are
//! not stored:
//!
//! | object | payload |
//! | --- | --- |
//! | [`SecretKey`] | fingerprint, seed of `s` (**secret**) |
//! | [`PublicKey`] | fingerprint, seed of `a`, `b` over `Q_L` |
//! | [`SwitchingKey`] / [`RelinKey`] | fingerprint, seed of the `a_j`, every `b_j` over `Q_L·P` |
//! | [`GaloisKeys`] | fingerprint, list of (Galois element, switching-key payload) |
//! | [`Plaintext`] | [`Meta`], limbs |
//! | [`Ciphertext`] | [`Meta`], seed of `c_1` if fresh secret-key ciphertext, limbs of the stored components (`c_0` only when seeded) |
//!
//! Loading validates everything before any device buffer is built, and fails with an
//! [`Error`] (never a panic) on: framing errors (magic, version, kind, truncation, trailing
//! bytes, size over [`max_blob_len`]); a fingerprint other than the expected one
//! ([`Error::ParameterMismatch`]); and content errors ([`Error::Malformed`]): level above the
//! top level, wrong component, digit or limb counts, limbs not of length `N`, residues not
//! below their slot's modulus, a scale that is not finite, below 1 or not below `Q_l` of its
//! level ([`crate::ciphertext::check_scale`]), ciphertexts not in NTT
//! form, Galois elements that are even, `>= 2N` or repeated.
//!
//! The functions are generic over the backend; the loading ones take the fingerprint of the
//! parameter set the caller works with (a scheme context passes its own).

use crate::ciphertext::{Ciphertext, Meta, Plaintext};
use crate::encrypt::expand_seeded_c1;
use crate::error::{Error, Result};
use crate::keys::{GaloisKeys, KeyGenerator, PublicKey, RelinKey, SecretKey, SwitchingKey};
use crate::wire::{self, BlobKind, HEADER_LEN};
use fhe_math::backend::RingBackend;
use fhe_math::poly::{RnsPoly, Shape};
use fhe_math::ring::RingContext;
use fhe_math::sampler::{Domain, Seed};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use zeroize::Zeroizing;

/// Bytes allowed on top of the computed payload bound (bincode length prefixes are counted
/// exactly; this only absorbs future small fields).
const SLACK: usize = 256;
/// Encoded size of a [`Seed`].
const SEED_LEN: usize = 32;
/// Encoded size of a [`Meta`] (level `u64`, scale `f64`, ntt `bool`, fingerprint `u64`).
const META_LEN: usize = 8 + 8 + 1 + 8;

// ---------------------------------------------------------------------------------------------
// Payloads
// ---------------------------------------------------------------------------------------------

/// Limbs of one component: one `Vec` of `N` residues per active slot, in slot order.
type Limbs = Vec<Vec<u64>>;

#[derive(Serialize, Deserialize)]
pub(crate) struct SecretKeyWire {
    pub(crate) fingerprint: u64,
    /// Zeroized on drop.
    pub(crate) seed: Seed,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct PublicKeyWire {
    pub(crate) fingerprint: u64,
    pub(crate) seed: Seed,
    /// `b` over `q_0..q_L`, NTT form.
    pub(crate) b: Limbs,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct SwitchingKeyWire {
    pub(crate) fingerprint: u64,
    pub(crate) seed: Seed,
    /// `b_j` over `q_0..q_L, p_0..p_{K-1}` for every digit `j`, NTT form.
    pub(crate) b: Vec<Limbs>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct GaloisKeysWire {
    pub(crate) fingerprint: u64,
    pub(crate) keys: Vec<(u64, SwitchingKeyWire)>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct PlaintextWire {
    pub(crate) meta: Meta,
    pub(crate) limbs: Limbs,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct CiphertextWire {
    pub(crate) meta: Meta,
    /// Seed of `c_1` of a fresh secret-key ciphertext; `components` then holds `c_0` only.
    pub(crate) seed: Option<Seed>,
    pub(crate) components: Vec<Limbs>,
}

// ---------------------------------------------------------------------------------------------
// Size limits
// ---------------------------------------------------------------------------------------------

/// Encoded size of `count` limbs of `n` residues (with their length prefixes).
fn limbs_len(n: usize, count: usize) -> usize {
    count
        .saturating_mul(n.saturating_mul(8).saturating_add(8))
        .saturating_add(8)
}

/// Encoded size bound of a switching-key payload in `ring`.
fn switching_payload_len(ring: &RingContext) -> usize {
    let limbs = limbs_len(ring.n(), ring.q_count() + ring.p_count());
    (8 + SEED_LEN + 8).saturating_add(ring.digits().len().saturating_mul(limbs))
}

/// The largest blob of `kind` accepted when loading in `ring` (header included).
///
/// Computed from the ring: the payload of the largest valid object (top level, three
/// components for ciphertexts, every digit for switching keys, one key per odd Galois element
/// below `2N` for Galois keys) plus a small slack. Blobs over this size are rejected before
/// they are parsed. Parameter blobs are not handled here (`0`).
pub fn max_blob_len(ring: &RingContext, kind: BlobKind) -> usize {
    let n = ring.n();
    let q_limbs = limbs_len(n, ring.q_count());
    let payload = match kind {
        BlobKind::SecretKey => 8 + SEED_LEN,
        BlobKind::PublicKey => (8 + SEED_LEN).saturating_add(q_limbs),
        BlobKind::RelinKey | BlobKind::KeySwitchingKey => switching_payload_len(ring),
        BlobKind::GaloisKeys => n
            .saturating_mul(switching_payload_len(ring).saturating_add(8))
            .saturating_add(16),
        BlobKind::Plaintext => META_LEN.saturating_add(q_limbs),
        BlobKind::Ciphertext => (META_LEN + 1 + SEED_LEN + 8).saturating_add(3 * q_limbs),
        _ => return 0,
    };
    payload.saturating_add(HEADER_LEN + SLACK)
}

// ---------------------------------------------------------------------------------------------
// Validation helpers
// ---------------------------------------------------------------------------------------------

fn malformed(kind: BlobKind, reason: String) -> Error {
    Error::Malformed {
        what: kind.name(),
        reason,
    }
}

fn check_fingerprint(kind: BlobKind, found: u64, expected: u64) -> Result<()> {
    if found != expected {
        return Err(Error::ParameterMismatch {
            op: match kind {
                BlobKind::SecretKey => "load a secret key",
                BlobKind::PublicKey => "load a public key",
                BlobKind::RelinKey => "load a relinearization key",
                BlobKind::GaloisKeys => "load Galois keys",
                BlobKind::Plaintext => "load a plaintext",
                BlobKind::Ciphertext => "load a ciphertext",
                _ => "load a key-switching key",
            },
            left: found,
            right: expected,
        });
    }
    Ok(())
}

/// Checks `limbs` against `slots`: one limb per slot, each of length `N`, every residue below
/// the slot's modulus. `label` names the polynomial in errors.
fn check_limbs(
    ring: &RingContext,
    kind: BlobKind,
    label: &str,
    limbs: &[Vec<u64>],
    slots: &[usize],
) -> Result<()> {
    if limbs.len() != slots.len() {
        return Err(malformed(
            kind,
            format!(
                "{label} has {} limbs, expected {}",
                limbs.len(),
                slots.len()
            ),
        ));
    }
    for (limb, &slot) in limbs.iter().zip(slots) {
        if limb.len() != ring.n() {
            return Err(malformed(
                kind,
                format!(
                    "{label}: limb of slot {slot} has {} coefficients, expected N = {}",
                    limb.len(),
                    ring.n()
                ),
            ));
        }
        let q = ring.modulus(slot).value();
        if let Some(k) = limb.iter().position(|&x| x >= q) {
            return Err(malformed(
                kind,
                format!("{label}: coefficient {k} of slot {slot} is not below its modulus {q}"),
            ));
        }
    }
    Ok(())
}

/// The slots of a buffer at `level` (plus the special slots when `extended`).
fn slots(ring: &RingContext, level: usize, extended: bool) -> Vec<usize> {
    let p = if extended {
        ring.q_count()..ring.q_count() + ring.p_count()
    } else {
        0..0
    };
    (0..=level).chain(p).collect()
}

fn check_meta(ring: &RingContext, kind: BlobKind, meta: &Meta, expected_fp: u64) -> Result<()> {
    check_fingerprint(kind, meta.fingerprint, expected_fp)?;
    if meta.level > ring.max_level() {
        return Err(malformed(
            kind,
            format!(
                "level {} is above the maximum level {}",
                meta.level,
                ring.max_level()
            ),
        ));
    }
    crate::ciphertext::check_scale(ring, meta.level, meta.scale)
        .map_err(|e| malformed(kind, e.to_string()))
}

/// Fills component `c` of `host` at `slots` from validated limbs.
fn fill(host: &mut RnsPoly, c: usize, limbs: &[Vec<u64>], slots: &[usize]) {
    for (limb, &s) in limbs.iter().zip(slots) {
        host.limb_mut(c, s).copy_from_slice(limb);
    }
}

/// The limbs of component `c` of `host` over its active slots.
fn limbs_of(host: &RnsPoly, c: usize) -> Limbs {
    host.active_slots()
        .map(|s| host.limb(c, s).to_vec())
        .collect()
}

fn invalid(op: &'static str, reason: String) -> Error {
    Error::InvalidOperand { op, reason }
}

// ---------------------------------------------------------------------------------------------
// Secret key
// ---------------------------------------------------------------------------------------------

/// Serializes a secret key: its parameter fingerprint and the 32-byte seed `s` is expanded
/// from (47 bytes in all).
///
/// **The returned bytes are the secret key.** They are wiped when the returned buffer is
/// dropped; store or transmit them only under protection (encryption at rest, a secure
/// channel), and wipe any copy the caller makes.
///
/// Errors: a sparse key ([`KeyGenerator::sparse_secret_key_from_seed`]): this format holds the
/// seed of a uniform ternary key only ([`Error::InvalidOperand`]).
pub fn secret_key_to_bytes<B: RingBackend>(sk: &SecretKey<B>) -> Result<Zeroizing<Vec<u8>>> {
    if let Some(weight) = sk.sparse_weight() {
        return Err(Error::InvalidOperand {
            op: "serialize a secret key",
            reason: format!(
                "the key is sparse (weight {weight}); the format holds uniform ternary keys only"
            ),
        });
    }
    let wire = SecretKeyWire {
        fingerprint: sk.fingerprint(),
        seed: sk.seed().clone(),
    };
    // `wire::encode` reserves more than the 47 bytes needed, so the buffer never reallocates
    // (which would leave an unwiped copy of the seed behind).
    let bytes = Zeroizing::new(wire::encode(BlobKind::SecretKey, &wire)?);
    Ok(bytes)
}

/// Loads a secret key written by [`secret_key_to_bytes`] for the parameters with fingerprint
/// `fingerprint`, re-expanding `s` from its seed with [`KeyGenerator::secret_key_from_seed`].
/// The decoded seed is wiped after use (the caller still owns `bytes`).
pub fn secret_key_from_bytes<B: RingBackend>(
    backend: &B,
    fingerprint: u64,
    bytes: &[u8],
) -> Result<SecretKey<B>> {
    let kind = BlobKind::SecretKey;
    let wire: SecretKeyWire = wire::decode(kind, bytes, max_blob_len(backend.ring(), kind))?;
    check_fingerprint(kind, wire.fingerprint, fingerprint)?;
    KeyGenerator::new(backend, fingerprint).secret_key_from_seed(wire.seed.clone())
}

// ---------------------------------------------------------------------------------------------
// Public key
// ---------------------------------------------------------------------------------------------

/// Serializes a public key: fingerprint, the seed of `a` and `b` (top level, NTT form). `a` is
/// re-expanded from the seed on load, so the blob is about half the size of two polynomials.
pub fn public_key_to_bytes<B: RingBackend>(backend: &B, pk: &PublicKey<B>) -> Result<Vec<u8>> {
    let op = "serialize a public key";
    let host = backend.download(&pk.poly)?;
    let shape = host.shape();
    if shape.components != 2 || shape.extended || shape.level != backend.ring().max_level() {
        return Err(invalid(
            op,
            format!("unexpected buffer shape {shape:?} (2 components at the top level)"),
        ));
    }
    let wire = PublicKeyWire {
        fingerprint: pk.fingerprint,
        seed: pk.seed.clone(),
        b: limbs_of(&host, 0),
    };
    wire::encode(BlobKind::PublicKey, &wire)
}

/// Loads a public key written by [`public_key_to_bytes`] for the parameters with fingerprint
/// `fingerprint`; `a` is re-expanded exactly as [`KeyGenerator`] samples it.
pub fn public_key_from_bytes<B: RingBackend>(
    backend: &B,
    fingerprint: u64,
    bytes: &[u8],
) -> Result<PublicKey<B>> {
    let kind = BlobKind::PublicKey;
    let ring = backend.ring().clone();
    let wire: PublicKeyWire = wire::decode(kind, bytes, max_blob_len(&ring, kind))?;
    check_fingerprint(kind, wire.fingerprint, fingerprint)?;
    let top = ring.max_level();
    let sl = slots(&ring, top, false);
    check_limbs(&ring, kind, "b", &wire.b, &sl)?;

    let one = Shape {
        components: 1,
        level: top,
        extended: false,
    };
    let mut host = ring.zeros(Shape {
        components: 2,
        ..one
    })?;
    fill(&mut host, 0, &wire.b, &sl);
    let mut poly = backend.upload(&host)?;
    let a = backend.sample_uniform(&wire.seed, Domain::PublicA, 0, one)?;
    backend.copy_component(&a, 0, &mut poly, 1)?;
    Ok(PublicKey {
        poly,
        seed: wire.seed.clone(),
        fingerprint,
    })
}

// ---------------------------------------------------------------------------------------------
// Switching keys
// ---------------------------------------------------------------------------------------------

fn switching_wire<B: RingBackend>(backend: &B, key: &SwitchingKey<B>) -> Result<SwitchingKeyWire> {
    let op = "serialize a key-switching key";
    let ring = backend.ring();
    let host = backend.download(&key.poly)?;
    let shape = host.shape();
    let dnum = ring.digits().len();
    if shape.components != 2 * dnum || !shape.extended || shape.level != ring.max_level() {
        return Err(invalid(
            op,
            format!(
                "unexpected buffer shape {shape:?} ({} extended components at the top level)",
                2 * dnum
            ),
        ));
    }
    Ok(SwitchingKeyWire {
        fingerprint: key.fingerprint,
        seed: key.seed.clone(),
        b: (0..dnum).map(|j| limbs_of(&host, 2 * j)).collect(),
    })
}

/// Validates a switching-key payload (fingerprint, digit count, limbs) without touching the
/// device.
fn check_switching(
    ring: &RingContext,
    kind: BlobKind,
    label: &str,
    wire: &SwitchingKeyWire,
    fingerprint: u64,
) -> Result<()> {
    check_fingerprint(kind, wire.fingerprint, fingerprint)?;
    let dnum = ring.digits().len();
    if wire.b.len() != dnum {
        return Err(malformed(
            kind,
            format!("{label} has {} digits, expected {dnum}", wire.b.len()),
        ));
    }
    if ring.p_count() == 0 {
        return Err(malformed(
            kind,
            "the parameters have no special primes for key switching".into(),
        ));
    }
    let sl = slots(ring, ring.max_level(), true);
    for (j, b) in wire.b.iter().enumerate() {
        check_limbs(ring, kind, &format!("{label} b_{j}"), b, &sl)?;
    }
    Ok(())
}

/// Builds the device key from a validated payload: uploads each `b_j` and re-expands each
/// `a_j` (`sample_uniform(seed, KeySwitchA, j, ...)` as [`KeyGenerator`] does).
fn switching_from_wire<B: RingBackend>(
    backend: &B,
    wire: &SwitchingKeyWire,
) -> Result<SwitchingKey<B>> {
    let ring = backend.ring();
    let top = ring.max_level();
    let dnum = ring.digits().len();
    let sl = slots(ring, top, true);
    let one = Shape {
        components: 1,
        level: top,
        extended: true,
    };
    let mut poly = backend.zeros(Shape {
        components: 2 * dnum,
        ..one
    })?;
    let mut host = ring.zeros(one)?;
    for (j, b) in wire.b.iter().enumerate() {
        fill(&mut host, 0, b, &sl);
        let b = backend.upload(&host)?;
        backend.copy_component(&b, 0, &mut poly, 2 * j)?;
        let a = backend.sample_uniform(&wire.seed, Domain::KeySwitchA, j as u32, one)?;
        backend.copy_component(&a, 0, &mut poly, 2 * j + 1)?;
    }
    Ok(SwitchingKey {
        poly,
        seed: wire.seed.clone(),
        fingerprint: wire.fingerprint,
    })
}

/// Serializes a general key-switching key: fingerprint, the seed of the `a_j`, and every `b_j`
/// over `Q_L·P` (NTT form). The `a_j` are re-expanded on load (half the size).
pub fn switching_key_to_bytes<B: RingBackend>(
    backend: &B,
    key: &SwitchingKey<B>,
) -> Result<Vec<u8>> {
    wire::encode(BlobKind::KeySwitchingKey, &switching_wire(backend, key)?)
}

/// Loads a key-switching key written by [`switching_key_to_bytes`].
pub fn switching_key_from_bytes<B: RingBackend>(
    backend: &B,
    fingerprint: u64,
    bytes: &[u8],
) -> Result<SwitchingKey<B>> {
    let kind = BlobKind::KeySwitchingKey;
    let ring = backend.ring();
    let wire: SwitchingKeyWire = wire::decode(kind, bytes, max_blob_len(ring, kind))?;
    check_switching(ring, kind, "key", &wire, fingerprint)?;
    switching_from_wire(backend, &wire)
}

/// Serializes a relinearization key (a switching key, blob kind [`BlobKind::RelinKey`]).
pub fn relin_key_to_bytes<B: RingBackend>(backend: &B, key: &RelinKey<B>) -> Result<Vec<u8>> {
    wire::encode(BlobKind::RelinKey, &switching_wire(backend, &key.0)?)
}

/// Loads a relinearization key written by [`relin_key_to_bytes`].
pub fn relin_key_from_bytes<B: RingBackend>(
    backend: &B,
    fingerprint: u64,
    bytes: &[u8],
) -> Result<RelinKey<B>> {
    let kind = BlobKind::RelinKey;
    let ring = backend.ring();
    let wire: SwitchingKeyWire = wire::decode(kind, bytes, max_blob_len(ring, kind))?;
    check_switching(ring, kind, "key", &wire, fingerprint)?;
    Ok(RelinKey(switching_from_wire(backend, &wire)?))
}

/// Serializes Galois keys: fingerprint and, per Galois element in increasing order, the
/// element and its switching-key payload (as in [`switching_key_to_bytes`]).
pub fn galois_keys_to_bytes<B: RingBackend>(backend: &B, keys: &GaloisKeys<B>) -> Result<Vec<u8>> {
    let wire = GaloisKeysWire {
        fingerprint: keys.fingerprint,
        keys: keys
            .keys
            .iter()
            .map(|(&g, k)| Ok((g, switching_wire(backend, k)?)))
            .collect::<Result<_>>()?,
    };
    wire::encode(BlobKind::GaloisKeys, &wire)
}

/// Loads Galois keys written by [`galois_keys_to_bytes`]. Every key is validated (element
/// odd, below `2N`, not repeated; fingerprint, digits, limbs) before the first is uploaded.
pub fn galois_keys_from_bytes<B: RingBackend>(
    backend: &B,
    fingerprint: u64,
    bytes: &[u8],
) -> Result<GaloisKeys<B>> {
    let kind = BlobKind::GaloisKeys;
    let ring = backend.ring();
    let wire: GaloisKeysWire = wire::decode(kind, bytes, max_blob_len(ring, kind))?;
    check_fingerprint(kind, wire.fingerprint, fingerprint)?;
    let two_n = 2 * ring.n() as u64;
    let mut seen = std::collections::BTreeSet::new();
    for (g, key) in &wire.keys {
        if g % 2 == 0 || *g >= two_n {
            return Err(malformed(
                kind,
                format!("Galois element {g} is not odd and below 2N = {two_n}"),
            ));
        }
        if !seen.insert(*g) {
            return Err(malformed(kind, format!("Galois element {g} is repeated")));
        }
        check_switching(ring, kind, &format!("key of {g}"), key, fingerprint)?;
    }
    let mut keys = BTreeMap::new();
    for (g, key) in &wire.keys {
        keys.insert(*g, switching_from_wire(backend, key)?);
    }
    Ok(GaloisKeys { keys, fingerprint })
}

// ---------------------------------------------------------------------------------------------
// Plaintexts and ciphertexts
// ---------------------------------------------------------------------------------------------

fn check_shape_meta(op: &'static str, shape: Shape, meta: &Meta) -> Result<()> {
    if shape.extended || shape.level != meta.level {
        return Err(invalid(
            op,
            format!(
                "buffer shape {shape:?} disagrees with the metadata level {}",
                meta.level
            ),
        ));
    }
    Ok(())
}

/// Serializes a plaintext: its [`Meta`] and its limbs at its level (in the form, NTT or
/// coefficient, the metadata records).
pub fn plaintext_to_bytes<B: RingBackend>(backend: &B, pt: &Plaintext<B>) -> Result<Vec<u8>> {
    let host = backend.download(&pt.poly)?;
    let shape = host.shape();
    check_shape_meta("serialize a plaintext", shape, &pt.meta)?;
    if shape.components != 1 {
        return Err(invalid(
            "serialize a plaintext",
            format!("{} components, expected 1", shape.components),
        ));
    }
    let wire = PlaintextWire {
        meta: pt.meta,
        limbs: limbs_of(&host, 0),
    };
    wire::encode(BlobKind::Plaintext, &wire)
}

/// Loads a plaintext written by [`plaintext_to_bytes`].
pub fn plaintext_from_bytes<B: RingBackend>(
    backend: &B,
    fingerprint: u64,
    bytes: &[u8],
) -> Result<Plaintext<B>> {
    let kind = BlobKind::Plaintext;
    let ring = backend.ring();
    let wire: PlaintextWire = wire::decode(kind, bytes, max_blob_len(ring, kind))?;
    check_meta(ring, kind, &wire.meta, fingerprint)?;
    let sl = slots(ring, wire.meta.level, false);
    check_limbs(ring, kind, "plaintext", &wire.limbs, &sl)?;
    let mut host = ring.zeros(Shape {
        components: 1,
        level: wire.meta.level,
        extended: false,
    })?;
    fill(&mut host, 0, &wire.limbs, &sl);
    Ok(Plaintext {
        poly: backend.upload(&host)?,
        meta: wire.meta,
    })
}

/// Serializes a ciphertext: its [`Meta`] and the limbs of its components at its level. A fresh
/// secret-key ciphertext (`seed` set) stores `c_0` and the seed only, about half the size; `c_1`
/// is re-expanded with [`expand_seeded_c1`] on load.
pub fn ciphertext_to_bytes<B: RingBackend>(backend: &B, ct: &Ciphertext<B>) -> Result<Vec<u8>> {
    let op = "serialize a ciphertext";
    let host = backend.download(&ct.poly)?;
    let shape = host.shape();
    check_shape_meta(op, shape, &ct.meta)?;
    if !(2..=3).contains(&shape.components) {
        return Err(invalid(
            op,
            format!("{} components, expected 2 or 3", shape.components),
        ));
    }
    let stored = match &ct.seed {
        Some(_) if shape.components != 2 => {
            return Err(invalid(
                op,
                "a seeded ciphertext must have 2 components".into(),
            ));
        }
        Some(_) => 1,
        None => shape.components,
    };
    let wire = CiphertextWire {
        meta: ct.meta,
        seed: ct.seed.clone(),
        components: (0..stored).map(|c| limbs_of(&host, c)).collect(),
    };
    wire::encode(BlobKind::Ciphertext, &wire)
}

/// Loads a ciphertext written by [`ciphertext_to_bytes`] (NTT form, 2 or 3 components; a
/// seeded one keeps its seed so that it serializes compactly again).
pub fn ciphertext_from_bytes<B: RingBackend>(
    backend: &B,
    fingerprint: u64,
    bytes: &[u8],
) -> Result<Ciphertext<B>> {
    let kind = BlobKind::Ciphertext;
    let ring = backend.ring();
    let wire: CiphertextWire = wire::decode(kind, bytes, max_blob_len(ring, kind))?;
    let meta = wire.meta;
    check_meta(ring, kind, &meta, fingerprint)?;
    if !meta.ntt {
        return Err(malformed(kind, "a ciphertext must be in NTT form".into()));
    }
    let stored = wire.components.len();
    let components = match wire.seed {
        Some(_) if stored != 1 => {
            return Err(malformed(
                kind,
                format!("a seeded ciphertext stores 1 component (c_0), found {stored}"),
            ));
        }
        Some(_) => 2,
        None if !(2..=3).contains(&stored) => {
            return Err(malformed(
                kind,
                format!("{stored} components, expected 2 or 3"),
            ));
        }
        None => stored,
    };
    let sl = slots(ring, meta.level, false);
    for (c, limbs) in wire.components.iter().enumerate() {
        check_limbs(ring, kind, &format!("c_{c}"), limbs, &sl)?;
    }
    let mut host = ring.zeros(Shape {
        components,
        level: meta.level,
        extended: false,
    })?;
    for (c, limbs) in wire.components.iter().enumerate() {
        fill(&mut host, c, limbs, &sl);
    }
    let mut poly = backend.upload(&host)?;
    if let Some(seed) = &wire.seed {
        let c1 = expand_seeded_c1(backend, seed, meta.level)?;
        backend.copy_component(&c1, 0, &mut poly, 1)?;
    }
    Ok(Ciphertext {
        poly,
        meta,
        seed: wire.seed.clone(),
    })
}

#[cfg(test)]
mod tests;
