//! CKKS bootstrapping by blind rotation (`crates/heap`) on CUDA devices: the whole
//! bootstrap of a level-0 ciphertext (`op` `heap_bootstrap`), with `slots`, `gpus`,
//! `wall_us` and `precision_bits` (−log2 of the largest slot error, inputs uniform in [−1, 1]
//! real and imaginary) in each JSON row. Preset names: `heap:<SET>x<slots>[x<bootstrappers>]`,
//! e.g. `heap:HEAP_N13x16`, `heap:HEAP_N13x16x2` or `heap:HEAP_N10_INSECUREx64` (sets:
//! `HEAP_N13`, `HEAP_N10_INSECURE`; `slots` a power of two up to N/2: `2·slots` blind
//! rotations; with `bootstrappers > 1` the blind rotations are shared by that many
//! bootstrappers, `HeapBootstrapper::heap_bootstrap_spread`, each holding its own copy of the
//! keys: bootstrapper `i` on device `i mod` the device count, on its own stream; `gpus` in the
//! JSON is the number of devices used). Each preset also splits the batched
//! blind rotation of the first device's share (`RnsBlindRotateBackend::
//! rns_blind_rotate_packed`, which keeps the accumulators on the device and downloads one
//! ciphertext) into a time per LWE coefficient (a step of the binary-key CMux chain; the
//! unrolled key runs them in pairs) and a fixed part (tables, uploads, the first NTTs, the
//! packing) from two short calls after a warm-up call (`blind_rotate_*` keys of the JSON),
//! times the packed call without steps (`pack_fixed_us`: the tables, the accumulators'
//! initialisation and the packing of the whole share), and records the first bootstrap's stage
//! times (`stage_*_us`, `HeapBootstrapper::heap_bootstrap_spread_timed`). (The unpacked call
//! would not do for the split: its host-side conversion of each chunk's download hides the
//! device's steps of short calls.)

use super::{Lcg, PresetResult, R, RingShape, Row, Timer, log_timing};
use ckks::precision::{InputGenerator, median_precision_bits, precision_bits, uniform_complex};
use ckks::{Context, Encoder, Parameters, context::ring_for};
use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::prelude::*;
use fhe_math::backend::rns_blind_rotate::{KEYS_PER_PAIR, RnsBlindRotateBackend, RnsRotationBatch};
use fhe_math::poly::Shape;
use fhe_math::sampler::Seed;
use heap::{HEAP_N10_INSECURE, HEAP_N13, HeapBootstrapper, HeapKeys, HeapParams, budget};
use rlwe::encrypt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// Timed runs per row at most (a bootstrap takes seconds).
const MAX_REPS: usize = 3;

/// `(parameters, slots, bootstrappers)` of a preset name (after `heap:`).
pub fn preset(name: &str) -> R<(HeapParams, usize, usize)> {
    let mut parts = name.split('x');
    let set = parts.next().unwrap_or_default();
    let hp = match set {
        "HEAP_N13" => HEAP_N13,
        "HEAP_N10_INSECURE" => HEAP_N10_INSECURE,
        other => {
            return Err(
                format!("unknown HEAP set {other:?} (known: HEAP_N13, HEAP_N10_INSECURE)").into(),
            );
        }
    };
    let slots: usize = parts
        .next()
        .ok_or_else(|| format!("heap preset {name:?} is not <SET>x<slots>[x<bootstrappers>]"))?
        .parse()?;
    let bootstrappers: usize = parts.next().map_or(Ok(1), str::parse)?;
    if parts.next().is_some() || bootstrappers == 0 {
        return Err(format!("heap preset {name:?} is not <SET>x<slots>[x<bootstrappers>]").into());
    }
    if !slots.is_power_of_two() || slots > hp.n() / 2 {
        return Err(format!("{slots} slots: not a power of two up to {}", hp.n() / 2).into());
    }
    Ok((hp, slots, bootstrappers))
}

/// Times one bootstrap at one preset.
pub fn bench_preset(dev: &Arc<Device>, name: &str, reps: usize, warm: usize) -> R<PresetResult> {
    let t_setup = Instant::now();
    dev.synchronize()?;
    dev.reset_pool_peak()?;
    let (hp, slots, bootstrappers) = preset(name)?;
    let gpus = bootstrappers.min(Device::count()?);
    let params = Parameters::new(&hp.ckks)?;
    let be = CudaBackend::new(dev.clone(), ring_for(&params)?)?;
    let ctx = Context::with_backend(params.clone(), be)?;
    let be = ctx.backend();
    let sk = ctx.key_generator().secret_key()?;
    let key_seed = Seed::random();
    let keys = HeapKeys::generate(&ctx, &hp, &sk, &key_seed)?;
    let key_bytes = keys.bytes(be);
    let boot = HeapBootstrapper::new(&ctx, &hp, keys)?.with_slots(slots)?;
    // The other bootstrappers: device i mod gpus, each on its own stream, with the same keys
    // (same seed, same secret).
    let mut devices = vec![dev.clone()];
    for i in 1..gpus {
        devices.push(Device::new(i).map_err(|e| format!("device {i} for {name}: {e}"))?);
    }
    let mut helpers = Vec::new();
    for i in 1..bootstrappers {
        let d = &devices[i % gpus];
        let stream = d.stream(i / gpus + 1).clone();
        let b = CudaBackend::on_stream(d.clone(), stream, ring_for(&params)?)?;
        let c = Context::with_backend(params.clone(), b)?;
        let s = c.key_generator().secret_key_from_seed(sk.seed().clone())?;
        let k = HeapKeys::generate(&c, &hp, &s, &key_seed)?;
        helpers.push(HeapBootstrapper::new(&c, &hp, k)?.with_slots(slots)?);
    }
    let helper_refs: Vec<&HeapBootstrapper<CudaBackend>> = helpers.iter().collect();
    let enc = Encoder::new(&ctx)?;
    let z = uniform_complex(&mut InputGenerator::new(2026), slots);
    let ct = encrypt::encrypt_sk(be, &sk, &enc.encode_with(&z, 0, params.scale(0)?, slots)?)?;
    let t_first = Instant::now();
    let (out, stages) = boot.heap_bootstrap_spread_timed(&ct, &helper_refs)?;
    let first_s = t_first.elapsed().as_secs_f64();
    let got = enc.decode_slots(&encrypt::decrypt(be, &sk, &out)?, slots)?;
    let (bits, median_bits) = (precision_bits(&got, &z), median_precision_bits(&got, &z));
    let model = budget(
        &hp,
        params.moduli_q(),
        params.scale(0)?,
        params.scale(hp.output_level())?,
        slots,
    );
    be.synchronize()?;
    let setup_s = t_setup.elapsed().as_secs_f64();
    eprintln!(
        "  {name}: precision {bits:.2} bits (median {median_bits:.2}; model {:.2} / {:.2}); \
         keys {:.2} GB; output level {}",
        model.precision_max_bits,
        model.precision_median_bits,
        key_bytes as f64 / 1e9,
        out.level()
    );
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    eprintln!(
        "  {name}: first bootstrap's stages: encapsulation {:.3} s, LWE side {:.3} s, blind \
         rotation {:.3} s, packing {:.3} s, finish {:.3} s",
        stages.encapsulation.as_secs_f64(),
        stages.lwe_side.as_secs_f64(),
        stages.blind_rotation.as_secs_f64(),
        stages.packing.as_secs_f64(),
        stages.finish.as_secs_f64()
    );
    let share = boot.blind_rotations().div_ceil(bootstrappers);
    let (step_s, fixed_s) = blind_rotation_split(&boot, be, share)?;
    let rotation_s = fixed_s + hp.lwe_dimension as f64 * step_s;
    let pack_s = packed_without_steps(&boot, be, share)?;
    eprintln!(
        "  {name}: first bootstrap {first_s:.3} s; blind rotation of {share} samples: \
         {:.3} ms a coefficient ({:.2} µs a CMux), fixed {fixed_s:.3} s, \
         {rotation_s:.3} s for {} coefficients; the packed call without steps (tables, init, packing) \
         {pack_s:.3} s",
        step_s * 1e3,
        step_s * 1e6 / share as f64,
        hp.lwe_dimension
    );
    let reps = reps.clamp(1, MAX_REPS);
    let timer = Timer::new(dev.clone(), be.stream().clone(), reps, warm.min(1))?;
    let none = || -> R<()> { Ok(()) };
    let t = timer.time(reps, none, |_| {
        Ok(boot.heap_bootstrap_spread(&ct, &helper_refs)?)
    })?;
    log_timing(name, "heap_bootstrap", &t);
    let rows = vec![Row {
        op: "heap_bootstrap",
        t,
        reps,
        floor_us: None,
    }];
    let preset_name = format!("heap:{name}");
    PresetResult::new(
        dev,
        "heap",
        preset_name.clone(),
        RingShape::of_ckks(&hp.ckks),
        rows,
        json!({
            "preset": preset_name,
            "precision_bits": bits,
            "median_precision_bits": median_bits,
            "model_precision_bits": model.precision_max_bits,
            "slots": slots,
            "gpus": gpus,
            "bootstrappers": bootstrappers,
            "blind_rotations": boot.blind_rotations(),
            "lwe_dimension": hp.lwe_dimension,
            "output_level": hp.output_level(),
            "key_device_bytes": key_bytes,
            "first_bootstrap_us": first_s * 1e6,
            "stage_encapsulation_us": us(stages.encapsulation),
            "stage_lwe_side_us": us(stages.lwe_side),
            "stage_blind_rotation_us": us(stages.blind_rotation),
            "stage_packing_us": us(stages.packing),
            "stage_finish_us": us(stages.finish),
            "blind_rotate_samples": share,
            "blind_rotate_step_us": step_s * 1e6,
            "blind_rotate_fixed_us": fixed_s * 1e6,
            "blind_rotate_estimate_us": rotation_s * 1e6,
            "pack_fixed_us": pack_s * 1e6,
        }),
        setup_s,
    )
}

/// LWE coefficients (even: the key covers pairs) of the two short blind rotations of
/// [`blind_rotation_split`].
const SPLIT_STEPS: [usize; 2] = [2, 18];

/// `(seconds a step, fixed seconds)` of the batched blind rotation and packing of `count`
/// samples on `be`: [`packed_call`] over `k` steps, `k` in [`SPLIT_STEPS`], after one untimed
/// call; a rotation of `n_t` steps then takes about `fixed + n_t·step`.
fn blind_rotation_split(
    boot: &HeapBootstrapper<CudaBackend>,
    be: &CudaBackend,
    count: usize,
) -> R<(f64, f64)> {
    let mut rnd = Lcg(49);
    packed_call(boot, be, count, SPLIT_STEPS[0], &mut rnd)?;
    let secs = [
        packed_call(boot, be, count, SPLIT_STEPS[0], &mut rnd)?,
        packed_call(boot, be, count, SPLIT_STEPS[1], &mut rnd)?,
    ];
    let step = (secs[1] - secs[0]) / (SPLIT_STEPS[1] - SPLIT_STEPS[0]) as f64;
    Ok((step, secs[0] - SPLIT_STEPS[0] as f64 * step))
}

/// Seconds of `rns_blind_rotate_packed` over `count` samples of no step (the second of two
/// calls): the tables, the accumulators' initialisation and forward NTT, and `PackLWEs` of the
/// `count` accumulators on the device, with the download of the packed ciphertext.
fn packed_without_steps(
    boot: &HeapBootstrapper<CudaBackend>,
    be: &CudaBackend,
    count: usize,
) -> R<f64> {
    let mut rnd = Lcg(50);
    packed_call(boot, be, count, 0, &mut rnd)?;
    packed_call(boot, be, count, 0, &mut rnd)
}

/// Wall seconds of one `rns_blind_rotate_packed` call over `count` samples of the first `k`
/// steps of `boot`'s key rows, random exponents, a zero test polynomial, `boot`'s packing keys
/// (the call ends with the download of the packed ciphertext).
fn packed_call(
    boot: &HeapBootstrapper<CudaBackend>,
    be: &CudaBackend,
    count: usize,
    k: usize,
    rnd: &mut Lcg,
) -> R<f64> {
    let g = boot.gadget();
    let ring = be.ring();
    let test = ring.zeros(Shape {
        components: 2,
        level: g.level(),
        extended: false,
    })?;
    let two_n = 2 * ring.n() as u64;
    let batch = RnsRotationBatch {
        dimension: k,
        a: (0..count * k).map(|_| rnd.next() % two_n).collect(),
        b: (0..count).map(|_| rnd.next() % two_n).collect(),
    };
    let rows = boot.keys().rgsw_rows();
    let pack_keys = boot.keys().pack_keys();
    be.synchronize()?;
    let t0 = Instant::now();
    let key_rows = k / 2 * KEYS_PER_PAIR * 2 * g.digits();
    be.rns_blind_rotate_packed(g, &rows[..key_rows], &test, &batch, &pack_keys)?;
    Ok(t0.elapsed().as_secs_f64())
}

/// The HEAP fields of a JSON row: `slots`, `gpus`.
pub fn row_fields(preset: &PresetResult, _row: &Row) -> Option<Value> {
    if preset.scheme != "heap" {
        return None;
    }
    Some(json!({"slots": preset.keys["slots"], "gpus": preset.keys["gpus"]}))
}
