//! Timing of the hot `CudaBackend` paths at `N16_L24_D3` (N = 2^16, 25 Q limbs, 7 P limbs,
//! dnum 3): NTT / inverse NTT of a 2×25-limb buffer, the key-switching parts, `mul_relin` with
//! rescale and a one-key `rotate_hoisted`. CUDA-event time per call, median of 50 after warm-up.
//!
//! `cargo run --release --bin gpu_perf` on a machine with a GPU;
//! `GPU_PERF_PRESET=CAT_COMPAT` (or `CAT`, `PHANTOM_N16`, `N16_L24_D3_P50`: N16_L24_D3 with
//! eight special primes of 50 bits) times another CKKS preset (the op
//! names keep the N16_L24_D3 limb counts); `GPU_PERF_PRESET=int:PHANTOM_INT` (or
//! `int:CAT_COMPAT`, `int:N13`) times the BGV/BFV ring's paths instead: the key-switching parts
//! preserving the message mod t, relinearize with and without BGV's fused modulus switch, BGV's
//! modulus switch, a rotation and BFV's tensor with scale-and-round.
//! `GPU_PERF_ONLY=prefix` times only the operations whose name starts with it;
//! `GPU_PERF_TRACE=prefix` also prints one call's launch timeline of each of them
//! (`fhe_cuda::trace`: kernel, stream, device start and end); `GPU_PERF_LAUNCHES=prefix` prints
//! the host time of each of their launches, averaged over the runs from an idle GPU
//! (`fhe_cuda::launch_stats`: the operator's work before it, the wrapper, the driver call, and
//! when the launch returned, from the call's start);
//! `GPU_PERF_HOST=1` times each
//! operation again from an idle GPU, with the host's enqueue time; `GPU_PERF_WALL=1` gives each
//! operation's wall time (host clock, synchronize before and after) under three ways to wait:
//! `Device::synchronize` (one `cuCtxSynchronize`), a synchronize of each of the pool's streams
//! in turn (what `Device::synchronize` did before), and the backend's own stream only (enough
//! where the operation joins its side stream back). `GPU_PERF_PAD_MIB=x` takes an x MiB buffer
//! before anything else and keeps it, moving every later allocation (placement experiments).

use ckks::Parameters;
use ckks::context::ring_for;
use ckks::params::{CAT, CAT_COMPAT, N16_L24_D3, PHANTOM_N16, ParametersLiteral};
use cudarc::driver::sys::CUevent_flags;
use fhe_cuda::{CudaBackend, Device};
use fhe_math::ScaleRoundTables;
use fhe_math::backend::prelude::*;
use fhe_math::poly::Shape;
use fhe_math::ring::RingContext;
use fhe_math::sampler::{Domain, Seed};
use std::sync::Arc;

fn env_or(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn time(be: &CudaBackend, name: &str, mut f: impl FnMut()) -> f64 {
    // GPU_PERF_ONLY=prefix times only the matching operations (for profiler runs).
    if let Ok(only) = std::env::var("GPU_PERF_ONLY")
        && !name.starts_with(&only)
    {
        return 0.0;
    }
    let (runs, warm) = (
        env_or("GPU_PERF_RUNS", 50).max(1),
        env_or("GPU_PERF_WARM", 5),
    );
    let s = be.stream();
    let ctx = be.device().context();
    for _ in 0..warm {
        f();
    }
    be.synchronize().unwrap();
    // One call between two timing events, after a synchronize when `idle`: (event µs, host µs
    // from before the first event's record to after the second's).
    let mut once = |idle: bool| {
        let event = || {
            ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .unwrap()
        };
        let (a, b) = (event(), event());
        if idle {
            be.synchronize().unwrap();
        }
        let t0 = std::time::Instant::now();
        a.record(s).unwrap();
        f();
        b.record(s).unwrap();
        let host = t0.elapsed().as_secs_f64() * 1e6;
        (a.elapsed_ms(&b).unwrap() as f64 * 1e3, host)
    };
    let sorted = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v
    };
    let v = sorted((0..runs).map(|_| once(false).0).collect());
    be.synchronize().unwrap();
    let med = v[runs / 2];
    println!(
        "{name:<28} median {med:>9.1} us   min {:>9.1}   max {:>9.1}",
        v[0],
        v[runs - 1]
    );
    // GPU_PERF_HOST=1: each call again from an idle GPU (a synchronize first), with the host's
    // time to enqueue it and the event time then: where the host enqueues slower than the GPU
    // runs, the second exceeds the back-to-back median above.
    if std::env::var("GPU_PERF_HOST").is_ok_and(|x| x == "1") {
        let (idle, host): (Vec<f64>, Vec<f64>) = (0..runs).map(|_| once(true)).unzip();
        let (idle, host) = (sorted(idle), sorted(host));
        println!(
            "  {name:<26} from idle: host enqueue {:>7.1} us, event {:>7.1} us",
            host[runs / 2],
            idle[runs / 2]
        );
    }
    // GPU_PERF_WALL=1: synchronized wall clock under three ways to wait (see the file's doc).
    if std::env::var("GPU_PERF_WALL").is_ok_and(|x| x == "1") {
        let dev = be.device();
        let pool_streams = || {
            for i in 0..4 {
                dev.stream(i).synchronize().unwrap();
            }
            ctx.check_err().unwrap();
        };
        let waits: [(&str, &dyn Fn()); 3] = [
            ("device", &|| dev.synchronize().unwrap()),
            ("each pool stream", &pool_streams),
            ("own stream", &|| be.synchronize().unwrap()),
        ];
        let mut line = format!("  {name:<26} wall:");
        for (label, wait) in waits {
            let mut w: Vec<f64> = (0..runs)
                .map(|_| {
                    dev.synchronize().unwrap();
                    let t0 = std::time::Instant::now();
                    f();
                    wait();
                    t0.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            w.sort_by(|a, b| a.partial_cmp(b).unwrap());
            line += &format!("  {label} {:.1}", w[runs / 2]);
        }
        println!("{line} us");
    }
    // GPU_PERF_LAUNCHES=prefix: the host time of each launch of the matching operations, from
    // an idle GPU, averaged over `runs` calls (`fhe_cuda::launch_stats`).
    if let Ok(p) = std::env::var("GPU_PERF_LAUNCHES")
        && name.starts_with(&p)
    {
        let mut sum: Vec<(String, f64, f64, f64)> = Vec::new();
        let mut tail = 0.0;
        for _ in 0..runs {
            be.synchronize().unwrap();
            fhe_cuda::launch_stats::start();
            f();
            let (costs, t) = fhe_cuda::launch_stats::take();
            tail += t;
            for (i, c) in costs.into_iter().enumerate() {
                if i == sum.len() {
                    sum.push((c.kernel.clone(), 0.0, 0.0, 0.0));
                }
                sum[i].1 += c.before_us;
                sum[i].2 += c.wrapper_us;
                sum[i].3 += c.driver_us;
            }
        }
        be.synchronize().unwrap();
        let k = runs as f64;
        let mut total = tail / k;
        let mut at = 0.0;
        for (kernel, b, w, d) in &sum {
            at += (b + w + d) / k;
            println!(
                "  launch {kernel:<34} before {:>6.2}  wrapper {:>5.2}  driver {:>5.2} us  done at {at:>6.2}",
                b / k,
                w / k,
                d / k
            );
            total += (b + w + d) / k;
        }
        println!(
            "  launches: after the last {:.2} us, call total {total:.2} us",
            tail / k
        );
    }
    // GPU_PERF_TRACE=prefix: one more call of each matching operation with its launch timeline.
    if let Ok(p) = std::env::var("GPU_PERF_TRACE")
        && name.starts_with(&p)
    {
        fhe_cuda::trace::start();
        f();
        for sp in fhe_cuda::trace::take().unwrap() {
            println!(
                "  trace {:>8.1} {:>8.1} {:>7.1} us  host {:>7.1}  stream {}  {}",
                sp.start_us,
                sp.end_us,
                sp.end_us - sp.start_us,
                sp.host_us,
                sp.stream,
                sp.kernel
            );
        }
    }
    med
}

/// The ring and plaintext modulus of `GPU_PERF_PRESET` (`t = 1` for CKKS).
fn ring_of(preset: &str) -> (Arc<RingContext>, u64) {
    if let Some(name) = preset.strip_prefix("int:") {
        let lit = match name {
            "PHANTOM_INT" => bgv::params::PHANTOM_INT,
            "CAT_COMPAT" => bgv::params::CAT_COMPAT,
            "CAT" => bgv::params::CAT,
            "N13" => bgv::params::N13,
            other => panic!("unknown integer GPU_PERF_PRESET {other:?}"),
        };
        let params = bgv::Parameters::new(&lit).unwrap();
        return (bgv::context::ring_for(&params).unwrap(), params.t());
    }
    let lit: ParametersLiteral = match preset {
        "CAT" => CAT,
        "CAT_COMPAT" => CAT_COMPAT,
        "PHANTOM_N16" => PHANTOM_N16,
        "N16_L24_D3" => N16_L24_D3,
        // N16_L24_D3 with special primes below 2^50 (eight of 50 bits where the preset has seven
        // of 60), so that their NTT passes run on the FP64 pipe (PERF.md).
        "N16_L24_D3_P50" => ParametersLiteral {
            special_primes: 8,
            special_prime_bits: 50,
            ..N16_L24_D3
        },
        other => panic!("unknown GPU_PERF_PRESET {other:?}"),
    };
    (ring_for(&Parameters::new(&lit).unwrap()).unwrap(), 1)
}

fn main() {
    let dev = Device::new(0).expect("a CUDA device");
    dev.warm_up().expect("kernels compile");
    let preset = std::env::var("GPU_PERF_PRESET").unwrap_or_else(|_| "N16_L24_D3".into());
    let (ring, t) = ring_of(&preset);
    let integer = t > 1;
    let be = CudaBackend::new(dev.clone(), ring.clone()).unwrap();
    // GPU_PERF_PAD_MIB=x: a buffer of x MiB taken first and kept, which moves every later
    // allocation (placement experiments).
    let _pad = Some(env_or("GPU_PERF_PAD_MIB", 0))
        .filter(|&m| m > 0)
        .map(|m| be.stream().alloc_zeros::<u64>(m << 17).unwrap());
    let top = ring.max_level();
    let dnum = ring.digits().len();
    println!(
        "device {} | {preset}: N = {} Q limbs {} P limbs {} dnum {}",
        dev.name(),
        ring.n(),
        ring.q_count(),
        ring.p_count(),
        dnum
    );
    let seed = Seed([7; 32]);
    let sh = |components, level, extended| Shape {
        components,
        level,
        extended,
    };
    let u = |i: u32, shape| {
        be.sample_uniform(&seed, Domain::Other, i * 16, shape)
            .unwrap()
    };
    let a = u(0, sh(2, top, false));
    let b = u(1, sh(2, top, false));
    let key = u(2, sh(2 * dnum, top, true));
    let gkey = u(3, sh(2 * dnum, top, true));
    let mut x = be.duplicate(&a).unwrap();
    be.synchronize().unwrap();

    // The timing's own cost: no work between the events (and, with GPU_PERF_WALL=1, the
    // synchronize's round trip alone).
    time(&be, "empty call", || {});
    time(&be, "ntt 2x25", || be.ntt(&mut x).unwrap());
    time(&be, "intt 2x25", || be.intt(&mut x).unwrap());
    time(&be, "tensor", || drop(be.tensor(&a, &b).unwrap()));
    let prod = be.tensor(&a, &b).unwrap();
    time(&be, "mod_up", || drop(be.mod_up(&prod, 2).unwrap()));
    let ext = be.mod_up(&prod, 2).unwrap();
    let mut acc = be.zeros(sh(2, top, true)).unwrap();
    time(&be, "key_product", || {
        be.key_product(&ext, &key, None, &mut acc).unwrap()
    });
    if integer {
        integer_paths(&be, &ring, t, &a, &b, &key, &gkey, &acc);
        return;
    }
    time(&be, "mod_down+rescale", || {
        let mut o = be.duplicate(&a).unwrap();
        be.mod_down_into(&acc, &mut o, true).unwrap();
    });
    time(&be, "rescale", || {
        let mut o = be.duplicate(&a).unwrap();
        be.rescale(&mut o).unwrap();
    });
    time(&be, "rescaled (out of place)", || {
        drop(be.rescaled_mod_t(&a, 1).unwrap())
    });
    time(&be, "duplicate (2x25)", || drop(be.duplicate(&a).unwrap()));
    let bw = time(&be, "duplicate (key, 192 limbs)", || {
        drop(be.duplicate(&key).unwrap())
    });
    let bytes = 2.0 * (2 * dnum * (ring.q_count() + ring.p_count()) * ring.n() * 8) as f64;
    if bw > 0.0 {
        println!(
            "copy bandwidth {:.2} TB/s -> mul_relin_rescale floor {:.1} us (340 limbs of 0.5 MiB)",
            bytes / bw / 1e6,
            340.0 * (ring.n() * 8) as f64 / (bytes / bw)
        );
    }
    let mrr = time(&be, "mul_relin_rescale", || {
        drop(be.mul_relin(&a, &b, &key, true).unwrap())
    });
    time(&be, "mul_relin (no rescale)", || {
        drop(be.mul_relin(&a, &b, &key, false).unwrap())
    });
    let rot = time(&be, "rotate_hoisted (1 key)", || {
        drop(be.rotate_hoisted(&a, &[(5, &gkey)]).unwrap())
    });
    let keys: Vec<(u64, &fhe_cuda::DevicePoly)> = (1..=8)
        .map(|i| (5u64.pow(i) % (2 * ring.n() as u64), &gkey))
        .collect();
    time(&be, "rotate_hoisted (8 keys)", || {
        drop(be.rotate_hoisted(&a, &keys).unwrap())
    });
    println!(
        "SUMMARY {} mul_relin_rescale {mrr:.1} us rotate {rot:.1} us",
        dev.name()
    );
}

/// The BGV/BFV paths (`GPU_PERF_PRESET=int:...`): key switching preserving the message mod
/// `t`, BGV's modulus switch and BFV's tensor with scale-and-round, on uniform operands.
#[allow(clippy::too_many_arguments)]
fn integer_paths(
    be: &CudaBackend,
    ring: &RingContext,
    t: u64,
    a: &fhe_cuda::DevicePoly,
    b: &fhe_cuda::DevicePoly,
    key: &fhe_cuda::DevicePoly,
    gkey: &fhe_cuda::DevicePoly,
    acc: &fhe_cuda::DevicePoly,
) {
    time(be, "mod_down (mod t)", || {
        let mut o = be.duplicate(a).unwrap();
        let mut x = be.duplicate(acc).unwrap();
        be.mod_down_into_mod_t(&mut x, &mut o, false, t).unwrap();
    });
    time(be, "mod_switch (mod t)", || {
        let mut o = be.duplicate(a).unwrap();
        be.rescale_mod_t(&mut o, t).unwrap();
    });
    time(be, "mod_switched (out of place)", || {
        drop(be.rescaled_mod_t(a, t).unwrap())
    });
    let relin = time(be, "mul_relin (no switch)", || {
        drop(be.mul_relin_mod_t(a, b, key, false, t).unwrap())
    });
    time(be, "mul_relin (fused switch)", || {
        drop(be.mul_relin_mod_t(a, b, key, true, t).unwrap())
    });
    let rot = time(be, "rotate_hoisted (1 key)", || {
        drop(be.rotate_hoisted_mod_t(a, &[(3, gkey)], t).unwrap())
    });
    let tables = ScaleRoundTables::new(ring, ring.max_level(), t).unwrap();
    let bfv = time(be, "bfv tensor_scale_round", || {
        drop(be.tensor_scale_round(a, b, &tables).unwrap())
    });
    time(be, "bfv square (scale_round)", || {
        drop(be.tensor_scale_round(a, a, &tables).unwrap())
    });
    time(be, "bfv mul_relin (two calls)", || {
        let c = be.tensor_scale_round(a, b, &tables).unwrap();
        drop(be.relinearize(c, key, false).unwrap())
    });
    time(be, "bfv mul_relin (one call)", || {
        drop(be.tensor_scale_round_relin(a, b, &tables, key).unwrap())
    });
    // BFV's unrelinearized product in coefficient form, and its relinearization from there.
    time(be, "bfv multiply (coefficient form)", || {
        drop(be.tensor_scale_round_coeff(a, b, &tables).unwrap())
    });
    let c3 = be.tensor_scale_round_coeff(a, b, &tables).unwrap();
    time(
        be,
        "bfv relinearize (from coefficient form, with a copy)",
        || {
            drop(
                be.relinearize_from_coeff(be.duplicate(&c3).unwrap(), key)
                    .unwrap(),
            )
        },
    );
    let c3n = be.tensor_scale_round(a, b, &tables).unwrap();
    time(be, "bfv relinearize (from NTT form, with a copy)", || {
        drop(
            be.relinearize(be.duplicate(&c3n).unwrap(), key, false)
                .unwrap(),
        )
    });
    println!(
        "SUMMARY {} t = {t}: mul_relin {relin:.1} us rotate {rot:.1} us bfv multiply {bfv:.1} us",
        be.device().name()
    );
}
