//! [`HeapKeys`] as bytes: a header (`b"HEAP"`, format version `u16`) and a bincode payload
//! (fixed-width little-endian integers). Every ring-key row is stored whole (both components,
//! limbs `q_0..q_L`, NTT form: the RGSW rows of a set bit carry the gadget in their `a` part, so
//! `a` is not re-expanded from a seed), the LWE key-switching key as its words, `to_sparse` as
//! an `rlwe` switching-key blob. Loading checks the size against the parameter set's bound
//! before parsing, then the fingerprint, every count, every residue against its limb's
//! modulus and every LWE word against `2^k`, before any device buffer is built.

use crate::error::{Error, Result};
use crate::gadget::{GadgetRows, RnsGadget};
use crate::keys::{HeapKeys, keep_limbs_up_to, key_id_of};
use crate::lwe::LweKeySwitchKey;
use crate::params::HeapParams;
use ckks::Context;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::backend::blind_rotate::BlindRotateBackend;
use fhe_math::backend::rns_blind_rotate::KEYS_PER_PAIR;
use fhe_math::poly::Shape;
use rlwe::wire::config;
use serde::{Deserialize, Serialize};

/// The magic of a serialized key set.
pub const MAGIC: [u8; 4] = *b"HEAP";
/// The format version written and accepted: 2 since the blind-rotation key is unrolled (three
/// RGSW keys a pair of LWE coefficients; version 1 held one a coefficient and is refused).
pub const FORMAT_VERSION: u16 = 2;
const HEADER_LEN: usize = 6;

/// One row: `2 · (L + 1)` limbs of `N` residues, component-major.
type RowWire = Vec<Vec<u64>>;

#[derive(Serialize, Deserialize)]
struct HeapKeysWire {
    fingerprint: u64,
    lwe_dimension: u64,
    digits: u64,
    to_sparse: Vec<u8>,
    lwe_ksk: Vec<u32>,
    /// `[i]`: the `2 · digits` rows of bit `i`, component 0's digits first.
    rgsw: Vec<Vec<RowWire>>,
    /// `(g, rows)` for `g = 2^l + 1`, `l = 1..=log2 N`.
    auto: Vec<(u64, Vec<RowWire>)>,
    to_dense: Vec<RowWire>,
}

fn malformed(reason: impl Into<String>) -> Error {
    Error::Malformed {
        reason: reason.into(),
    }
}

/// The largest valid blob for `params` at `ring` sizes: rows, LWE words, `to_sparse`, slack.
fn max_len(params: &HeapParams, n: usize, limbs: usize, digits: usize, to_sparse: usize) -> usize {
    let row = 8 + 2 * limbs * (8 + 8 * n);
    let rows = (params.lwe_dimension / 2 * KEYS_PER_PAIR * 2 * digits
        + (n.trailing_zeros() as usize + 1) * digits)
        .saturating_mul(row + 8);
    let lwe = 8 + 4 * n * params.ks_levels * (params.lwe_dimension + 1);
    HEADER_LEN
        + rows.saturating_add(lwe).saturating_add(to_sparse)
        + 1024
        + 16 * params.lwe_dimension
}

impl<B: KeySwitchBackend + BlindRotateBackend> HeapKeys<B> {
    /// The key set as bytes (module documentation). Public material only.
    pub fn to_bytes(&self, be: &B) -> Result<Vec<u8>> {
        let limbs = be.ring().q_count();
        let rows = |r: &GadgetRows<B>| -> Result<Vec<RowWire>> {
            r.rows
                .iter()
                .map(|p| {
                    let host = be.download(p)?;
                    Ok((0..2)
                        .flat_map(|c| (0..limbs).map(move |s| (c, s)))
                        .map(|(c, s)| host.limb(c, s).to_vec())
                        .collect())
                })
                .collect()
        };
        let wire = HeapKeysWire {
            fingerprint: self.fingerprint,
            lwe_dimension: self.lwe_dimension() as u64,
            digits: self.to_dense.rows.len() as u64,
            to_sparse: rlwe::serialize::switching_key_to_bytes(be, &self.to_sparse)?,
            lwe_ksk: self.lwe_ksk.words.clone(),
            rgsw: self
                .rgsw
                .iter()
                .map(|[r0, r1]| Ok([rows(r0)?, rows(r1)?].concat()))
                .collect::<Result<_>>()?,
            auto: self
                .auto
                .iter()
                .map(|(g, r)| Ok((*g as u64, rows(r)?)))
                .collect::<Result<_>>()?,
            to_dense: rows(&self.to_dense)?,
        };
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bincode::serde::encode_into_std_write(&wire, &mut out, config())
            .map_err(|e| malformed(format!("encoding failed: {e}")))?;
        Ok(out)
    }

    /// Loads a key set written by [`HeapKeys::to_bytes`] for `ctx` and `params`.
    ///
    /// Errors ([`Error::Malformed`] unless named): a blob over the set's size bound, a bad
    /// magic or version, a payload that does not decode or has trailing bytes, another
    /// parameter set ([`Error::ParameterMismatch`]), counts that do not match `params`, a
    /// residue not below its modulus, an LWE word not below `2^k`, Galois elements out of
    /// order, a malformed `to_sparse` blob ([`Error::Rlwe`]).
    pub fn from_bytes(ctx: &Context<B>, params: &HeapParams, bytes: &[u8]) -> Result<Self> {
        params.check()?;
        let be = ctx.backend();
        let ring = be.ring().clone();
        let (n, limbs, top) = (ring.n(), ring.q_count(), ring.max_level());
        let gadget = RnsGadget::new(&ring, top, params.digit_limbs)?;
        let digits = gadget.digits();
        let ks_max = rlwe::serialize::max_blob_len(&ring, rlwe::wire::BlobKind::KeySwitchingKey);
        let max = max_len(params, n, limbs, digits, ks_max);
        if bytes.len() > max {
            return Err(malformed(format!(
                "{} bytes, above the bound {max}",
                bytes.len()
            )));
        }
        if bytes.len() < HEADER_LEN || bytes[..4] != MAGIC {
            return Err(malformed("bad magic"));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != FORMAT_VERSION {
            return Err(malformed(format!(
                "format version {version}, supported {FORMAT_VERSION}"
            )));
        }
        let payload = &bytes[HEADER_LEN..];
        let (w, used): (HeapKeysWire, usize) = rlwe::wire::decode_limited(payload, max)
            .map_err(|e| malformed(format!("payload: {e}")))?;
        if used != payload.len() {
            return Err(malformed(format!(
                "{} trailing bytes",
                payload.len() - used
            )));
        }
        let fp = ctx.params().fingerprint();
        if w.fingerprint != fp {
            return Err(Error::ParameterMismatch {
                op: "load HEAP keys",
                what: "the key blob",
                got: w.fingerprint,
                expected: fp,
            });
        }
        let n_t = params.lwe_dimension;
        let n_rgsw = n_t / 2 * KEYS_PER_PAIR;
        if w.lwe_dimension != n_t as u64 || w.rgsw.len() != n_rgsw || w.digits != digits as u64 {
            return Err(malformed(format!(
                "LWE dimension {} / {} RGSW keys / {} digits, expected {n_t} / {n_rgsw} / {digits}",
                w.lwe_dimension,
                w.rgsw.len(),
                w.digits
            )));
        }
        let ks_len = n * params.ks_levels * (n_t + 1);
        let mask = if params.log_q_ks == 32 {
            u32::MAX
        } else {
            (1u32 << params.log_q_ks) - 1
        };
        if w.lwe_ksk.len() != ks_len || w.lwe_ksk.iter().any(|&x| x & !mask != 0) {
            return Err(malformed(format!(
                "LWE key-switching key of {} words (expected {ks_len}) or a word not below 2^{}",
                w.lwe_ksk.len(),
                params.log_q_ks
            )));
        }
        let log_n = n.trailing_zeros() as usize;
        let expected_g: Vec<u64> = (1..=log_n).map(|l| (1u64 << l) + 1).collect();
        let got_g: Vec<u64> = w.auto.iter().map(|(g, _)| *g).collect();
        if got_g != expected_g {
            return Err(malformed(format!(
                "automorphism keys {got_g:?}, expected {expected_g:?}"
            )));
        }
        // Every row: counts and residues, checked before any upload.
        let check = |rows: &[RowWire], count: usize, what: &str| -> Result<()> {
            if rows.len() != count {
                return Err(malformed(format!(
                    "{what}: {} rows, expected {count}",
                    rows.len()
                )));
            }
            for row in rows {
                if row.len() != 2 * limbs {
                    return Err(malformed(format!("{what}: a row of {} limbs", row.len())));
                }
                for (i, limb) in row.iter().enumerate() {
                    let q = ring.modulus(i % limbs).value();
                    if limb.len() != n || limb.iter().any(|&x| x >= q) {
                        return Err(malformed(format!(
                            "{what}: a limb of length {} or a residue not below its modulus",
                            limb.len()
                        )));
                    }
                }
            }
            Ok(())
        };
        for r in &w.rgsw {
            check(r, 2 * digits, "RGSW key")?;
        }
        for (_, r) in &w.auto {
            check(r, digits, "automorphism key")?;
        }
        check(&w.to_dense, digits, "to_dense")?;
        let mut to_sparse = rlwe::serialize::switching_key_from_bytes(be, fp, &w.to_sparse)?;
        keep_limbs_up_to(be, &mut to_sparse.poly, 0)?;

        let upload = |rows: &[RowWire]| -> Result<GadgetRows<B>> {
            let rows = rows
                .iter()
                .map(|row| {
                    let mut host = ring.zeros(Shape {
                        components: 2,
                        level: top,
                        extended: false,
                    })?;
                    for (i, limb) in row.iter().enumerate() {
                        host.limb_mut(i / limbs, i % limbs).copy_from_slice(limb);
                    }
                    Ok(be.upload(&host)?)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(GadgetRows { rows })
        };
        let rgsw = w
            .rgsw
            .iter()
            .map(|r| Ok([upload(&r[..digits])?, upload(&r[digits..])?]))
            .collect::<Result<Vec<_>>>()?;
        let auto = w
            .auto
            .iter()
            .map(|(g, r)| Ok((*g as usize, upload(r)?)))
            .collect::<Result<Vec<_>>>()?;
        let to_dense = upload(&w.to_dense)?;
        let lwe_ksk = LweKeySwitchKey::from_words(w.lwe_ksk, n, n_t);
        let lwe_ksk_uploaded = be.upload_key_switch_key(&lwe_ksk.to_host_key(params)?)?;
        Ok(HeapKeys {
            key_id: key_id_of(&lwe_ksk),
            to_sparse,
            lwe_ksk,
            lwe_ksk_uploaded,
            rgsw,
            auto,
            to_dense,
            fingerprint: fp,
        })
    }
}
