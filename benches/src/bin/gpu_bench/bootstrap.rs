//! CKKS bootstrapping on the CUDA backend: the whole bootstrap (`op` `bootstrap`, with the
//! precision reached, `precision_bits` = −log2 of the largest slot error, inputs uniform in
//! [−1, 1] real and imaginary) and each stage on its own inputs (`bootstrap_mod_raise`,
//! `bootstrap_coeff_to_slot`, `bootstrap_eval_mod` for one half and `bootstrap_eval_mod_both`
//! for the two a full-slot bootstrap runs (side by side, the second on another stream:
//! [`ckks::bootstrap::Bootstrapper::with_side_evaluator`]), `bootstrap_slot_to_coeff`: the
//! stages with `..._both` add up to `bootstrap`), and the unit costs `bootstrap_product` (one
//! `mul_relin_rescale` at EvalMod's input level) and `bootstrap_rotation` (one rotation at the
//! top level).
//! Preset names: `boot:BOOT_N12_INSECURE`, `boot:BOOT_N16`, `boot:BOOT_N16_STC_FIRST`, `boot:BOOT_N16_MIXED` (the mixed
//! chain: 9 × 45-bit application primes under 16 × 57-bit bootstrapping primes, dnum 4),
//! `boot:BOOT_N12_MIXED_INSECURE` (a dense secret with sparse-secret encapsulation for all);
//! a suffix `x<slots>` bootstraps that many slots (a power of two below `N/2`, sparse
//! packing; e.g. `boot:BOOT_N16_MIXEDx4096`, beside HEAP's 4096 slots), else all `N/2`.
//! The `keys` entry also carries the modelled NTT limbs of the key switches
//! ([`ckks::bootstrap::BootstrapPlan::ntt_limbs`], a model to set beside the measured time). Key and plaintext memory go to the preset's `keys` entry. Each
//! row's `floor_us` is the key and plaintext bytes the stage must read
//! ([`ckks::bootstrap::BootstrapPlan::stage_bytes`], ciphertexts left out) over the measured
//! copy bandwidth.

use super::{PresetResult, R, RingShape, Row, Timer, log_timing};
use ckks::bootstrap::{
    BOOT_N12_CONFIG, BOOT_N16_CONFIG, BOOT_N16_MIXED_CONFIG, BOOT_N16_STC_FIRST_CONFIG,
    BootstrapConfig, BootstrapPlan, Bootstrapper, EncapsulationKeys,
};
use ckks::params::{
    BOOT_N12_INSECURE, BOOT_N12_MIXED_INSECURE, BOOT_N16, BOOT_N16_MIXED, BOOT_N16_STC_FIRST,
    BOOT_SECRET_WEIGHT, ParametersLiteral,
};
use ckks::precision::{InputGenerator, median_precision_bits, precision_bits, uniform_complex};
use ckks::{Context, Evaluator, Parameters, context::ring_for};
use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::prelude::*;
use fhe_math::sampler::Seed;
use rlwe::encrypt;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

/// Timed runs per row at most (a bootstrap takes tens of milliseconds).
const MAX_REPS: usize = 10;

/// The parameters and configuration of a bootstrapping preset name (after `boot:`; a slot
/// suffix `x<slots>` is left to [`bench_preset`]), with an
/// optional EvalMod override for comparisons, `NAME@<degree>r<double angles>`
/// (e.g. `BOOT_N16@63r1`), or a key-switch shape override,
/// `NAME/k<special primes>s<scale bits>d<dnum>` (e.g. `BOOT_N16/k5s56d6`; the parameter
/// checks, 128-bit security included, apply as to any literal).
pub fn preset(name: &str) -> R<(ParametersLiteral, BootstrapConfig)> {
    if let (base, Some(_)) = slots_of(name)? {
        return preset(base);
    }
    if let Some((base, over)) = name.split_once('/') {
        let (lit, config) = preset(base)?;
        let parsed = over
            .strip_prefix('k')
            .and_then(|r| r.split_once('s'))
            .and_then(|(k, r)| r.split_once('d').map(|(s, d)| (k, s, d)))
            .and_then(|(k, s, d)| Some((k.parse().ok()?, s.parse().ok()?, d.parse().ok()?)));
        let Some((special_primes, scale_bits, dnum)) = parsed else {
            return Err(format!(
                "key-switch override {over:?} is not k<special primes>s<scale bits>d<dnum>"
            )
            .into());
        };
        return Ok((
            ParametersLiteral {
                special_primes,
                scale_bits,
                dnum,
                ..lit
            },
            config,
        ));
    }
    if let Some((base, over)) = name.split_once('@') {
        let (lit, config) = preset(base)?;
        let parsed = over
            .split_once('r')
            .and_then(|(d, r)| Some((d.parse().ok()?, r.parse().ok()?)));
        let Some((cos_degree, double_angle)) = parsed else {
            return Err(
                format!("EvalMod override {over:?} is not <degree>r<double angles>").into(),
            );
        };
        return Ok((
            lit,
            BootstrapConfig {
                cos_degree,
                double_angle,
                ..config
            },
        ));
    }
    Ok(match name {
        "BOOT_N12_INSECURE" => (BOOT_N12_INSECURE, BOOT_N12_CONFIG),
        "BOOT_N16" => (BOOT_N16, BOOT_N16_CONFIG),
        "BOOT_N16_MIXED" => (BOOT_N16_MIXED, BOOT_N16_MIXED_CONFIG),
        "BOOT_N16_STC_FIRST" => (BOOT_N16_STC_FIRST, BOOT_N16_STC_FIRST_CONFIG),
        "BOOT_N12_MIXED_INSECURE" => (BOOT_N12_MIXED_INSECURE, BOOT_N12_CONFIG),
        other => {
            return Err(format!(
                "unknown bootstrapping preset {other:?} (known: BOOT_N12_INSECURE, BOOT_N16, \
                 BOOT_N16_MIXED, BOOT_N16_STC_FIRST, BOOT_N12_MIXED_INSECURE)"
            )
            .into());
        }
    })
}

/// A preset name's base and its slot count (`NAME x <slots>`), `None` for full slots.
fn slots_of(name: &str) -> R<(&str, Option<usize>)> {
    match name.rsplit_once('x') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            Ok((base, Some(n.parse()?)))
        }
        _ => Ok((name, None)),
    }
}

/// Times a bootstrap (full or sparse slots) and its stages at one preset.
pub fn bench_preset(
    dev: &Arc<Device>,
    name: &str,
    reps: usize,
    warm: usize,
    bw_gbps: f64,
) -> R<PresetResult> {
    let t_setup = Instant::now();
    dev.synchronize()?;
    dev.reset_pool_peak()?;
    let (base, slots) = slots_of(name)?;
    let (lit, config) = preset(base)?;
    let params = Parameters::new(&lit)?;
    let slots = slots.unwrap_or(params.slots());
    let be = CudaBackend::new(dev.clone(), ring_for(&params)?)?;
    let ctx = Context::with_backend(params.clone(), be)?;
    let be = ctx.backend();
    let plan = BootstrapPlan::new(&params, config, slots)?;
    let (rot_keys, rot_key_bytes, pt_bytes) = (
        plan.rotation_key_count(),
        plan.rotation_key_bytes(),
        plan.plaintext_bytes(),
    );
    let levels = plan.levels();
    let bytes = plan.stage_bytes(true);
    let ntt = plan.ntt_limbs(true);
    let floor = |b: usize| Some(b as f64 / (bw_gbps * 1e9) * 1e6);
    // EvalMod's imaginary half on a second backend, on another stream of the device.
    let side = CudaBackend::on_stream(dev.clone(), dev.stream(1).clone(), ring_for(&params)?)?;
    let side = Context::with_backend(params.clone(), side)?;
    let boot = Bootstrapper::from_plan(&ctx, plan)?.with_side_evaluator(Evaluator::new(&side)?)?;
    let kg = ctx.key_generator();
    let sk = kg.secret_key()?;
    let ephemeral = kg.sparse_secret_key_from_seed(Seed::random(), BOOT_SECRET_WEIGHT)?;
    let encapsulation = EncapsulationKeys::generate(&ctx, &sk, &ephemeral)?;
    let rlk = kg.relin_key(&sk)?;
    let gk = kg.galois_keys(&sk, &boot.galois_elements())?;
    let eval = boot.evaluator();
    let z = uniform_complex(&mut InputGenerator::new(2026), slots);
    let scale = params.scale(levels.input_level)?;
    let pt = eval
        .encoder()
        .encode_with(&z, levels.input_level, scale, slots)?;
    let ct = encrypt::encrypt_sk(be, &sk, &pt)?;
    // The stages' inputs, and the precision of one bootstrap (SlotToCoeff first: its
    // matrices before ModRaise).
    let first = levels.input_level > 0;
    let coefficients = if first {
        boot.slot_to_coeff_first(&ct, &gk)?
    } else {
        ct.duplicate(be)?
    };
    let raised = boot.mod_raise_with(&coefficients, Some(&encapsulation))?;
    let halves = boot.coeff_to_slot(&raised, &gk)?;
    let modded = boot.eval_mod_all(&halves, &rlk)?;
    let out = boot.slot_to_coeff(&modded, &gk)?;
    let got = eval
        .encoder()
        .decode_slots(&encrypt::decrypt(be, &sk, &out)?, slots)?;
    let (bits, median_bits) = (precision_bits(&got, &z), median_precision_bits(&got, &z));
    be.synchronize()?;
    let setup_s = t_setup.elapsed().as_secs_f64();
    eprintln!(
        "  {name}: precision {bits:.2} bits (median {median_bits:.2}); output level {}; \
         {rot_keys} rotation keys, {:.2} GB; plaintexts {:.2} GB",
        levels.output_level,
        rot_key_bytes as f64 / 1e9,
        pt_bytes as f64 / 1e9
    );

    let reps = reps.clamp(1, MAX_REPS);
    let timer = Timer::new(dev.clone(), be.stream().clone(), reps, warm.min(2))?;
    let none = || -> R<()> { Ok(()) };
    let mut rows = Vec::new();
    let mut push = |op: &'static str, t, floor_us| {
        log_timing(name, op, &t);
        rows.push(Row {
            op,
            t,
            reps,
            floor_us,
        });
    };
    let total = bytes.mod_raise + bytes.coeff_to_slot + bytes.eval_mod + bytes.slot_to_coeff;
    push(
        "bootstrap",
        timer.time(reps, none, |_| {
            Ok(boot.bootstrap_encapsulated(&ct, &rlk, &gk, &encapsulation)?)
        })?,
        floor(total),
    );
    push(
        "bootstrap_mod_raise",
        timer.time(reps, none, |_| {
            Ok(boot.mod_raise_with(&ct, Some(&encapsulation))?)
        })?,
        floor(bytes.mod_raise),
    );
    push(
        "bootstrap_coeff_to_slot",
        timer.time(reps, none, |_| Ok(boot.coeff_to_slot(&raised, &gk)?))?,
        floor(bytes.coeff_to_slot),
    );
    push(
        "bootstrap_eval_mod",
        timer.time(reps, none, |_| Ok(boot.eval_mod(&halves[0], &rlk)?))?,
        floor(bytes.eval_mod / halves.len()),
    );
    push(
        "bootstrap_eval_mod_both",
        timer.time(reps, none, |_| Ok(boot.eval_mod_all(&halves, &rlk)?))?,
        floor(bytes.eval_mod),
    );
    // One product at EvalMod's input level and one rotation at the top: the unit costs.
    let step = boot.rotation_steps()[0];
    push(
        "bootstrap_product",
        timer.time(reps, none, |_| {
            Ok(eval.mul_relin_rescale(&halves[0], &halves[0], &rlk)?)
        })?,
        None,
    );
    push(
        "bootstrap_rotation",
        timer.time(reps, none, |_| Ok(eval.rotate(&raised, step, &gk)?))?,
        None,
    );
    if first {
        push(
            "bootstrap_slot_to_coeff_first",
            timer.time(reps, none, |_| Ok(boot.slot_to_coeff_first(&ct, &gk)?))?,
            None,
        );
    }
    push(
        "bootstrap_slot_to_coeff",
        timer.time(reps, none, |_| Ok(boot.slot_to_coeff(&modded, &gk)?))?,
        floor(bytes.slot_to_coeff),
    );
    let preset_name = format!("boot:{name}");
    PresetResult::new(
        dev,
        "ckks",
        preset_name.clone(),
        RingShape::of_ckks(&lit),
        rows,
        json!({
            "preset": preset_name,
            "precision_bits": bits,
            "median_precision_bits": median_bits,
            "slots": slots,
            "output_level": levels.output_level,
            "levels_coeff_to_slot": levels.coeff_to_slot,
            "levels_eval_mod": levels.eval_mod,
            "levels_slot_to_coeff": levels.slot_to_coeff,
            "rotation_keys": rot_keys,
            "ntt_limbs_model": {
                "mod_raise": ntt.mod_raise,
                "coeff_to_slot": ntt.coeff_to_slot,
                "eval_mod": ntt.eval_mod,
                "slot_to_coeff": ntt.slot_to_coeff,
                "note": "key switches' NTT limbs, BootstrapPlan::ntt_limbs (a model, not a measurement)",
            },
            "rotation_key_device_bytes": rot_key_bytes,
            "rotation_key_host_bytes": 0,
            "rotation_key_wire_bytes": rot_key_bytes / 2,
            "rotation_key_note": "keys generated on the device; full a and b halves held there, seeded a halves on the wire",
            "plaintext_device_bytes": pt_bytes,
            "encapsulation_key_device_bytes": encapsulation.bytes(be),
            "stage_read_bytes": {
                "mod_raise": bytes.mod_raise,
                "coeff_to_slot": bytes.coeff_to_slot,
                "eval_mod": bytes.eval_mod,
                "slot_to_coeff": bytes.slot_to_coeff,
            },
        }),
        setup_s,
    )
}
