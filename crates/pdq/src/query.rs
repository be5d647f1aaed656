//! The query as the server sees it: its shape (columns, operators, aggregates) with every
//! constant replaced by the index of a client-encrypted constant.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `=`
    Eq,
    /// `!=` (or `<>`)
    Ne,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// Every operator.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

    /// The SQL spelling.
    pub fn sql(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// `a op b` on plaintext values.
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// One side of a comparison: a column or the `i`-th encrypted constant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operand {
    /// A column by name.
    Column(String),
    /// The constant with this index in the query's constant list (its value is encrypted).
    Const(usize),
}

/// A `WHERE` condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Predicate {
    /// `left op right`.
    Cmp {
        /// The operator.
        op: CmpOp,
        /// Left side.
        left: Operand,
        /// Right side.
        right: Operand,
    },
    /// Both hold: mask `m1·m2`.
    And(Box<Predicate>, Box<Predicate>),
    /// Either holds: mask `m1 + m2 − m1·m2`.
    Or(Box<Predicate>, Box<Predicate>),
    /// Does not hold: mask `1 − m`.
    Not(Box<Predicate>),
}

/// A per-row arithmetic expression of columns (exact over the integers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Expr {
    /// A column by name.
    Column(String),
    /// `a + b`.
    Add(Box<Expr>, Box<Expr>),
    /// `a − b`.
    Sub(Box<Expr>, Box<Expr>),
    /// `a · b`.
    Mul(Box<Expr>, Box<Expr>),
}

/// One item of the `SELECT` list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Item {
    /// `Index()`: the 0-based indices of the matching rows.
    Index,
    /// A per-row expression of the matching rows.
    Row(Expr),
    /// `num / den` per matching row (a real number; one client round trip).
    Div(Expr, Expr),
    /// `SUM(e)` over the matching rows.
    Sum(Expr),
    /// `AVG(e)` over the matching rows (`SUM / COUNT`, divided by the client).
    Avg(Expr),
    /// `COUNT(*)` of the matching rows.
    Count,
}

impl Item {
    /// Whether the item gives one value for the whole table (an aggregate).
    pub fn is_aggregate(&self) -> bool {
        matches!(self, Item::Sum(_) | Item::Avg(_) | Item::Count)
    }
}

/// A query's shape: what the server learns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    /// The table.
    pub table: String,
    /// The `SELECT` list (all aggregates or all per-row items).
    pub items: Vec<Item>,
    /// The `WHERE` condition, if any.
    pub filter: Option<Predicate>,
    /// How many encrypted constants come with the query.
    pub constants: usize,
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Column(c) => f.write_str(c),
            Operand::Const(i) => write!(f, "${i}"),
        }
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::Cmp { op, left, right } => write!(f, "{left} {} {right}", op.sql()),
            Predicate::And(a, b) => write!(f, "({a} AND {b})"),
            Predicate::Or(a, b) => write!(f, "({a} OR {b})"),
            Predicate::Not(a) => write!(f, "NOT ({a})"),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column(c) => f.write_str(c),
            Expr::Add(a, b) => write!(f, "({a} + {b})"),
            Expr::Sub(a, b) => write!(f, "({a} - {b})"),
            Expr::Mul(a, b) => write!(f, "({a} * {b})"),
        }
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Index => f.write_str("Index()"),
            Item::Row(e) => write!(f, "{e}"),
            Item::Div(a, b) => write!(f, "{a} / {b}"),
            Item::Sum(e) => write!(f, "SUM({e})"),
            Item::Avg(e) => write!(f, "AVG({e})"),
            Item::Count => f.write_str("COUNT(*)"),
        }
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SELECT ")?;
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        write!(f, " FROM {}", self.table)?;
        if let Some(p) = &self.filter {
            write!(f, " WHERE {p}")?;
        }
        Ok(())
    }
}

impl Expr {
    /// The columns the expression reads, in order of appearance.
    pub fn columns<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Column(c) => out.push(c),
            Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) => {
                a.columns(out);
                b.columns(out);
            }
        }
    }

    /// The expression's value on one row (`col` gives a column's value).
    pub fn eval_plain(&self, col: &impl Fn(&str) -> i64) -> i128 {
        match self {
            Expr::Column(c) => col(c) as i128,
            Expr::Add(a, b) => a.eval_plain(col) + b.eval_plain(col),
            Expr::Sub(a, b) => a.eval_plain(col) - b.eval_plain(col),
            Expr::Mul(a, b) => a.eval_plain(col) * b.eval_plain(col),
        }
    }

    /// The value on one row with decimal scales aligned (`col` gives a column's stored
    /// integer, `scale` its places): `+`/`−` multiply the coarser side by `10^d`.
    pub fn eval_scaled(&self, col: &impl Fn(&str) -> i64, scale: &impl Fn(&str) -> u32) -> i128 {
        let align = |a: &Expr, b: &Expr| {
            let (sa, sb) = (a.scale(scale), b.scale(scale));
            let (x, y) = (a.eval_scaled(col, scale), b.eval_scaled(col, scale));
            let p = 10i128.pow(sa.abs_diff(sb));
            if sa < sb { (x * p, y) } else { (x, y * p) }
        };
        match self {
            Expr::Column(c) => col(c) as i128,
            Expr::Add(a, b) => {
                let (x, y) = align(a, b);
                x + y
            }
            Expr::Sub(a, b) => {
                let (x, y) = align(a, b);
                x - y
            }
            Expr::Mul(a, b) => a.eval_scaled(col, scale) * b.eval_scaled(col, scale),
        }
    }

    /// The decimal scale of the value (`col` gives a column's scale): `+`/`−` keep the larger
    /// (the coarser side is multiplied by `10^d`), `·` adds them.
    pub fn scale(&self, col: &impl Fn(&str) -> u32) -> u32 {
        match self {
            Expr::Column(c) => col(c),
            Expr::Add(a, b) | Expr::Sub(a, b) => a.scale(col).max(b.scale(col)),
            Expr::Mul(a, b) => a.scale(col) + b.scale(col),
        }
    }
}

impl Predicate {
    /// The number of comparisons.
    pub fn comparisons(&self) -> usize {
        match self {
            Predicate::Cmp { .. } => 1,
            Predicate::And(a, b) | Predicate::Or(a, b) => a.comparisons() + b.comparisons(),
            Predicate::Not(a) => a.comparisons(),
        }
    }

    /// Whether the predicate holds on one row (`col` gives a column's value, `konst` a
    /// constant's).
    pub fn holds(&self, col: &impl Fn(&str) -> i64, konst: &impl Fn(usize) -> i64) -> bool {
        let val = |o: &Operand| match o {
            Operand::Column(c) => col(c),
            Operand::Const(i) => konst(*i),
        };
        match self {
            Predicate::Cmp { op, left, right } => op.holds(val(left), val(right)),
            Predicate::And(a, b) => a.holds(col, konst) && b.holds(col, konst),
            Predicate::Or(a, b) => a.holds(col, konst) || b.holds(col, konst),
            Predicate::Not(a) => !a.holds(col, konst),
        }
    }
}
