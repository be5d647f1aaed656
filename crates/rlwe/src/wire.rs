//! Framing of serialized objects ("blobs").
//!
//! Every blob is laid out as
//!
//! | bytes | content |
//! | --- | --- |
//! | 0..4 | magic `b"GFHE"` |
//! | 4..6 | format version, `u16` little-endian ([`FORMAT_VERSION`]) |
//! | 6 | kind tag, `u8` ([`BlobKind`]) |
//! | 7.. | payload: bincode 2.0.1 serde encoding, fixed-width little-endian integers |
//!
//! [`decode`] rejects a bad magic, an unknown version, another kind, truncated data, trailing
//! bytes and blobs over the caller's size limit, and never panics on any input. The bincode
//! decoder also runs with an allocation limit of the same order as the caller's limit, so a
//! forged length prefix cannot make it reserve huge buffers.

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// The magic every blob starts with.
pub const MAGIC: [u8; 4] = *b"GFHE";

/// The format version written by this build, and the only one it reads.
///
/// Version 1 also fixes the randomness layout version 1 (how seeded `a` polynomials are expanded),
/// so a change of either bumps this number.
pub const FORMAT_VERSION: u16 = 1;

/// Length of the header (magic, version, kind tag) in bytes.
pub const HEADER_LEN: usize = 7;

/// What a blob holds; the tag byte after the version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(u8)]
pub enum BlobKind {
    /// Scheme parameters.
    Parameters = 1,
    /// A secret key.
    SecretKey = 2,
    /// A public key.
    PublicKey = 3,
    /// A relinearization key.
    RelinKey = 4,
    /// A set of Galois (rotation) keys.
    GaloisKeys = 5,
    /// A plaintext.
    Plaintext = 6,
    /// A ciphertext.
    Ciphertext = 7,
    /// A general key-switching key.
    KeySwitchingKey = 8,
}

impl BlobKind {
    /// Every kind, in tag order.
    pub const ALL: [BlobKind; 8] = [
        BlobKind::Parameters,
        BlobKind::SecretKey,
        BlobKind::PublicKey,
        BlobKind::RelinKey,
        BlobKind::GaloisKeys,
        BlobKind::Plaintext,
        BlobKind::Ciphertext,
        BlobKind::KeySwitchingKey,
    ];

    /// The tag byte of this kind.
    pub fn tag(self) -> u8 {
        self as u8
    }

    /// The kind with tag `tag`, if any.
    pub fn from_tag(tag: u8) -> Option<BlobKind> {
        Self::ALL.into_iter().find(|k| k.tag() == tag)
    }

    /// A human-readable name ("ciphertext", "Galois keys").
    pub fn name(self) -> &'static str {
        match self {
            BlobKind::Parameters => "parameters",
            BlobKind::SecretKey => "secret key",
            BlobKind::PublicKey => "public key",
            BlobKind::RelinKey => "relinearization key",
            BlobKind::GaloisKeys => "Galois keys",
            BlobKind::Plaintext => "plaintext",
            BlobKind::Ciphertext => "ciphertext",
            BlobKind::KeySwitchingKey => "key-switching key",
        }
    }

    /// Describes a raw tag for error messages: the kind's name, or "unknown kind tag N".
    pub fn describe_tag(tag: u8) -> String {
        match Self::from_tag(tag) {
            Some(k) => k.name().to_string(),
            None => format!("unknown kind tag {tag}"),
        }
    }
}

impl fmt::Display for BlobKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The bincode configuration of payloads: fixed-width little-endian integers, no limit
/// (shared by the other crates' blobs so that [`decode_limited`] reads them).
pub fn config() -> bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Fixint,
    bincode::config::NoLimit,
> {
    bincode::config::standard()
        .with_fixed_int_encoding()
        .with_little_endian()
}

/// Serializes `value` as a blob of kind `kind`: header followed by the bincode payload.
pub fn encode<T: Serialize + ?Sized>(kind: BlobKind, value: &T) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(HEADER_LEN + 64);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.push(kind.tag());
    bincode::serde::encode_into_std_write(value, &mut out, config()).map_err(|e| {
        Error::Encode {
            what: format!("{kind}: {e}"),
        }
    })?;
    Ok(out)
}

/// Reads and checks the header of `bytes`; returns the kind tag found (any value).
///
/// Fails on a short blob, a bad magic or an unsupported version; `kind` only names the
/// expected object in the error.
pub fn read_header(kind: BlobKind, bytes: &[u8]) -> Result<u8> {
    if bytes.len() < HEADER_LEN {
        // Report a bad magic first when what is there already disagrees.
        let n = bytes.len().min(MAGIC.len());
        if bytes[..n] != MAGIC[..n] {
            return Err(Error::BadMagic { kind });
        }
        return Err(Error::Truncated {
            kind,
            len: bytes.len(),
        });
    }
    if bytes[..4] != MAGIC {
        return Err(Error::BadMagic { kind });
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != FORMAT_VERSION {
        return Err(Error::UnsupportedVersion {
            kind,
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    Ok(bytes[6])
}

/// The kind of a blob, after checking its magic and version (the payload is not read).
pub fn peek_kind(bytes: &[u8]) -> Result<BlobKind> {
    // The expected kind only appears in error messages; use the tag's own kind when known.
    let tag = read_header(BlobKind::Parameters, bytes)?;
    BlobKind::from_tag(tag).ok_or_else(|| Error::Malformed {
        what: "blob",
        reason: BlobKind::describe_tag(tag),
    })
}

/// Deserializes a blob of kind `kind` that is at most `max_len` bytes long (header included).
///
/// Rejects, with an error and never a panic: blobs over `max_len`, a bad magic, another
/// format version, another kind, a payload that is truncated or does not decode as `T`, and
/// trailing bytes. The decoder's allocations are bounded by a limit of the order of `max_len`.
/// Content checks (moduli, lengths, fingerprints) are the caller's job.
pub fn decode<T: DeserializeOwned>(kind: BlobKind, bytes: &[u8], max_len: usize) -> Result<T> {
    if bytes.len() > max_len {
        return Err(Error::TooLarge {
            kind,
            len: bytes.len(),
            max: max_len,
        });
    }
    let tag = read_header(kind, bytes)?;
    if tag != kind.tag() {
        return Err(Error::WrongKind {
            expected: kind,
            found: tag,
        });
    }
    let payload = &bytes[HEADER_LEN..];
    let (value, used) = decode_limited::<T>(payload, max_len).map_err(|e| match e {
        bincode::error::DecodeError::UnexpectedEnd { .. } => Error::Truncated {
            kind,
            len: bytes.len(),
        },
        e => Error::Malformed {
            what: kind.name(),
            reason: e.to_string(),
        },
    })?;
    if used != payload.len() {
        return Err(Error::TrailingBytes {
            kind,
            extra: payload.len() - used,
        });
    }
    Ok(value)
}

/// Decodes with a bincode allocation limit: the smallest tier (powers of 16 from 1 MiB) that is
/// at least twice `max_len` (in-memory sizes may exceed encoded sizes a little). Public for
/// crates with their own framing (the same payload encoding: fixed-width little-endian).
pub fn decode_limited<T: DeserializeOwned>(
    payload: &[u8],
    max_len: usize,
) -> std::result::Result<(T, usize), bincode::error::DecodeError> {
    const MIB: usize = 1 << 20;
    let want = max_len.saturating_mul(2);
    macro_rules! with_limit {
        ($($lim:expr),*) => {{
            $(
                if want <= $lim {
                    return bincode::serde::decode_from_slice(payload, config().with_limit::<{ $lim }>());
                }
            )*
            bincode::serde::decode_from_slice(payload, config().with_limit::<{ MIB << 24 }>())
        }};
    }
    with_limit!(MIB, MIB << 4, MIB << 8, MIB << 12, MIB << 16, MIB << 20)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::Deserialize;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Sample {
        name: String,
        level: u32,
        scale: f64,
        limbs: Vec<Vec<u64>>,
        seed: Option<[u8; 32]>,
        bytes: Vec<u8>,
    }

    fn sample() -> Sample {
        Sample {
            name: "ct".into(),
            level: 3,
            scale: 2f64.powi(40),
            limbs: vec![vec![1, 2, 3], vec![u64::MAX, 0]],
            seed: Some([7; 32]),
            bytes: vec![9; 10],
        }
    }

    const MAX: usize = 1 << 20;

    #[test]
    fn round_trip() {
        let s = sample();
        let b = encode(BlobKind::Ciphertext, &s).unwrap();
        assert_eq!(&b[..4], b"GFHE");
        assert_eq!(u16::from_le_bytes([b[4], b[5]]), FORMAT_VERSION);
        assert_eq!(b[6], BlobKind::Ciphertext.tag());
        assert_eq!(peek_kind(&b).unwrap(), BlobKind::Ciphertext);
        let back: Sample = decode(BlobKind::Ciphertext, &b, MAX).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn fixed_width_little_endian() {
        let b = encode(BlobKind::Plaintext, &0x0102_0304u32).unwrap();
        assert_eq!(&b[HEADER_LEN..], &[4, 3, 2, 1]);
        let b = encode(BlobKind::Plaintext, &vec![1u64]).unwrap();
        assert_eq!(b.len(), HEADER_LEN + 8 + 8);
    }

    #[test]
    fn bad_magic() {
        let mut b = encode(BlobKind::Ciphertext, &sample()).unwrap();
        b[0] = b'X';
        let e = decode::<Sample>(BlobKind::Ciphertext, &b, MAX).unwrap_err();
        assert!(matches!(
            e,
            Error::BadMagic {
                kind: BlobKind::Ciphertext
            }
        ));
        assert_eq!(e.to_string(), "cannot decode ciphertext: bad magic");
        let e = decode::<Sample>(BlobKind::Ciphertext, b"XY", MAX).unwrap_err();
        assert!(matches!(e, Error::BadMagic { .. }));
    }

    #[test]
    fn unsupported_version() {
        let mut b = encode(BlobKind::Ciphertext, &sample()).unwrap();
        b[4] = 2;
        let e = decode::<Sample>(BlobKind::Ciphertext, &b, MAX).unwrap_err();
        assert!(matches!(
            e,
            Error::UnsupportedVersion {
                found: 2,
                supported: 1,
                ..
            }
        ));
        assert!(e.to_string().contains("version 2"));
    }

    #[test]
    fn wrong_kind() {
        let b = encode(BlobKind::Plaintext, &sample()).unwrap();
        let e = decode::<Sample>(BlobKind::Ciphertext, &b, MAX).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot decode ciphertext: the blob holds plaintext"
        );
        let mut b = b;
        b[6] = 200;
        let e = decode::<Sample>(BlobKind::Ciphertext, &b, MAX).unwrap_err();
        assert!(e.to_string().contains("unknown kind tag 200"));
        assert!(peek_kind(&b).is_err());
    }

    #[test]
    fn every_truncation_fails() {
        let b = encode(BlobKind::Ciphertext, &sample()).unwrap();
        for len in 0..b.len() {
            let r = decode::<Sample>(BlobKind::Ciphertext, &b[..len], MAX);
            assert!(r.is_err(), "prefix of {len} bytes decoded");
        }
        let e = decode::<Sample>(BlobKind::Ciphertext, &b[..b.len() - 1], MAX).unwrap_err();
        assert!(matches!(e, Error::Truncated { .. }), "{e:?}");
    }

    #[test]
    fn trailing_bytes() {
        let mut b = encode(BlobKind::Ciphertext, &sample()).unwrap();
        b.push(0);
        let e = decode::<Sample>(BlobKind::Ciphertext, &b, MAX).unwrap_err();
        assert!(matches!(
            e,
            Error::TrailingBytes {
                kind: BlobKind::Ciphertext,
                extra: 1
            }
        ));
    }

    #[test]
    fn oversize() {
        let b = encode(BlobKind::Ciphertext, &sample()).unwrap();
        let e = decode::<Sample>(BlobKind::Ciphertext, &b, b.len() - 1).unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }));
        assert!(decode::<Sample>(BlobKind::Ciphertext, &b, b.len()).is_ok());
    }

    #[test]
    fn forged_huge_lengths_fail_cleanly() {
        // A string claiming 2^62 bytes, a Vec<u64> claiming 2^61 elements.
        let mut b = Vec::from(MAGIC);
        b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        b.push(BlobKind::Ciphertext.tag());
        let mut s = b.clone();
        s.extend_from_slice(&(1u64 << 62).to_le_bytes());
        assert!(decode::<String>(BlobKind::Ciphertext, &s, MAX).is_err());
        assert!(decode::<Vec<u8>>(BlobKind::Ciphertext, &s, MAX).is_err());
        let mut v = b;
        v.extend_from_slice(&(1u64 << 61).to_le_bytes());
        assert!(decode::<Vec<u64>>(BlobKind::Ciphertext, &v, MAX).is_err());
        assert!(decode::<Vec<Vec<u64>>>(BlobKind::Ciphertext, &v, MAX).is_err());
    }

    #[test]
    fn tags_round_trip() {
        for k in BlobKind::ALL {
            assert_eq!(BlobKind::from_tag(k.tag()), Some(k));
        }
        assert_eq!(BlobKind::from_tag(0), None);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode::<Sample>(BlobKind::Ciphertext, &bytes, MAX);
            let _ = decode::<String>(BlobKind::Ciphertext, &bytes, MAX);
            let _ = peek_kind(&bytes);
        }

        #[test]
        fn arbitrary_payload_after_valid_header_never_panics(
            tail in proptest::collection::vec(any::<u8>(), 0..256)
        ) {
            let mut b = Vec::from(MAGIC);
            b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
            b.push(BlobKind::Ciphertext.tag());
            b.extend_from_slice(&tail);
            let _ = decode::<Sample>(BlobKind::Ciphertext, &b, MAX);
            let _ = decode::<Vec<Vec<u64>>>(BlobKind::Ciphertext, &b, MAX);
        }

        #[test]
        fn corrupted_blob_never_panics(pos in 0usize..200, byte in any::<u8>()) {
            let mut b = encode(BlobKind::Ciphertext, &sample()).unwrap();
            let p = pos % b.len();
            b[p] = byte;
            let _ = decode::<Sample>(BlobKind::Ciphertext, &b, MAX);
        }
    }
}
