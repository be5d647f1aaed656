//! `gpu_bench`: times every CKKS operator on the CUDA backend.
//!
//! For each preset (`--presets`), after `Device::warm_up` (NVRTC) and untimed runs of each
//! operator, every operator is timed two ways, `--reps` runs each, and the median is reported:
//!
//! - **event** (`median_us`): CUDA events recorded on the backend's stream just before and just
//!   after the call, the calls issued back to back without a host synchronize (device time of
//!   the operator; host launch overhead is hidden whenever the host keeps ahead of the GPU);
//! - **wall** (`wall_us`): host clock around the call with a device synchronize before and after
//!   it (the method of our peer figures: DESILO, Phantom and CAT time this way).
//!
//! Two host figures explain the gap between the two: `host_us`, the host time of the call in
//! the wall-clock runs (until it returns: the enqueue cost, which overlaps the device's work),
//! and `first_launch_us`, the host time from the call to its first kernel launch in one more
//! call traced from an idle device (`fhe_cuda::trace`; the host work that delays the device).
//!
//! The `ks_*` rows (`ks_mod_up`, `ks_key_product`, `ks_mod_down`, `ks_mod_down_rescale`) and
//! `intt` / `automorphism` time the Backend parts that `key_switch`, `rotate` and
//! `mul_relin_rescale` are built from, on the same inputs.
//!
//! Also measured: device-to-device copy bandwidth (2 GiB copy, bytes read + written, median of
//! several), the memory floor of `mul_relin_rescale` at `N16_L24_D3`, key sizes, peak pool
//! memory. Output: a table on stdout and, with `--json PATH`, a JSON file.
//!
//! No GPU (or no driver / NVRTC) is a clear error and exit status 1, never a panic.

mod bootstrap;
mod compare;
mod heap;
mod integer;
mod ntt_batch;
mod pbs;
mod pdq;
mod switch;

use ckks::params::{CAT, CAT_COMPAT, N16_L24_D3, PHANTOM_N16, ParametersLiteral};
use ckks::{Context, Encoder, Evaluator, Parameters, context::ring_for};
use clap::Parser;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream};
use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::prelude::*;
use fhe_math::fft::Complex64;
use fhe_math::poly::Shape;
use rlwe::{Ciphertext, encrypt};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

type R<T> = std::result::Result<T, Box<dyn Error>>;

/// Command line.
#[derive(Parser, Debug)]
#[command(about = "Times CKKS operators on the CUDA backend (event and synchronized wall time)")]
struct Args {
    /// Presets to run, comma separated: CKKS (CAT, CAT_COMPAT, N16_L24_D3, PHANTOM_N16) and BGV
    /// and BFV with a `bgv:` / `bfv:` prefix (CAT, CAT_COMPAT, PHANTOM_INT, N13), comparisons
    /// with `cmp:` (U64_THROUGHPUT, U64_LATENCY, U32_THROUGHPUT; the workloads sort16, min16,
    /// mlp_batch, recolor, private_query), batched NTTs of small rings as
    /// `ntt:<log_n>x<limbs>x<batch>` (e.g. `ntt:11x1x256`), programmable bootstrapping as
    /// `pbs:<SET>x<batch>` (e.g. `pbs:CLASSIC_918_2048x4096`), CKKS bootstrapping as
    /// `boot:BOOT_N12_INSECURE`, `boot:BOOT_N16`, `boot:BOOT_N16_STC_FIRST` or `boot:BOOT_N16_MIXED` (mixed chain),
    /// with `x<slots>` for a sparse-slot bootstrap (e.g. `boot:BOOT_N16_MIXEDx4096`),
    /// bootstrapping by blind rotation as `heap:<SET>x<slots>` (e.g. `heap:HEAP_N13x16`), CAT's private database queries as
    /// `pdq:<rows>` (e.g. `pdq:1024`), and scheme switching (CKKS compare through LWE and back)
    /// as `switch:N16x<slots>` or `switch:CIx<slots>` (e.g. `switch:N16x4096`).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "CAT,CAT_COMPAT,N16_L24_D3,PHANTOM_N16,bgv:CAT_COMPAT,bgv:PHANTOM_INT,bfv:CAT_COMPAT,bfv:PHANTOM_INT"
    )]
    presets: Vec<String>,
    /// Timed runs per operator and method (the median is reported).
    #[arg(long, default_value_t = 50)]
    reps: usize,
    /// Untimed runs per operator before timing.
    #[arg(long, default_value_t = 3)]
    warm: usize,
    /// Write the results as JSON to this path.
    #[arg(long)]
    json: Option<String>,
    /// Commit hash to record (default: the one embedded at build time, GPUFHE_COMMIT).
    #[arg(long)]
    commit: Option<String>,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Size of the device-to-device copy for the bandwidth measurement, in MiB.
    #[arg(long, default_value_t = 2048)]
    copy_mib: usize,
}

/// `(Some(prefix), rest)` for a preset name with a prefix (`bgv`, `bfv`, `ntt`, `cmp`, `pbs`,
/// `boot`, `pdq`), else `(None, name)` for a CKKS preset.
fn scheme_of(name: &str) -> (Option<&'static str>, &str) {
    if let Some(rest) = name.strip_prefix("ntt:") {
        (Some("ntt"), rest)
    } else if let Some(rest) = name.strip_prefix("pbs:") {
        (Some("pbs"), rest)
    } else if let Some(rest) = name.strip_prefix("heap:") {
        (Some("heap"), rest)
    } else if let Some(rest) = name.strip_prefix("boot:") {
        (Some("boot"), rest)
    } else if let Some(rest) = name.strip_prefix("cmp:") {
        (Some("cmp"), rest)
    } else if let Some(rest) = name.strip_prefix("bgv:") {
        (Some("bgv"), rest)
    } else if let Some(rest) = name.strip_prefix("bfv:") {
        (Some("bfv"), rest)
    } else if let Some(rest) = name.strip_prefix("switch:") {
        (Some("switch"), rest)
    } else if let Some(rest) = name.strip_prefix("pdq:") {
        (Some("pdq"), rest)
    } else {
        (None, name)
    }
}

fn preset(name: &str) -> R<ParametersLiteral> {
    Ok(match name {
        "CAT" => CAT,
        "CAT_COMPAT" => CAT_COMPAT,
        "N16_L24_D3" => N16_L24_D3,
        "PHANTOM_N16" => PHANTOM_N16,
        "N13" => ckks::params::N13,
        other => {
            return Err(format!(
                "unknown preset {other:?} (known: CAT, CAT_COMPAT, N16_L24_D3, PHANTOM_N16, N13)"
            )
            .into());
        }
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// One operator's timing, in microseconds.
#[derive(Clone, Copy, Debug)]
struct Timing {
    event_us: f64,
    event_min_us: f64,
    wall_us: f64,
    wall_min_us: f64,
    /// Host time of the call itself in the wall-clock runs (until it returns, before the
    /// closing synchronize): the enqueue cost, median.
    host_us: f64,
    /// Host time from the call to its first kernel launch, in one more call traced after an
    /// idle device (`fhe_cuda::trace`): the host work that delays the device; `None` for an
    /// operator that launches no kernel.
    first_launch_us: Option<f64>,
}

/// One operator's timing as a progress line on stderr: event, wall, host and first-launch µs.
fn log_timing(preset: &str, op: &str, t: &Timing) {
    eprintln!(
        "  {preset:<16} {op:<20} event {:>10.1} us  wall {:>10.1} us  host {:>8.1} us  first launch {:>6.1} us",
        t.event_us,
        t.wall_us,
        t.host_us,
        t.first_launch_us.unwrap_or(f64::NAN)
    );
}

/// With `GPU_BENCH_KERNELS` set: the traced call's kernels on stderr, by total device time
/// (launches, sum of their spans, share of the call's span), before the row's timing line.
/// Traced spans include the events' overhead; they give shares, not timings to report.
fn log_kernel_totals(spans: &[fhe_cuda::trace::Span]) {
    let mut by: BTreeMap<&str, (usize, f64)> = BTreeMap::new();
    for s in spans {
        let e = by.entry(s.kernel.as_str()).or_default();
        e.0 += 1;
        e.1 += s.end_us - s.start_us;
    }
    let span = spans.iter().map(|s| s.end_us).fold(0.0, f64::max)
        - spans
            .iter()
            .map(|s| s.start_us)
            .fold(f64::INFINITY, f64::min);
    let mut v: Vec<_> = by.into_iter().collect();
    v.sort_by(|a, b| b.1.1.total_cmp(&a.1.1));
    eprintln!(
        "    traced call: {} launches over {span:.0} us",
        spans.len()
    );
    for (k, (n, t)) in v.iter().take(16) {
        eprintln!(
            "    {:>6} x {:>9.1} us {:>5.1}%  {k}",
            n,
            t,
            100.0 * t / span
        );
    }
}

/// Times closures on one stream with events and with synchronized wall clock.
struct Timer {
    dev: Arc<Device>,
    stream: Arc<CudaStream>,
    starts: Vec<CudaEvent>,
    ends: Vec<CudaEvent>,
    reps: usize,
    warm: usize,
}

impl Timer {
    fn new(dev: Arc<Device>, stream: Arc<CudaStream>, reps: usize, warm: usize) -> R<Self> {
        let mk = || {
            dev.context()
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        };
        let starts = (0..reps).map(|_| mk()).collect::<Result<Vec<_>, _>>()?;
        let ends = (0..reps).map(|_| mk()).collect::<Result<Vec<_>, _>>()?;
        Ok(Timer {
            dev,
            stream,
            starts,
            ends,
            reps,
            warm,
        })
    }

    /// `setup` (untimed) prepares the input of each call; `op` is timed; its output is dropped
    /// after the end event / the closing synchronize.
    fn time<I, O>(
        &self,
        reps: usize,
        mut setup: impl FnMut() -> R<I>,
        mut op: impl FnMut(I) -> R<O>,
    ) -> R<Timing> {
        let reps = reps.clamp(1, self.reps);
        for _ in 0..self.warm {
            let i = setup()?;
            drop(op(i)?);
        }
        self.dev.synchronize()?;
        // Events, calls back to back.
        for r in 0..reps {
            let i = setup()?;
            self.starts[r].record(&self.stream)?;
            let o = op(i)?;
            self.ends[r].record(&self.stream)?;
            drop(o);
        }
        self.dev.synchronize()?;
        let mut ev = (0..reps)
            .map(|r| Ok(self.starts[r].elapsed_ms(&self.ends[r])? as f64 * 1e3))
            .collect::<R<Vec<f64>>>()?;
        // Wall clock with a synchronize before and after.
        let mut wall = Vec::with_capacity(reps);
        let mut host = Vec::with_capacity(reps);
        for _ in 0..reps {
            let i = setup()?;
            self.dev.synchronize()?;
            let t0 = Instant::now();
            let o = op(i)?;
            host.push(t0.elapsed().as_secs_f64() * 1e6);
            self.dev.synchronize()?;
            wall.push(t0.elapsed().as_secs_f64() * 1e6);
            drop(o);
        }
        let i = setup()?;
        self.dev.synchronize()?;
        fhe_cuda::trace::start();
        let o = op(i);
        // Taken whatever the call returned, so a failed call leaves no trace running under the
        // next operators' timings.
        let spans = fhe_cuda::trace::take()?;
        drop(o?);
        self.dev.synchronize()?;
        if std::env::var_os("GPU_BENCH_KERNELS").is_some() {
            log_kernel_totals(&spans);
        }
        let first_launch_us = spans.iter().map(|s| s.host_us).reduce(f64::min);
        let event_min_us = ev.iter().copied().fold(f64::INFINITY, f64::min);
        let wall_min_us = wall.iter().copied().fold(f64::INFINITY, f64::min);
        Ok(Timing {
            event_us: median(&mut ev),
            event_min_us,
            wall_us: median(&mut wall),
            wall_min_us,
            host_us: median(&mut host),
            first_launch_us,
        })
    }
}

/// Device-to-device copy bandwidth in GB/s (bytes read + bytes written), median of `reps`.
fn bandwidth(dev: &Arc<Device>, mib: usize, reps: usize) -> R<(f64, f64)> {
    let stream = dev.stream(0).clone();
    let words = mib * (1 << 20) / 8;
    let src = stream.alloc_zeros::<u64>(words)?;
    let mut dst = stream.alloc_zeros::<u64>(words)?;
    let ctx = dev.context();
    let mut ms = Vec::new();
    for i in 0..reps + 2 {
        let a = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        let b = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        a.record(&stream)?;
        stream.memcpy_dtod(&src, &mut dst)?;
        b.record(&stream)?;
        let t = a.elapsed_ms(&b)? as f64;
        if i >= 2 {
            ms.push(t);
        }
    }
    drop((src, dst));
    dev.synchronize()?;
    // The copy buffers must not count as the FHE peak.
    dev.reset_pool_peak()?;
    let t = median(&mut ms);
    let bytes = 2.0 * (words * 8) as f64;
    Ok((bytes / (t * 1e-3) / 1e9, t * 1e3))
}

/// Bytes of a device buffer of this shape: limbs × N × 8 per component.
fn buffer_bytes(be: &CudaBackend, shape: Shape) -> u64 {
    let ring = be.ring();
    let limbs = shape.level + 1 + if shape.extended { ring.p_count() } else { 0 };
    (shape.components * limbs * ring.n() * 8) as u64
}

/// A small deterministic generator (inputs only; keys use the library's own randomness).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    fn unit(&mut self) -> f64 {
        (self.next() as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// One row of results.
struct Row {
    op: &'static str,
    t: Timing,
    reps: usize,
    floor_us: Option<f64>,
}

/// A preset's ring as its results report it: log2 N, levels, key-switching digits, special
/// primes (0 where the preset has no such notion).
#[derive(Clone, Copy)]
struct RingShape {
    log_n: u32,
    levels: usize,
    dnum: usize,
    special_primes: usize,
}

impl RingShape {
    /// The shape of a CKKS parameter literal.
    fn of_ckks(lit: &gpufhe::ckks::ParametersLiteral) -> Self {
        RingShape {
            log_n: lit.log_n,
            levels: lit.levels,
            dnum: lit.dnum,
            special_primes: lit.special_primes,
        }
    }

    /// The shape of BGV (and BFV) parameters.
    fn of_bgv(params: &gpufhe::bgv::Parameters) -> Self {
        RingShape {
            log_n: params.log_n(),
            levels: params.max_level(),
            dnum: params.dnum(),
            special_primes: params.moduli_p().len(),
        }
    }

    /// A ring without key switching (blind rotation, batched NTTs).
    fn ring_only(log_n: u32, levels: usize) -> Self {
        RingShape {
            log_n,
            levels,
            dnum: 0,
            special_primes: 0,
        }
    }
}

/// One preset's rows, reported parameters and pool statistics.
struct PresetResult {
    scheme: &'static str,
    name: String,
    ring: RingShape,
    rows: Vec<Row>,
    keys: Value,
    pool_after: Value,
    peak: u64,
    setup_s: f64,
}

impl PresetResult {
    /// The result of preset `name`, with the device pool's statistics read now.
    fn new(
        dev: &Device,
        scheme: &'static str,
        name: String,
        ring: RingShape,
        rows: Vec<Row>,
        keys: Value,
        setup_s: f64,
    ) -> R<Self> {
        let (pool_after, peak) = pool_after(dev, &name)?;
        Ok(PresetResult {
            scheme,
            name,
            ring,
            rows,
            keys,
            pool_after,
            peak,
            setup_s,
        })
    }
}

/// The device pool's statistics after a preset: its JSON entry and the peak bytes in use.
fn pool_after(dev: &Device, preset: &str) -> R<(Value, u64)> {
    let ps = dev.pool_stats()?;
    let entry = json!({
        "preset": preset,
        "in_use": ps.in_use, "reserved": ps.reserved, "peak": ps.peak, "peak_reserved": ps.peak_reserved,
    });
    Ok((entry, ps.peak))
}

fn bench_preset(
    dev: &Arc<Device>,
    name: &str,
    args: &Args,
    bw_gbps: f64,
    rotate_step_seed: u64,
) -> R<PresetResult> {
    let t_setup = Instant::now();
    dev.synchronize()?;
    dev.reset_pool_peak()?;
    let lit = preset(name)?;
    let params = Parameters::new(&lit)?;
    let backend = CudaBackend::new(dev.clone(), ring_for(&params)?)?;
    let stream = backend.stream().clone();
    let ctx = Context::with_backend(params.clone(), backend)?;
    let be = ctx.backend();
    let enc = Encoder::new(&ctx)?;
    let eval = Evaluator::new(&ctx)?;
    let kg = ctx.key_generator();
    let n = params.n();
    let top = params.max_level();
    let slots = enc.max_slots();

    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let rlk = kg.relin_key(&sk)?;
    // Keys: rotations 1..=8 (hoisted), one random step, conjugation.
    let mut rng = Lcg(rotate_step_seed);
    let random_step = loop {
        let s = (rng.next() % (slots as u64)) as i64;
        if s > 8 {
            break s;
        }
    };
    let mut steps: Vec<i64> = (1..=8).collect();
    steps.push(random_step);
    let elements = eval.galois_elements(&steps, true);
    let gk = kg.galois_keys(&sk, &elements)?;

    let x: Vec<Complex64> = (0..slots)
        .map(|_| Complex64::new(rng.unit(), rng.unit()))
        .collect();
    let y: Vec<Complex64> = (0..slots)
        .map(|_| Complex64::new(rng.unit(), rng.unit()))
        .collect();
    let px = enc.encode(&x, top)?;
    let py = enc.encode(&y, top)?;
    let cx = encrypt::encrypt_pk(be, &pk, &px)?;
    let cy = encrypt::encrypt_pk(be, &pk, &py)?;
    let host_pt = be.download(px.poly())?;
    be.synchronize()?;
    let setup_s = t_setup.elapsed().as_secs_f64();

    // Sanity check (untimed): mul_relin_rescale and rotate decrypt to the expected values.
    {
        let m = eval.mul_relin_rescale(&cx, &cy, &rlk)?;
        let d = enc.decode(&encrypt::decrypt(be, &sk, &m)?)?;
        let err_m = (0..slots)
            .map(|i| (d[i] - x[i] * y[i]).norm())
            .fold(0.0, f64::max);
        let r = eval.rotate(&cx, random_step, &gk)?;
        let d = enc.decode(&encrypt::decrypt(be, &sk, &r)?)?;
        let k = random_step as usize;
        let err_r = (0..slots)
            .map(|i| (d[i] - x[(i + k) % slots]).norm())
            .fold(0.0, f64::max);
        eprintln!(
            "check {name}: mul_relin_rescale max err 2^{:.1}, rotate({random_step}) max err 2^{:.1}",
            err_m.log2(),
            err_r.log2()
        );
        if !(err_m < 1e-3 && err_r < 1e-3) {
            return Err(format!("{name}: results do not decrypt correctly").into());
        }
    }

    let timer = Timer::new(dev.clone(), stream, args.reps, args.warm)?;
    let reps = args.reps;
    let none = || -> R<()> { Ok(()) };
    let dup = |c: &Ciphertext<CudaBackend>| -> R<Ciphertext<CudaBackend>> { Ok(c.duplicate(be)?) };
    let hoist_steps: Vec<i64> = (1..=8).collect();
    let limb_bytes = (n * 8) as f64;
    let floor = |limbs: usize| limbs as f64 * limb_bytes / (bw_gbps * 1e9) * 1e6;
    let (lq, k, d) = (top + 1, params.moduli_p().len(), params.dnum());
    let ks_limbs = 2 * d * (lq + k);

    let mut rows = Vec::new();
    let mut push = |op: &'static str, t: Timing, reps: usize, floor_us: Option<f64>| {
        log_timing(name, op, &t);
        rows.push(Row {
            op,
            t,
            reps,
            floor_us,
        });
    };

    push(
        "encode",
        timer.time(reps, none, |_| Ok(enc.encode(&x, top)?))?,
        reps,
        None,
    );
    push(
        "decode",
        timer.time(reps, none, |_| Ok(enc.decode(&px)?))?,
        reps,
        None,
    );
    push(
        "encrypt_h2d",
        timer.time(reps, none, |_| Ok(be.upload(&host_pt)?))?,
        reps,
        None,
    );
    push(
        "encrypt",
        timer.time(reps, none, |_| Ok(encrypt::encrypt_pk(be, &pk, &px)?))?,
        reps,
        None,
    );
    push(
        "decrypt",
        timer.time(reps, none, |_| Ok(encrypt::decrypt(be, &sk, &cx)?))?,
        reps,
        None,
    );
    push(
        "add",
        timer.time(reps, none, |_| Ok(eval.add(&cx, &cy)?))?,
        reps,
        Some(floor(6 * lq)),
    );
    push(
        "multiply",
        timer.time(reps, none, |_| Ok(eval.mul(&cx, &cy)?))?,
        reps,
        Some(floor(7 * lq)),
    );
    push(
        "multiply_plain",
        timer.time(reps, none, |_| Ok(eval.mul_plain(&cx, &py)?))?,
        reps,
        Some(floor(5 * lq)),
    );
    push(
        "square",
        timer.time(reps, none, |_| Ok(eval.square(&cx)?))?,
        reps,
        Some(floor(5 * lq)),
    );
    let prod = eval.mul(&cx, &cy)?;
    push(
        "relinearize",
        timer.time(reps, || dup(&prod), |t| Ok(eval.relinearize(t, &rlk)?))?,
        reps,
        Some(floor(3 * lq + ks_limbs + 2 * lq)),
    );
    let relin = eval.relinearize(prod.duplicate(be)?, &rlk)?;
    push(
        "rescale",
        timer.time(
            reps,
            || dup(&relin),
            |mut c| {
                eval.rescale_assign(&mut c)?;
                Ok(c)
            },
        )?,
        reps,
        Some(floor(2 * lq + 2 * (lq - 1))),
    );
    push(
        "rotate_one_step",
        timer.time(reps, none, |_| Ok(eval.rotate(&cx, 1, &gk)?))?,
        reps,
        Some(floor(2 * lq + ks_limbs + 2 * lq)),
    );
    push(
        "rotate_random",
        timer.time(reps, none, |_| Ok(eval.rotate(&cx, random_step, &gk)?))?,
        reps,
        Some(floor(2 * lq + ks_limbs + 2 * lq)),
    );
    push(
        "conjugate",
        timer.time(reps, none, |_| Ok(eval.conjugate(&cx, &gk)?))?,
        reps,
        Some(floor(2 * lq + ks_limbs + 2 * lq)),
    );
    push(
        "ntt",
        timer.time(
            reps,
            || Ok(be.duplicate(cx.poly())?),
            |mut p| {
                be.ntt(&mut p)?;
                Ok(p)
            },
        )?,
        reps,
        Some(floor(4 * lq)),
    );
    push(
        "key_switch",
        timer.time(reps, none, |_| {
            Ok(be.key_switch(cx.poly(), 1, &rlk.0.poly, None)?)
        })?,
        reps,
        Some(floor(lq + ks_limbs + 2 * lq)),
    );
    // Breakdown of key switching into the Backend's parts (same inputs as key_switch).
    push(
        "ks_mod_up",
        timer.time(reps, none, |_| Ok(be.mod_up(cx.poly(), 1)?))?,
        reps,
        Some(floor(lq + d * (lq + k))),
    );
    let ext = be.mod_up(cx.poly(), 1)?;
    let acc_shape = Shape {
        components: 2,
        level: top,
        extended: true,
    };
    let out_shape = Shape {
        components: 2,
        level: top,
        extended: false,
    };
    push(
        "ks_key_product",
        timer.time(
            reps,
            || Ok(be.zeros(acc_shape)?),
            |mut acc| {
                be.key_product(&ext, &rlk.0.poly, None, &mut acc)?;
                Ok(acc)
            },
        )?,
        reps,
        Some(floor(d * (lq + k) + ks_limbs + 4 * (lq + k))),
    );
    let mut acc = be.zeros(acc_shape)?;
    be.key_product(&ext, &rlk.0.poly, None, &mut acc)?;
    push(
        "ks_mod_down",
        timer.time(
            reps,
            || Ok(be.zeros(out_shape)?),
            |mut out| {
                be.mod_down_into(&acc, &mut out, false)?;
                Ok(out)
            },
        )?,
        reps,
        Some(floor(2 * (lq + k) + 4 * lq)),
    );
    push(
        "ks_mod_down_rescale",
        timer.time(
            reps,
            || Ok(be.zeros(out_shape)?),
            |mut out| {
                be.mod_down_into(&acc, &mut out, true)?;
                Ok(out)
            },
        )?,
        reps,
        Some(floor(2 * (lq + k) + 2 * lq + 2 * (lq - 1))),
    );
    drop((ext, acc));
    push(
        "intt",
        timer.time(
            reps,
            || Ok(be.duplicate(cx.poly())?),
            |mut p| {
                be.intt(&mut p)?;
                Ok(p)
            },
        )?,
        reps,
        Some(floor(4 * lq)),
    );
    let g1 = eval.rotation_element(1);
    push(
        "automorphism",
        timer.time(
            reps,
            || Ok(be.zeros(out_shape)?),
            |mut out| {
                be.automorphism_into(cx.poly(), g1, &mut out, 2)?;
                Ok(out)
            },
        )?,
        reps,
        Some(floor(4 * lq)),
    );
    push(
        "mul_relin",
        timer.time(reps, none, |_| Ok(eval.mul_relin(&cx, &cy, &rlk)?))?,
        reps,
        Some(floor(4 * lq + ks_limbs + 2 * lq)),
    );
    push(
        "mul_relin_rescale",
        timer.time(reps, none, |_| Ok(eval.mul_relin_rescale(&cx, &cy, &rlk)?))?,
        reps,
        Some(floor(4 * lq + ks_limbs + 2 * (lq - 1))),
    );
    push(
        "rotate_hoisted_8",
        timer.time(reps, none, |_| {
            Ok(eval.rotate_hoisted(&cx, &hoist_steps, &gk)?)
        })?,
        reps,
        Some(floor(2 * lq + 8 * ks_limbs + 8 * 2 * lq)),
    );
    let kreps = reps.min(10);
    push(
        "keygen",
        timer.time(kreps, none, |_| {
            let sk = kg.secret_key()?;
            let pk = kg.public_key(&sk)?;
            let rlk = kg.relin_key(&sk)?;
            Ok((sk, pk, rlk))
        })?,
        kreps,
        None,
    );

    let pk_bytes = buffer_bytes(be, be.shape(&pk.poly));
    let rlk_bytes = buffer_bytes(be, be.shape(&rlk.0.poly));
    let gk_bytes = buffer_bytes(be, be.shape(&gk.keys.values().next().ok_or("no key")?.poly));
    let ct_bytes = buffer_bytes(be, be.shape(cx.poly()));
    let keys = json!({
        "preset": name,
        "ciphertext_bytes": ct_bytes,
        "public_key_bytes": pk_bytes,
        "public_key_seeded_bytes": pk_bytes / 2,
        "relin_key_bytes": rlk_bytes,
        "relin_key_seeded_bytes": rlk_bytes / 2,
        "galois_key_bytes": gk_bytes,
        "galois_key_seeded_bytes": gk_bytes / 2,
        "galois_keys_generated": gk.keys.len(),
        "random_step": random_step,
    });
    PresetResult::new(
        dev,
        "ckks",
        name.to_string(),
        RingShape {
            log_n: params.log_n(),
            levels: lit.levels,
            dnum: params.dnum(),
            special_primes: k,
        },
        rows,
        keys,
        setup_s,
    )
}

/// UTC date `YYYY-MM-DD` from the system clock (civil-from-days).
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let z = secs.div_euclid(86400) + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}-{m:02}-{d:02}")
}

fn run(args: &Args) -> R<()> {
    let presets: Vec<String> = args.presets.iter().map(|s| s.trim().to_string()).collect();
    for p in &presets {
        match scheme_of(p) {
            (Some("ntt"), b) => ntt_batch::preset(b).map(|_| ())?,
            (Some("pbs"), b) => pbs::preset(b).map(|_| ())?,
            (Some("boot"), b) => bootstrap::preset(b).map(|_| ())?,
            (Some("heap"), b) => heap::preset(b).map(|_| ())?,
            (Some("cmp"), b) => compare::preset(b).map(|_| ())?,
            (Some("pdq"), b) => pdq::preset(b).map(|_| ())?,
            (Some("switch"), b) => switch::preset(b).map(|_| ())?,
            (Some(_), b) => integer::preset(b).map(|_| ())?,
            (None, _) => preset(p).map(|_| ())?,
        }
    }
    if args.reps == 0 {
        return Err("--reps must be at least 1".into());
    }
    let dev = Device::new(args.device).map_err(|e| format!("no usable CUDA device: {e}"))?;
    let t = Instant::now();
    dev.warm_up()?;
    let nvrtc_s = t.elapsed().as_secs_f64();
    let loads = dev.module_loads();
    eprintln!(
        "device: {} ({}); kernels ready in {nvrtc_s:.2} s ({} units compiled, {} from the cache {})",
        dev.name(),
        dev.arch(),
        loads.compiled,
        loads.from_cache,
        dev.kernel_cache()
            .map_or("(off)".to_string(), |d| d.display().to_string())
    );
    let (bw, copy_us) = bandwidth(&dev, args.copy_mib, 10)?;
    // Floor of mul_relin_rescale at N16_L24_D3: inputs 100 limbs + key 192 + output 48,
    // 0.5 MiB each (N = 2^16, 8-byte words).
    let floor_bytes = (100 + 192 + 48) as f64 * 0.5 * (1 << 20) as f64;
    let floor_us = floor_bytes / (bw * 1e9) * 1e6;
    eprintln!(
        "bandwidth: {bw:.0} GB/s ({} MiB copy in {copy_us:.0} us); floor mul_relin_rescale N16_L24_D3 = {floor_us:.1} us",
        args.copy_mib
    );

    let mut results = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for (i, p) in presets.iter().enumerate() {
        eprintln!("preset {p} ...");
        let result = match scheme_of(p) {
            (Some("ntt"), b) => ntt_batch::bench_preset(&dev, b, args.reps, args.warm),
            (Some("pbs"), b) => pbs::bench_preset(&dev, b, args.reps, args.warm),
            (Some("boot"), b) => bootstrap::bench_preset(&dev, b, args.reps, args.warm, bw),
            (Some("heap"), b) => heap::bench_preset(&dev, b, args.reps, args.warm),
            (Some("cmp"), b) => compare::bench_preset(&dev, b, args.reps, args.warm),
            (Some("pdq"), b) => pdq::bench_preset(&dev, b, args.reps, args.warm),
            (Some("switch"), b) => switch::bench_preset(&dev, b, args.reps, args.warm),
            (Some(scheme), b) => {
                integer::bench_preset(&dev, scheme, b, args.reps, args.warm, 0x5eed + i as u64)
            }
            (None, _) => bench_preset(&dev, p, args, bw, 0x5eed + i as u64),
        };
        match result {
            Ok(r) => results.push(r),
            Err(e) => {
                eprintln!("preset {p} failed: {e}");
                failed.push(format!("{p}: {e}"));
                dev.synchronize()?;
            }
        }
    }
    let stats = dev.pool_stats()?;
    let peak = results.iter().map(|r| r.peak).max().unwrap_or(stats.peak);

    // Table.
    println!();
    println!(
        "gpu_bench — {} ({}), {} runs per op (median µs); event = CUDA events around the call (calls back to back), wall = host clock with a device synchronize before and after",
        dev.name(),
        dev.arch(),
        args.reps
    );
    println!(
        "copy bandwidth {bw:.0} GB/s (read + write); floor mul_relin_rescale @ N16_L24_D3 = {floor_us:.1} µs"
    );
    for r in &results {
        println!();
        println!(
            "{}: log N = {}, L = {}, K = {}, dnum = {} (setup {:.1} s)",
            r.name, r.ring.log_n, r.ring.levels, r.ring.special_primes, r.ring.dnum, r.setup_s
        );
        println!(
            "{:<20} {:>12} {:>12} {:>12} {:>10}",
            "op", "event µs", "wall µs", "floor µs", "wall/floor"
        );
        for row in &r.rows {
            let (f, ratio) = match row.floor_us {
                Some(f) => (format!("{f:.1}"), format!("{:.1}", row.t.wall_us / f)),
                None => ("-".into(), "-".into()),
            };
            println!(
                "{:<20} {:>12.1} {:>12.1} {:>12} {:>10}",
                row.op, row.t.event_us, row.t.wall_us, f, ratio
            );
        }
        println!("keys: {}", r.keys);
    }
    let mrr = results
        .iter()
        .find(|r| r.name == "N16_L24_D3")
        .and_then(|r| r.rows.iter().find(|x| x.op == "mul_relin_rescale"));
    if let Some(m) = mrr {
        println!(
            "\nmul_relin_rescale @ N16_L24_D3: event {:.1} µs = {:.1}× floor, wall {:.1} µs = {:.1}× floor ({floor_us:.1} µs)",
            m.t.event_us,
            m.t.event_us / floor_us,
            m.t.wall_us,
            m.t.wall_us / floor_us
        );
    }
    println!(
        "pool: peak in use {:.2} GiB (largest preset, keys and temporaries; the bandwidth copy excluded)",
        peak as f64 / (1u64 << 30) as f64,
    );
    for r in &results {
        println!(
            "  {}: peak in use {:.2} GiB",
            r.name,
            r.peak as f64 / (1u64 << 30) as f64
        );
    }

    if let Some(path) = &args.json {
        let commit = args.commit.clone().unwrap_or_else(|| {
            option_env!("GPUFHE_COMMIT")
                .unwrap_or("unknown")
                .to_string()
        });
        let mut entries = Vec::new();
        for r in &results {
            for row in &r.rows {
                entries.push(json!({
                    "scheme": r.scheme,
                    "op": row.op,
                    "preset": r.name,
                    "log_n": r.ring.log_n,
                    "levels": r.ring.levels,
                    "dnum": r.ring.dnum,
                    "special_primes": r.ring.special_primes,
                    "median_us": row.t.event_us,
                    "wall_us": row.t.wall_us,
                    "min_us": row.t.event_min_us,
                    "wall_min_us": row.t.wall_min_us,
                    "host_us": row.t.host_us,
                    "first_launch_us": row.t.first_launch_us,
                    "reps": row.reps,
                    "floor_us": row.floor_us,
                    "precision_bits": r.keys.get("precision_bits"),
                    "rows": pdq::rows_of(&r.name),
                }));
                for extra in [
                    pbs::row_fields(r, row),
                    switch::row_fields(r, row),
                    heap::row_fields(r, row),
                ] {
                    if let (Some(Value::Object(e)), Some(Value::Object(x))) =
                        (entries.last_mut(), extra)
                    {
                        e.extend(x);
                    }
                }
            }
        }
        let doc = json!({
            "device": dev.name(),
            "arch": dev.arch(),
            "commit": commit,
            "date": today(),
            "method": "median of reps after warm-up; median_us: CUDA events on the backend's stream around each call, calls issued back to back; wall_us: host clock with a device synchronize before and after each call; host_us: host time of the call in those runs; first_launch_us: host time to the first kernel launch of one traced call from an idle device. Operands at the top level.",
            "nvrtc_warm_up_s": nvrtc_s,
            "bandwidth_gbps": bw,
            "bandwidth_copy_bytes": args.copy_mib * (1 << 20),
            "floor_us": floor_us,
            "floor_note": "mul_relin_rescale at N16_L24_D3: (inputs 100 limbs + key 192 limbs + output 48 limbs) x 0.5 MiB / bandwidth; per-op floor_us in results counts each op's inputs, key and output once",
            "mul_relin_rescale_n16_l24_d3_over_floor": mrr.map(|m| m.t.event_us / floor_us),
            "mul_relin_rescale_n16_l24_d3_wall_over_floor": mrr.map(|m| m.t.wall_us / floor_us),
            "peak_pool_bytes": peak,
            "peak_pool_note": "largest per-preset high-water mark of pool memory in use (reset before each preset and after the bandwidth copy); per preset in pool_after_preset",
            "pool_after_preset": results.iter().map(|r| r.pool_after.clone()).collect::<Vec<_>>(),
            "key_sizes": results.iter().map(|r| r.keys.clone()).collect::<Vec<_>>(),
            "setup_s": results.iter().map(|r| json!({"preset": r.name, "seconds": r.setup_s})).collect::<Vec<_>>(),
            "failed_presets": failed,
            "results": entries,
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")
            .map_err(|e| format!("cannot write {path}: {e}"))?;
        eprintln!("wrote {path}");
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("presets failed: {}", failed.join("; ")).into())
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpu_bench: error: {e}");
            ExitCode::FAILURE
        }
    }
}
