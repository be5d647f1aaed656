//! The client: holds the secret key; encrypts tables and query constants, answers the
//! division round trip, decrypts and decodes answers.
//!
//! **Division round trip.** For `x / y` the server sends the limbs of `y` (every row; packed
//! `B` limbs to a ciphertext). The
//! client recombines `y_r`, picks `e_r = 30 + bitlen(|y_r|)` and returns the limbs of
//! `m_r = round(2^{e_r}/|y_r|)` (`2^30 < m_r ≤ 2^31`, relative error ≤ 2^-31), keeping
//! `e_r` and the sign; the server returns `x·m` and the client outputs `±(x·m)_r / 2^{e_r}`
//! (`NULL` where `y_r = 0`, as SQL does). Leakage: the client learns `y_r` of every row, which
//! it owns anyway (the key holder is the data owner); the server learns nothing of `y` or `m`.

use crate::cmp::{self, Words};
use crate::encrypted::{EncColumn, EncTable};
use crate::engine::Response;
use crate::error::{Error, Result};
use crate::keys::ClientKey;
use crate::limbs::{self, LimbRanges};
use crate::numeric::unscale;
use crate::plan::Plan;
use crate::query::Item;
use crate::table::PlainTable;
use crate::{QueryResult, Value};
use bgv::{Ciphertext, Context, Decryptor, Evaluator};
use fhe_math::backend::IntegerBackend;

/// The level limbs are encrypted at: a limb takes part in at most a square and one more
/// product, or a mask product (switched down to the lowest), plus margin.
pub const LIMB_LEVEL: usize = 4;

/// An exact integer result of decimal scale `k`: `Int(v)`, or `Real(v / 10^k)` (one
/// rounding of the exact value) when `k > 0`.
fn number(v: i128, k: i32) -> Value {
    if k == 0 {
        Value::Int(v)
    } else {
        Value::Real(unscale(v, k as u32))
    }
}

/// The client's memory of one division round trip: per division item and row, the exponent
/// `e_r` and whether `y_r < 0` (`None` where `y_r = 0`).
#[derive(Debug, Clone, Default)]
pub struct Reciprocals(pub Vec<Vec<Option<(u32, bool)>>>);

/// The client of one key.
pub struct Client<B: IntegerBackend> {
    eval: Evaluator<B>,
    key: ClientKey<B>,
    stride: usize,
}

impl<B: IntegerBackend> Client<B> {
    /// A client for `key` on `ctx`.
    pub fn new(ctx: &Context<B>, key: ClientKey<B>) -> Result<Self> {
        Ok(Client {
            eval: Evaluator::new(ctx),
            key,
            stride: cmp::layout(ctx.params().n())?.block(),
        })
    }

    /// The key.
    pub fn key(&self) -> &ClientKey<B> {
        &self.key
    }

    /// The context.
    pub fn context(&self) -> &Context<B> {
        self.eval.context()
    }

    /// Rows per ciphertext (a chunk): `N / B`.
    fn per_chunk(&self) -> usize {
        self.eval.encoder().slot_count() / self.stride
    }

    /// `(chunk, slot)` of row `r`: the lead slot of its comparison block.
    pub fn slot_of(&self, r: usize) -> (usize, usize) {
        let per = self.per_chunk();
        (r / per, (r % per) * self.stride)
    }

    /// Encrypts up to `N/B` values, value `r` in the lead slot of block `r` (zeros
    /// elsewhere), at `level`.
    pub fn encrypt_slots(&self, values: &[u64], level: usize) -> Result<Ciphertext<B>> {
        let ctx = self.context();
        let enc = self.eval.encoder();
        let slots = cmp::layout(ctx.params().n())?.encode_leads(values)?;
        let pt = enc.encode(&slots, level.min(ctx.params().max_level()))?;
        Ok(ctx.encrypt_sk(&self.key.sk, &pt)?)
    }

    /// The limbs of `values` (each `|v| < 2^32`; a negative value's limbs carry its sign,
    /// [`limbs::split_signed`], as residues mod `t`), encrypted per chunk (`[chunk][limb]`)
    /// at [`LIMB_LEVEL`]: the engine never needs more levels of a limb.
    pub fn encrypt_limbs(&self, values: &[i64], bits: u32) -> Result<Vec<Vec<Ciphertext<B>>>> {
        self.encrypt_limbs_at(values, bits, LIMB_LEVEL)
    }

    /// [`Client::encrypt_limbs`] at `level`.
    pub fn encrypt_limbs_at(
        &self,
        values: &[i64],
        bits: u32,
        level: usize,
    ) -> Result<Vec<Vec<Ciphertext<B>>>> {
        let n = limbs::VALUE_BITS.div_ceil(bits) as usize;
        let t = self.context().params().t() as i64;
        values
            .chunks(self.per_chunk())
            .map(|chunk| {
                let split: Vec<Vec<i64>> = chunk
                    .iter()
                    .map(|&v| limbs::split_signed(v, bits))
                    .collect();
                (0..n)
                    .map(|k| {
                        let limb: Vec<u64> =
                            split.iter().map(|l| l[k].rem_euclid(t) as u64).collect();
                        self.encrypt_slots(&limb, level)
                    })
                    .collect()
            })
            .collect()
    }

    /// Encrypts a table under this key (`progress` is called after each column).
    pub fn encrypt_table(
        &self,
        table: &PlainTable,
        mut progress: impl FnMut(usize),
    ) -> Result<EncTable<B>> {
        let rows = table.rows();
        if rows > self.key.max_rows {
            return Err(Error::Table(format!(
                "{rows} rows; this key was made for at most {} (pdq keygen --rows)",
                self.key.max_rows
            )));
        }
        let signed = table.types.iter().any(|t| t.signed);
        let bits = limbs::limb_bits(rows, self.context().params().t(), signed)?;
        let mut columns = Vec::new();
        for (i, ((name, values), &ty)) in table
            .columns
            .iter()
            .zip(&table.values)
            .zip(&table.types)
            .enumerate()
        {
            let words: Vec<u64> = values.iter().map(|&v| ty.word(v)).collect();
            columns.push(EncColumn {
                name: name.clone(),
                ty,
                words: cmp::encrypt_words(self.context(), &self.key.sk, &words)?,
                limbs: self.encrypt_limbs(values, bits)?,
            });
            progress(i + 1);
        }
        Ok(EncTable {
            name: table.name.clone(),
            key_id: self.key.id,
            rows,
            limb_bits: bits,
            columns,
        })
    }

    /// Encrypts the query constants, each replicated over the rows of a `rows`-row table.
    pub fn encrypt_constants(&self, constants: &[u64], rows: usize) -> Result<Vec<Words<B>>> {
        constants
            .iter()
            .map(|&c| cmp::encrypt_words(self.context(), &self.key.sk, &vec![c; rows]))
            .collect()
    }

    fn decrypt(&self, c: &Ciphertext<B>) -> Result<Vec<u64>> {
        Ok(Decryptor::new(self.context(), &self.key.sk).decrypt(c)?)
    }

    /// Per row, the integers whose limbs are `cts` with these ranges: per chunk,
    /// `⌈limbs/B⌉` ciphertexts, limb `k` in slot `k mod B` of the row's block of ciphertext
    /// `k / B` (as the engine packs them).
    fn decrypt_rows(
        &self,
        cts: &[Ciphertext<B>],
        ranges: &LimbRanges,
        rows: usize,
    ) -> Result<Vec<i128>> {
        let n = ranges.ranges.len();
        let per = n.div_ceil(self.stride);
        let chunks = rows.div_ceil(self.per_chunk());
        if cts.len() != per * chunks {
            return Err(Error::Protocol(format!(
                "{} limb ciphertexts received, {per} (packed {n} limbs) × {chunks} chunks \
                 expected",
                cts.len()
            )));
        }
        let t = self.context().params().t();
        let dec = Decryptor::new(self.context(), &self.key.sk);
        let slots = cts
            .iter()
            .map(|c| Ok(dec.decrypt(c)?))
            .collect::<Result<Vec<_>>>()?;
        Ok((0..rows)
            .map(|r| {
                let (c, lead) = self.slot_of(r);
                let res: Vec<u64> = (0..n)
                    .map(|k| slots[c * per + k / self.stride][lead + k % self.stride])
                    .collect();
                ranges.recombine(&res, t)
            })
            .collect())
    }

    /// Answers the division round trip: the reciprocals' limbs (one list per division) and
    /// what the client keeps to finish decoding.
    pub fn reciprocals(
        &self,
        plan: &Plan,
        denominators: &[Vec<Ciphertext<B>>],
    ) -> Result<(Vec<Vec<Ciphertext<B>>>, Reciprocals)> {
        let dens: Vec<(&LimbRanges, usize)> = plan
            .items
            .iter()
            .filter_map(|i| i.denominator.as_ref().map(|d| (d, i.reciprocal_level)))
            .collect();
        if dens.len() != denominators.len() {
            return Err(Error::Protocol(format!(
                "{} denominators received, the plan has {} divisions",
                denominators.len(),
                dens.len()
            )));
        }
        let mut out = Vec::new();
        let mut memory = Vec::new();
        for (cts, (ranges, level)) in denominators.iter().zip(dens) {
            let bits = ranges.bits;
            let ys = self.decrypt_rows(cts, ranges, plan.rows)?;
            let mut ms = Vec::with_capacity(ys.len());
            let mut keep = Vec::with_capacity(ys.len());
            for y in ys {
                if y == 0 {
                    ms.push(0);
                    keep.push(None);
                    continue;
                }
                let a = y.unsigned_abs();
                let e = 30 + (128 - a.leading_zeros());
                let m = ((1u128 << e) + a / 2) / a;
                ms.push(m as i64);
                keep.push(Some((e, y < 0)));
            }
            out.push(
                self.encrypt_limbs_at(&ms, bits, level)?
                    .into_iter()
                    .flatten()
                    .collect(),
            );
            memory.push(keep);
        }
        Ok((out, Reciprocals(memory)))
    }

    /// Decrypts and decodes the server's answer.
    pub fn decode(
        &self,
        plan: &Plan,
        response: &Response<B>,
        reciprocals: &Reciprocals,
    ) -> Result<QueryResult> {
        let t = self.context().params().t();
        let columns = plan.items.iter().map(|i| i.item.to_string()).collect();
        if response.items.len() != plan.items.len() {
            return Err(Error::Protocol(format!(
                "{} items answered, {} asked",
                response.items.len(),
                plan.items.len()
            )));
        }
        let aggregate = plan.items.iter().all(|i| i.item.is_aggregate());
        if aggregate {
            // Part k of the packed sums: slot k mod B of ciphertext k / B.
            let groups = response
                .sums
                .iter()
                .map(|c| self.decrypt(c))
                .collect::<Result<Vec<_>>>()?;
            let part = |k: usize| -> Result<u64> {
                groups
                    .get(k / self.stride)
                    .map(|g| g[k % self.stride])
                    .ok_or_else(|| Error::Protocol(format!("sum part {k} is missing")))
            };
            let mut k = 0;
            let count = if plan.count_needed {
                k = 1;
                part(0)? as i128
            } else {
                plan.rows as i128
            };
            let mut row = Vec::new();
            for ip in &plan.items {
                let mut sum = || -> Result<i128> {
                    let limbs = (k..k + ip.ranges.ranges.len())
                        .map(part)
                        .collect::<Result<Vec<_>>>()?;
                    k += limbs.len();
                    Ok(ip.ranges.recombine(&limbs, t))
                };
                row.push(match &ip.item {
                    Item::Count => Value::Int(count),
                    Item::Sum(_) | Item::Avg(_) => {
                        let s = sum()?;
                        match (&ip.item, count) {
                            (_, 0) => Value::Null,
                            (Item::Sum(_), _) => number(s, ip.scale),
                            _ => Value::Real(unscale(s, ip.scale as u32) / count as f64),
                        }
                    }
                    other => {
                        return Err(Error::Protocol(format!("{other} in an aggregate query")));
                    }
                });
            }
            return Ok(QueryResult {
                columns,
                rows: vec![row],
            });
        }
        let selected: Vec<usize> = if plan.query.filter.is_some() {
            let chunks = plan.rows.div_ceil(self.per_chunk());
            if response.mask.len() != chunks {
                return Err(Error::Protocol(format!(
                    "a mask of {} ciphertexts, {chunks} expected",
                    response.mask.len()
                )));
            }
            let bits = response
                .mask
                .iter()
                .map(|m| self.decrypt(m))
                .collect::<Result<Vec<_>>>()?;
            (0..plan.rows)
                .filter(|&r| {
                    let (c, slot) = self.slot_of(r);
                    bits[c][slot] == 1
                })
                .collect()
        } else {
            (0..plan.rows).collect()
        };
        let mut divs = reciprocals.0.iter();
        let mut per_item: Vec<Vec<Value>> = Vec::new();
        for (ip, cts) in plan.items.iter().zip(&response.items) {
            per_item.push(match &ip.item {
                Item::Index => selected.iter().map(|&r| Value::Int(r as i128)).collect(),
                Item::Row(_) => {
                    let v = self.decrypt_rows(cts, &ip.ranges, plan.rows)?;
                    selected.iter().map(|&r| number(v[r], ip.scale)).collect()
                }
                Item::Div(..) => {
                    let memory = divs
                        .next()
                        .ok_or_else(|| Error::Protocol("no reciprocal memory".into()))?;
                    let q = self.decrypt_rows(cts, &ip.ranges, plan.rows)?;
                    selected
                        .iter()
                        .map(|&r| match memory.get(r).copied().flatten() {
                            None => Value::Null,
                            Some((e, neg)) => {
                                let v = q[r] as f64 * (-(e as f64)).exp2() * 10f64.powi(-ip.scale);
                                Value::Real(if neg { -v } else { v })
                            }
                        })
                        .collect()
                }
                other => return Err(Error::Protocol(format!("{other} in a per-row query"))),
            });
        }
        let rows = (0..selected.len())
            .map(|i| per_item.iter().map(|col| col[i].clone()).collect())
            .collect();
        Ok(QueryResult { columns, rows })
    }
}
