//! The plan of a query on a table: every column checked, the limb ranges of every output (so
//! no limb can wrap mod `t`), the multiplicative depth against the parameters, and the counts
//! `--explain` prints (comparisons, ciphertext products, rotations, client round trips).

use crate::error::{Error, Result};
use crate::limbs::LimbRanges;
use crate::numeric::{ColumnType, Literal};
use crate::query::{Expr, Item, Operand, Predicate, Query};
use std::fmt;

/// What the planner needs to know about a table and its parameters (all public to the server).
#[derive(Debug, Clone)]
pub struct TableShape {
    /// Column names.
    pub columns: Vec<String>,
    /// Column types (public, like the names).
    pub types: Vec<ColumnType>,
    /// Number of rows.
    pub rows: usize,
    /// Limb width `w`.
    pub limb_bits: u32,
    /// Plaintext modulus.
    pub t: u64,
    /// Levels of the parameter set (modulus switches available).
    pub levels: usize,
    /// Levels one comparison consumes.
    pub compare_depth: usize,
    /// `(products, rotations)` of one comparison per ciphertext (the costliest operator).
    pub compare_cost: (usize, usize),
    /// Slots per row (the comparison block `B`; sums are packed `B` to a ciphertext).
    pub block: usize,
    /// Slots of a ciphertext (`N`).
    pub slots: usize,
}

/// How one `SELECT` item is computed and decoded.
#[derive(Debug, Clone)]
pub struct ItemPlan {
    /// The item.
    pub item: Item,
    /// The limb ranges of the value returned (empty for `Index()` and `COUNT`).
    pub ranges: LimbRanges,
    /// Levels consumed.
    pub depth: usize,
    /// Ciphertext products.
    pub products: usize,
    /// Limbs returned per chunk (a per-row item's limbs travel packed `B` to a ciphertext).
    pub outputs: usize,
    /// A division's denominator limb ranges (the client decodes them in the round trip).
    pub denominator: Option<LimbRanges>,
    /// The level of a division's numerator limbs, at which the client encrypts the
    /// reciprocal limbs (the product runs there anyway: a higher one would only be switched
    /// down); 0 for other items.
    pub reciprocal_level: usize,
    /// Decimal scale of the value (`10^-scale` per unit; a division: the numerator's scale
    /// minus the denominator's).
    pub scale: i32,
}

/// A checked query plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The query.
    pub query: Query,
    /// Per item.
    pub items: Vec<ItemPlan>,
    /// The count's limb ranges (one limb of `w` = 64 bits: the count is below `t`).
    pub count: LimbRanges,
    /// Comparisons evaluated.
    pub comparisons: usize,
    /// Levels of the mask (0 without `WHERE`).
    pub mask_depth: usize,
    /// Products of the mask (`AND`, `OR`).
    pub mask_products: usize,
    /// Levels the whole query needs.
    pub depth: usize,
    /// Row rotations (slot sums).
    pub rotations: usize,
    /// Client round trips during evaluation (one per division).
    pub round_trips: usize,
    /// Levels of the parameter set.
    pub levels: usize,
    /// Rows of the table.
    pub rows: usize,
    /// Whether the server returns the encrypted count of matching rows.
    pub count_needed: bool,
    /// `(products, rotations)` of one comparison per chunk, at most.
    pub compare_cost: (usize, usize),
    /// Ciphertexts per column (chunks of `N/B` rows); products are per chunk.
    pub chunks: usize,
    /// Per constant, the column it is compared with and that column's type.
    pub constant_types: Vec<(String, ColumnType)>,
}

impl TableShape {
    fn column(&self, name: &str) -> Result<ColumnType> {
        match self.columns.iter().position(|c| c == name) {
            Some(i) => Ok(self.types.get(i).copied().unwrap_or_default()),
            None => Err(Error::UnknownColumn {
                name: name.to_string(),
                known: self.columns.join(", "),
            }),
        }
    }

    /// Rotations of one slot sum: `⌈log2 p⌉` for the `p` blocks in use of a matrix row, and
    /// the column swap when both matrix rows are in use.
    pub fn sum_rotations(&self) -> usize {
        let row_blocks = (self.slots / 2 / self.block.max(1)).max(1);
        let used = self.rows.min(row_blocks);
        used.next_power_of_two().trailing_zeros() as usize + usize::from(self.rows > row_blocks)
    }
}

/// The limb ranges, depth, product count and decimal scale of an expression.
fn expr_plan(shape: &TableShape, e: &Expr) -> Result<(LimbRanges, usize, usize, u32)> {
    Ok(match e {
        Expr::Column(c) => {
            let ty = shape.column(c)?;
            (
                LimbRanges::typed_column(shape.limb_bits, ty.signed),
                0,
                0,
                ty.scale,
            )
        }
        Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) => {
            let (mut ra, da, pa, sa) = expr_plan(shape, a)?;
            let (mut rb, db, pb, sb) = expr_plan(shape, b)?;
            let scale = if matches!(e, Expr::Mul(..)) {
                sa + sb
            } else {
                // The coarser side is brought to the finer scale: its limbs times 10^d.
                let d = sa.abs_diff(sb);
                if d > 0 {
                    let coarse = if sa < sb { &mut ra } else { &mut rb };
                    *coarse = coarse.times(10i128.pow(d));
                    coarse.check(
                        shape.t,
                        &format!("({}) * 10^{d}", if sa < sb { a } else { b }),
                    )?;
                }
                sa.max(sb)
            };
            let (r, d, p) = match e {
                Expr::Add(..) => (ra.add(&rb), da.max(db), 0),
                Expr::Sub(..) => (ra.sub(&rb), da.max(db), 0),
                Expr::Mul(x, y) if x == y => {
                    let n = ra.ranges.len();
                    (ra.mul(&rb), da + 1, n * (n + 1) / 2)
                }
                _ => (
                    ra.mul(&rb),
                    da.max(db) + 1,
                    ra.ranges.len() * rb.ranges.len(),
                ),
            };
            r.check(shape.t, e)?;
            (r, d, pa + pb + p, scale)
        }
    })
}

/// `(depth, products)` of a predicate's mask; records each constant's column and type.
fn predicate_plan(
    shape: &TableShape,
    p: &Predicate,
    consts: &mut [Option<(String, ColumnType)>],
) -> Result<(usize, usize)> {
    Ok(match p {
        Predicate::Cmp { left, right, .. } => {
            let n = consts.len();
            match (left, right) {
                (Operand::Column(a), Operand::Column(b)) => {
                    let (ta, tb) = (shape.column(a)?, shape.column(b)?);
                    if ta != tb {
                        return Err(Error::Unsupported(format!(
                            "`{p}`: comparing columns of different types (`{a}`: {ta}; \
                             `{b}`: {tb})"
                        )));
                    }
                }
                (Operand::Column(c), Operand::Const(i))
                | (Operand::Const(i), Operand::Column(c)) => {
                    let ty = shape.column(c)?;
                    let slot = consts.get_mut(*i).ok_or_else(|| {
                        Error::Protocol(format!("constant ${i} referenced, {n} sent"))
                    })?;
                    *slot = Some((c.clone(), ty));
                }
                (Operand::Const(_), Operand::Const(_)) => {
                    return Err(Error::Unsupported(format!(
                        "comparison of two constants `{p}`"
                    )));
                }
            }
            (shape.compare_depth, 0)
        }
        Predicate::And(a, b) | Predicate::Or(a, b) => {
            let (da, pa) = predicate_plan(shape, a, consts)?;
            let (db, pb) = predicate_plan(shape, b, consts)?;
            (da.max(db) + 1, pa + pb + 1)
        }
        Predicate::Not(a) => predicate_plan(shape, a, consts)?,
    })
}

impl Plan {
    /// Checks `query` against the table and plans it.
    pub fn new(query: &Query, shape: &TableShape) -> Result<Plan> {
        if query.items.is_empty() {
            return Err(Error::Unsupported("an empty SELECT list".into()));
        }
        let aggregates = query.items.iter().filter(|i| i.is_aggregate()).count();
        if aggregates != 0 && aggregates != query.items.len() {
            return Err(Error::Unsupported(
                "aggregates mixed with per-row values (that needs GROUP BY)".into(),
            ));
        }
        let mut consts = vec![None; query.constants];
        let (mask_depth, mask_products, comparisons) = match &query.filter {
            Some(p) => {
                let (d, n) = predicate_plan(shape, p, &mut consts)?;
                (d, n, p.comparisons())
            }
            None => (0, 0, 0),
        };
        let constant_types = consts
            .into_iter()
            .enumerate()
            .map(|(i, c)| c.ok_or_else(|| Error::Protocol(format!("constant ${i} is unused"))))
            .collect::<Result<Vec<_>>>()?;
        let masked = query.filter.is_some();
        let count = LimbRanges {
            bits: 64,
            ranges: vec![(0, shape.rows as i128)],
        };
        count.check(shape.t, &"COUNT(*)")?;
        let mut items = Vec::new();
        let mut rotations = 0;
        let mut sum_parts = 0;
        let mut round_trips = 0;
        for item in &query.items {
            let plan = match item {
                Item::Index => ItemPlan {
                    item: item.clone(),
                    ranges: LimbRanges {
                        bits: shape.limb_bits,
                        ranges: Vec::new(),
                    },
                    depth: mask_depth,
                    products: 0,
                    outputs: 0,
                    denominator: None,
                    reciprocal_level: 0,
                    scale: 0,
                },
                Item::Row(e) => {
                    let (r, d, p, k) = expr_plan(shape, e)?;
                    ItemPlan {
                        item: item.clone(),
                        outputs: r.ranges.len(),
                        ranges: r,
                        depth: d,
                        products: p,
                        denominator: None,
                        reciprocal_level: 0,
                        scale: k as i32,
                    }
                }
                Item::Div(n, dn) => {
                    let (rn, d_n, p_n, k_n) = expr_plan(shape, n)?;
                    let (rd, d_d, p_d, k_d) = expr_plan(shape, dn)?;
                    rd.check(shape.t, dn)?;
                    let recip = LimbRanges::column(shape.limb_bits);
                    let q = rn.mul(&recip);
                    q.check(shape.t, &format!("({n}) * 2^e / ({dn})"))?;
                    round_trips += 1;
                    ItemPlan {
                        item: item.clone(),
                        outputs: q.ranges.len(),
                        ranges: q,
                        depth: d_n.max(d_d) + 1,
                        products: p_n + p_d + rn.ranges.len() * recip.ranges.len(),
                        denominator: Some(rd),
                        // The numerator's limbs start at min(d_n + 2, LIMB_LEVEL) (the
                        // engine's switch) and lose one level per product level.
                        reciprocal_level: (d_n + 2)
                            .min(crate::client::LIMB_LEVEL)
                            .saturating_sub(d_n),
                        scale: k_n as i32 - k_d as i32,
                    }
                }
                Item::Sum(e) | Item::Avg(e) => {
                    let (r, d, p, k) = expr_plan(shape, e)?;
                    let (r, d, p) = if masked {
                        (r.masked(), d.max(mask_depth) + 1, p + r.ranges.len())
                    } else {
                        (r, d, p)
                    };
                    let s = r.summed(shape.rows);
                    s.check(shape.t, &format!("SUM({e}) over {} rows", shape.rows))?;
                    let outputs = s.ranges.len();
                    sum_parts += outputs;
                    ItemPlan {
                        item: item.clone(),
                        ranges: s,
                        depth: d,
                        products: p,
                        outputs,
                        denominator: None,
                        reciprocal_level: 0,
                        scale: k as i32,
                    }
                }
                Item::Count => ItemPlan {
                    item: item.clone(),
                    ranges: count.clone(),
                    depth: mask_depth,
                    products: 0,
                    outputs: 0,
                    denominator: None,
                    reciprocal_level: 0,
                    scale: 0,
                },
            };
            items.push(plan);
        }
        // An aggregate query with a WHERE returns the matching rows' count once (COUNT, AVG's
        // divisor, and SQL's NULL for a SUM over no rows).
        let count_needed = masked && aggregates > 0;
        sum_parts += usize::from(count_needed);
        if sum_parts > 0 {
            // Shifts into the block, then one slot sum per block of parts.
            let groups = sum_parts.div_ceil(shape.block.max(1));
            rotations += sum_parts - groups + groups * shape.sum_rotations();
        }
        let depth = items
            .iter()
            .map(|i| i.depth)
            .chain([mask_depth])
            .max()
            .unwrap_or(0);
        if depth > shape.levels {
            return Err(Error::Depth {
                needed: depth,
                available: shape.levels,
            });
        }
        Ok(Plan {
            query: query.clone(),
            items,
            count,
            comparisons,
            mask_depth,
            mask_products,
            depth,
            rotations,
            round_trips,
            levels: shape.levels,
            rows: shape.rows,
            count_needed,
            compare_cost: shape.compare_cost,
            chunks: shape
                .rows
                .div_ceil((shape.slots / shape.block.max(1)).max(1)),
            constant_types,
        })
    }

    /// The constants as stored integers of the columns they are compared with (scaled to
    /// the column's decimal places; refused when they do not fit it exactly).
    pub fn constant_values(&self, constants: &[Literal]) -> Result<Vec<i64>> {
        if constants.len() != self.constant_types.len() {
            return Err(Error::Protocol(format!(
                "{} constants for a query of {}",
                constants.len(),
                self.constant_types.len()
            )));
        }
        constants
            .iter()
            .zip(&self.constant_types)
            .map(|(l, (c, ty))| ty.scaled(l, c))
            .collect()
    }

    /// The constants as comparison words ([`ColumnType::word`] of
    /// [`Plan::constant_values`]), what the client encrypts.
    pub fn constant_words(&self, constants: &[Literal]) -> Result<Vec<u64>> {
        Ok(self
            .constant_values(constants)?
            .into_iter()
            .zip(&self.constant_types)
            .map(|(v, (_, ty))| ty.word(v))
            .collect())
    }

    /// Ciphertext products of the whole query, over all chunks (comparisons excluded).
    pub fn products(&self) -> usize {
        (self.mask_products + self.items.iter().map(|i| i.products).sum::<usize>()) * self.chunks
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "query (as the server sees it): {}", self.query)?;
        writeln!(
            f,
            "rows: {} ({} ciphertexts per column); levels needed: {} of {}",
            self.rows, self.chunks, self.depth, self.levels
        )?;
        match &self.query.filter {
            Some(p) => writeln!(
                f,
                "mask: {p}: {} comparisons (encrypted constants: {}; each at most {} products \
                 and {} rotations per ciphertext), {} more products, depth {}",
                self.comparisons,
                self.query.constants,
                self.compare_cost.0,
                self.compare_cost.1,
                self.mask_products,
                self.mask_depth
            )?,
            None => writeln!(f, "mask: none (every row)")?,
        }
        for i in &self.items {
            let how = match &i.item {
                Item::Index => "the mask, decrypted by the client".to_string(),
                Item::Row(_) => format!("{} limbs per row", i.ranges.ranges.len()),
                Item::Div(..) => format!(
                    "numerator and denominator in limbs; 1 client round trip (reciprocal); \
                     {} limbs per row",
                    i.ranges.ranges.len()
                ),
                Item::Sum(_) | Item::Avg(_) => format!(
                    "{} limbs (masked when filtered), packed into blocks and summed over the \
                     rows by rotations{}",
                    i.ranges.ranges.len(),
                    if matches!(i.item, Item::Avg(_)) {
                        "; the client divides by COUNT"
                    } else {
                        ""
                    }
                ),
                Item::Count if self.count_needed => "the mask summed by rotations".to_string(),
                Item::Count => "the row count (public)".to_string(),
            };
            writeln!(
                f,
                "  {}: {how}; {} products per chunk, depth {}",
                i.item, i.products, i.depth
            )?;
        }
        write!(
            f,
            "total: {} comparisons, {} products, {} rotations, {} client round trips",
            self.comparisons,
            self.products(),
            self.rotations,
            self.round_trips
        )
    }
}
