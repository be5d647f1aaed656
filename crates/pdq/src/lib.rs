//! Private database queries: SQL over an encrypted table, exact, on BGV.
//!
//! A data owner (the **client**, holding the secret key) encrypts a table of unsigned or signed
//! 32-bit integers and decimals ([`numeric`]) once and leaves it with a **server** (evaluation keys and encrypted tables on disk);
//! then asks SQL questions whose constants and answers the server never sees. `pdq demo` runs
//! the whole flow in one process.
//!
//! # Design choice: exact BGV, not CKKS
//!
//! CAT (the GPU framework whose four queries we reproduce) evaluates them in CKKS. Its
//! aggregates are not exact: a sum over 1,024 rows of 32-bit values reaches 2^42, so every 0/1
//! mask would need an error below about 2^-43, which CKKS does not reach after a comparison
//! circuit. pdq therefore uses **BGV**, where every step is exact mod `t = 65537`:
//!
//! - **comparisons** by the `compare` crate: each value is a `u32` word in base-2^4 digits
//!   (a block of `B = 8` slots per row); `<, ≤, >, ≥` take 9 levels, `=, ≠` 8; the 0/1 result
//!   lands in the lead slot `r·B` of row `r`, every other slot 0 ([`cmp`]);
//! - **masks**: `AND = m1·m2`, `OR = m1 + m2 − m1·m2`, `NOT = 1 − m` (lead slots only);
//! - **values in limbs** ([`limbs`]): every column is also encrypted as `⌈32/w⌉` limbs of `w`
//!   bits in the same lead slots, `w` the largest width such that a column sum over the table
//!   (`rows·(2^w − 1)`) and a product of two columns (`⌈32/w⌉·(2^w − 1)²`) stay below `t`
//!   (`w = 6` for 1,024 rows; twice those spans with a signed column, `w = 5`). A signed
//!   value's limbs are those of `|v|` carrying its sign (each in `[−(2^w − 1), 2^w − 1]`). `+`/`−` act limb-wise, `·` is a limb convolution; the planner
//!   tracks every limb's integer range and refuses an expression that could wrap
//!   ([`Error::Overflow`]), so the client's recombination `Σ l_k·2^{w·k}` is exact;
//! - **aggregates**: `SUM` multiplies the limbs by the mask, `COUNT` takes the mask; these
//!   parts are packed `B` to a ciphertext (one per slot of a row's block) and summed over the
//!   rows with `⌈log2 rows⌉` rotations (at level 1, for the noise headroom of many rows);
//!   `AVG = SUM / COUNT` is divided by the client (SQL's `NULL` for an empty `SUM`/`AVG`);
//! - **large tables**: a ciphertext holds `N/B` rows (4,096 at `N = 2^15`); a larger table
//!   spans several ciphertexts (chunks), evaluated chunk by chunk, the sums adding the chunks
//!   before the rotations; limbs narrow with the row count (2 bits at 2^14 rows, 1 bit at
//!   2^16, the most a column sum below `t` allows);
//! - **division** `x / y` (CAT's `a / b^2`): one client round trip in the spirit of CAT's
//!   multiply-inverse protocol. The server sends `y`'s limbs (packed `B` to a ciphertext,
//!   limb `k` in slot `k mod B` of the row's block, as every per-row answer is); the client
//!   decrypts `y_r`, returns the limbs of `m_r = round(2^{e_r} / |y_r|)` with
//!   `e_r = 30 + bitlen(|y_r|)` (so `2^30 < m_r ≤ 2^31`; encrypted at the numerator's level,
//!   where the product runs), keeping `e_r` and the sign; the server computes the
//!   convolution `x·m` and the client outputs `±(x·m)_r / 2^{e_r}`: relative error ≤ 2^-31
//!   (the tests hold it to 2^-30 against SQLite), `NULL` where `y_r = 0`. CAT blinds `x` with
//!   a random `r` so the key holder learns only `r·x`; here the key holder *is* the data owner,
//!   who learns `y_r` for every row — values of its own table — and no blinding is applied
//!   (a random multiplier would break the exact limb recombination). The server learns
//!   nothing of `y`, `m` or the quotient.
//!
//! Results are exact integers (`Index()`, per-row expressions, `SUM`, `COUNT`) or reals to
//! 2^-31 (division) and to `f64` rounding (`AVG`, the exact sum divided by the exact count).
//!
//! # Value types ([`numeric`])
//!
//! A column is **unsigned** (`0..=2^32 − 1`), **signed** (`−2^31..=2^31 − 1`) or **decimal**
//! of `k ≤ 9` places (fixed point: `x` stored as the signed integer `x·10^k`). The types are
//! public, like the column names; a CSV header cell `name:u`, `name:i`, `name:dK` declares
//! one, else it is inferred from the cells (a negative value or a decimal point makes a
//! column signed, of the most places of its cells). A signed column's comparison word is
//! `v + 2^31` (order preserving, the same `u32` comparator). A decimal result is the exact
//! scaled integer divided by `10^k` once on the client (`SUM`, per-row values: one `f64`
//! rounding; `AVG`: one more; a division: relative error ≤ 2^-30). Constants in `WHERE` are
//! scaled by the client to the type of the column they are compared with. Refused, with an
//! error naming the values: comparing columns of different types (unsigned with signed, or
//! different scales), a constant with more places than its column or outside its range, a
//! cell outside its column's type. `·` adds the scales; `+`/`−` of different scales multiply
//! the coarser side's limbs by `10^d` (exact, when the planner can bound the limbs: in
//! practice `d ≤ 2`, per row; a sum over many rows of such a value is refused as inexact).
//!
//! # What the server learns
//!
//! The query's **shape** ([`Query`]): the table, the columns, the operators, the aggregates,
//! the number of constants, and when a division needs its round trip. Not the constants (the
//! client encrypts them, replicated over the rows, in the comparison layout), not the mask,
//! not any result. The table's row count and column names are public.
//!
//! # Supported SQL ([`sql`])
//!
//! `SELECT` of `Index()` (0-based row numbers), columns and expressions with `+ − * /` and
//! `^` by a small integer, `SUM`, `AVG`, `COUNT(*)`; `FROM` one table (optional); `WHERE`
//! with `AND`, `OR`, `NOT` over `< <= = != <> > >=` between columns of one type, or a column
//! and a numeric constant (`-12`, `3.25`) that fits the column's type exactly. Aggregates and
//! per-row items are not mixed (that would need `GROUP BY`). `MIN`/`MAX` are refused
//! ([`Error::MinMax`]: they need bootstrapping or client rounds); values outside a column's
//! type are refused ([`Error::Value`]); every other construct is refused naming it
//! ([`Error::Unsupported`]). `--explain` prints the [`Plan`]:
//! levels, comparisons, products, rotations, round trips.
//!
//! # Modules
//!
//! [`sql`] → [`query`] (the shape) → [`plan`] (checks, limb ranges, depth) → [`engine`]
//! (server evaluation, generic over the backend) ↔ [`client`] (encryption, the round trip,
//! decoding); [`local`] runs both in one process, [`server`] and [`protocol`] over TCP;
//! [`keys`], [`encrypted`] and [`blob`] are the files (magic, version, fingerprint and key id
//! checked on load, atomic writes); [`table`] the plaintext tables (CSV, the demo table, the
//! plaintext reference); [`numeric`] the column types and literals; [`demo`] `pdq demo`;
//! [`presets`] the parameter sets.

pub mod blob;
pub mod client;
pub mod cmp;
pub mod demo;
pub mod encrypted;
pub mod engine;
pub mod error;
pub mod keys;
pub mod limbs;
pub mod local;
pub mod numeric;
pub mod plan;
pub mod presets;
pub mod protocol;
pub mod query;
pub mod server;
pub mod sql;
pub mod table;

pub use client::Client;
pub use encrypted::EncTable;
pub use engine::{Engine, Response, Stage};
pub use error::{Error, Result};
pub use keys::{ClientKey, KeyId, ServerKeys};
pub use numeric::{ColumnType, Literal};
pub use plan::Plan;
pub use query::Query;
pub use table::PlainTable;

/// One cell of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An exact integer.
    Int(i128),
    /// A real number (AVG, a division).
    Real(f64),
    /// SQL's NULL (a SUM or AVG over no rows, a division by zero).
    Null,
}

/// Relative error allowed between two real answers: 2^-30.
pub const REAL_TOLERANCE: f64 = 1.0 / (1u64 << 30) as f64;

impl Value {
    /// Equal as SQL values: integers exactly, reals to a relative 2^-30, an integer and a
    /// real when they agree to that precision.
    pub fn matches(&self, other: &Value) -> bool {
        let real = |v: &Value| match v {
            Value::Int(i) => Some(*i as f64),
            Value::Real(r) => Some(*r),
            Value::Null => None,
        };
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Null, Value::Null) => true,
            _ => match (real(self), real(other)) {
                (Some(a), Some(b)) => (a - b).abs() <= REAL_TOLERANCE * a.abs().max(b.abs()),
                _ => false,
            },
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Real(r) => write!(f, "{r}"),
            Value::Null => f.write_str("NULL"),
        }
    }
}

/// An answer: column headers and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// Headers (the items as written).
    pub columns: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<Value>>,
}

impl QueryResult {
    /// Same shape and every cell [`Value::matches`].
    pub fn matches(&self, other: &QueryResult) -> bool {
        self.rows.len() == other.rows.len()
            && self
                .rows
                .iter()
                .zip(&other.rows)
                .all(|(a, b)| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.matches(y)))
    }

    /// A short rendering: all rows up to `max`, then a count of the rest.
    pub fn summary(&self, max: usize) -> String {
        let mut s = String::new();
        for row in self.rows.iter().take(max) {
            let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
            s.push_str(&format!("({})", cells.join(", ")));
            s.push(' ');
        }
        if self.rows.len() > max {
            s.push_str(&format!("… {} rows in all", self.rows.len()));
        } else if self.rows.is_empty() {
            s.push_str("(no rows)");
        }
        s.trim_end().to_string()
    }
}
