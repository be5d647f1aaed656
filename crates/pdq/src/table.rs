//! Plaintext tables: the client's data before encryption (from CSV or the embedded demo
//! table), and the plaintext evaluation of a query that the demo and the tests check against.

use crate::error::{Error, Result};
use crate::query::{Item, Query};
use crate::sql::parse_u32_text;

/// Most columns a table may have.
pub const MAX_COLUMNS: usize = 64;

/// A table of unsigned 32-bit integers, column-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainTable {
    /// Table name.
    pub name: String,
    /// Column names.
    pub columns: Vec<String>,
    /// `values[c][r]`: column `c`, row `r`.
    pub values: Vec<Vec<u64>>,
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !s.as_bytes()[0].is_ascii_digit()
}

impl PlainTable {
    /// A table from columns; checks names, shapes and values.
    pub fn new(name: &str, columns: Vec<String>, values: Vec<Vec<u64>>) -> Result<Self> {
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
        if columns.len() != values.len() {
            return Err(Error::Table(
                "column names and columns differ in number".into(),
            ));
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
        if let Some(v) = values.iter().flatten().find(|&&v| v > u32::MAX as u64) {
            return Err(Error::Value {
                value: v.to_string(),
                place: "a table cell".into(),
            });
        }
        Ok(PlainTable {
            name: name.to_string(),
            columns,
            values,
        })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.values[0].len()
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Result<&[u64]> {
        self.columns
            .iter()
            .position(|c| c == name)
            .map(|i| self.values[i].as_slice())
            .ok_or_else(|| Error::UnknownColumn {
                name: name.to_string(),
                known: self.columns.join(", "),
            })
    }

    /// Parses CSV text: a header line of column names, then one line of unsigned 32-bit
    /// integers per row (no quoting; blank lines ignored).
    pub fn from_csv(name: &str, text: &str) -> Result<Self> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, head) = lines.next().ok_or(Error::Csv {
            line: 1,
            why: "empty input (a header line of column names expected)".into(),
        })?;
        let columns: Vec<String> = head.split(',').map(|s| s.trim().to_string()).collect();
        let mut values = vec![Vec::new(); columns.len()];
        for (i, line) in lines {
            let cells: Vec<&str> = line.split(',').collect();
            if cells.len() != columns.len() {
                return Err(Error::Csv {
                    line: i + 1,
                    why: format!("{} cells, the header has {}", cells.len(), columns.len()),
                });
            }
            for (col, cell) in values.iter_mut().zip(cells) {
                let v = parse_u32_text(cell).ok_or_else(|| Error::Csv {
                    line: i + 1,
                    why: format!(
                        "`{}` is not an integer in 0..=4294967295 (negative and decimal values \
                         are refused)",
                        cell.trim()
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
        Self::new(name, columns, values)
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

    /// The rows where the query's `WHERE` holds (`constants` by index).
    pub fn matching(&self, query: &Query, constants: &[u64]) -> Result<Vec<usize>> {
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

    /// The query evaluated on the plaintext (the reference of the demo).
    pub fn answer(&self, query: &Query, constants: &[u64]) -> Result<crate::QueryResult> {
        let rows = self.matching(query, constants)?;
        let val = |e: &crate::query::Expr, r: usize| {
            e.eval_plain(&|c: &str| self.column(c).map(|v| v[r]).unwrap_or(0))
        };
        let aggregate = query.items.iter().all(Item::is_aggregate);
        let cell = |item: &Item, r: Option<usize>| -> crate::Value {
            use crate::Value;
            match (item, r) {
                (Item::Index, Some(r)) => Value::Int(r as i128),
                (Item::Row(e), Some(r)) => Value::Int(val(e, r)),
                (Item::Div(n, d), Some(r)) => {
                    let den = val(d, r);
                    if den == 0 {
                        Value::Null
                    } else {
                        Value::Real(val(n, r) as f64 / den as f64)
                    }
                }
                (Item::Sum(e), None) if rows.is_empty() => {
                    let _ = e;
                    Value::Null
                }
                (Item::Sum(e), None) => Value::Int(rows.iter().map(|&r| val(e, r)).sum()),
                (Item::Avg(_), None) if rows.is_empty() => Value::Null,
                (Item::Avg(e), None) => Value::Real(
                    rows.iter().map(|&r| val(e, r)).sum::<i128>() as f64 / rows.len() as f64,
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
        assert!(err("a,b\n1,-2\n").contains("line 2"));
        assert!(err("a,b\n1,2.5\n").contains("decimal"));
        assert!(err("a,b\n1\n").contains("1 cells"));
        assert!(err("a,a\n1,2\n").contains("twice"));
        assert!(err("a,b\n1,4294967296\n").contains("0..=4294967295"));
        assert!(err("").contains("empty"));
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
