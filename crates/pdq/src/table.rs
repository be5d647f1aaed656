//! Plaintext tables: the client's data before encryption (from CSV or the embedded demo
//! table), and the plaintext evaluation of a query that the demo and the tests check against.

use crate::error::{Error, Result};
use crate::numeric::{self, ColumnType, Literal};
use crate::query::{Item, Query};

/// Most columns a table may have.
pub const MAX_COLUMNS: usize = 64;

/// A table of typed columns ([`ColumnType`]), column-major, values as stored integers
/// (`x·10^k` for a decimal column of scale `k`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainTable {
    /// Table name.
    pub name: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Column types.
    pub types: Vec<ColumnType>,
    /// `values[c][r]`: column `c`, row `r` (the stored integer).
    pub values: Vec<Vec<i64>>,
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !s.as_bytes()[0].is_ascii_digit()
}

impl PlainTable {
    /// A table of unsigned 32-bit integer columns; checks names, shapes and values.
    pub fn new(name: &str, columns: Vec<String>, values: Vec<Vec<u64>>) -> Result<Self> {
        let types = vec![ColumnType::UNSIGNED; columns.len()];
        let values = values
            .into_iter()
            .map(|c| {
                c.into_iter()
                    .map(|v| i64::try_from(v).unwrap_or(i64::MAX))
                    .collect()
            })
            .collect();
        Self::typed(name, columns, types, values)
    }

    /// A table of typed columns (stored integers); checks names, shapes and every value
    /// against its column's range.
    pub fn typed(
        name: &str,
        columns: Vec<String>,
        types: Vec<ColumnType>,
        values: Vec<Vec<i64>>,
    ) -> Result<Self> {
        if !valid_name(name) {
            return Err(Error::Table(format!(
                "table name `{name}`: letters, digits and `_`, not starting with a digit"
            )));
        }
        if columns.is_empty() || columns.len() > MAX_COLUMNS {
            return Err(Error::Table(format!(
                "{} columns (1..={MAX_COLUMNS} allowed)",
                columns.len()
            )));
        }
        if columns.len() != values.len() || columns.len() != types.len() {
            return Err(Error::Table(
                "column names, types and columns differ in number".into(),
            ));
        }
        if let Some(t) = types.iter().find(|t| t.scale > numeric::MAX_SCALE) {
            return Err(Error::Table(format!(
                "{} decimal places (at most {})",
                t.scale,
                numeric::MAX_SCALE
            )));
        }
        for (i, c) in columns.iter().enumerate() {
            if !valid_name(c) {
                return Err(Error::Table(format!(
                    "column name `{c}`: letters, digits and `_`, not starting with a digit"
                )));
            }
            if columns[..i].contains(c) {
                return Err(Error::Table(format!("column `{c}` appears twice")));
            }
        }
        let rows = values[0].len();
        if rows == 0 || values.iter().any(|v| v.len() != rows) {
            return Err(Error::Table(
                "columns must have the same, non-zero length".into(),
            ));
        }
        for ((c, ty), col) in columns.iter().zip(&types).zip(&values) {
            if let Some(v) = col.iter().find(|&&v| !ty.holds(v)) {
                return Err(Error::Value {
                    value: v.to_string(),
                    place: format!("a cell of column `{c}`, {ty}"),
                });
            }
        }
        Ok(PlainTable {
            name: name.to_string(),
            columns,
            types,
            values,
        })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.values[0].len()
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Result<&[i64]> {
        self.columns
            .iter()
            .position(|c| c == name)
            .map(|i| self.values[i].as_slice())
            .ok_or_else(|| Error::UnknownColumn {
                name: name.to_string(),
                known: self.columns.join(", "),
            })
    }

    /// Parses CSV text: a header line of column names, then one line of numbers per row (no
    /// quoting; blank lines ignored). A header cell `name:u`, `name:i` or `name:dK` declares
    /// the column unsigned, signed or decimal of `K` places; otherwise its type is inferred
    /// ([`numeric::infer`]): unsigned 32-bit integers, or signed fixed point with the most
    /// decimal places of its cells (at most 9; a column with a negative value or a decimal
    /// point is signed).
    pub fn from_csv(name: &str, text: &str) -> Result<Self> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, head) = lines.next().ok_or(Error::Csv {
            line: 1,
            why: "empty input (a header line of column names expected)".into(),
        })?;
        let mut columns = Vec::new();
        let mut declared = Vec::new();
        for cell in head.split(',') {
            let (name, ty) = match cell.split_once(':') {
                Some((n, t)) => (
                    n,
                    Some(ColumnType::declared(t).ok_or_else(|| Error::Csv {
                        line: 1,
                        why: format!(
                            "column type `{}`: `u` (unsigned), `i` (signed) or `dK` (decimal \
                             of K ≤ {} places)",
                            t.trim(),
                            numeric::MAX_SCALE
                        ),
                    })?),
                ),
                None => (cell, None),
            };
            columns.push(name.trim().to_string());
            declared.push(ty);
        }
        let mut values: Vec<Vec<Literal>> = vec![Vec::new(); columns.len()];
        for (i, line) in lines {
            let cells: Vec<&str> = line.split(',').collect();
            if cells.len() != columns.len() {
                return Err(Error::Csv {
                    line: i + 1,
                    why: format!("{} cells, the header has {}", cells.len(), columns.len()),
                });
            }
            for (col, cell) in values.iter_mut().zip(cells) {
                let v = Literal::parse(cell).ok_or_else(|| Error::Csv {
                    line: i + 1,
                    why: format!(
                        "`{}` is not a number `[-]digits[.digits]` of at most {} decimal places",
                        cell.trim(),
                        numeric::MAX_SCALE
                    ),
                })?;
                col.push(v);
            }
        }
        if values[0].is_empty() {
            return Err(Error::Csv {
                line: 2,
                why: "no rows".into(),
            });
        }
        let mut types = Vec::new();
        let mut stored = Vec::new();
        for ((c, lits), decl) in columns.iter().zip(&values).zip(&declared) {
            let ty = decl.unwrap_or_else(|| numeric::infer(lits));
            let col = lits
                .iter()
                .enumerate()
                .map(|(r, l)| {
                    ty.scaled(l, c).map_err(|_| Error::Csv {
                        line: r + 2,
                        why: format!("`{l}` in column `{c}` does not fit its type, {ty}"),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            types.push(ty);
            stored.push(col);
        }
        Self::typed(name, columns, types, stored)
    }

    /// The embedded demo table: `rows` deterministic rows with CAT's columns `a`..`e`: `a`,
    /// `b`, `c` full 32-bit values (`b <= c` on about half the rows), `d`, `e` in `0..4`
    /// (`d = e` on about a quarter).
    pub fn demo(rows: usize) -> Self {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut values: Vec<Vec<u64>> = (0..5).map(|_| Vec::with_capacity(rows)).collect();
        for _ in 0..rows {
            values[0].push(next() >> 32);
            values[1].push(next() >> 32);
            values[2].push(next() >> 32);
            values[3].push(next() % 4);
            values[4].push(next() % 4);
        }
        let columns = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        Self::new("t", columns, values).expect("the demo table is valid")
    }

    /// The type of column `name`.
    pub fn column_type(&self, name: &str) -> ColumnType {
        self.columns
            .iter()
            .position(|c| c == name)
            .map_or(ColumnType::UNSIGNED, |i| self.types[i])
    }

    /// The constants as stored integers of the columns they are compared with (what
    /// [`crate::Plan::constant_values`] gives the client).
    pub fn constant_values(&self, query: &Query, constants: &[Literal]) -> Result<Vec<i64>> {
        fn walk(
            t: &PlainTable,
            p: &crate::query::Predicate,
            lits: &[Literal],
            out: &mut [Option<i64>],
        ) -> Result<()> {
            use crate::query::{Operand, Predicate};
            match p {
                Predicate::Cmp { left, right, .. } => {
                    if let (Operand::Column(c), Operand::Const(i))
                    | (Operand::Const(i), Operand::Column(c)) = (left, right)
                    {
                        let lit = lits
                            .get(*i)
                            .ok_or_else(|| Error::Protocol(format!("constant ${i} is missing")))?;
                        t.column(c)?;
                        out[*i] = Some(t.column_type(c).scaled(lit, c)?);
                    }
                    Ok(())
                }
                Predicate::And(a, b) | Predicate::Or(a, b) => {
                    walk(t, a, lits, out)?;
                    walk(t, b, lits, out)
                }
                Predicate::Not(a) => walk(t, a, lits, out),
            }
        }
        let mut out = vec![None; constants.len()];
        if let Some(p) = &query.filter {
            walk(self, p, constants, &mut out)?;
        }
        Ok(out.into_iter().map(|v| v.unwrap_or(0)).collect())
    }

    /// The rows where the query's `WHERE` holds (`constants` by index, as stored integers of
    /// the columns they are compared with: [`PlainTable::constant_values`]).
    pub fn matching(&self, query: &Query, constants: &[i64]) -> Result<Vec<usize>> {
        let Some(p) = &query.filter else {
            return Ok((0..self.rows()).collect());
        };
        let mut out = Vec::new();
        for r in 0..self.rows() {
            let missing = std::cell::RefCell::new(None);
            let col = |c: &str| match self.column(c) {
                Ok(v) => v[r],
                Err(_) => {
                    missing.borrow_mut().get_or_insert(c.to_string());
                    0
                }
            };
            let holds = p.holds(&col, &|i| constants.get(i).copied().unwrap_or(0));
            if let Some(name) = missing.into_inner() {
                return Err(Error::UnknownColumn {
                    name,
                    known: self.columns.join(", "),
                });
            }
            if holds {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// The query evaluated on the plaintext (the reference of the demo), with the
    /// constants as parsed.
    pub fn answer(&self, query: &Query, constants: &[Literal]) -> Result<crate::QueryResult> {
        use numeric::unscale;
        let rows = self.matching(query, &self.constant_values(query, constants)?)?;
        let val = |e: &crate::query::Expr, r: usize| {
            e.eval_scaled(
                &|c: &str| self.column(c).map(|v| v[r]).unwrap_or(0),
                &|c: &str| self.column_type(c).scale,
            )
        };
        let scale = |e: &crate::query::Expr| e.scale(&|c: &str| self.column_type(c).scale);
        let num = |v: i128, k: u32| {
            if k == 0 {
                crate::Value::Int(v)
            } else {
                crate::Value::Real(unscale(v, k))
            }
        };
        let aggregate = query.items.iter().all(Item::is_aggregate);
        let cell = |item: &Item, r: Option<usize>| -> crate::Value {
            use crate::Value;
            match (item, r) {
                (Item::Index, Some(r)) => Value::Int(r as i128),
                (Item::Row(e), Some(r)) => num(val(e, r), scale(e)),
                (Item::Div(n, d), Some(r)) => {
                    let den = val(d, r);
                    if den == 0 {
                        Value::Null
                    } else {
                        Value::Real(unscale(val(n, r), scale(n)) / unscale(den, scale(d)))
                    }
                }
                (Item::Sum(e), None) if rows.is_empty() => {
                    let _ = e;
                    Value::Null
                }
                (Item::Sum(e), None) => num(rows.iter().map(|&r| val(e, r)).sum(), scale(e)),
                (Item::Avg(_), None) if rows.is_empty() => Value::Null,
                (Item::Avg(e), None) => Value::Real(
                    unscale(rows.iter().map(|&r| val(e, r)).sum::<i128>(), scale(e))
                        / rows.len() as f64,
                ),
                (Item::Count, None) => Value::Int(rows.len() as i128),
                _ => Value::Null,
            }
        };
        let out = if aggregate {
            vec![query.items.iter().map(|i| cell(i, None)).collect()]
        } else {
            rows.iter()
                .map(|&r| query.items.iter().map(|i| cell(i, Some(r))).collect())
                .collect()
        };
        Ok(crate::QueryResult {
            columns: query.items.iter().map(|i| i.to_string()).collect(),
            rows: out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_reads_and_refuses_clearly() {
        let t = PlainTable::from_csv("t", "a,b\n1,2\n\n4294967295,0\n").unwrap();
        assert_eq!(t.values, vec![vec![1, 4294967295], vec![2, 0]]);
        let err = |s: &str| PlainTable::from_csv("t", s).unwrap_err().to_string();
        assert!(err("a,b\n1,-2.5.1\n").contains("line 2"));
        assert!(err("a,b\n1,2.5e3\n").contains("decimal"));
        assert!(err("a,b\n1\n").contains("1 cells"));
        assert!(err("a,a\n1,2\n").contains("twice"));
        assert!(err("a,b\n1,4294967296\n").contains("0..=4294967295"));
        assert!(err("a\n-1\n4294967295\n").contains("-2147483648..=2147483647"));
        assert!(err("").contains("empty"));
    }

    #[test]
    fn csv_infers_signed_and_decimal_columns() {
        let t = PlainTable::from_csv("t", "n,p,u\n-3,1.5,7\n4,-0.25,0\n").unwrap();
        assert_eq!(
            t.types,
            vec![
                ColumnType::SIGNED,
                ColumnType::decimal(2),
                ColumnType::UNSIGNED
            ]
        );
        assert_eq!(t.values, vec![vec![-3, 4], vec![150, -25], vec![7, 0]]);
        let t = PlainTable::from_csv("t", "n:i,p:d3,u:u\n3,1.5,7\n4,2,0\n").unwrap();
        assert_eq!(
            t.types,
            vec![
                ColumnType::SIGNED,
                ColumnType::decimal(3),
                ColumnType::UNSIGNED
            ]
        );
        assert_eq!(t.values[1], vec![1500, 2000]);
        let err = |s: &str| PlainTable::from_csv("t", s).unwrap_err().to_string();
        assert!(err("a:x\n1\n").contains("column type `x`"));
        assert!(err("a:u\n-1\n").contains("line 2"));
        assert!(err("a:d1\n1.25\n").contains("decimals of 1 places"));
    }

    #[test]
    fn demo_table_has_cat_columns_and_both_outcomes() {
        let t = PlainTable::demo(1024);
        assert_eq!(t.rows(), 1024);
        let le = (0..1024)
            .filter(|&r| t.values[1][r] <= t.values[2][r])
            .count();
        let eq = (0..1024)
            .filter(|&r| t.values[3][r] == t.values[4][r])
            .count();
        assert!((400..624).contains(&le), "{le}");
        assert!((180..330).contains(&eq), "{eq}");
    }
}
