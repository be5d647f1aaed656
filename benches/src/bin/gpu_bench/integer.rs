//! BGV (CAT's Table III) and BFV (Table II) operators on the CUDA backend, timed like the CKKS
//! ones. Both schemes share one body (a macro over the crate path) since their APIs coincide.

use super::{Lcg, PresetResult, R, RingShape, Row, Timer, Timing, log_timing};
use gpufhe::bgv::context::ring_for;
use gpufhe::bgv::{ParametersLiteral, RowRotations, params};
use gpufhe::cuda::{CudaBackend, Device};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

/// The integer-scheme presets `gpu_bench` knows (names after the `bgv:` / `bfv:` prefix).
pub fn preset(name: &str) -> R<ParametersLiteral> {
    Ok(match name {
        "CAT" => params::CAT,
        "CAT_COMPAT" => params::CAT_COMPAT,
        "PHANTOM_INT" => params::PHANTOM_INT,
        "N13" => params::N13,
        other => {
            return Err(format!(
                "unknown BGV/BFV preset {other:?} (known: CAT, CAT_COMPAT, PHANTOM_INT, N13)"
            )
            .into());
        }
    })
}

/// Times every operator of `scheme` ("bgv" or "bfv") at one preset.
pub fn bench_preset(
    dev: &Arc<Device>,
    scheme: &'static str,
    name: &str,
    reps: usize,
    warm: usize,
    seed: u64,
) -> R<PresetResult> {
    match scheme {
        "bgv" => bench_bgv(dev, name, reps, warm, seed),
        _ => bench_bfv(dev, name, reps, warm, seed),
    }
}

macro_rules! integer_bench {
    ($fn_name:ident, $scheme:literal, $extra:ident, $krate:path, $new_params:expr, $encoder:expr) => {
        fn $fn_name(dev: &Arc<Device>, name: &str, reps: usize, warm: usize, seed: u64) -> R<PresetResult> {
            use $krate as s;
            let t_setup = Instant::now();
            dev.synchronize()?;
            dev.reset_pool_peak()?;
            let params = $new_params(&preset(name)?)?;
            let backend = CudaBackend::new(dev.clone(), ring_for(&params)?)?;
            let stream = backend.stream().clone();
            let ctx = s::Context::with_backend(params.clone(), backend)?;
            let enc = $encoder(&ctx);
            let eval = s::Evaluator::new(&ctx);
            let kg = ctx.key_generator();
            let (n, t, top) = (params.n(), params.t(), params.max_level());
            let sk = kg.secret_key()?;
            let pk = kg.public_key(&sk)?;
            let rlk = kg.relin_key(&sk)?;
            let mut rng = Lcg(seed);
            let random_step = 2 + (rng.next() % (n as u64 / 2 - 2)) as i64;
            let gk = kg.galois_keys(&sk, &eval.galois_elements(&[1, random_step], true)?)?;
            let dec = s::Decryptor::new(&ctx, &sk);
            // Inputs from the bench's own generator (the test-support crate is a dev-dependency,
            // which a binary cannot use).
            let x: Vec<u64> = (0..n).map(|_| rng.next() % t).collect();
            let y: Vec<u64> = (0..n).map(|_| rng.next() % t).collect();
            let px = enc.encode(&x, top)?;
            let py = enc.encode(&y, top)?;
            let cx = ctx.encrypt_pk(&pk, &px)?;
            let cy = ctx.encrypt_pk(&pk, &py)?;
            // Sanity check (untimed): a product decrypts exactly.
            let want: Vec<u64> = x.iter().zip(&y).map(|(&a, &b)| ((a as u128 * b as u128) % t as u128) as u64).collect();
            if dec.decrypt(&eval.mul_relin(&cx, &cy, &rlk)?)? != want {
                return Err(format!("{}:{name}: multiply does not decrypt exactly", $scheme).into());
            }
            let setup_s = t_setup.elapsed().as_secs_f64();

            let timer = Timer::new(dev.clone(), stream, reps, warm)?;
            let mut rows = Vec::new();
            let label = format!("{}:{name}", $scheme);
            let mut row = |op: &'static str, t: Timing| {
                log_timing(&label, op, &t);
                rows.push(Row { op, t, reps, floor_us: None })
            };
            let none = || Ok(());
            row("encode_batch", timer.time(reps, none, |_| Ok(enc.encode(&x, top)?))?);
            row("encode_unbatch", timer.time(reps, none, |_| Ok(enc.encode_unbatch(&x, top)?))?);
            row("encrypt", timer.time(reps, none, |_| Ok(ctx.encrypt_pk(&pk, &px)?))?);
            row("decrypt", timer.time(reps, none, |_| Ok(dec.decrypt(&cx)?))?);
            row("add", timer.time(reps, none, |_| Ok(eval.add(&cx, &cy)?))?);
            row("multiply", timer.time(reps, none, |_| Ok(eval.mul(&cx, &cy)?))?);
            row("multiply_plain", timer.time(reps, none, |_| Ok(eval.mul_plain(&cx, &py)?))?);
            row("square", timer.time(reps, none, |_| Ok(eval.square(&cx)?))?);
            row("relinearize", timer.time(reps, || Ok(eval.mul(&cx, &cy)?), |p| Ok(eval.relinearize(p, &rlk)?))?);
            row("mul_relin", timer.time(reps, none, |_| Ok(eval.mul_relin(&cx, &cy, &rlk)?))?);
            integer_bench!(@$extra timer, reps, row, eval, cx, cy, rlk, none);
            row("rotate_one_step", timer.time(reps, none, |_| Ok(eval.rotate_rows(&cx, 1, &gk)?))?);
            row("rotate_random", timer.time(reps, none, |_| Ok(eval.rotate_rows(&cx, random_step, &gk)?))?);
            row("rotate_columns", timer.time(reps, none, |_| Ok(eval.rotate_columns(&cx, &gk)?))?);
            PresetResult::new(
                dev,
                $scheme,
                label.clone(),
                RingShape::of_bgv(&params),
                rows,
                json!({"preset": label, "t": t, "random_step": random_step}),
                setup_s,
            )
        }
    };
    // BGV: the modulus switch, and multiply + relinearize without the switch that `mul_relin`
    // fuses in (the default policy), to compare with peers that time the two alone.
    (@mod_switch $timer:ident, $reps:ident, $row:ident, $eval:ident, $cx:ident, $cy:ident, $rlk:ident, $none:ident) => {
        $row("mod_switch", $timer.time($reps, $none, |_| Ok($eval.mod_switch(&$cx)?))?);
        $row(
            "mul_relin_no_switch",
            $timer.time($reps, $none, |_| Ok($eval.mul_relin_no_switch(&$cx, &$cy, &$rlk)?))?,
        );
    };
    (@no_extra $timer:ident, $reps:ident, $row:ident, $eval:ident, $cx:ident, $cy:ident, $rlk:ident, $none:ident) => {};
}

integer_bench!(
    bench_bgv,
    "bgv",
    mod_switch,
    gpufhe::bgv,
    gpufhe::bgv::Parameters::new,
    gpufhe::bgv::Encoder::new
);
integer_bench!(
    bench_bfv,
    "bfv",
    no_extra,
    gpufhe::bfv,
    gpufhe::bfv::params::new,
    |c: &gpufhe::bfv::Context<CudaBackend>| c.encoder()
);
