//! Serialized [`EncryptedWords`] and [`EncryptedBits`]: a header (magic `b"GFCV"`, format
//! version `u16` little-endian, kind `u8`: 1 words, 2 bits) and a bincode 2 payload with the
//! digit layout, the length, the clean flag and each ciphertext as a `bgv::Ciphertext` blob.
//! Loading checks the header, the size limit, that the layout is the comparator's, that the
//! length fits the ciphertexts, and each ciphertext against the context
//! (`bgv::Ciphertext::from_bytes`); trailing bytes are refused.

use crate::comparator::Comparator;
use crate::error::{Error, Result};
use crate::vectors::{EncryptedBits, EncryptedWords};
use bgv::Ciphertext;
use fhe_math::backend::IntegerBackend;
use serde::{Deserialize, Serialize};

/// The magic of a serialized vector.
pub const MAGIC: [u8; 4] = *b"GFCV";
/// The format version.
pub const FORMAT_VERSION: u16 = 1;
/// The largest blob [`Comparator::words_from_bytes`] / [`Comparator::bits_from_bytes`] accept.
pub const MAX_BLOB: usize = 1 << 32;

const KIND_WORDS: u8 = 1;
const KIND_BITS: u8 = 2;

#[derive(Serialize, Deserialize)]
struct VectorWire {
    word_bits: u32,
    signed: bool,
    digit_bits: u32,
    slots: u64,
    len: u64,
    clean: bool,
    cts: Vec<Vec<u8>>,
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<{ MAX_BLOB }>()
}

impl<B: IntegerBackend> Comparator<B> {
    fn store_blob(
        &self,
        kind: u8,
        cts: &[Ciphertext<B>],
        len: usize,
        clean: bool,
    ) -> Result<Vec<u8>> {
        let l = self.layout();
        let wire = VectorWire {
            word_bits: l.word().bits(),
            signed: l.word().is_signed(),
            digit_bits: l.digit_bits(),
            slots: l.slot_count() as u64,
            len: len as u64,
            clean,
            cts: cts
                .iter()
                .map(|c| Ok(c.to_bytes(self.context())?))
                .collect::<Result<_>>()?,
        };
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.push(kind);
        bincode::serde::encode_into_std_write(&wire, &mut out, config()).map_err(|e| {
            Error::Malformed {
                what: "an encrypted vector",
                reason: format!("cannot encode: {e}"),
            }
        })?;
        Ok(out)
    }

    fn load_blob(&self, kind: u8, bytes: &[u8]) -> Result<(Vec<Ciphertext<B>>, usize, bool)> {
        let what = if kind == KIND_WORDS {
            "encrypted words"
        } else {
            "encrypted bits"
        };
        let bad = |reason: String| Error::Malformed { what, reason };
        if bytes.len() > MAX_BLOB {
            return Err(bad(format!("{} bytes exceed {MAX_BLOB}", bytes.len())));
        }
        if bytes.len() < 7 || bytes[..4] != MAGIC {
            return Err(bad("no GFCV header".into()));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != FORMAT_VERSION {
            return Err(bad(format!(
                "format version {version}, supported {FORMAT_VERSION}"
            )));
        }
        if bytes[6] != kind {
            return Err(bad(format!(
                "kind tag {} where {kind} was expected",
                bytes[6]
            )));
        }
        let (wire, used): (VectorWire, usize) =
            bincode::serde::decode_from_slice(&bytes[7..], config())
                .map_err(|e| bad(format!("payload: {e}")))?;
        if used != bytes.len() - 7 {
            return Err(bad(format!("{} trailing bytes", bytes.len() - 7 - used)));
        }
        let l = self.layout();
        if (wire.word_bits, wire.signed, wire.digit_bits, wire.slots)
            != (
                l.word().bits(),
                l.word().is_signed(),
                l.digit_bits(),
                l.slot_count() as u64,
            )
        {
            return Err(bad("made for another digit layout".into()));
        }
        let cap = l.words_per_ciphertext() as u64;
        let n = wire.cts.len() as u64;
        let fits = if n == 0 {
            wire.len == 0
        } else {
            wire.len > (n - 1) * cap && wire.len <= n * cap
        };
        if !fits {
            return Err(bad(format!(
                "{} values do not fill {n} ciphertexts of {cap}",
                wire.len
            )));
        }
        let cts = wire
            .cts
            .iter()
            .map(|b| Ok(Ciphertext::from_bytes(self.context(), b)?))
            .collect::<Result<Vec<_>>>()?;
        Ok((cts, wire.len as usize, wire.clean))
    }

    /// The serialized form of encrypted words (module documentation).
    pub fn words_to_bytes(&self, w: &EncryptedWords<B>) -> Result<Vec<u8>> {
        self.store_blob(KIND_WORDS, &w.cts, w.len, w.clean)
    }

    /// Encrypted words from [`Comparator::words_to_bytes`]; [`Error::Malformed`] (or the BGV
    /// error of a ciphertext) on anything else.
    pub fn words_from_bytes(&self, bytes: &[u8]) -> Result<EncryptedWords<B>> {
        let (cts, len, clean) = self.load_blob(KIND_WORDS, bytes)?;
        Ok(EncryptedWords { cts, len, clean })
    }

    /// The serialized form of encrypted bits.
    pub fn bits_to_bytes(&self, b: &EncryptedBits<B>) -> Result<Vec<u8>> {
        self.store_blob(KIND_BITS, &b.cts, b.len, true)
    }

    /// Encrypted bits from [`Comparator::bits_to_bytes`].
    pub fn bits_from_bytes(&self, bytes: &[u8]) -> Result<EncryptedBits<B>> {
        let (cts, len, _) = self.load_blob(KIND_BITS, bytes)?;
        Ok(EncryptedBits { cts, len })
    }
}
