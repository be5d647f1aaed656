//! CAT's four queries and the SQLite test set on the CUDA backend, compared with the CPU
//! backend and the plaintext. Ignored without a device (`cargo test -p pdq -- --ignored`).

mod common;

use bgv::{Context, Evaluator, ParametersLiteral};
use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::IntegerBackend;
use pdq::{Client, PlainTable, QueryResult, demo, keys, local, presets, sql};
use std::sync::Arc;

fn device() -> Arc<Device> {
    let d =
        Device::new(0).unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
    d.warm_up().expect("kernel modules compile");
    d
}

fn cuda_ctx(literal: &ParametersLiteral) -> Context<CudaBackend> {
    let params = keys::parameters(literal).unwrap();
    let ring = bgv::context::ring_for(&params).unwrap();
    Context::with_backend(params, CudaBackend::new(device(), ring).unwrap()).unwrap()
}

/// The answers of `queries` on `plain`, encrypted on `ctx`'s backend.
fn answers<B: IntegerBackend>(
    ctx: &Context<B>,
    literal: &ParametersLiteral,
    plain: &PlainTable,
    queries: &[&str],
) -> Vec<QueryResult> {
    let (ck, sk) = keys::generate(ctx, literal, plain.rows()).unwrap();
    let client = Client::new(ctx, ck).unwrap();
    let table = client.encrypt_table(plain, |_| {}).unwrap();
    let eval = Evaluator::new(ctx);
    queries
        .iter()
        .map(|q| local::run(&client, &eval, &sk, &table, q).unwrap().0)
        .collect()
}

fn check_backends(literal: &ParametersLiteral, plain: &PlainTable, queries: &[&str]) {
    let gpu = answers(&cuda_ctx(literal), literal, plain, queries);
    let cpu_ctx = Context::cpu(keys::parameters(literal).unwrap()).unwrap();
    let cpu = answers(&cpu_ctx, literal, plain, queries);
    for ((q, g), c) in queries.iter().zip(&gpu).zip(&cpu) {
        let p = sql::parse(q, &plain.name).unwrap();
        let want = plain.answer(&p.query, &p.constants).unwrap();
        assert!(
            g.matches(&want),
            "GPU {q}: {} vs {}",
            g.summary(4),
            want.summary(4)
        );
        assert_eq!(g, c, "{q}: the GPU and CPU answers differ");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_cat_queries_at_the_test_preset() {
    check_backends(&presets::TEST, &PlainTable::demo(128), &demo::CAT_QUERIES);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_cat_queries_on_1024_rows_at_cat() {
    check_backends(
        &bgv::params::CAT,
        &PlainTable::demo(1024),
        &demo::CAT_QUERIES,
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_sqlite_set_on_the_main_table() {
    let plain = common::main_table();
    let queries = [
        "SELECT Index() FROM t WHERE a < b OR NOT (d = e)",
        "SELECT SUM(a + b), COUNT(*), AVG(c) FROM t WHERE c >= 1000",
        "SELECT a * b, a - c FROM t WHERE b != 0",
        "SELECT (a - c) / (b - c) FROM t WHERE a > 4294967294",
    ];
    check_backends(&presets::TEST, &plain, &queries);
}
