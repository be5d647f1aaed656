//! CAT's four private database queries (`pdq` crate) on the CUDA backend: preset `pdq:<rows>`
//! (e.g. `pdq:1024`) encrypts the embedded demo table of that many rows at BGV's `CAT`
//! parameters, checks each answer against the plaintext once, then times per query
//! `pdq_qN` (the calculation: the server's evaluation, with the client's reciprocal step of
//! the division round trip for Q3) and `pdq_qN_full` (the full task: query encryption,
//! calculation, every message serialized and reloaded, decryption; no network).

use super::{PresetResult, R, RingShape, Row, Timer, Timing, log_timing};
use ::pdq::engine::{Engine, Stage};
use ::pdq::{Client, PlainTable, demo, keys, local, sql};
use gpufhe::bgv::context::ring_for;
use gpufhe::bgv::{Context, Evaluator};
use gpufhe::cuda::{CudaBackend, Device};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

const CALC: [&str; 4] = ["pdq_q1", "pdq_q2", "pdq_q3", "pdq_q4"];
const FULL: [&str; 4] = ["pdq_q1_full", "pdq_q2_full", "pdq_q3_full", "pdq_q4_full"];

/// Most timed runs per query (a query is far longer than an operator).
const MAX_REPS: usize = 10;

/// The rows of a `pdq:<rows>` preset name (after the prefix).
pub fn preset(name: &str) -> R<usize> {
    name.parse::<usize>()
        .ok()
        .filter(|&r| r > 0)
        .ok_or_else(|| format!("pdq preset {name:?}: a row count expected (pdq:1024)").into())
}

/// The `rows` field of a JSON row: the row count of a `pdq:` preset, else none.
pub fn rows_of(preset_name: &str) -> Option<usize> {
    preset_name
        .strip_prefix("pdq:")
        .and_then(|r| r.parse().ok())
}

/// Times the four queries on `rows` rows.
pub fn bench_preset(dev: &Arc<Device>, name: &str, reps: usize, warm: usize) -> R<PresetResult> {
    let rows = preset(name)?;
    let reps = reps.clamp(1, MAX_REPS);
    let t_setup = Instant::now();
    dev.synchronize()?;
    dev.reset_pool_peak()?;
    let literal = gpufhe::bgv::params::CAT;
    let params = keys::parameters(&literal)?;
    let backend = CudaBackend::new(dev.clone(), ring_for(&params)?)?;
    let stream = backend.stream().clone();
    let ctx = Context::with_backend(params.clone(), backend)?;
    let (ck, server_keys) = keys::generate(&ctx, &literal, rows)?;
    let client = Client::new(&ctx, ck)?;
    let plain = PlainTable::demo(rows);
    let table = client.encrypt_table(&plain, |_| {})?;
    let eval = Evaluator::new(&ctx);
    for q in demo::CAT_QUERIES {
        let (got, _, _) = local::run(&client, &eval, &server_keys, &table, q)?;
        let p = sql::parse(q, "t")?;
        if !got.matches(&plain.answer(&p.query, &p.constants)?) {
            return Err(format!("pdq:{rows}: `{q}` differs from the plaintext answer").into());
        }
    }
    let setup_s = t_setup.elapsed().as_secs_f64();
    let label = format!("pdq:{rows}");
    let timer = Timer::new(dev.clone(), stream, reps, warm.min(2))?;
    let mut out = Vec::new();
    let mut row = |op: &'static str, t: Timing| {
        log_timing(&label, op, &t);
        out.push(Row {
            op,
            t,
            reps,
            floor_us: None,
        })
    };
    let engine = Engine::new(&eval, &server_keys, &table)?;
    for (i, q) in demo::CAT_QUERIES.iter().enumerate() {
        let parsed = sql::parse(q, "t")?;
        let plan = engine.plan(&parsed.query)?;
        let calc = timer.time(
            reps,
            || {
                let words = plan.constant_words(&parsed.constants)?;
                Ok(client.encrypt_constants(&words, rows)?)
            },
            |constants| {
                Ok(match engine.start(&parsed.query, &constants)? {
                    Stage::Done(r) => r,
                    Stage::NeedReciprocals {
                        pending,
                        denominators,
                    } => {
                        let (recips, _) = client.reciprocals(&plan, &denominators)?;
                        engine.finish(pending, recips)?
                    }
                })
            },
        )?;
        row(CALC[i], calc);
        let full = timer.time(
            reps,
            || Ok(()),
            |_| {
                Ok(local::run_with(
                    &client,
                    &eval,
                    &server_keys,
                    &table,
                    q,
                    true,
                )?)
            },
        )?;
        row(FULL[i], full);
    }
    PresetResult::new(
        dev,
        "pdq",
        label.clone(),
        RingShape::of_bgv(&params),
        out,
        json!({"preset": label, "rows": rows, "parameters": "bgv CAT"}),
        setup_s,
    )
}
