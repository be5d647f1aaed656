//! Sort and minimum of 16 encrypted 32-bit integers at the `U32_THROUGHPUT` preset of the
//! `compare` crate (N = 2^15, the CAT chain: 60 + 16 × 40-bit primes, 3 special primes,
//! t = 65537, log2 QP ≈ 880 ≤ 881; base-2^4 digits, blocks of 8 slots): each by the
//! comparison matrix in one circuit (the 16³ pairs of the sort fill one ciphertext), timed end
//! to end (encrypt, compute, decrypt; key generation apart) and checked against the plaintext
//! sort. The workload is `compare::workloads::array`, the one `gpu_bench`'s `cmp:sort16` and
//! `cmp:min16` time.
//!
//! The backend is `AnyBackend::auto`: the GPU when one is usable, else the CPU
//! (`FHE_BACKEND=cpu` forces the CPU); on the GPU each workload runs a second time, warm.
//!
//! Digit-level parallelism (rayon tasks around the halves of each combination step) is on;
//! `-- serial` turns it off.
//!
//! Run with `cargo run --release --example compare_sort`; the last line is `correct: true`
//! only when both results equal the plaintext ones.

use compare::ArrayOp;
use compare::presets::U32_THROUGHPUT;
use compare::workloads::array::{self, ArrayWorkload};
use gpufhe::bgv::{Context, Parameters};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::RingBackend;
use std::time::Instant;
use test_support::SplitMix;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = U32_THROUGHPUT;
    let params = Parameters::new(&preset.params)?;
    let (backend, why_cpu) = AnyBackend::auto_explained(gpufhe::bgv::context::ring_for(&params)?);
    if let Some(e) = why_cpu {
        println!("no usable GPU ({e}): running on the CPU");
    }
    println!("backend: {}", backend.device_name());
    let gpu = matches!(backend, AnyBackend::Cuda(_));
    let ctx = Context::with_backend(params, backend)?;
    let serial = std::env::args().any(|a| a == "serial");
    println!(
        "digit-level parallelism: {}",
        if serial { "off" } else { "on" }
    );
    let k = 16;
    let mut rng = SplitMix::new(1611);
    let mut values: Vec<i128> = (0..k).map(|_| rng.below(1 << 32) as i128).collect();
    values[3] = values[9]; // a tie
    values[5] = u32::MAX as i128;
    values[6] = 0;
    let mut correct = true;
    for (op, name) in [(ArrayOp::Sort, "sort"), (ArrayOp::Min, "min")] {
        let clock = Instant::now();
        let w = ArrayWorkload::new(&ctx, &preset, k, op)?;
        w.comparator().set_digit_parallelism(!serial);
        println!(
            "{name}: key generation {:.2} s",
            clock.elapsed().as_secs_f64()
        );
        let want = array::plain(&values, op);
        for run in 0..if gpu { 2 } else { 1 } {
            let (got, t) = w.run(&values)?;
            let ok = got == want;
            correct &= ok;
            let (m, r) = w.comparator().counters();
            println!(
                "{name} of {k} u32{}: encrypt {:.3} s, compute {:.3} s, decrypt {:.3} s, end to end {:.3} s; {m} products + {r} rotations in the comparisons so far; matches plaintext: {ok}",
                if run == 1 { " (warm)" } else { "" },
                t.encrypt,
                t.compute,
                t.decrypt,
                t.total(),
            );
        }
    }
    println!("correct: {correct}");
    Ok(())
}
