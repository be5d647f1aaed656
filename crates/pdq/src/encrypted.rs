//! The encrypted table: per column, its words in the comparison layout of the `compare` crate
//! and its limbs ([`crate::limbs`]) with row `r` in slot `r`; stored as one file with magic,
//! version, key id and parameter fingerprint, checked on load.

use crate::blob;
use crate::cmp::Words;
use crate::error::{Error, Result};
use crate::keys::KeyId;
use crate::numeric::ColumnType;
use crate::plan::TableShape;
use crate::table::MAX_COLUMNS;
use bgv::{Ciphertext, Context};
use fhe_math::backend::IntegerBackend;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Magic of a table file.
pub const TABLE_MAGIC: [u8; 4] = *b"PDQT";
/// Largest table file read (64 GiB).
pub const MAX_TABLE_FILE: u64 = 64 << 30;

/// One encrypted column.
pub struct EncColumn<B: IntegerBackend> {
    /// Column name.
    pub name: String,
    /// Column type (public).
    pub ty: ColumnType,
    /// The values as comparison words.
    pub words: Words<B>,
    /// The values' limbs per chunk (`[chunk][limb]`, least significant limb first).
    pub limbs: Vec<Vec<Ciphertext<B>>>,
}

/// An encrypted table.
pub struct EncTable<B: IntegerBackend> {
    /// Table name.
    pub name: String,
    /// The key it is encrypted under.
    pub key_id: KeyId,
    /// Number of rows.
    pub rows: usize,
    /// Limb width.
    pub limb_bits: u32,
    /// The columns.
    pub columns: Vec<EncColumn<B>>,
}

#[derive(Serialize, Deserialize)]
struct ColumnFile {
    name: String,
    ty: ColumnType,
    words: Vec<Vec<u8>>,
    limbs: Vec<Vec<u8>>,
}

#[derive(Serialize, Deserialize)]
struct TableFile {
    name: String,
    key_id: KeyId,
    fingerprint: u64,
    rows: usize,
    limb_bits: u32,
    columns: Vec<ColumnFile>,
}

fn ct_bytes<'c, B: IntegerBackend + 'c>(
    ctx: &Context<B>,
    cts: impl IntoIterator<Item = &'c Ciphertext<B>>,
) -> Result<Vec<Vec<u8>>> {
    cts.into_iter().map(|c| Ok(c.to_bytes(ctx)?)).collect()
}

fn ct_load<B: IntegerBackend>(ctx: &Context<B>, bytes: &[Vec<u8>]) -> Result<Vec<Ciphertext<B>>> {
    bytes
        .iter()
        .map(|b| Ok(Ciphertext::from_bytes(ctx, b)?))
        .collect()
}

impl<B: IntegerBackend> EncTable<B> {
    /// Ciphertexts per column (`⌈rows / (N/B)⌉`).
    pub fn chunks(&self) -> usize {
        let n = self.columns.first().map_or(1, |c| c.limbs.len());
        n.max(1)
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Result<&EncColumn<B>> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| Error::UnknownColumn {
                name: name.to_string(),
                known: self.column_names().join(", "),
            })
    }

    /// The column names.
    pub fn column_names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }

    /// The public shape the planner uses.
    pub fn shape(
        &self,
        ctx: &Context<B>,
        compare_depth: usize,
        compare_cost: (usize, usize),
    ) -> TableShape {
        TableShape {
            columns: self.column_names(),
            types: self.columns.iter().map(|c| c.ty).collect(),
            rows: self.rows,
            limb_bits: self.limb_bits,
            t: ctx.params().t(),
            levels: ctx.params().max_level(),
            compare_depth,
            compare_cost,
            block: crate::cmp::layout(ctx.params().n())
                .map(|l| l.block())
                .unwrap_or(1),
            slots: ctx.params().n(),
        }
    }

    /// The table file's bytes.
    pub fn to_bytes(&self, ctx: &Context<B>) -> Result<Vec<u8>> {
        let file = TableFile {
            name: self.name.clone(),
            key_id: self.key_id,
            fingerprint: ctx.params().fingerprint(),
            rows: self.rows,
            limb_bits: self.limb_bits,
            columns: self
                .columns
                .iter()
                .map(|c| {
                    Ok(ColumnFile {
                        name: c.name.clone(),
                        ty: c.ty,
                        words: ct_bytes(ctx, c.words.ciphertexts())?,
                        limbs: ct_bytes(ctx, c.limbs.iter().flatten())?,
                    })
                })
                .collect::<Result<_>>()?,
        };
        blob::encode("table file", TABLE_MAGIC, &file)
    }

    /// Reads a table from bytes, checking the parameters, the key id (when `key` is given),
    /// the shape and every ciphertext.
    pub fn from_bytes(ctx: &Context<B>, bytes: &[u8], key: Option<KeyId>) -> Result<Self> {
        let f: TableFile = blob::decode("table file", TABLE_MAGIC, bytes, MAX_TABLE_FILE)?;
        let bad = |why: String| Error::format("table file", why);
        if f.fingerprint != ctx.params().fingerprint() {
            return Err(Error::KeyMismatch(format!(
                "table `{}` was encrypted under other parameters (fingerprint {:016x}, these \
                 are {:016x})",
                f.name,
                f.fingerprint,
                ctx.params().fingerprint()
            )));
        }
        if let Some(k) = key
            && k != f.key_id
        {
            return Err(Error::KeyMismatch(format!(
                "table `{}` belongs to key {}, not to key {k}",
                f.name, f.key_id
            )));
        }
        let limit = crate::cmp::max_rows(ctx.params().t());
        if f.rows == 0 || f.rows > limit {
            return Err(bad(format!("{} rows (1..={limit})", f.rows)));
        }
        if f.columns.is_empty() || f.columns.len() > MAX_COLUMNS {
            return Err(bad(format!("{} columns", f.columns.len())));
        }
        if let Some(c) = f
            .columns
            .iter()
            .find(|c| c.ty.scale > crate::numeric::MAX_SCALE)
        {
            return Err(bad(format!(
                "column `{}` has {} decimal places",
                c.name, c.ty.scale
            )));
        }
        let signed = f.columns.iter().any(|c| c.ty.signed);
        let expected = crate::limbs::limb_bits(f.rows, ctx.params().t(), signed)?;
        if f.limb_bits != expected {
            return Err(bad(format!(
                "limb width {} for {} rows (expected {expected})",
                f.limb_bits, f.rows
            )));
        }
        let n_limbs = crate::limbs::VALUE_BITS.div_ceil(f.limb_bits) as usize;
        let chunks = f
            .rows
            .div_ceil(crate::cmp::rows_per_chunk(ctx.params().n())?);
        let columns = f
            .columns
            .iter()
            .map(|c| {
                if c.limbs.len() != n_limbs * chunks {
                    return Err(bad(format!(
                        "column `{}` has {} limb ciphertexts, expected {n_limbs} limbs × \
                         {chunks} chunks",
                        c.name,
                        c.limbs.len()
                    )));
                }
                Ok(EncColumn {
                    name: c.name.clone(),
                    ty: c.ty,
                    words: Words::from_ciphertexts(ctx, ct_load(ctx, &c.words)?, f.rows)?,
                    limbs: crate::engine::unflatten(ct_load(ctx, &c.limbs)?, chunks)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(EncTable {
            name: f.name,
            key_id: f.key_id,
            rows: f.rows,
            limb_bits: f.limb_bits,
            columns,
        })
    }

    /// Writes the table file atomically.
    pub fn save(&self, ctx: &Context<B>, path: &Path) -> Result<()> {
        blob::write_atomic(path, &self.to_bytes(ctx)?)
    }

    /// Reads a table file.
    pub fn load(ctx: &Context<B>, path: &Path, key: Option<KeyId>) -> Result<Self> {
        let size = std::fs::metadata(path)
            .map_err(|e| Error::io(path, e))?
            .len();
        if size > MAX_TABLE_FILE {
            return Err(Error::format("table file", format!("{size} bytes")));
        }
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(ctx, &bytes, key)
    }
}
