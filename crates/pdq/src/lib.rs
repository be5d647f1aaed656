//! Private database queries: SQL over an encrypted table, exact, on BGV.
//!
//! (Design notes: see the crate README section below; filled in with the comparisons.)

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
