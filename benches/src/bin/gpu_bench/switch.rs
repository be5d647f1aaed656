//! Scheme switching on the CUDA backend: the comparison of two CKKS vectors through LWE and
//! back (`op` `switch_compare`) and its stages on batches in device memory
//! (`switch_to_lwe_batch`: SlotToCoeff, the host ring step and extraction, the upload, the
//! PBS's key switch; `switch_pbs`: the step table by PBS; `switch_to_ckks`: the download of
//! the masks, the homomorphic decryption and the sine), every time **per slot** (the batch's median divided
//! by the slot count; `batch_wall_us` is the batch), with `slots` and each stage's `share`.
//! Preset names: `switch:N16x<slots>` (`CKKS_SWITCH_N16` with `SWITCH_CLASSIC`) and
//! `switch:CIx<slots>` (the insecure CI chain with `SWITCH_CLASSIC`).

use super::{PresetResult, R, RingShape, Row, Timing};
use ckks::{Context, Parameters, context::ring_for};
use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::prelude::*;
use fhe_math::fft::Complex64;
use fhe_math::sampler::Seed;
use gpufhe::tfhe::ClientKey;
use gpufhe::tfhe::scheme_switch::{
    CKKS_SWITCH_N16, CKKS_SWITCH_TEST_INSECURE, LweEncoding, SWITCH_CLASSIC, SchemeSwitch,
    SwitchKeys,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// Timed runs at most (a batch takes seconds).
const MAX_REPS: usize = 3;

/// `(CKKS literal, slots)` of a preset name (after `switch:`).
pub fn preset(name: &str) -> R<(ckks::ParametersLiteral, usize)> {
    let (ring, slots) = name
        .split_once('x')
        .ok_or_else(|| format!("switch preset {name:?} is not <N16|CI>x<slots>"))?;
    let slots: usize = slots
        .parse()
        .map_err(|e| format!("slots in {name:?}: {e}"))?;
    let lit = match ring {
        "N16" => CKKS_SWITCH_N16,
        "CI" => CKKS_SWITCH_TEST_INSECURE,
        other => return Err(format!("unknown switch ring {other:?} (N16, CI)").into()),
    };
    Ok((lit, slots))
}

fn per_slot(us: f64, slots: usize) -> Timing {
    let v = us / slots as f64;
    Timing {
        event_us: v,
        event_min_us: v,
        wall_us: v,
        wall_min_us: v,
        host_us: v,
        first_launch_us: None,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Times the comparison and its stages (host clock, device synchronized around each stage).
pub fn bench_preset(dev: &Arc<Device>, name: &str, reps: usize, warm: usize) -> R<PresetResult> {
    let t_setup = Instant::now();
    dev.synchronize()?;
    dev.reset_pool_peak()?;
    let (lit, slots) = preset(name)?;
    let params = Parameters::new(&lit)?;
    let be = CudaBackend::new(dev.clone(), ring_for(&params)?)?;
    let ctx = Context::with_backend(params.clone(), be)?;
    let sw_params = SWITCH_CLASSIC;
    let sk = ctx.key_generator().secret_key()?;
    let client = ClientKey::generate_random(&sw_params.tfhe)?;
    let keys = SwitchKeys::generate(&ctx, &sk, &client, &sw_params, slots, &Seed::random())?;
    let sw = SchemeSwitch::new(&ctx, &keys)?;
    let bytes = keys.bytes(&ctx);
    let be = ctx.backend();
    let top = params.max_level();
    let enc_vec = |shift: f64| -> R<_> {
        let z: Vec<Complex64> = (0..slots)
            .map(|j| Complex64::new(((j as f64 * 0.618 + shift).fract() * 2.0 - 1.0) * 0.9, 0.0))
            .collect();
        let pt = sw
            .evaluator()
            .encoder()
            .encode_with(&z, top, params.scale(top)?, slots)?;
        Ok((z, ctx.encrypt_sk(&sk, &pt)?))
    };
    let ((a, ca), (b, cb)) = (enc_vec(0.0)?, enc_vec(0.31)?);
    let enc = LweEncoding::sign(sw_params.tfhe.message_space(), 2.0)?;
    let table = sw.step_table()?;
    let eval = sw.evaluator();
    let mut t = [Vec::new(), Vec::new(), Vec::new()];
    let mut last = None;
    let reps = reps.clamp(1, MAX_REPS);
    for rep in 0..warm.min(1) + reps {
        be.synchronize()?;
        let c0 = Instant::now();
        let d = eval.sub(&ca, &cb)?;
        let lwes = sw.switch_to_lwe_batch(&d, &enc)?;
        be.synchronize()?;
        let c1 = Instant::now();
        let bits = sw.apply_lut_batch(&lwes, &table)?;
        be.synchronize()?;
        let c2 = Instant::now();
        let out = sw.switch_to_ckks_batch(&bits)?;
        be.synchronize()?;
        let c3 = Instant::now();
        if rep >= warm.min(1) {
            t[0].push((c1 - c0).as_secs_f64() * 1e6);
            t[1].push((c2 - c1).as_secs_f64() * 1e6);
            t[2].push((c3 - c2).as_secs_f64() * 1e6);
        }
        last = Some(out);
    }
    let out = last.ok_or("no run")?;
    let got = sw
        .evaluator()
        .encoder()
        .decode_slots(&ctx.decrypt(&sk, &out)?, slots)?;
    let gap = enc.gap() * 2.0;
    let mut wrong = 0usize;
    let mut worst = 0f64;
    for j in 0..slots {
        let d = a[j].re - b[j].re;
        if d.abs() >= gap {
            let want = f64::from(u8::from(d > 0.0));
            let e = (got[j].re - want).abs();
            worst = worst.max(e);
            if e >= 0.05 {
                wrong += 1;
            }
        }
    }
    let setup_s = t_setup.elapsed().as_secs_f64();
    let stages: Vec<f64> = t.iter().map(|v| median(v.clone())).collect();
    let total: f64 = stages.iter().sum();
    eprintln!(
        "  switch:{name}: {slots} slots, total {:.1} ms = {:.2} us/slot (to LWE {:.0}%, PBS {:.0}%, back {:.0}%); wrong {wrong}, worst {worst:.2e}",
        total / 1e3,
        total / slots as f64,
        100.0 * stages[0] / total,
        100.0 * stages[1] / total,
        100.0 * stages[2] / total
    );
    let ops = [
        "switch_compare",
        "switch_to_lwe",
        "switch_pbs",
        "switch_to_ckks",
    ];
    let batch = [total, stages[0], stages[1], stages[2]];
    let rows = ops
        .iter()
        .zip(batch)
        .map(|(&op, us)| Row {
            op,
            t: per_slot(us, slots),
            reps,
            floor_us: None,
        })
        .collect();
    let preset_name = format!("switch:{name}");
    PresetResult::new(
        dev,
        "switch",
        preset_name.clone(),
        RingShape::of_ckks(&lit),
        rows,
        json!({
            "preset": preset_name,
            "slots": slots,
            "tfhe": sw_params.tfhe.name,
            "batch_us": {"total": total, "to_lwe": stages[0], "pbs": stages[1], "to_ckks": stages[2]},
            "wrong_slots": wrong,
            "worst_bit_error": worst,
            "key_bytes": {
                "total": bytes.total, "rotation": bytes.rotation_keys, "ring_key": bytes.ring_key,
                "bootstrap": bytes.bootstrap_key, "lwe_key_switch": bytes.lwe_key_switch,
                "lwe_key_ciphertext": bytes.lwe_key_ciphertext, "relin": bytes.relin_key,
            },
            "method": "host clock with a device synchronize around each stage; median of reps after one warm-up; per-slot rows divide the batch by the slot count",
        }),
        setup_s,
    )
}

/// Extra JSON fields of a switch row: the slot count, the batch time and the stage's share.
pub fn row_fields(preset: &PresetResult, row: &Row) -> Option<Value> {
    if preset.scheme != "switch" {
        return None;
    }
    let slots = preset.keys["slots"].as_u64()?;
    let total = preset.keys["batch_us"]["total"].as_f64()?;
    let batch = row.t.wall_us * slots as f64;
    Some(
        json!({"slots": slots, "batch_wall_us": batch, "share": batch / total, "wall_us_unit": "per slot"}),
    )
}
