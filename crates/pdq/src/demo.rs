//! `pdq demo`: key generation, table encryption and CAT's four queries in one process on the
//! embedded deterministic table, each answer checked against the plaintext evaluation.

use crate::Client;
use crate::error::Result;
use crate::keys;
use crate::local;
use crate::sql;
use crate::table::PlainTable;
use bgv::{Context, Evaluator, ParametersLiteral};
use fhe_math::backend::IntegerBackend;
use std::io::Write;
use std::time::{Duration, Instant};

/// CAT's four queries (its text's spelling), in order `pdq_q1` .. `pdq_q4`.
pub const CAT_QUERIES: [&str; 4] = [
    "Index() where a <= b and c != d",
    "Sum(a) where b <= c and d != e",
    "a / b^2 where b <= c",
    "Avg(a) where b <= c and d == e",
];

/// One query's outcome in the demo.
#[derive(Debug, Clone)]
pub struct QueryReport {
    /// The query text.
    pub sql: String,
    /// Whether the encrypted answer equals the plaintext one.
    pub matches: bool,
    /// The times.
    pub times: local::Timings,
}

/// Runs the demo on `rows` rows, printing to `out`; `tick` is called with a label before
/// each long step (for a progress display).
pub fn run<B: IntegerBackend>(
    ctx: &Context<B>,
    literal: &ParametersLiteral,
    rows: usize,
    out: &mut impl Write,
    mut tick: impl FnMut(&str),
) -> Result<Vec<QueryReport>> {
    let w = |out: &mut dyn Write, s: String| {
        let _ = writeln!(out, "{s}");
    };
    let p = ctx.params();
    w(
        out,
        format!(
            "parameters: N = 2^{}, {} levels, t = {}, security: {:?}",
            p.n().trailing_zeros(),
            p.max_level(),
            p.t(),
            literal.security
        ),
    );
    tick("key generation");
    let t0 = Instant::now();
    let (ck, server_keys) = keys::generate(ctx, literal, rows)?;
    w(out, format!("key generation: {}", ms(t0.elapsed())));
    let client = Client::new(ctx, ck)?;
    let plain = PlainTable::demo(rows);
    tick("table encryption");
    let t1 = Instant::now();
    let table = client.encrypt_table(&plain, |_| {})?;
    w(
        out,
        format!(
            "table `t`: {rows} rows, columns a..e, encrypted in {} ({}-bit limbs)",
            ms(t1.elapsed()),
            table.limb_bits
        ),
    );
    let server = Evaluator::new(ctx);
    let mut reports = Vec::new();
    for (i, q) in CAT_QUERIES.iter().enumerate() {
        tick(&format!("query {}", i + 1));
        let (got, plan, times) = local::run(&client, &server, &server_keys, &table, q)?;
        let parsed = sql::parse(q, "t")?;
        let want = plain.answer(&parsed.query, &parsed.constants)?;
        let matches = got.matches(&want);
        w(out, format!("\nQ{}: {q}", i + 1));
        w(
            out,
            format!(
                "  plan: {} comparisons, {} products, {} rotations, {} round trips, depth {}",
                plan.comparisons,
                plan.products(),
                plan.rotations,
                plan.round_trips,
                plan.depth
            ),
        );
        w(out, format!("  encrypted answer: {}", got.summary(4)));
        w(out, format!("  plaintext answer: {}", want.summary(4)));
        w(
            out,
            format!(
                "  time: compute {}, full task {} (query encryption {}, round trip {}, \
                 decryption {}); match: {matches}",
                ms(times.compute),
                ms(times.total()),
                ms(times.encrypt),
                ms(times.round_trip),
                ms(times.decrypt)
            ),
        );
        reports.push(QueryReport {
            sql: q.to_string(),
            matches,
            times,
        });
    }
    Ok(reports)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}
