//! SQL text to a [`Query`] with `sqlparser` (PostgreSQL dialect, so `b^2` is a power).
//!
//! Supported: `SELECT` of `Index()`, per-row expressions of columns with `+ - * /` and `^` by
//! a small integer, `SUM`, `AVG`, `COUNT(*)`; `FROM` one table (optional: the caller's default
//! table); `WHERE` with `AND`, `OR`, `NOT` over `< <= = != <> > >=` between columns or a column
//! and a numeric constant (`-12`, `3.25`, scaled to the column's type by the client). A text
//! that does not start with `SELECT` gets one (CAT writes its queries as `Sum(a) where b <= c`). Everything else is refused naming the
//! construct; `MIN`/`MAX` with [`Error::MinMax`].

use crate::error::{Error, Result};
use crate::numeric::Literal;
use crate::query::{CmpOp, Expr, Item, Operand, Predicate, Query};
use sqlparser::ast::{self as sql, BinaryOperator, UnaryOperator};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// Largest exponent accepted in `x ^ k` (expanded into `k − 1` products).
pub const MAX_POWER: u32 = 4;

/// A parsed query: the shape the server sees and the constants only the client knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The query with constants replaced by indices.
    pub query: Query,
    /// The constants' values, by index.
    pub constants: Vec<Literal>,
}

/// Parses `text`; `default_table` names the table when `FROM` is absent.
pub fn parse(text: &str, default_table: &str) -> Result<Parsed> {
    let trimmed = text.trim().trim_end_matches(';');
    // A text that parses is taken as it is (so `DELETE …` is refused as a statement);
    // otherwise it is CAT's shorthand without `SELECT`.
    let statements = match Parser::parse_sql(&PostgreSqlDialect {}, trimmed) {
        Ok(s) => s,
        Err(first) => Parser::parse_sql(&PostgreSqlDialect {}, &format!("SELECT {trimmed}"))
            .map_err(|_| Error::Parse(first.to_string()))?,
    };
    let [statement] = statements.as_slice() else {
        return Err(Error::Unsupported(format!(
            "{} statements (one SELECT expected)",
            statements.len()
        )));
    };
    let sql::Statement::Query(q) = statement else {
        return Err(Error::Unsupported(format!(
            "statement `{statement}` (only SELECT)"
        )));
    };
    reject_query_clauses(q)?;
    let sql::SetExpr::Select(select) = q.body.as_ref() else {
        return Err(Error::Unsupported(format!(
            "`{}` (set operations, VALUES; only a plain SELECT)",
            q.body
        )));
    };
    let table = table_name(select, default_table)?;
    reject_select_clauses(select)?;
    let mut p = Builder::default();
    let mut items = Vec::new();
    for item in &select.projection {
        let expr = match item {
            sql::SelectItem::UnnamedExpr(e) | sql::SelectItem::ExprWithAlias { expr: e, .. } => e,
            other => return Err(Error::Unsupported(format!("`{other}` in the SELECT list"))),
        };
        items.push(p.item(expr)?);
    }
    let aggregates = items.iter().filter(|i| i.is_aggregate()).count();
    if aggregates != 0 && aggregates != items.len() {
        return Err(Error::Unsupported(
            "aggregates mixed with per-row values (that needs GROUP BY)".into(),
        ));
    }
    let filter = match &select.selection {
        Some(w) => Some(p.predicate(w)?),
        None => None,
    };
    Ok(Parsed {
        query: Query {
            table,
            items,
            filter,
            constants: p.constants.len(),
        },
        constants: p.constants,
    })
}

fn reject_query_clauses(q: &sql::Query) -> Result<()> {
    let named = [
        ("WITH", q.with.is_some()),
        ("ORDER BY", q.order_by.is_some()),
        ("LIMIT/OFFSET", q.limit_clause.is_some()),
        ("FETCH", q.fetch.is_some()),
        ("FOR UPDATE/SHARE", !q.locks.is_empty()),
        ("FOR", q.for_clause.is_some()),
        ("SETTINGS", q.settings.is_some()),
        ("FORMAT", q.format_clause.is_some()),
        ("pipe operators", !q.pipe_operators.is_empty()),
    ];
    match named.iter().find(|(_, present)| *present) {
        Some((name, _)) => Err(Error::Unsupported(format!("{name} clause"))),
        None => Ok(()),
    }
}

fn reject_select_clauses(s: &sql::Select) -> Result<()> {
    let group_by = match &s.group_by {
        sql::GroupByExpr::Expressions(e, m) => !e.is_empty() || !m.is_empty(),
        sql::GroupByExpr::All(_) => true,
    };
    let named = [
        ("DISTINCT", s.distinct.is_some()),
        ("TOP", s.top.is_some()),
        ("INTO", s.into.is_some()),
        ("GROUP BY", group_by),
        ("HAVING", s.having.is_some()),
        ("QUALIFY", s.qualify.is_some()),
        ("WINDOW", !s.named_window.is_empty()),
        ("LATERAL VIEW", !s.lateral_views.is_empty()),
        ("PREWHERE", s.prewhere.is_some()),
        ("CONNECT BY", s.connect_by.is_some()),
        ("SORT BY / CLUSTER BY / DISTRIBUTE BY", {
            !s.sort_by.is_empty() || !s.cluster_by.is_empty() || !s.distribute_by.is_empty()
        }),
    ];
    match named.iter().find(|(_, present)| *present) {
        Some((name, _)) => Err(Error::Unsupported(format!("{name} clause"))),
        None => Ok(()),
    }
}

fn table_name(s: &sql::Select, default_table: &str) -> Result<String> {
    match s.from.as_slice() {
        [] => Ok(default_table.to_string()),
        [one] => {
            if !one.joins.is_empty() {
                return Err(Error::Unsupported("JOIN".into()));
            }
            match &one.relation {
                sql::TableFactor::Table {
                    name,
                    alias: None,
                    args: None,
                    ..
                } => Ok(name.to_string()),
                other => Err(Error::Unsupported(format!(
                    "`{other}` in FROM (one table name only)"
                ))),
            }
        }
        _ => Err(Error::Unsupported("several tables in FROM (joins)".into())),
    }
}

/// Collects the constants while converting.
#[derive(Default)]
struct Builder {
    constants: Vec<Literal>,
}

impl Builder {
    fn item(&mut self, e: &sql::Expr) -> Result<Item> {
        let e = strip(e);
        if let sql::Expr::Function(f) = e {
            let name = f.name.to_string().to_ascii_lowercase();
            let args = function_args(f)?;
            return match (name.as_str(), args.as_slice()) {
                ("index", []) => Ok(Item::Index),
                ("count", [Arg::Star]) | ("count", []) => Ok(Item::Count),
                ("count", [Arg::Expr(_)]) => Ok(Item::Count),
                ("sum", [Arg::Expr(x)]) => Ok(Item::Sum(self.expr(x)?)),
                ("avg", [Arg::Expr(x)]) => Ok(Item::Avg(self.expr(x)?)),
                ("min" | "max", _) => Err(Error::MinMax(name.to_ascii_uppercase())),
                _ => Err(Error::Unsupported(format!("function call `{e}`"))),
            };
        }
        if let sql::Expr::BinaryOp {
            left,
            op: BinaryOperator::Divide,
            right,
        } = e
        {
            return Ok(Item::Div(self.expr(left)?, self.expr(right)?));
        }
        Ok(Item::Row(self.expr(e)?))
    }

    fn expr(&mut self, e: &sql::Expr) -> Result<Expr> {
        let e = strip(e);
        match e {
            sql::Expr::Identifier(id) => Ok(Expr::Column(id.value.clone())),
            sql::Expr::BinaryOp { left, op, right } => {
                let node: fn(Box<Expr>, Box<Expr>) -> Expr = match op {
                    BinaryOperator::Plus => Expr::Add,
                    BinaryOperator::Minus => Expr::Sub,
                    BinaryOperator::Multiply => Expr::Mul,
                    BinaryOperator::PGExp => {
                        let base = self.expr(left)?;
                        let k = small_exponent(right)?;
                        let mut out = base.clone();
                        for _ in 1..k {
                            out = Expr::Mul(Box::new(out), Box::new(base.clone()));
                        }
                        return Ok(out);
                    }
                    BinaryOperator::Divide => {
                        return Err(Error::Unsupported(format!(
                            "division inside an expression (`{e}`): only a top-level `x / y` \
                             in the SELECT list"
                        )));
                    }
                    other => {
                        return Err(Error::Unsupported(format!(
                            "operator `{other}` in an expression"
                        )));
                    }
                };
                Ok(node(
                    Box::new(self.expr(left)?),
                    Box::new(self.expr(right)?),
                ))
            }
            sql::Expr::Value(v) => Err(Error::Unsupported(format!(
                "constant `{v}` in a SELECT expression (constants are allowed in WHERE)"
            ))),
            sql::Expr::Function(f) => {
                let name = f.name.to_string().to_ascii_lowercase();
                if name == "min" || name == "max" {
                    return Err(Error::MinMax(name.to_ascii_uppercase()));
                }
                Err(Error::Unsupported(format!(
                    "function call `{e}` inside an expression"
                )))
            }
            other => Err(Error::Unsupported(format!("expression `{other}`"))),
        }
    }

    fn predicate(&mut self, e: &sql::Expr) -> Result<Predicate> {
        let e = strip(e);
        match e {
            sql::Expr::BinaryOp { left, op, right } => {
                let cmp = match op {
                    BinaryOperator::And => {
                        return Ok(Predicate::And(
                            Box::new(self.predicate(left)?),
                            Box::new(self.predicate(right)?),
                        ));
                    }
                    BinaryOperator::Or => {
                        return Ok(Predicate::Or(
                            Box::new(self.predicate(left)?),
                            Box::new(self.predicate(right)?),
                        ));
                    }
                    BinaryOperator::Lt => CmpOp::Lt,
                    BinaryOperator::LtEq => CmpOp::Le,
                    BinaryOperator::Eq => CmpOp::Eq,
                    BinaryOperator::NotEq => CmpOp::Ne,
                    BinaryOperator::Gt => CmpOp::Gt,
                    BinaryOperator::GtEq => CmpOp::Ge,
                    other => {
                        return Err(Error::Unsupported(format!("operator `{other}` in WHERE")));
                    }
                };
                let left = self.operand(left)?;
                let right = self.operand(right)?;
                if let (Operand::Const(_), Operand::Const(_)) = (&left, &right) {
                    return Err(Error::Unsupported(format!(
                        "comparison of two constants `{e}`"
                    )));
                }
                Ok(Predicate::Cmp {
                    op: cmp,
                    left,
                    right,
                })
            }
            sql::Expr::UnaryOp {
                op: UnaryOperator::Not,
                expr,
            } => Ok(Predicate::Not(Box::new(self.predicate(expr)?))),
            other => Err(Error::Unsupported(format!("condition `{other}` in WHERE"))),
        }
    }

    fn operand(&mut self, e: &sql::Expr) -> Result<Operand> {
        let e = strip(e);
        match e {
            sql::Expr::Identifier(id) => Ok(Operand::Column(id.value.clone())),
            sql::Expr::Value(_)
            | sql::Expr::UnaryOp {
                op: UnaryOperator::Minus,
                ..
            } => {
                let value = parse_literal(e)?;
                self.constants.push(value);
                Ok(Operand::Const(self.constants.len() - 1))
            }
            other => Err(Error::Unsupported(format!(
                "`{other}` as a comparison operand (a column or a constant)"
            ))),
        }
    }
}

/// A numeric constant of `WHERE` (a number, or `-` a number) as a [`Literal`].
fn parse_literal(e: &sql::Expr) -> Result<Literal> {
    let bad = || Error::Value {
        value: e.to_string(),
        place: "a WHERE constant: `[-]digits[.digits]`, at most 9 decimal places".into(),
    };
    match strip(e) {
        sql::Expr::Value(v) => match &v.value {
            sql::Value::Number(s, _) => Literal::parse(s).ok_or_else(bad),
            _ => Err(bad()),
        },
        sql::Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => {
            let l = parse_literal(expr)?;
            if l.mantissa < 0 {
                return Err(bad());
            }
            Ok(Literal {
                mantissa: -l.mantissa,
                ..l
            })
        }
        _ => Err(bad()),
    }
}

fn small_exponent(e: &sql::Expr) -> Result<u32> {
    if let sql::Expr::Value(v) = strip(e)
        && let sql::Value::Number(s, _) = &v.value
        && let Ok(k) = s.parse::<u32>()
        && (1..=MAX_POWER).contains(&k)
    {
        return Ok(k);
    }
    Err(Error::Unsupported(format!(
        "exponent `{e}` (an integer 1..={MAX_POWER} expected)"
    )))
}

enum Arg<'a> {
    Star,
    Expr(&'a sql::Expr),
}

fn function_args(f: &sql::Function) -> Result<Vec<Arg<'_>>> {
    let unsupported = |what: &str| Err(Error::Unsupported(format!("{what} in `{f}`")));
    if f.filter.is_some() {
        return unsupported("FILTER");
    }
    if f.over.is_some() {
        return unsupported("OVER (window functions)");
    }
    if !matches!(f.parameters, sql::FunctionArguments::None) {
        return unsupported("parameters");
    }
    match &f.args {
        sql::FunctionArguments::None => Ok(Vec::new()),
        sql::FunctionArguments::Subquery(_) => unsupported("a subquery"),
        sql::FunctionArguments::List(list) => {
            if list.duplicate_treatment.is_some() {
                return unsupported("DISTINCT/ALL");
            }
            if !list.clauses.is_empty() {
                return unsupported("argument clauses");
            }
            list.args
                .iter()
                .map(|a| match a {
                    sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Expr(e)) => Ok(Arg::Expr(e)),
                    sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Wildcard) => Ok(Arg::Star),
                    other => Err(Error::Unsupported(format!("argument `{other}` in `{f}`"))),
                })
                .collect()
        }
    }
}

fn strip(e: &sql::Expr) -> &sql::Expr {
    match e {
        sql::Expr::Nested(inner) => strip(inner),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Result<Parsed> {
        parse(text, "t")
    }

    #[test]
    fn cat_queries_parse() {
        let p = q("Index() where a <= b and c != d").unwrap();
        assert_eq!(p.query.items, vec![Item::Index]);
        assert_eq!(p.query.filter.unwrap().comparisons(), 2);
        let p = q("Sum(a) where b <= c and d != e").unwrap();
        assert_eq!(p.query.items, vec![Item::Sum(Expr::Column("a".into()))]);
        let p = q("a / b^2 where b <= c").unwrap();
        let b = || Box::new(Expr::Column("b".into()));
        assert_eq!(
            p.query.items,
            vec![Item::Div(Expr::Column("a".into()), Expr::Mul(b(), b()))]
        );
        let p = q("SELECT Avg(a) FROM t WHERE b <= c and d = e").unwrap();
        assert_eq!(p.query.items, vec![Item::Avg(Expr::Column("a".into()))]);
    }

    #[test]
    fn constants_are_collected_and_hidden() {
        let p = q("SELECT COUNT(*) FROM t WHERE a < 7 OR NOT (b >= 4294967295)").unwrap();
        assert_eq!(p.constants, vec![Literal::int(7), Literal::int(4294967295)]);
        assert_eq!(p.query.constants, 2);
        let shape = p.query.to_string();
        assert!(!shape.contains('7'), "{shape}");
        assert_eq!(
            shape,
            "SELECT COUNT(*) FROM t WHERE (a < $0 OR NOT (b >= $1))"
        );
    }

    #[test]
    fn refusals_name_the_construct() {
        let msg = |s: &str| q(s).unwrap_err().to_string();
        assert!(msg("SELECT MIN(a) FROM t").contains("bootstrapping or client rounds"));
        assert!(msg("SELECT MAX(a) FROM t").contains("MAX"));
        assert!(msg("SELECT a FROM t ORDER BY a").contains("ORDER BY"));
        assert!(msg("SELECT a FROM t GROUP BY a").contains("GROUP BY"));
        assert!(msg("SELECT a FROM t JOIN u ON t.x = u.x").contains("JOIN"));
        assert!(msg("SELECT a FROM t WHERE a LIKE 'x'").contains("LIKE"));
        assert!(msg("SELECT a FROM t WHERE a < 1e5").contains("decimal places"));
        assert!(msg("SELECT a FROM t WHERE a < 'x'").contains("supported domain"));
        let p = q("SELECT a FROM t WHERE a < -2.50 AND b > -(3)").unwrap();
        assert_eq!(
            p.constants,
            vec![
                Literal {
                    mantissa: -25,
                    scale: 1
                },
                Literal::int(-3)
            ]
        );
        assert!(msg("SELECT a + 1 FROM t").contains("constant"));
        assert!(msg("SELECT SUM(a / b) FROM t").contains("division inside"));
        assert!(msg("SELECT a, SUM(b) FROM t").contains("GROUP BY"));
        assert!(msg("DELETE FROM t").contains("only SELECT"));
        assert!(msg("SELECT a FROM").contains("parse"));
    }
}
