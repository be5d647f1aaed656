//! Comparisons of encrypted 64-bit integers (`compare` crate) on the CUDA backend, presets
//! `cmp:<name>` (`U64_THROUGHPUT`, `U64_LATENCY`, `U32_THROUGHPUT`):
//!
//! - `lt64_amortized` (at a throughput preset): `a < b` on two full ciphertexts of words
//!   (2048 64-bit pairs at `U64_THROUGHPUT`); `median_us`/`wall_us` **per comparison** (the
//!   ciphertext's time divided by its words), and `lt_ciphertext` the whole ciphertext;
//! - `lt64_latency` (at `U64_LATENCY`): `a < b` for one pair, end to end of the comparison
//!   (the result stays encrypted);
//! - `eq_ciphertext`: `a = b` on the full ciphertexts.
//!
//! Digit-level parallelism is off (one stream: the halves of a step would only interleave).
//!
//! The workload presets (`cmp:sort16`, `cmp:min16`, `cmp:mlp_batch`, `cmp:recolor`,
//! `cmp:private_query`) are in [`workloads`].

mod workloads;

use super::{PresetResult, R, RingShape, Row, Timer, Timing, log_timing};
use ::compare::presets::{Preset, U32_THROUGHPUT, U64_LATENCY, U64_THROUGHPUT};
use ::compare::{Comparator, CompareKeys, Predicate};
use gpufhe::bgv::context::ring_for;
use gpufhe::bgv::{Context, Decryptor, Parameters};
use gpufhe::cuda::{CudaBackend, Device};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

/// What a `cmp:` preset times.
pub enum Bench {
    /// The comparisons of a parameter preset.
    Compare(Preset),
    /// A workload end to end.
    Workload(workloads::Workload),
}

/// The comparison presets `gpu_bench` knows (names after the `cmp:` prefix).
pub fn preset(name: &str) -> R<Bench> {
    if let Some(w) = workloads::workload(name) {
        return Ok(Bench::Workload(w));
    }
    Ok(Bench::Compare(match name {
        "U64_THROUGHPUT" => U64_THROUGHPUT,
        "U64_LATENCY" => U64_LATENCY,
        "U32_THROUGHPUT" => U32_THROUGHPUT,
        other => {
            return Err(format!(
                "unknown comparison preset {other:?} (known: U64_THROUGHPUT, U64_LATENCY, U32_THROUGHPUT, {})",
                workloads::NAMES
            )
            .into());
        }
    }))
}

/// `t` divided by `words` (a per-comparison figure).
fn per_word(t: Timing, words: usize) -> Timing {
    let w = words as f64;
    Timing {
        event_us: t.event_us / w,
        event_min_us: t.event_min_us / w,
        wall_us: t.wall_us / w,
        wall_min_us: t.wall_min_us / w,
        host_us: t.host_us / w,
        first_launch_us: t.first_launch_us,
    }
}

/// Times the comparisons (or the workload) of one preset.
pub fn bench_preset(dev: &Arc<Device>, name: &str, reps: usize, warm: usize) -> R<PresetResult> {
    let p = match preset(name)? {
        Bench::Compare(p) => p,
        Bench::Workload(w) => return workloads::bench_workload(dev, w, name, reps, warm),
    };
    let t_setup = Instant::now();
    dev.synchronize()?;
    dev.reset_pool_peak()?;
    let params = Parameters::new(&p.params)?;
    let backend = CudaBackend::new(dev.clone(), ring_for(&params)?)?;
    let stream = backend.stream().clone();
    let ctx = Context::with_backend(params.clone(), backend)?;
    let layout = p.layout()?;
    let kg = ctx.key_generator();
    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let cmp = Comparator::new(&ctx, layout, CompareKeys::generate(&ctx, &sk, &layout)?)?;
    cmp.set_digit_parallelism(false);
    let dec = Decryptor::new(&ctx, &sk);
    let word = layout.word();
    let mut rng = super::Lcg(0xc0ffee);
    let mut draw = || -> i128 {
        let u = ((rng.next() as u128) << 53 | rng.next() as u128) & ((1u128 << word.bits()) - 1);
        word.from_offset(u as u64)
    };
    let latency = name == "U64_LATENCY";
    let words = if latency {
        1
    } else {
        layout.words_per_ciphertext()
    };
    let a: Vec<i128> = (0..words).map(|_| draw()).collect();
    let b: Vec<i128> = (0..words)
        .map(|i| if i % 4 == 0 { a[i] } else { draw() })
        .collect();
    let ca = cmp.encrypt(&pk, &a)?;
    let cb = cmp.encrypt(&pk, &b)?;
    // Sanity check (untimed): the comparison decrypts to the plaintext one.
    let got = cmp.decrypt_bits(&dec, &cmp.lt(&ca, &cb)?)?;
    if got
        .iter()
        .zip(a.iter().zip(&b))
        .any(|(&g, (x, y))| g != u64::from(x < y))
    {
        return Err(format!("cmp:{name}: lt does not decrypt to the plaintext comparison").into());
    }
    let setup_s = t_setup.elapsed().as_secs_f64();

    let timer = Timer::new(dev.clone(), stream, reps, warm)?;
    let label = format!("cmp:{name}");
    let mut rows = Vec::new();
    let mut row = |op: &'static str, t: Timing| {
        log_timing(&label, op, &t);
        rows.push(Row {
            op,
            t,
            reps,
            floor_us: None,
        })
    };
    let none = || Ok(());
    let lt = timer.time(reps, none, |_| Ok(cmp.lt(&ca, &cb)?))?;
    let eq = timer.time(reps, none, |_| Ok(cmp.eq(&ca, &cb)?))?;
    if latency {
        row("lt64_latency", lt);
        row("eq64_latency", eq);
    } else {
        let tag = if word.bits() == 64 {
            "lt64_amortized"
        } else {
            "lt32_amortized"
        };
        row(tag, per_word(lt, words));
        row("lt_ciphertext", lt);
        row("eq_ciphertext", eq);
    }
    let cost = cmp.cost(Predicate::Lt);
    PresetResult::new(
        dev,
        "compare",
        label.clone(),
        RingShape::of_bgv(&params),
        rows,
        json!({
            "preset": label,
            "word_bits": word.bits(),
            "digit_bits": layout.digit_bits(),
            "words_per_ciphertext": layout.words_per_ciphertext(),
            "lt_levels": cost.levels,
            "lt_products": cost.products,
            "lt_rotations": cost.rotations,
        }),
        setup_s,
    )
}
