//! Programmable bootstrapping on the GPU (`BlindRotateBackend for CudaBackend`): a batch of
//! LWE ciphertexts bootstrapped in one call (blind rotation with extraction, then key
//! switching), and one ciphertext alone. Preset names: `pbs:<SET>x<batch>`, e.g.
//! `pbs:CLASSIC_918_2048x4096` (sets: `CLASSIC_918_2048`, `MULTI_BIT3_918_2048`,
//! `LPF_STD128_556_1024`).
//!
//! Rows: `pbs_batched` (the whole batch per call; JSON `batch`, `pbs_per_s` = batch / wall
//! time), `pbs_blind_rotate_batched` (its blind rotation alone), `pbs_key_switch_batched`
//! (its key switch alone) and `pbs_latency` (a batch of one; `wall_us` is the latency).

use super::{PresetResult, R, RingShape, Row, Timer, log_timing};
use gpufhe::cuda::{CudaBackend, Device};
use gpufhe::math::backend::blind_rotate::{BlindRotateBackend, LweBatchHost};
use gpufhe::math::sampler::Seed;
use gpufhe::tfhe::{
    CLASSIC_918_2048, ClientKey, LPF_STD128_556_1024, LookupTable, MULTI_BIT3_918_2048, Parameters,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// Timed batch calls per method (each call bootstraps the whole batch).
const BATCH_REPS: usize = 5;

/// `(parameters, batch)` of a PBS preset name (after the `pbs:` prefix).
pub fn preset(name: &str) -> R<(Parameters, usize)> {
    let bad = || {
        format!(
            "bad PBS preset {name:?} (form: <SET>x<batch>, e.g. CLASSIC_918_2048x4096; sets CLASSIC_918_2048, MULTI_BIT3_918_2048, LPF_STD128_556_1024)"
        )
    };
    let (set, batch) = name.rsplit_once('x').ok_or_else(bad)?;
    let batch: usize = batch.parse().map_err(|_| bad())?;
    let params = match set {
        "CLASSIC_918_2048" => CLASSIC_918_2048,
        "MULTI_BIT3_918_2048" => MULTI_BIT3_918_2048,
        "LPF_STD128_556_1024" => LPF_STD128_556_1024,
        _ => return Err(bad().into()),
    };
    if !(1..=1 << 17).contains(&batch) {
        return Err(bad().into());
    }
    Ok((params, batch))
}

/// Times PBS of a batch and of one ciphertext at the preset's set.
pub fn bench_preset(dev: &Arc<Device>, name: &str, reps: usize, warm: usize) -> R<PresetResult> {
    let t_setup = Instant::now();
    let (params, batch) = preset(name)?;
    dev.synchronize()?;
    dev.reset_pool_peak()?;
    let cpu = gpufhe::tfhe::cpu_backend(&params)?;
    let be = CudaBackend::new(
        dev.clone(),
        Arc::clone(gpufhe::math::backend::RingBackend::ring(&cpu)),
    )?;
    let ck = ClientKey::generate(&params, &Seed([5; 32]))?;
    let sk = ck.server_key(&Seed([6; 32]))?;
    let p = params.message_space();
    let lut = LookupTable::from_fn(&params, |m| (m * m + 1) % p)?;
    let tp = lut.test_polynomial();
    // Distinct ciphertexts: one per message, repeated with fresh seeds up to the batch.
    let distinct = batch.min(256);
    let mut data = Vec::with_capacity(batch * (params.lwe_dimension + 1));
    let cts: Vec<_> = (0..distinct)
        .map(|i| ck.encrypt(i as u64 % p, &Seed([i as u8; 32])))
        .collect::<Result<_, _>>()?;
    for i in 0..batch {
        data.extend_from_slice(cts[i % distinct].as_residues());
    }
    let host = LweBatchHost {
        dimension: params.lwe_dimension,
        modulus: params.q()?,
        data,
    };
    let bk = be.upload_bootstrap_key(sk.bootstrap_key())?;
    let ks = be.upload_key_switch_key(sk.key_switch_key())?;
    let input = be.upload_lwe_batch(&host)?;
    let one = be.upload_lwe_batch(&LweBatchHost {
        data: host.get(0).ok_or("empty batch")?.to_vec(),
        ..host.clone()
    })?;
    // Correctness of what is timed: the batch's first ciphertexts decrypt to the table.
    let out = be.download_lwe_batch(&be.programmable_bootstrap(&bk, &ks, tp, &input)?)?;
    for i in 0..distinct.min(16) {
        let ct = gpufhe::tfhe::LweCiphertext::from_residues(
            out.modulus,
            out.get(i).ok_or("short output")?.to_vec(),
        )?;
        let m = i as u64 % p;
        if ck.decrypt(&ct)? != lut.table()[m as usize] {
            return Err(format!("{name}: PBS of m = {m} decrypts wrong").into());
        }
    }
    let extracted = be.blind_rotate_extract(&bk, tp, &input)?;
    dev.synchronize()?;
    let setup_s = t_setup.elapsed().as_secs_f64();
    let timer = Timer::new(dev.clone(), be.stream().clone(), reps, warm)?;
    let none = || -> R<()> { Ok(()) };
    let mut rows = Vec::new();
    let batch_reps = reps.min(BATCH_REPS);
    let mut push = |op: &'static str, t, reps| {
        log_timing(name, op, &t);
        rows.push(Row {
            op,
            t,
            reps,
            floor_us: None,
        });
    };
    push(
        "pbs_batched",
        timer.time(batch_reps, none, |_| {
            Ok(be.programmable_bootstrap(&bk, &ks, tp, &input)?)
        })?,
        batch_reps,
    );
    push(
        "pbs_blind_rotate_batched",
        timer.time(batch_reps, none, |_| {
            Ok(be.blind_rotate_extract(&bk, tp, &input)?)
        })?,
        batch_reps,
    );
    push(
        "pbs_key_switch_batched",
        timer.time(batch_reps, none, |_| Ok(be.key_switch(&ks, &extracted)?))?,
        batch_reps,
    );
    let latency_reps = reps.min(20);
    push(
        "pbs_latency",
        timer.time(latency_reps, none, |_| {
            Ok(be.programmable_bootstrap(&bk, &ks, tp, &one)?)
        })?,
        latency_reps,
    );
    let log_n = params.ring_degree.trailing_zeros();
    let full = format!("pbs:{name}");
    PresetResult::new(
        dev,
        "pbs",
        full.clone(),
        RingShape::ring_only(log_n, 0),
        rows,
        json!({
            "preset": full,
            "batch": batch,
            "lwe_dimension": params.lwe_dimension,
            "ring_degree": params.ring_degree,
            "modulus": params.modulus,
            "pbs_gadget": [params.pbs_gadget.base_log, params.pbs_gadget.levels],
            "ks_gadget": [params.ks_gadget.base_log, params.ks_gadget.levels],
            "bootstrap_key_bytes": 8 * sk.bootstrap_key().data.len(),
            "key_switch_key_bytes": 8 * sk.key_switch_key().data.len(),
        }),
        setup_s,
    )
}

/// The JSON fields a PBS row adds: `batch`, and for the batched rows `pbs_per_s` (batch over
/// the median wall time); `None` for other presets' rows.
pub fn row_fields(preset: &PresetResult, row: &Row) -> Option<Value> {
    if preset.scheme != "pbs" {
        return None;
    }
    let batch = preset.keys["batch"].as_u64()?;
    Some(match row.op {
        "pbs_latency" => json!({"batch": 1}),
        _ => json!({"batch": batch, "pbs_per_s": batch as f64 / (row.t.wall_us * 1e-6)}),
    })
}
