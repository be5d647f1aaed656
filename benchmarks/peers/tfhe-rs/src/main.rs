//! Peer benchmark of tfhe-rs 1.8.2 on its CUDA backend, printed as JSON lines.
//!
//! Measures, on GPU 0, with wall-clock time around each call followed by a device
//! synchronisation (median after warm-up):
//! - `pbs_batched` / `pbs_latency`: the core-crypto programmable bootstrap
//!   (`cuda_programmable_bootstrap_lwe_ciphertext`, and the multi-bit variant) at tfhe-rs's
//!   classic 2_2 parameters (n = 918, N = 2048, k = 1, one level of base 2^23) and at its GPU
//!   multi-bit grouping-4 2_2 parameters (n = 920, N = 2048, k = 1, one level of base 2^22);
//!   the outputs of every batch are decrypted and checked against the lookup table;
//! - `gt_u64`: one `FheUint64::gt` alone, high-level API with a CUDA server key;
//! - `sort16_u32`: 16 `FheUint32` sorted by a 60-comparator, 10-layer sorting network
//!   (each comparator one `gt` and two `select`s; the comparators of a layer run concurrently on
//!   CPU threads, each with its own CUDA stream, as tfhe-rs's high-level API does per thread);
//! - `min16_u32`: minimum of 16 `FheUint32` by a 4-round tournament of `min` (each round's pairs
//!   concurrent likewise).
//!
//! Usage: `tfhe-rs-peer-bench [--device NAME] [--skip-pbs] [--skip-hl] [--hl-params default,classic]
//! [--batches 1024,4096,...]`.

use std::io::Write;
use std::time::Instant;

use rayon::prelude::*;
use tfhe::core_crypto::gpu::glwe_ciphertext_list::CudaGlweCiphertextList;
use tfhe::core_crypto::gpu::lwe_bootstrap_key::CudaLweBootstrapKey;
use tfhe::core_crypto::gpu::lwe_ciphertext_list::CudaLweCiphertextList;
use tfhe::core_crypto::gpu::lwe_multi_bit_bootstrap_key::CudaLweMultiBitBootstrapKey;
use tfhe::core_crypto::gpu::vec::{CudaVec, GpuIndex};
use tfhe::core_crypto::gpu::{
    CudaStreams, cuda_multi_bit_programmable_bootstrap_lwe_ciphertext,
    cuda_programmable_bootstrap_lwe_ciphertext, synchronize_device,
};
use tfhe::core_crypto::prelude::*;
use tfhe::prelude::*;
use tfhe::shortint::parameters::{
    PARAM_GPU_MULTI_BIT_GROUP_4_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
    PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
};
use tfhe::{ClientKey, CompressedServerKey, ConfigBuilder, FheBool, FheUint32, FheUint64};

const VERSION: &str = "1.8.2";

/// Green's 16-input sorting network: 60 comparators in 10 layers (checked by the 0-1 principle
/// at start-up).
#[rustfmt::skip]
const SORT16: [&[(usize, usize)]; 10] = [
    &[(0, 13), (1, 12), (2, 15), (3, 14), (4, 8), (5, 6), (7, 11), (9, 10)],
    &[(0, 5), (1, 7), (2, 9), (3, 4), (6, 13), (8, 14), (10, 15), (11, 12)],
    &[(0, 1), (2, 3), (4, 5), (6, 8), (7, 9), (10, 11), (12, 13), (14, 15)],
    &[(0, 2), (1, 3), (4, 10), (5, 11), (6, 7), (8, 9), (12, 14), (13, 15)],
    &[(1, 2), (3, 12), (4, 6), (5, 7), (8, 10), (9, 11), (13, 14)],
    &[(1, 4), (2, 6), (5, 8), (7, 10), (9, 13), (11, 14)],
    &[(2, 4), (3, 6), (9, 12), (11, 13)],
    &[(3, 5), (6, 8), (7, 9), (10, 12)],
    &[(3, 4), (5, 6), (7, 8), (9, 10), (11, 12)],
    &[(6, 7), (8, 9)],
];

struct Ctx {
    device: String,
}

impl Ctx {
    /// Prints one JSON line: the common fields, then `fields` (already JSON-encoded pairs).
    fn emit(&self, op: &str, params: &str, fields: &[(&str, String)]) {
        let mut s = format!(
            "{{\"lib\":\"tfhe-rs\",\"version\":\"{VERSION}\",\"device\":{},\"op\":\"{op}\",\"params\":{}",
            json_str(&self.device),
            json_str(params)
        );
        for (k, v) in fields {
            s.push_str(&format!(",\"{k}\":{v}"));
        }
        s.push('}');
        println!("{s}");
        std::io::stdout().flush().ok();
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Runs `f` `warmup` times untimed, then `reps` times timed (seconds each; `f` must synchronise).
fn time_runs(warmup: usize, reps: usize, mut f: impl FnMut()) -> Vec<f64> {
    for _ in 0..warmup {
        f();
    }
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect()
}

fn log(msg: &str) {
    eprintln!("[tfhe-rs-peer] {msg}");
}

// ----------------------------------------------------------------------------------------------
// PBS (core-crypto API)
// ----------------------------------------------------------------------------------------------

enum GpuBsk {
    Classic(CudaLweBootstrapKey),
    MultiBit(CudaLweMultiBitBootstrapKey<u64>),
}

struct PbsSet {
    label: String,
    lwe_dimension: LweDimension,
    glwe_dimension: GlweDimension,
    polynomial_size: PolynomialSize,
    base_log: DecompositionBaseLog,
    level: DecompositionLevelCount,
    grouping: Option<LweBskGroupingFactor>,
    lwe_noise: DynamicDistribution<u64>,
    glwe_noise: DynamicDistribution<u64>,
}

fn pbs_sets() -> Vec<PbsSet> {
    let c = PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;
    let m = PARAM_GPU_MULTI_BIT_GROUP_4_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;
    vec![
        PbsSet {
            label: format!(
                "classic PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128: n={} N={} k={} level={} base_log={} q=2^64 f64 FFT",
                c.lwe_dimension.0,
                c.polynomial_size.0,
                c.glwe_dimension.0,
                c.pbs_level.0,
                c.pbs_base_log.0
            ),
            lwe_dimension: c.lwe_dimension,
            glwe_dimension: c.glwe_dimension,
            polynomial_size: c.polynomial_size,
            base_log: c.pbs_base_log,
            level: c.pbs_level,
            grouping: None,
            lwe_noise: c.lwe_noise_distribution,
            glwe_noise: c.glwe_noise_distribution,
        },
        PbsSet {
            label: format!(
                "multi-bit PARAM_GPU_MULTI_BIT_GROUP_4_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128: grouping={} n={} N={} k={} level={} base_log={} q=2^64 f64 FFT",
                m.grouping_factor.0,
                m.lwe_dimension.0,
                m.polynomial_size.0,
                m.glwe_dimension.0,
                m.pbs_level.0,
                m.pbs_base_log.0
            ),
            lwe_dimension: m.lwe_dimension,
            glwe_dimension: m.glwe_dimension,
            polynomial_size: m.polynomial_size,
            base_log: m.pbs_base_log,
            level: m.pbs_level,
            grouping: Some(m.grouping_factor),
            lwe_noise: m.lwe_noise_distribution,
            glwe_noise: m.glwe_noise_distribution,
        },
    ]
}

fn bench_pbs(ctx: &Ctx, set: &PbsSet, batches: &[usize]) {
    let streams = CudaStreams::new_single_gpu(GpuIndex::new(0));
    let mut seeder = new_seeder();
    let seeder = seeder.as_mut();
    let mut secret_gen = SecretRandomGenerator::<DefaultRandomGenerator>::new(seeder.seed());
    let mut enc_gen =
        EncryptionRandomGenerator::<DefaultRandomGenerator>::new(seeder.seed(), seeder);
    let modulus = CiphertextModulus::<u64>::new_native();

    let lwe_sk: LweSecretKeyOwned<u64> =
        allocate_and_generate_new_binary_lwe_secret_key(set.lwe_dimension, &mut secret_gen);
    let glwe_sk: GlweSecretKeyOwned<u64> = allocate_and_generate_new_binary_glwe_secret_key(
        set.glwe_dimension,
        set.polynomial_size,
        &mut secret_gen,
    );
    let out_sk = glwe_sk.clone().into_lwe_secret_key();

    let t = Instant::now();
    let bsk = match set.grouping {
        None => {
            let h = par_allocate_and_generate_new_lwe_bootstrap_key(
                &lwe_sk,
                &glwe_sk,
                set.base_log,
                set.level,
                set.glwe_noise,
                modulus,
                &mut enc_gen,
            );
            GpuBsk::Classic(CudaLweBootstrapKey::from_lwe_bootstrap_key(
                &h, None, &streams,
            ))
        }
        Some(g) => {
            let h = par_allocate_and_generate_new_lwe_multi_bit_bootstrap_key(
                &lwe_sk,
                &glwe_sk,
                set.base_log,
                set.level,
                g,
                set.glwe_noise,
                modulus,
                &mut enc_gen,
            );
            GpuBsk::MultiBit(
                CudaLweMultiBitBootstrapKey::from_lwe_multi_bit_bootstrap_key(&h, &streams),
            )
        }
    };
    streams.synchronize();
    log(&format!(
        "bsk generated and uploaded in {:.1} s",
        t.elapsed().as_secs_f64()
    ));

    // 2-bit message + 2-bit carry space (4 bits) with padding; LUT f(x) = (3x + 1) mod 16.
    let msg_mod: u64 = 16;
    let delta: u64 = (1u64 << 63) / msg_mod;
    let f = |x: u64| (3 * x + 1) % msg_mod;
    let lut = generate_programmable_bootstrap_glwe_lut(
        set.polynomial_size,
        set.glwe_dimension.to_glwe_size(),
        msg_mod as usize,
        modulus,
        delta,
        f,
    );
    let d_lut = CudaGlweCiphertextList::from_glwe_ciphertext(&lut, &streams);
    let out_dim = out_sk.lwe_dimension();

    let max_batch = batches.iter().copied().max().unwrap_or(1).max(1);
    // Encrypt max_batch distinct inputs (messages i mod 16).
    let msgs: Vec<u64> = (0..max_batch as u64)
        .map(|i| (i * 7 + 3) % msg_mod)
        .collect();
    let pts = PlaintextList::from_container(msgs.iter().map(|m| m * delta).collect::<Vec<_>>());
    let mut h_in = LweCiphertextList::new(
        0u64,
        set.lwe_dimension.to_lwe_size(),
        LweCiphertextCount(max_batch),
        modulus,
    );
    par_encrypt_lwe_ciphertext_list(&lwe_sk, &mut h_in, &pts, set.lwe_noise, &mut enc_gen);

    for &batch in batches {
        let h_sub = LweCiphertextList::from_container(
            h_in.as_ref()[..batch * set.lwe_dimension.to_lwe_size().0].to_vec(),
            set.lwe_dimension.to_lwe_size(),
            modulus,
        );
        let d_in = CudaLweCiphertextList::from_lwe_ciphertext_list(&h_sub, &streams);
        let mut d_out =
            CudaLweCiphertextList::new(out_dim, LweCiphertextCount(batch), modulus, &streams);
        let idx: Vec<u64> = (0..batch as u64).collect();
        let zeros = vec![0u64; batch];
        let mut d_lut_idx = unsafe { CudaVec::<u64>::new_async(batch, &streams, 0) };
        let mut d_in_idx = unsafe { CudaVec::<u64>::new_async(batch, &streams, 0) };
        let mut d_out_idx = unsafe { CudaVec::<u64>::new_async(batch, &streams, 0) };
        unsafe {
            d_lut_idx.copy_from_cpu_async(&zeros, &streams, 0);
            d_in_idx.copy_from_cpu_async(&idx, &streams, 0);
            d_out_idx.copy_from_cpu_async(&idx, &streams, 0);
        }
        streams.synchronize();

        let mut run = || {
            match &bsk {
                GpuBsk::Classic(k) => cuda_programmable_bootstrap_lwe_ciphertext(
                    &d_in, &mut d_out, &d_lut, &d_lut_idx, &d_out_idx, &d_in_idx, k, &streams,
                ),
                GpuBsk::MultiBit(k) => cuda_multi_bit_programmable_bootstrap_lwe_ciphertext(
                    &d_in, &mut d_out, &d_lut, &d_lut_idx, &d_out_idx, &d_in_idx, k, &streams,
                ),
            }
            streams.synchronize();
        };
        let (warm, reps) = if batch == 1 {
            (5, 31)
        } else if batch <= 4096 {
            (2, 7)
        } else {
            (1, 3)
        };
        let times = time_runs(warm, reps, &mut run);
        let med = median(times.clone());

        // Check every output against the lookup table.
        let h_out = d_out.to_lwe_ciphertext_list(&streams);
        let mut wrong = 0usize;
        for (i, ct) in h_out.iter().enumerate() {
            let dec = decrypt_lwe_ciphertext(&out_sk, &ct).0;
            let rounded = (dec.wrapping_add(delta / 2)) / delta % msg_mod;
            if rounded != f(msgs[i]) {
                wrong += 1;
            }
        }
        let correct = wrong == 0;
        if batch == 1 {
            ctx.emit(
                "pbs_latency",
                &set.label,
                &[
                    ("batch", "1".into()),
                    ("wall_us", format!("{:.1}", med * 1e6)),
                    (
                        "min_us",
                        format!(
                            "{:.1}",
                            times.iter().cloned().fold(f64::MAX, f64::min) * 1e6
                        ),
                    ),
                    ("reps", reps.to_string()),
                    ("warmup", warm.to_string()),
                    ("correct", correct.to_string()),
                ],
            );
        } else {
            ctx.emit(
                "pbs_batched",
                &set.label,
                &[
                    ("batch", batch.to_string()),
                    ("pbs_per_s", format!("{:.0}", batch as f64 / med)),
                    ("wall_us", format!("{:.1}", med * 1e6)),
                    ("reps", reps.to_string()),
                    ("warmup", warm.to_string()),
                    ("correct", correct.to_string()),
                ],
            );
        }
        if !correct {
            log(&format!("batch {batch}: {wrong} wrong outputs"));
        }
    }
}

// ----------------------------------------------------------------------------------------------
// High-level API (integers)
// ----------------------------------------------------------------------------------------------

fn check_sort_network() -> bool {
    (0u32..1 << 16).all(|bits| {
        let mut v: Vec<u32> = (0..16).map(|i| (bits >> i) & 1).collect();
        for layer in SORT16 {
            for &(a, b) in layer {
                if v[a] > v[b] {
                    v.swap(a, b);
                }
            }
        }
        v.windows(2).all(|w| w[0] <= w[1])
    })
}

fn bench_hl(ctx: &Ctx, which: &str, pool: &rayon::ThreadPool) {
    let (config, label) = match which {
        "classic" => (
            ConfigBuilder::with_custom_parameters(PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128)
                .build(),
            "high-level API, PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 (classic PBS n=918 N=2048)",
        ),
        _ => (
            ConfigBuilder::default().build(),
            "high-level API default GPU config: PARAM_GPU_MULTI_BIT_GROUP_4_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 (multi-bit grouping 4, n=920 N=2048)",
        ),
    };
    let t = Instant::now();
    let cks = ClientKey::generate(config);
    let csks = CompressedServerKey::new(&cks);
    let gpu_key = csks.decompress_to_gpu();
    tfhe::set_server_key(gpu_key.clone());
    let k2 = gpu_key.clone();
    pool.broadcast(|_| tfhe::set_server_key(k2.clone()));
    synchronize_device(0);
    log(&format!(
        "{which}: keys generated and uploaded in {:.1} s",
        t.elapsed().as_secs_f64()
    ));

    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };

    // gt on FheUint64, one alone.
    {
        let (x, y) = (rnd(), rnd());
        let mut a = FheUint64::encrypt(x, &cks);
        let mut b = FheUint64::encrypt(y, &cks);
        a.move_to_current_device();
        b.move_to_current_device();
        let mut last: Option<FheBool> = None;
        let times = time_runs(3, 21, || {
            let r = a.gt(&b);
            synchronize_device(0);
            last = Some(r);
        });
        let ok = last.map(|r| r.decrypt(&cks) == (x > y)).unwrap_or(false);
        ctx.emit(
            "gt_u64",
            label,
            &[
                ("wall_us", format!("{:.1}", median(times.clone()) * 1e6)),
                ("reps", times.len().to_string()),
                ("warmup", "3".into()),
                ("correct", ok.to_string()),
            ],
        );
    }

    // 16 FheUint32 values for sort and min.
    let clear: Vec<u32> = (0..16).map(|_| rnd() as u32).collect();
    let enc: Vec<FheUint32> = clear
        .iter()
        .map(|&v| {
            let mut c = FheUint32::encrypt(v, &cks);
            c.move_to_current_device();
            c
        })
        .collect();
    let mut sorted = clear.clone();
    sorted.sort_unstable();

    // sort16: layers of comparators, each comparator gt + 2 selects; a layer's comparators
    // run concurrently on the pool's threads (each thread has its own CUDA stream).
    let sort_once = |input: &[FheUint32]| -> Vec<FheUint32> {
        let mut v: Vec<FheUint32> = input.to_vec();
        for layer in SORT16 {
            let outs: Vec<(usize, usize, FheUint32, FheUint32)> = pool.install(|| {
                layer
                    .par_iter()
                    .map(|&(i, j)| {
                        let swap = v[i].gt(&v[j]);
                        let lo = swap.select(&v[j], &v[i]);
                        let hi = swap.select(&v[i], &v[j]);
                        synchronize_device(0);
                        (i, j, lo, hi)
                    })
                    .collect()
            });
            for (i, j, lo, hi) in outs {
                v[i] = lo;
                v[j] = hi;
            }
        }
        synchronize_device(0);
        v
    };
    {
        let mut last = Vec::new();
        let times = time_runs(1, 5, || last = sort_once(&enc));
        let got: Vec<u32> = last.iter().map(|c| c.decrypt(&cks)).collect();
        ctx.emit(
            "sort16_u32",
            label,
            &[
                ("wall_us", format!("{:.1}", median(times.clone()) * 1e6)),
                ("reps", times.len().to_string()),
                ("warmup", "1".into()),
                ("method", json_str("Green 60-comparator 10-layer network; comparator = gt + 2 select; layer comparators concurrent on 8 threads/streams")),
                ("correct", (got == sorted).to_string()),
            ],
        );
    }

    // min16: tournament of min, 8 + 4 + 2 + 1, each round concurrent.
    let min_once = |input: &[FheUint32]| -> FheUint32 {
        let mut v: Vec<FheUint32> = input.to_vec();
        while v.len() > 1 {
            v = pool.install(|| {
                v.par_chunks(2)
                    .map(|p| {
                        let m = p[0].min(&p[1]);
                        synchronize_device(0);
                        m
                    })
                    .collect()
            });
        }
        synchronize_device(0);
        v.pop().unwrap()
    };
    {
        let mut last = None;
        let times = time_runs(1, 7, || last = Some(min_once(&enc)));
        let got: u32 = last.unwrap().decrypt(&cks);
        ctx.emit(
            "min16_u32",
            label,
            &[
                ("wall_us", format!("{:.1}", median(times.clone()) * 1e6)),
                ("reps", times.len().to_string()),
                ("warmup", "1".into()),
                (
                    "method",
                    json_str(
                        "tournament of min (8+4+2+1), each round concurrent on 8 threads/streams",
                    ),
                ),
                ("correct", (got == sorted[0]).to_string()),
            ],
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let has = |name: &str| args.iter().any(|a| a == name);
    let ctx = Ctx {
        device: get("--device").unwrap_or_else(|| "unknown".into()),
    };
    let batches: Vec<usize> = get("--batches")
        .unwrap_or_else(|| "1,1024,4096,16384,32768".into())
        .split(',')
        .map(|s| s.trim().parse().expect("--batches takes integers"))
        .collect();
    let hl_sets = get("--hl-params").unwrap_or_else(|| "default".into());

    assert!(check_sort_network(), "sorting network is wrong");
    if has("--check-only") {
        println!("sorting network ok");
        return;
    }
    assert!(
        tfhe::core_crypto::gpu::get_number_of_gpus() > 0,
        "no CUDA device"
    );

    if !has("--skip-pbs") {
        for set in pbs_sets() {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                bench_pbs(&ctx, &set, &batches)
            }));
            if r.is_err() {
                log(&format!("PBS benchmark failed: {}", set.label));
            }
        }
    }
    if !has("--skip-hl") {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(8)
            .build()
            .unwrap();
        for which in hl_sets.split(',') {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                bench_hl(&ctx, which.trim(), &pool)
            }));
            if r.is_err() {
                log(&format!("high-level benchmark failed: {which}"));
            }
        }
    }
}
