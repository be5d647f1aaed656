//! Image recoloring on encrypted pixels: each pixel's distance to a threshold is compared
//! with 0 by one polynomial over its range ([`compare::RangeFunctions`], `R = 255`), and the
//! pixel is doubled where it is below the threshold (`p·(1 + [p < θ])`), at the CAT chain
//! (N = 2^15, 16 levels, 128-bit secure). The picture is scikit-image's `camera` sample
//! reduced to 128 × 128 (`examples/data/camera_128.pgm`, made by `make_data.py`): 16384
//! pixels in one ciphertext. Timed end to end (encrypt, compute, decrypt; key generation
//! apart) and checked against the same recoloring on plaintext; the result is written to
//! `target/camera_recolored.pgm`. The workload is `compare::workloads::recolor`, the one
//! `gpu_bench`'s `cmp:recolor` times.
//!
//! The backend is `AnyBackend::auto`: the GPU when one is usable, else the CPU
//! (`FHE_BACKEND=cpu` forces the CPU); on the GPU the workload runs a second time, warm.
//!
//! Run with `cargo run --release --example compare_recolor`; the last line is
//! `correct: true` only when every pixel equals the plaintext result.

use compare::workloads::recolor::{self, Recolor};
use gpufhe::bgv::{Context, Parameters, params};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::RingBackend;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h, pixels) = recolor::read_pgm(include_bytes!("data/camera_128.pgm"))?;
    let threshold = 100i64;
    let params = Parameters::new(&params::CAT)?;
    let (backend, why_cpu) = AnyBackend::auto_explained(gpufhe::bgv::context::ring_for(&params)?);
    if let Some(e) = why_cpu {
        println!("no usable GPU ({e}): running on the CPU");
    }
    println!("backend: {}", backend.device_name());
    let gpu = matches!(backend, AnyBackend::Cuda(_));
    let ctx = Context::with_backend(params, backend)?;
    let clock = Instant::now();
    let work = Recolor::new(&ctx, threshold)?;
    println!("key generation: {:.2} s", clock.elapsed().as_secs_f64());
    println!(
        "{w} x {h} pixels, threshold {threshold}; [d < 0] for d in [-255, 255]: {} levels",
        work.levels()
    );
    let want = recolor::plain(&pixels, threshold);
    let changed = pixels.iter().filter(|&&p| (p as i64) < threshold).count();
    let mut correct = true;
    let mut got = Vec::new();
    for run in 0..if gpu { 2 } else { 1 } {
        let (out, level, t) = work.run(&pixels)?;
        correct &= out == want;
        println!(
            "{}encrypt {:.3} s, compute {:.3} s, decrypt {:.3} s, end to end {:.3} s ({changed} pixels recolored, level {level} left)",
            if run == 1 { "warm: " } else { "" },
            t.encrypt,
            t.compute,
            t.decrypt,
            t.total(),
        );
        got = out;
    }
    let mut pgm = format!("P5\n{w} {h}\n255\n").into_bytes();
    pgm.extend(got.iter().map(|&v| v.min(255) as u8));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/target/camera_recolored.pgm");
    if std::fs::write(path, pgm).is_ok() {
        println!("wrote {path}");
    }
    println!("correct: {correct}");
    Ok(())
}
