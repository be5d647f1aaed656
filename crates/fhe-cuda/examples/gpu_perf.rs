//! Timing of the hot `CudaBackend` paths at `N16_L24_D3` (N = 2^16, 25 Q limbs, 7 P limbs,
//! dnum 3): NTT / inverse NTT of a 2×25-limb buffer, the key-switching parts, `mul_relin` with
//! rescale and a one-key `rotate_hoisted`. CUDA-event time per call, median of 50 after warm-up.
//!
//! `cargo run --release -p fhe-cuda --example gpu_perf` on a machine with a GPU;
//! `GPU_PERF_PRESET=CAT_COMPAT` (or `CAT`, `PHANTOM_N16`) times another CKKS preset (the op
//! names keep the N16_L24_D3 limb counts).

use ckks::Parameters;
use ckks::context::ring_for;
use ckks::params::{CAT, CAT_COMPAT, N16_L24_D3, PHANTOM_N16, ParametersLiteral};
use cudarc::driver::sys::CUevent_flags;
use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::Backend;
use fhe_math::poly::Shape;
use fhe_math::sampler::{Domain, Seed};

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
    let mut v = Vec::with_capacity(runs);
    for _ in 0..runs {
        let a = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .unwrap();
        let b = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .unwrap();
        a.record(s).unwrap();
        f();
        b.record(s).unwrap();
        v.push(a.elapsed_ms(&b).unwrap() as f64 * 1e3);
    }
    be.synchronize().unwrap();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let med = v[runs / 2];
    println!(
        "{name:<28} median {med:>9.1} us   min {:>9.1}   max {:>9.1}",
        v[0],
        v[runs - 1]
    );
    med
}

fn main() {
    let dev = Device::new(0).expect("a CUDA device");
    dev.warm_up().expect("kernels compile");
    let preset = std::env::var("GPU_PERF_PRESET").unwrap_or_else(|_| "N16_L24_D3".into());
    let lit: ParametersLiteral = match preset.as_str() {
        "CAT" => CAT,
        "CAT_COMPAT" => CAT_COMPAT,
        "PHANTOM_N16" => PHANTOM_N16,
        "N16_L24_D3" => N16_L24_D3,
        other => panic!("unknown GPU_PERF_PRESET {other:?}"),
    };
    let params = Parameters::new(&lit).unwrap();
    let ring = ring_for(&params).unwrap();
    let be = CudaBackend::new(dev.clone(), ring.clone()).unwrap();
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

    time(&be, "ntt 2x25", || be.ntt(&mut x).unwrap());
    time(&be, "intt 2x25", || be.intt(&mut x).unwrap());
    time(&be, "tensor", || drop(be.tensor(&a, &b).unwrap()));
    let t = be.tensor(&a, &b).unwrap();
    time(&be, "mod_up", || drop(be.mod_up(&t, 2).unwrap()));
    let ext = be.mod_up(&t, 2).unwrap();
    let mut acc = be.zeros(sh(2, top, true)).unwrap();
    time(&be, "key_product", || {
        be.key_product(&ext, &key, None, &mut acc).unwrap()
    });
    time(&be, "mod_down+rescale", || {
        let mut o = be.duplicate(&a).unwrap();
        be.mod_down_into(&acc, &mut o, true).unwrap();
    });
    time(&be, "rescale", || {
        let mut o = be.duplicate(&a).unwrap();
        be.rescale(&mut o).unwrap();
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
