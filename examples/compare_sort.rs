//! Sort and minimum of 16 encrypted 32-bit integers on the CPU at the `U32_THROUGHPUT` preset
//! of the `compare` crate (N = 2^15, the CAT chain: 60 + 16 × 40-bit primes, 3 special primes,
//! t = 65537, log2 QP ≈ 880 ≤ 881; base-2^4 digits, blocks of 8 slots): each by the
//! comparison matrix in one circuit (the 16³ pairs of the sort fill one ciphertext), timed end
//! to end (encrypt, compute, decrypt) and checked against the plaintext sort.
//!
//! Run with `cargo run --release --example compare_sort`; the last line is `correct: true`
//! only when both results equal the plaintext ones.

use compare::presets::U32_THROUGHPUT;
use compare::{ArrayOp, Comparator, CompareKeys};
use gpufhe::bgv::{Context, Decryptor, Parameters};
use std::time::Instant;
use test_support::SplitMix;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = U32_THROUGHPUT;
    let layout = preset.layout()?;
    let ctx = Context::cpu(Parameters::new(&preset.params)?)?;
    let k = 16;
    let clock = Instant::now();
    let kg = ctx.key_generator();
    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let mut correct = true;
    let mut rng = SplitMix::new(1611);
    let mut values: Vec<i128> = (0..k).map(|_| rng.below(1 << 32) as i128).collect();
    values[3] = values[9]; // a tie
    values[5] = u32::MAX as i128;
    values[6] = 0;
    let mut sorted = values.clone();
    sorted.sort();
    for (op, name) in [(ArrayOp::Sort, "sort"), (ArrayOp::Min, "min")] {
        let keys = CompareKeys::generate_for_array(&ctx, &sk, &layout, k, op == ArrayOp::Sort)?;
        let cmp = Comparator::new(&ctx, layout, keys)?;
        let dec = Decryptor::new(&ctx, &sk);
        println!("{name}: keys {:.1} s", clock.elapsed().as_secs_f64());
        let start = Instant::now();
        let input = cmp.encrypt_array(&pk, &values, op)?;
        let t_enc = start.elapsed().as_secs_f64();
        let out = match op {
            ArrayOp::Sort => cmp.sort(&input)?,
            ArrayOp::Min => cmp.array_min(&input)?,
        };
        let t_eval = start.elapsed().as_secs_f64() - t_enc;
        let got = cmp.decrypt(&dec, &out)?;
        let total = start.elapsed().as_secs_f64();
        let want = match op {
            ArrayOp::Sort => sorted.clone(),
            ArrayOp::Min => vec![sorted[0]],
        };
        let ok = got == want;
        correct &= ok;
        let (m, r) = cmp.counters();
        println!(
            "{name} of {k} u32: encrypt {t_enc:.2} s, compute {t_eval:.2} s, end to end {total:.2} s; {m} products + {r} rotations in the comparison; level {} left; matches plaintext: {ok}",
            out.level()
        );
    }
    println!("correct: {correct}");
    Ok(())
}
