//! BoostCom's workloads (`compare::workloads`, the code of the `compare_*` examples) on the
//! CUDA backend, end to end: encryption of the inputs, the computation and the decryption of
//! the result (wall time with a device synchronize before and after, as every row; key
//! generation is in `setup_s`). Every timed run is checked against the plaintext result.
//! All run at BGV's CAT chain (`U32_THROUGHPUT`'s parameters: N = 2^15, 16 levels).
//!
//! | preset | rows (`op`) | what |
//! |---|---|---|
//! | `cmp:sort16` | `sort16_u32`, `sort16_u32_digit_par`, `sort16_u32_compute` | sort of 16 encrypted u32 by the comparison matrix |
//! | `cmp:min16` | `min16_u32`, `min16_u32_digit_par`, `min16_u32_compute` | minimum of 16 encrypted u32 |
//! | `cmp:mlp_batch` | `mlp_batch` | the MLP on one ciphertext of 32 images of 8 × 8 |
//! | `cmp:recolor` | `recolor` | recoloring of a 128 × 128 picture (one ciphertext) |
//! | `cmp:private_query` | `private_query`, `private_query_blocking` | the private query of type 2, comparisons non-blocking / blocking |
//!
//! The `_digit_par` rows run the digit-level parallelism of the comparator (rayon tasks that
//! share the backend's one stream); the others run it off, as the comparison rows do. The
//! `_compute` rows time the sort or minimum alone (inputs encrypted untimed, the result left
//! encrypted), which is what tfhe-rs's peer rows of the same names time.

use super::super::{PresetResult, R, RingShape, Row, Timer, Timing, log_timing};
use ::compare::ArrayOp;
use ::compare::presets::U32_THROUGHPUT;
use ::compare::workloads::{array, mlp, query, recolor};
use gpufhe::bgv::context::ring_for;
use gpufhe::bgv::{Context, Parameters};
use gpufhe::cuda::{CudaBackend, Device};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// Most timed runs per row (a workload is far longer than an operator).
const MAX_REPS: usize = 10;

/// The model and test images of the MLP (as in `examples/compare_mlp.rs`).
const MLP_DATA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/data/mlp_digits.txt"
));
/// The picture of the recoloring (as in `examples/compare_recolor.rs`).
const PICTURE: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/data/camera_128.pgm"
));
/// The recoloring threshold of the example.
const THRESHOLD: i64 = 100;

/// A workload preset (the name after `cmp:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// `cmp:sort16`.
    Sort16,
    /// `cmp:min16`.
    Min16,
    /// `cmp:mlp_batch`.
    MlpBatch,
    /// `cmp:recolor`.
    Recolor,
    /// `cmp:private_query`.
    PrivateQuery,
}

/// The names of the workload presets (after `cmp:`).
pub const NAMES: &str = "sort16, min16, mlp_batch, recolor, private_query";

/// The workload of a preset name (after `cmp:`), if it is one.
pub fn workload(name: &str) -> Option<Workload> {
    Some(match name {
        "sort16" => Workload::Sort16,
        "min16" => Workload::Min16,
        "mlp_batch" => Workload::MlpBatch,
        "recolor" => Workload::Recolor,
        "private_query" => Workload::PrivateQuery,
        _ => return None,
    })
}

/// Rows of one preset, logged as they come.
struct Rows<'a> {
    label: &'a str,
    reps: usize,
    rows: Vec<Row>,
}

impl Rows<'_> {
    fn push(&mut self, op: &'static str, t: Timing) {
        log_timing(self.label, op, &t);
        self.rows.push(Row {
            op,
            t,
            reps: self.reps,
            floor_us: None,
        });
    }
}

/// A mismatch against the plaintext as an error of the preset.
fn check(ok: bool, label: &str, what: &str) -> R<()> {
    if ok {
        Ok(())
    } else {
        Err(format!("{label}: {what} differs from the plaintext result").into())
    }
}

/// Times one workload preset end to end.
pub fn bench_workload(
    dev: &Arc<Device>,
    w: Workload,
    name: &str,
    reps: usize,
    warm: usize,
) -> R<PresetResult> {
    let reps = reps.clamp(1, MAX_REPS);
    let t_setup = Instant::now();
    dev.synchronize()?;
    dev.reset_pool_peak()?;
    let params = Parameters::new(&U32_THROUGHPUT.params)?;
    let backend = CudaBackend::new(dev.clone(), ring_for(&params)?)?;
    let stream = backend.stream().clone();
    let ctx = Context::with_backend(params.clone(), backend)?;
    let label = format!("cmp:{name}");
    let timer = Timer::new(dev.clone(), stream, reps, warm.min(2))?;
    let mut rows = Rows {
        label: &label,
        reps,
        rows: Vec::new(),
    };
    let mut setup_s = 0.0;
    let mut done_setup = || setup_s = t_setup.elapsed().as_secs_f64();
    let none = || Ok(());
    let keys: Value = match w {
        Workload::Sort16 | Workload::Min16 => {
            let (op, tag, par_tag, compute_tag) = if w == Workload::Sort16 {
                (
                    ArrayOp::Sort,
                    "sort16_u32",
                    "sort16_u32_digit_par",
                    "sort16_u32_compute",
                )
            } else {
                (
                    ArrayOp::Min,
                    "min16_u32",
                    "min16_u32_digit_par",
                    "min16_u32_compute",
                )
            };
            let work = array::ArrayWorkload::new(&ctx, &U32_THROUGHPUT, 16, op)?;
            let mut rng = super::super::Lcg(0x5047);
            let values: Vec<i128> = (0..16)
                .map(|_| (rng.next() & 0xffff_ffff) as i128)
                .collect();
            let want = array::plain(&values, op);
            let cmp = work.comparator();
            cmp.set_digit_parallelism(false);
            let (got, phases) = work.run(&values)?;
            check(got == want, &label, tag)?;
            done_setup();
            for (par, row) in [(false, tag), (true, par_tag)] {
                cmp.set_digit_parallelism(par);
                let t = timer.time(reps, none, |_| {
                    let (got, _) = work.run(&values)?;
                    check(got == want, &label, row)
                })?;
                rows.push(row, t);
            }
            cmp.set_digit_parallelism(false);
            // The computation alone (encrypted inputs ready, the result left encrypted), as
            // tfhe-rs's peer rows time it.
            let t = timer.time(
                reps,
                || Ok(work.encrypt(&values)?),
                |input| Ok(work.compute(&input)?),
            )?;
            rows.push(compute_tag, t);
            let levels = match op {
                ArrayOp::Sort => cmp.sort_levels(16),
                ArrayOp::Min => cmp.min_levels(16),
            };
            json!({
                "preset": label, "words": 16, "word_bits": 32, "digit_bits": 4,
                "levels": levels, "first_run_phases_s": phases_json(&phases),
            })
        }
        Workload::MlpBatch => {
            let model = mlp::Model::parse(MLP_DATA)?;
            let work = mlp::Mlp::new(&ctx, &model)?;
            let per_ct = work.images_per_ciphertext();
            let images = &model.images[..per_ct.min(model.labels.len()) * mlp::INPUTS];
            let want: Vec<Vec<i64>> = images
                .chunks(mlp::INPUTS)
                .map(|x| model.logits(x))
                .collect();
            let (got, _, phases) = work.run(images)?;
            check(got == want, &label, "the logits")?;
            done_setup();
            let t = timer.time(reps, none, |_| {
                let (got, _, _) = work.run(images)?;
                check(got == want, &label, "the logits")
            })?;
            rows.push("mlp_batch", t);
            json!({
                "preset": label, "images": want.len(), "relu_levels": work.relu_levels(),
                "first_run_phases_s": phases_json(&phases),
            })
        }
        Workload::Recolor => {
            let (w, h, pixels) = recolor::read_pgm(PICTURE)?;
            let work = recolor::Recolor::new(&ctx, THRESHOLD)?;
            let want = recolor::plain(&pixels, THRESHOLD);
            let (got, _, phases) = work.run(&pixels)?;
            check(got == want, &label, "the picture")?;
            done_setup();
            let t = timer.time(reps, none, |_| {
                let (got, _, _) = work.run(&pixels)?;
                check(got == want, &label, "the picture")
            })?;
            rows.push("recolor", t);
            json!({
                "preset": label, "pixels": w * h, "lt_levels": work.levels(),
                "threshold": THRESHOLD, "first_run_phases_s": phases_json(&phases),
            })
        }
        Workload::PrivateQuery => {
            let work = query::PrivateQuery::new(&ctx)?;
            let mut rng = super::super::Lcg(77);
            let x: Vec<u64> = (0..100).map(|_| rng.next() % 20).collect();
            let wts: Vec<u64> = (0..100).map(|_| rng.next() % 10).collect();
            let q = 2;
            let want = query::plain(&x, &wts, q, params.t());
            let (got, _, phases) = work.run(&x, &wts, q, true)?;
            check(got == want, &label, "the answer")?;
            done_setup();
            for (overlap, row) in [(true, "private_query"), (false, "private_query_blocking")] {
                let t = timer.time(reps, none, |_| {
                    let (got, _, _) = work.run(&x, &wts, q, overlap)?;
                    check(got == want, &label, row)
                })?;
                rows.push(row, t);
            }
            json!({
                "preset": label, "column": x.len(), "query_type": q, "query_word_bits": 8,
                "first_run_phases_s": phases_json(&phases),
            })
        }
    };
    PresetResult::new(
        dev,
        "compare",
        label.clone(),
        RingShape::of_bgv(&params),
        rows.rows,
        keys,
        setup_s,
    )
}

/// The phases of one run as JSON (seconds; the first run includes kernel loads).
fn phases_json(p: &::compare::workloads::Phases) -> Value {
    json!({"encrypt": p.encrypt, "compute": p.compute, "decrypt": p.decrypt, "total": p.total()})
}
