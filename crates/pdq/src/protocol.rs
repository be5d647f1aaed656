//! The wire protocol: frames over TCP, each a 14-byte header (magic `PDQF`, `u16` version,
//! `u64` payload length) and a bincode payload, bounded by the receiver's limit.
//!
//! A conversation: `Describe` → `Shape` (the table's public shape, for planning and
//! `--explain`), or `Query` → `Answer`, or `Query` → `NeedReciprocals` → `Reciprocals` →
//! `Answer` (a division's round trip). Any failure is an `Error` frame with a message; the
//! server keeps serving.

use crate::blob;
use crate::error::{Error, Result};
use crate::keys::KeyId;
use crate::query::Query;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};

/// Magic of a frame.
pub const FRAME_MAGIC: [u8; 4] = *b"PDQF";
/// Default largest frame accepted (1 GiB).
pub const DEFAULT_MAX_FRAME: u64 = 1 << 30;

/// Serialized ciphertexts.
pub type Blobs = Vec<Vec<u8>>;

/// Client → server.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// The public shape of a table.
    Describe {
        /// Table name.
        table: String,
    },
    /// A query: its shape and the encrypted constants (each a list of ciphertexts).
    Query {
        /// The client's key id.
        key: KeyId,
        /// The query shape.
        query: Query,
        /// Per constant, its words' ciphertexts.
        constants: Vec<Blobs>,
    },
    /// The reciprocal limbs, one list per division.
    Reciprocals {
        /// Per division, its limbs.
        limbs: Vec<Blobs>,
    },
}

/// Server → client.
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// A table's shape.
    Shape {
        /// Its key.
        key: KeyId,
        /// Column names.
        columns: Vec<String>,
        /// Column types.
        types: Vec<crate::numeric::ColumnType>,
        /// Rows.
        rows: usize,
        /// Limb width.
        limb_bits: u32,
        /// Levels of one comparison.
        compare_depth: usize,
        /// `(products, rotations)` of one comparison per ciphertext.
        compare_cost: (usize, usize),
    },
    /// The denominators of the divisions.
    NeedReciprocals {
        /// Per division, its limbs.
        denominators: Vec<Blobs>,
    },
    /// The answer.
    Answer {
        /// The mask of a per-row query (per chunk).
        mask: Blobs,
        /// The packed sums of an aggregate query.
        sums: Blobs,
        /// Per item, its limbs.
        items: Vec<Blobs>,
    },
    /// A refusal or failure.
    Error {
        /// What went wrong.
        message: String,
    },
}

impl Reply {
    /// The variant's name (for error messages; the payload can be large).
    pub fn name(&self) -> &'static str {
        match self {
            Reply::Shape { .. } => "Shape",
            Reply::NeedReciprocals { .. } => "NeedReciprocals",
            Reply::Answer { .. } => "Answer",
            Reply::Error { .. } => "Error",
        }
    }
}

/// Writes one frame.
pub fn write_frame<T: Serialize>(w: &mut impl Write, value: &T) -> Result<()> {
    let bytes = blob::encode("frame", FRAME_MAGIC, value)?;
    w.write_all(&bytes)?;
    w.flush()?;
    Ok(())
}

/// Reads one frame of at most `max_len` payload bytes. `Ok(None)` at a clean end of stream.
pub fn read_frame<T: for<'de> Deserialize<'de>>(
    r: &mut impl Read,
    max_len: u64,
) -> Result<Option<T>> {
    let mut h = [0u8; blob::HEADER_LEN];
    let mut got = 0;
    while got < h.len() {
        match r.read(&mut h[got..])? {
            0 if got == 0 => return Ok(None),
            0 => {
                return Err(Error::format(
                    "frame",
                    format!("stream ended inside a header ({got} bytes)"),
                ));
            }
            n => got += n,
        }
    }
    let len = blob::check_header("frame", FRAME_MAGIC, &h, max_len)?;
    let mut body = Vec::new();
    r.take(len).read_to_end(&mut body)?;
    if body.len() as u64 != len {
        return Err(Error::format(
            "frame",
            format!("stream ended after {} of {len} payload bytes", body.len()),
        ));
    }
    blob::from_payload("frame", &body).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_are_bounded() {
        let mut buf = Vec::new();
        write_frame(&mut buf, &Request::Describe { table: "t".into() }).unwrap();
        let back: Request = read_frame(&mut buf.as_slice(), 1 << 20).unwrap().unwrap();
        assert!(matches!(back, Request::Describe { table } if table == "t"));
        let err = read_frame::<Request>(&mut buf.as_slice(), 2).unwrap_err();
        assert!(err.to_string().contains("exceeds the limit"), "{err}");
        let err = read_frame::<Request>(&mut &buf[..buf.len() - 1], 1 << 20).unwrap_err();
        assert!(err.to_string().contains("stream ended"), "{err}");
        assert!(
            read_frame::<Request>(&mut &[][..], 1 << 20)
                .unwrap()
                .is_none()
        );
    }
}
