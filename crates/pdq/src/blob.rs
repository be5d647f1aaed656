//! pdq's own containers (table, keys, frames): a 4-byte magic, a `u16` format version, a
//! `u64` payload length, then the bincode 2 (serde) payload. Reading checks all four and a
//! size bound before decoding; files are written atomically (temporary file, `fsync`, rename).

use crate::error::{Error, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::Write;
use std::path::Path;

/// The format version of every pdq container.
pub const VERSION: u16 = 2;

/// Header length: magic, version, payload length.
pub const HEADER_LEN: usize = 14;

fn config() -> impl bincode::config::Config {
    bincode::config::standard()
        .with_fixed_int_encoding()
        .with_little_endian()
}

/// The header of a payload of `len` bytes.
pub fn header(magic: [u8; 4], len: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..4].copy_from_slice(&magic);
    h[4..6].copy_from_slice(&VERSION.to_le_bytes());
    h[6..].copy_from_slice(&len.to_le_bytes());
    h
}

/// Checks a header; returns the payload length (at most `max_len`).
pub fn check_header(
    what: &'static str,
    magic: [u8; 4],
    h: &[u8; HEADER_LEN],
    max_len: u64,
) -> Result<u64> {
    if h[..4] != magic {
        return Err(Error::format(
            what,
            format!(
                "bad magic {:?} (expected {:?})",
                String::from_utf8_lossy(&h[..4]),
                String::from_utf8_lossy(&magic)
            ),
        ));
    }
    let version = u16::from_le_bytes([h[4], h[5]]);
    if version != VERSION {
        return Err(Error::format(
            what,
            format!("format version {version}, this build reads {VERSION}"),
        ));
    }
    let len = u64::from_le_bytes(h[6..].try_into().expect("8 bytes"));
    if len > max_len {
        return Err(Error::format(
            what,
            format!("payload of {len} bytes exceeds the limit of {max_len}"),
        ));
    }
    Ok(len)
}

/// The bincode payload of `value`.
pub fn payload<T: Serialize>(what: &'static str, value: &T) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(value, config()).map_err(|e| Error::format(what, e.to_string()))
}

/// Decodes a whole payload (no trailing bytes).
pub fn from_payload<T: DeserializeOwned>(what: &'static str, bytes: &[u8]) -> Result<T> {
    let (value, used) = bincode::serde::decode_from_slice(bytes, config())
        .map_err(|e| Error::format(what, format!("undecodable payload: {e}")))?;
    if used != bytes.len() {
        return Err(Error::format(
            what,
            format!("{} trailing bytes", bytes.len() - used),
        ));
    }
    Ok(value)
}

/// `value` with its header.
pub fn encode<T: Serialize>(what: &'static str, magic: [u8; 4], value: &T) -> Result<Vec<u8>> {
    let body = payload(what, value)?;
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(&header(magic, body.len() as u64));
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decodes `bytes` written by [`encode`] with this magic, at most `max_len` payload bytes.
pub fn decode<T: DeserializeOwned>(
    what: &'static str,
    magic: [u8; 4],
    bytes: &[u8],
    max_len: u64,
) -> Result<T> {
    let Some((h, body)) = bytes.split_first_chunk::<HEADER_LEN>() else {
        return Err(Error::format(
            what,
            format!("{} bytes, shorter than the header", bytes.len()),
        ));
    };
    let len = check_header(what, magic, h, max_len)?;
    if body.len() as u64 != len {
        return Err(Error::format(
            what,
            format!("header says {len} payload bytes, {} present", body.len()),
        ));
    }
    from_payload(what, body)
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, synced, then renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(d) = dir {
        std::fs::create_dir_all(d).map_err(|e| Error::io(d, e))?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(d) = dir {
            std::fs::File::open(d)?.sync_all()?;
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Reads and decodes a file written by [`encode`] + [`write_atomic`].
pub fn read_file<T: DeserializeOwned>(
    what: &'static str,
    magic: [u8; 4],
    path: &Path,
    max_len: u64,
) -> Result<T> {
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    if size > max_len + HEADER_LEN as u64 {
        return Err(Error::format(
            what,
            format!(
                "{} is {size} bytes, over the limit of {max_len}",
                path.display()
            ),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    decode(what, magic, &bytes, max_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejections() {
        let v = (7u32, "x".to_string(), vec![1u8, 2, 3]);
        let bytes = encode("test blob", *b"TEST", &v).unwrap();
        let back: (u32, String, Vec<u8>) = decode("test blob", *b"TEST", &bytes, 1 << 20).unwrap();
        assert_eq!(back, v);
        let err = |b: &[u8], max| {
            decode::<(u32, String, Vec<u8>)>("test blob", *b"TEST", b, max)
                .unwrap_err()
                .to_string()
        };
        assert!(err(&bytes[..5], 1 << 20).contains("shorter than the header"));
        assert!(err(&bytes[..bytes.len() - 1], 1 << 20).contains("payload bytes"));
        assert!(err(&bytes, 3).contains("exceeds the limit"));
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(err(&bad, 1 << 20).contains("bad magic"));
        let mut bad = bytes.clone();
        bad[4] = 9;
        assert!(err(&bad, 1 << 20).contains("format version 9"));
        let mut bad = bytes.clone();
        bad.push(0);
        bad[6] += 1;
        assert!(err(&bad, 1 << 20).contains("trailing"));
    }
}
