//! A private query (BoostCom's listing): the query type is encrypted, the server computes
//! every branch and keeps the one the type selects by `EQ`, the comparisons running on other
//! threads ([`compare::Pending`]) while the branches' arithmetic goes on.
//!
//! At the CAT chain (`U32_THROUGHPUT`'s parameters: N = 2^15, 16 levels, 128-bit secure) with
//! the query type an encrypted 8-bit word (base-2^4 digits): a column of 100 encrypted values,
//! branches `Σ x_i` (type 0), `Σ x_i²` (type 1) and `Σ w_i·x_i` for plaintext weights (type 2);
//! the answer is `Σ_k [q = k]·branch_k` in slot 0. Every query type is run with the
//! comparisons non-blocking and blocking, timed end to end (encrypt the column and the type,
//! compute, decrypt; key generation apart), and checked against the plaintext query. The
//! workload is `compare::workloads::query`, the one `gpu_bench`'s `cmp:private_query` times.
//! The backend is `AnyBackend::auto`: the GPU when one is usable, else the CPU
//! (`FHE_BACKEND=cpu` forces the CPU).
//!
//! Run with `cargo run --release --example compare_query`; the last line is `correct: true`
//! only when every answer equals the plaintext one.

use compare::presets::U32_THROUGHPUT;
use compare::workloads::query::{self, PrivateQuery};
use gpufhe::bgv::{Context, Parameters};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::RingBackend;
use std::time::Instant;
use test_support::SplitMix;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let params = Parameters::new(&U32_THROUGHPUT.params)?;
    let t = params.t();
    let (backend, why_cpu) = AnyBackend::auto_explained(gpufhe::bgv::context::ring_for(&params)?);
    if let Some(e) = why_cpu {
        println!("no usable GPU ({e}): running on the CPU");
    }
    println!("backend: {}", backend.device_name());
    let ctx = Context::with_backend(params, backend)?;
    let clock = Instant::now();
    let work = PrivateQuery::new(&ctx)?;
    println!("key generation: {:.2} s", clock.elapsed().as_secs_f64());

    let n = 100; // ≤ query::SPAN
    let mut rng = SplitMix::new(77);
    let x: Vec<u64> = (0..n).map(|_| rng.below(20)).collect();
    let w: Vec<u64> = (0..n).map(|_| rng.below(10)).collect();
    let mut correct = true;
    for q in 0..query::TYPES as u8 {
        let want = query::plain(&x, &w, q, t);
        for overlap in [true, false] {
            let (got, level, p) = work.run(&x, &w, q, overlap)?;
            let ok = got == want;
            correct &= ok;
            println!(
                "query type {q}, comparisons {}: encrypt {:.3} s, compute {:.3} s, decrypt {:.3} s, end to end {:.3} s, answer {got} (plaintext {want}), level {level} left, matches: {ok}",
                if overlap {
                    "non-blocking"
                } else {
                    "blocking    "
                },
                p.encrypt,
                p.compute,
                p.decrypt,
                p.total(),
            );
        }
    }
    println!("correct: {correct}");
    Ok(())
}
