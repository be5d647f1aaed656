//! The server's evaluation of a planned query on an encrypted table, generic over the backend.
//!
//! - mask: each comparison by the `compare` crate (0/1 per row), `AND` = `m1·m2`, `OR` =
//!   `m1 + m2 − m1·m2`, `NOT` = `1 − m`;
//! - expressions in limbs ([`crate::limbs`]): `+`/`−` limb by limb, `·` a convolution whose
//!   terms are summed as 3-component tensors and relinearized once per output limb;
//! - aggregates: the count (the mask itself) and every `SUM`/`AVG` limb times the mask are
//!   *parts*, packed `B` to a ciphertext (part `j` shifted into slot `j` of each row's block),
//!   then each packed ciphertext's rows summed by `⌈log2 rows⌉` rotations by multiples of `B`
//!   (Q2: 7 parts, 6 shifts + 10 rotations);
//! - column limbs are switched down to the level their products need before multiplying, so
//!   the products work on few primes (the comparison words stay at the top level: the
//!   circuit's noise needs fresh inputs);
//! - `x / y`: the denominator's limbs go to the client ([`Stage::NeedReciprocals`]), which
//!   answers with the limbs of `m = round(2^e/|y|)`; the result is the convolution `x·m`.
//!
//! A table of more rows than a ciphertext holds (`N/B` rows, in the comparison layout) is cut
//! into **chunks** of `N/B` rows: every per-row value is a list over chunks of limb lists
//! (`[chunk][limb]`, flattened chunk-major on the wire); the sums add the chunks first.
//!
//! Results leave at level 0 (smallest on the wire).

use crate::cmp::{self, Words};
use crate::encrypted::EncTable;
use crate::error::{Error, Result};
use crate::keys::{ServerKeys, sum_steps};
use crate::plan::Plan;
use crate::query::{Expr, Item, Operand, Predicate, Query};
use bgv::rotations::RowRotations;
use bgv::{Ciphertext, Evaluator};
use compare::EncryptedBits;
use fhe_math::backend::IntegerBackend;

/// The server's answer: everything the client decrypts.
pub struct Response<B: IntegerBackend> {
    /// The 0/1 mask of a per-row query with `WHERE`, one ciphertext per chunk (empty
    /// without `WHERE`).
    pub mask: Vec<Ciphertext<B>>,
    /// The sums of an aggregate query, packed: part `k` (the count of matching rows first
    /// when `WHERE` is present, then every `SUM`/`AVG` item's limbs in order) is in slot
    /// `k mod B` of ciphertext `⌊k / B⌋`.
    pub sums: Vec<Ciphertext<B>>,
    /// Per item of a per-row query, its limbs, chunk-major (`Index()`: none).
    pub items: Vec<Vec<Ciphertext<B>>>,
}

/// A limb-list operation (`+`, `−`, a convolution).
type LimbOp<'a, B> = dyn Fn(&[Ciphertext<B>], &[Ciphertext<B>]) -> Result<Vec<Ciphertext<B>>> + 'a;

/// Per chunk, a value's limbs.
pub type Chunks<B> = Vec<Vec<Ciphertext<B>>>;

/// `[chunk][limb]` flattened chunk-major.
pub fn flatten<B: IntegerBackend>(c: Chunks<B>) -> Vec<Ciphertext<B>> {
    c.into_iter().flatten().collect()
}

/// A chunk-major list cut into `chunks` limb lists (an error when it does not divide).
pub fn unflatten<B: IntegerBackend>(v: Vec<Ciphertext<B>>, chunks: usize) -> Result<Chunks<B>> {
    if chunks == 0 || !v.len().is_multiple_of(chunks) {
        return Err(Error::Protocol(format!(
            "{} ciphertexts do not split into {chunks} chunks",
            v.len()
        )));
    }
    let per = v.len() / chunks;
    let mut it = v.into_iter();
    Ok((0..chunks)
        .map(|_| it.by_ref().take(per).collect())
        .collect())
}

/// The evaluation state kept across the division round trip.
pub struct Pending<B: IntegerBackend> {
    mask: Vec<Ciphertext<B>>,
    /// Per item: its finished limbs, or a division's numerator limbs.
    items: Vec<PendingItem<B>>,
}

enum PendingItem<B: IntegerBackend> {
    Ready(Chunks<B>),
    Numerator(Chunks<B>),
}

/// Where a query stands after [`Engine::start`].
pub enum Stage<B: IntegerBackend> {
    /// Finished.
    Done(Response<B>),
    /// The client must answer with reciprocals of these denominators (one limb list per
    /// division item, in item order).
    NeedReciprocals {
        /// What the server keeps meanwhile.
        pending: Pending<B>,
        /// The denominators' limbs (per division, chunk-major).
        denominators: Vec<Vec<Ciphertext<B>>>,
    },
}

/// The level the slot sums run at (two primes of headroom for the noise of many rows).
pub const SUM_LEVEL: usize = 1;

/// Products nested in an expression (its multiplicative depth).
fn mul_depth(e: &Expr) -> usize {
    match e {
        Expr::Column(_) => 0,
        Expr::Add(a, b) | Expr::Sub(a, b) => mul_depth(a).max(mul_depth(b)),
        Expr::Mul(a, b) => 1 + mul_depth(a).max(mul_depth(b)),
    }
}

/// Evaluates queries on one table.
pub struct Engine<'a, B: IntegerBackend> {
    eval: &'a Evaluator<B>,
    keys: &'a ServerKeys<B>,
    table: &'a EncTable<B>,
}

impl<'a, B: IntegerBackend> Engine<'a, B> {
    /// An engine for `table`; the keys must be the table's.
    pub fn new(
        eval: &'a Evaluator<B>,
        keys: &'a ServerKeys<B>,
        table: &'a EncTable<B>,
    ) -> Result<Self> {
        if keys.id != table.key_id {
            return Err(Error::KeyMismatch(format!(
                "table `{}` belongs to key {}, the evaluation keys are key {}",
                table.name, table.key_id, keys.id
            )));
        }
        if table.rows > keys.max_rows {
            return Err(Error::Table(format!(
                "table `{}` has {} rows; the evaluation keys sum at most {}",
                table.name, table.rows, keys.max_rows
            )));
        }
        Ok(Engine { eval, keys, table })
    }

    /// Plans `query` on this table.
    pub fn plan(&self, query: &Query) -> Result<Plan> {
        if query.table != self.table.name {
            return Err(Error::UnknownTable(query.table.clone()));
        }
        Plan::new(
            query,
            &self.table.shape(
                self.eval.context(),
                cmp::depth(&self.keys.cmp),
                cmp::cost(&self.keys.cmp),
            ),
        )
    }

    /// Evaluates up to the division round trip (or to the end).
    pub fn start(&self, query: &Query, constants: &[Words<B>]) -> Result<Stage<B>> {
        let plan = self.plan(query)?;
        if constants.len() != query.constants {
            return Err(Error::Protocol(format!(
                "the query uses {} constants, {} were sent",
                query.constants,
                constants.len()
            )));
        }
        let mask = match &query.filter {
            Some(p) => self.predicate(p, constants)?.into_ciphertexts(),
            None => Vec::new(),
        };
        if query.items.iter().all(Item::is_aggregate) {
            // Per chunk the parts, then the chunks added part by part.
            let chunks = self.table.chunks();
            let mut per_chunk: Chunks<B> = (0..chunks).map(|_| Vec::new()).collect();
            if plan.count_needed {
                for (parts, m) in per_chunk.iter_mut().zip(&mask) {
                    parts.push(m.duplicate(self.eval.context().backend())?);
                }
            }
            for item in &query.items {
                if let Item::Sum(e) | Item::Avg(e) = item {
                    let limbs = self.expr(e, mul_depth(e) + 2)?;
                    for (c, (parts, ls)) in per_chunk.iter_mut().zip(limbs).enumerate() {
                        match mask.get(c) {
                            Some(m) => {
                                for l in &ls {
                                    parts.push(self.eval.mul_relin(l, m, self.keys.rlk())?);
                                }
                            }
                            None => parts.extend(ls),
                        }
                    }
                }
            }
            let mut chunks_it = per_chunk.into_iter();
            let mut parts: Vec<Ciphertext<B>> = chunks_it
                .next()
                .expect("a table has a chunk")
                .iter()
                .map(|p| self.to_sum_level(p))
                .collect::<Result<_>>()?;
            for more in chunks_it {
                for (acc, p) in parts.iter_mut().zip(&more) {
                    *acc = self.eval.add(acc, &self.to_sum_level(p)?)?;
                }
            }
            return Ok(Stage::Done(Response {
                mask: Vec::new(),
                sums: self.packed_sums(parts)?,
                items: query.items.iter().map(|_| Vec::new()).collect(),
            }));
        }
        let mut items = Vec::new();
        let mut denominators = Vec::new();
        for item in &query.items {
            items.push(match item {
                Item::Row(e) => PendingItem::Ready(self.expr(e, mul_depth(e) + 1)?),
                Item::Div(n, d) => {
                    let den = self.expr(d, mul_depth(d) + 1)?;
                    denominators.push(flatten(self.finish_limbs(den)?));
                    PendingItem::Numerator(self.expr(n, mul_depth(n) + 2)?)
                }
                _ => PendingItem::Ready(Vec::new()),
            });
        }
        let pending = Pending { mask, items };
        if denominators.is_empty() {
            Ok(Stage::Done(self.finish(pending, Vec::new())?))
        } else {
            Ok(Stage::NeedReciprocals {
                pending,
                denominators,
            })
        }
    }

    /// Finishes a query with the client's reciprocal limbs (one list per division item).
    pub fn finish(
        &self,
        pending: Pending<B>,
        reciprocals: Vec<Vec<Ciphertext<B>>>,
    ) -> Result<Response<B>> {
        let divisions = pending
            .items
            .iter()
            .filter(|i| matches!(i, PendingItem::Numerator(_)))
            .count();
        if reciprocals.len() != divisions {
            return Err(Error::Protocol(format!(
                "{divisions} divisions pending, {} reciprocals sent",
                reciprocals.len()
            )));
        }
        let limbs = crate::limbs::VALUE_BITS.div_ceil(self.table.limb_bits) as usize;
        let chunks = self.table.chunks();
        let mut recips = reciprocals.into_iter();
        let mut items = Vec::new();
        for item in pending.items {
            items.push(flatten(match item {
                PendingItem::Ready(limbs) => self.finish_limbs(limbs)?,
                PendingItem::Numerator(num) => {
                    let m = recips.next().expect("counted above");
                    if m.len() != limbs * chunks {
                        return Err(Error::Protocol(format!(
                            "a reciprocal has {} ciphertexts, expected {} limbs × {chunks} \
                             chunks",
                            m.len(),
                            limbs
                        )));
                    }
                    let m = unflatten(m, chunks)?;
                    let q = num
                        .iter()
                        .zip(&m)
                        .map(|(n, m)| self.convolve(n, m))
                        .collect::<Result<Vec<_>>>()?;
                    self.finish_limbs(q)?
                }
            }));
        }
        let mask = pending
            .mask
            .iter()
            .map(|c| Ok(self.eval.mod_switch_to(c, 0)?))
            .collect::<Result<_>>()?;
        Ok(Response {
            mask,
            sums: Vec::new(),
            items,
        })
    }

    /// Per chunk, the limbs packed `B` to a ciphertext (limb `k` in slot `k mod B` of its
    /// row's block, ciphertext `k / B`: [`Engine::pack`]) at level 0: the client decrypts
    /// `⌈limbs/B⌉` ciphertexts per chunk instead of one per limb.
    fn finish_limbs(&self, chunks: Chunks<B>) -> Result<Chunks<B>> {
        chunks
            .iter()
            .map(|limbs| {
                limbs
                    .chunks(self.keys.stride())
                    .map(|group| Ok(self.eval.mod_switch_to(&self.pack(group)?, 0)?))
                    .collect()
            })
            .collect()
    }

    fn words<'c>(&'c self, o: &Operand, constants: &'c [Words<B>]) -> Result<&'c Words<B>> {
        match o {
            Operand::Column(c) => Ok(&self.table.column(c)?.words),
            Operand::Const(i) => constants
                .get(*i)
                .ok_or_else(|| Error::Protocol(format!("constant ${i} missing"))),
        }
    }

    /// The 0/1 mask of a predicate (lead slots; `AND`, `OR`, `NOT` by the comparator, which
    /// keeps every other slot 0). The words stay at the top level: the comparison circuit's
    /// noise needs the headroom of fresh inputs (a switched-down input fails the noise bound
    /// at `N = 2^15`).
    fn predicate(&self, p: &Predicate, constants: &[Words<B>]) -> Result<EncryptedBits<B>> {
        let c = &self.keys.cmp;
        Ok(match p {
            Predicate::Cmp { op, left, right } => cmp::compare(
                c,
                *op,
                self.words(left, constants)?,
                self.words(right, constants)?,
            )?,
            Predicate::And(a, b) => c.and(
                &self.predicate(a, constants)?,
                &self.predicate(b, constants)?,
            )?,
            Predicate::Or(a, b) => c.or(
                &self.predicate(a, constants)?,
                &self.predicate(b, constants)?,
            )?,
            Predicate::Not(a) => c.not(&self.predicate(a, constants)?)?,
        })
    }

    /// An expression's limbs per chunk, the columns' limbs first switched down to `level`
    /// (the products below and after the expression, plus a margin).
    fn expr(&self, e: &Expr, level: usize) -> Result<Chunks<B>> {
        let ev = self.eval;
        let be = ev.context().backend();
        let pairwise = |a: &Expr, b: &Expr, f: &LimbOp<'_, B>| -> Result<Chunks<B>> {
            let (mut x, mut y) = (self.expr(a, level)?, self.expr(b, level)?);
            if !matches!(e, Expr::Mul(..)) {
                // `+`/`−` of different decimal scales: the finer side's unit, so the coarser
                // side's limbs times 10^d (the planner bounded the ranges).
                let (sa, sb) = (self.scale(a), self.scale(b));
                let d = sa.abs_diff(sb);
                if d > 0 {
                    let coarse = if sa < sb { &mut x } else { &mut y };
                    for l in coarse.iter_mut().flatten() {
                        *l = ev.mul_scalar(l, 10i64.pow(d))?;
                    }
                }
            }
            x.iter().zip(&y).map(|(x, y)| f(x, y)).collect()
        };
        match e {
            Expr::Column(c) => self
                .table
                .column(c)?
                .limbs
                .iter()
                .map(|chunk| {
                    chunk
                        .iter()
                        .map(|l| Ok(ev.mod_switch_to(l, level.min(l.level()))?))
                        .collect()
                })
                .collect(),
            Expr::Add(a, b) | Expr::Sub(a, b) => {
                let add = matches!(e, Expr::Add(..));
                pairwise(a, b, &|a, b| {
                    let n = a.len().max(b.len());
                    (0..n)
                        .map(|k| {
                            Ok(match (a.get(k), b.get(k)) {
                                (Some(x), Some(y)) if add => ev.add(x, y)?,
                                (Some(x), Some(y)) => ev.sub(x, y)?,
                                (Some(x), None) => x.duplicate(be)?,
                                (None, Some(y)) if add => y.duplicate(be)?,
                                (None, Some(y)) => ev.negate(y)?,
                                (None, None) => unreachable!("k < max length"),
                            })
                        })
                        .collect()
                })
            }
            Expr::Mul(a, b) if a == b => self
                .expr(a, level)?
                .iter()
                .map(|x| self.square(x))
                .collect(),
            Expr::Mul(a, b) => pairwise(a, b, &|x, y| self.convolve(x, y)),
        }
    }

    /// The decimal scale of an expression on this table's column types.
    fn scale(&self, e: &Expr) -> u32 {
        e.scale(&|c: &str| self.table.column(c).map_or(0, |c| c.ty.scale))
    }

    /// `(a·b)_k = Σ_{i+j=k} a_i·b_j`: tensors summed, one relinearization per output limb.
    fn convolve(&self, a: &[Ciphertext<B>], b: &[Ciphertext<B>]) -> Result<Vec<Ciphertext<B>>> {
        let ev = self.eval;
        let mut out = Vec::with_capacity(a.len() + b.len() - 1);
        for k in 0..a.len() + b.len() - 1 {
            let mut acc: Option<Ciphertext<B>> = None;
            for i in k.saturating_sub(b.len() - 1)..=k.min(a.len() - 1) {
                let p = ev.mul(&a[i], &b[k - i])?;
                acc = Some(match acc {
                    None => p,
                    Some(s) => ev.add(&s, &p)?,
                });
            }
            let t = acc.expect("every output limb has a term");
            let r = ev.relinearize(t, self.keys.rlk())?;
            out.push(if r.level() > 0 { ev.mod_switch(&r)? } else { r });
        }
        Ok(out)
    }

    /// The parts (values in the lead slots) packed `B` to a ciphertext, part `j` of a group
    /// rotated right by `j` slots (into its block's slot `j`), then summed over the rows: one
    /// slot sum per `B` parts.
    fn packed_sums(&self, parts: Vec<Ciphertext<B>>) -> Result<Vec<Ciphertext<B>>> {
        parts
            .chunks(self.keys.stride())
            .map(|group| self.sum_rows(&self.pack(group)?))
            .collect()
    }

    /// Up to `B` ciphertexts with values in the lead slots only, packed into one: ciphertext
    /// `j` rotated right by `j` slots (into slot `j` of each block), all added, at
    /// [`SUM_LEVEL`] or below.
    fn pack(&self, group: &[Ciphertext<B>]) -> Result<Ciphertext<B>> {
        let ev = self.eval;
        let mut acc = self.to_sum_level(&group[0])?;
        for (j, p) in group.iter().enumerate().skip(1) {
            let p = self.to_sum_level(p)?;
            let r = ev.rotate_rows(&p, -(j as i64), self.keys.galois())?;
            acc = ev.add(&acc, &r)?;
        }
        Ok(acc)
    }

    /// `(a²)_k = a_{k/2}² + 2·Σ_{i<j, i+j=k} a_i·a_j`: `n(n+1)/2` tensors instead of `n²`.
    fn square(&self, a: &[Ciphertext<B>]) -> Result<Vec<Ciphertext<B>>> {
        let ev = self.eval;
        let n = a.len();
        let mut out = Vec::with_capacity(2 * n - 1);
        for k in 0..2 * n - 1 {
            let mut cross: Option<Ciphertext<B>> = None;
            for i in k.saturating_sub(n - 1)..=k / 2 {
                let j = k - i;
                if i == j {
                    continue;
                }
                let p = ev.mul(&a[i], &a[j])?;
                cross = Some(match cross {
                    None => p,
                    Some(s) => ev.add(&s, &p)?,
                });
            }
            let mut acc = cross.map(|c| ev.add(&c, &c)).transpose()?;
            if k % 2 == 0 {
                let d = ev.mul(&a[k / 2], &a[k / 2])?;
                acc = Some(match acc {
                    None => d,
                    Some(s) => ev.add(&s, &d)?,
                });
            }
            let t = acc.expect("every output limb has a term");
            let r = ev.relinearize(t, self.keys.rlk())?;
            out.push(if r.level() > 0 { ev.mod_switch(&r)? } else { r });
        }
        Ok(out)
    }

    /// Slot 0 ← the sum of all lead slots in use: `⌈log2 p⌉` rotations by multiples of `B`
    /// for the `p` blocks of a matrix row in use, and the column swap when a table's chunk
    /// reaches the second row of the slot matrix (every other slot is zero).
    fn sum_rows(&self, c: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        let ev = self.eval;
        let b = self.keys.stride();
        let row_blocks = ev.encoder().slot_count() / 2 / b;
        let used = self.table.rows.min(2 * row_blocks);
        let mut acc = self.to_sum_level(c)?;
        for step in sum_steps(used.min(row_blocks), b) {
            let r = ev.rotate_rows(&acc, step, self.keys.galois())?;
            acc = ev.add(&acc, &r)?;
        }
        if used > row_blocks {
            let r = ev.rotate_columns(&acc, self.keys.galois())?;
            acc = ev.add(&acc, &r)?;
        }
        Ok(ev.mod_switch_to(&acc, 0)?)
    }

    /// `c` switched down to [`SUM_LEVEL`] (when above it): the sums' additions and rotations
    /// run on two primes, whose headroom the sum of many rows' noise needs (at level 0 a
    /// 8,192-row sum at `N = 2^15` exceeds the noise bound).
    fn to_sum_level(&self, c: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        Ok(self.eval.mod_switch_to(c, SUM_LEVEL.min(c.level()))?)
    }
}
