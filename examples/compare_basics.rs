//! Comparisons of encrypted 64-bit integers at the `U64_LATENCY` preset of the
//! `compare` crate (N = 2^15, 10 ciphertext primes of 60 + 9 × 40 bits, 2 special primes,
//! t = 65537, log2 QP ≈ 540 ≤ 881: 128-bit secure; 64-bit words as 32 base-4 digits, 1024
//! words per ciphertext): the six predicates between encrypted vectors and against plaintext
//! constants, on edge values (0, the maximum, equal words, words differing only in the lowest
//! or the highest digit) and random ones, each checked against the same comparison on
//! plaintext.
//!
//! The backend is `AnyBackend::auto`: the GPU when one is usable, else the CPU
//! (`FHE_BACKEND=cpu` forces the CPU). Key generation is timed apart from encryption, each
//! comparison and its decryption.
//!
//! Run with `cargo run --release --example compare_basics`. The last line is
//! `correct: true` only when every decrypted result equals the plaintext comparison.

use compare::presets::U64_LATENCY;
use compare::{Comparator, CompareKeys, Predicate};
use gpufhe::bgv::{Context, Decryptor, Parameters};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::RingBackend;
use std::time::Instant;
use test_support::SplitMix;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = U64_LATENCY;
    let params = Parameters::new(&preset.params)?;
    let layout = preset.layout()?;
    println!(
        "{}: N = {}, {} + {} primes, log2 QP = {:.1}, t = {}; {}-bit words as {} digits of {} bits, {} words per ciphertext",
        preset.name,
        params.n(),
        params.moduli_q().len(),
        params.moduli_p().len(),
        params.log2_qp(),
        params.t(),
        layout.word().bits(),
        layout.digits(),
        layout.digit_bits(),
        layout.words_per_ciphertext(),
    );
    let (backend, why_cpu) = AnyBackend::auto_explained(gpufhe::bgv::context::ring_for(&params)?);
    if let Some(e) = why_cpu {
        println!("no usable GPU ({e}): running on the CPU");
    }
    println!("backend: {}", backend.device_name());
    let ctx = Context::with_backend(params, backend)?;
    let clock = Instant::now();
    let kg = ctx.key_generator();
    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let keys = CompareKeys::generate(&ctx, &sk, &layout)?;
    let cmp = Comparator::new(&ctx, layout, keys)?;
    let dec = Decryptor::new(&ctx, &sk);
    println!("key generation: {:.2} s", clock.elapsed().as_secs_f64());

    // Edge pairs, then random ones up to one ciphertext.
    let max = u64::MAX;
    let top = 3u64 << 62; // the highest base-4 digit
    let mut a: Vec<u64> = vec![0, max, 0, max, 0, 1, max - 1, 5, top, 0, 12345, max];
    let mut b: Vec<u64> = vec![0, max, max, 0, 1, 0, max, 5, 0, top, 12344, max ^ top];
    let mut rng = SplitMix::new(2026);
    while a.len() < layout.words_per_ciphertext() {
        let x = rng.next_u64();
        a.push(x);
        b.push(match a.len() % 4 {
            0 => x,
            1 => x ^ 1,
            2 => x ^ (1 << 63),
            _ => rng.next_u64(),
        });
    }
    let (ai, bi): (Vec<i128>, Vec<i128>) = (
        a.iter().map(|&x| x as i128).collect(),
        b.iter().map(|&x| x as i128).collect(),
    );
    let clock = Instant::now();
    let ca = cmp.encrypt(&pk, &ai)?;
    let cb = cmp.encrypt(&pk, &bi)?;
    println!(
        "encrypt 2 x {} words: {:.3} s",
        a.len(),
        clock.elapsed().as_secs_f64()
    );
    let mut correct = cmp.decrypt(&dec, &ca)? == ai;
    let cost = cmp.cost(Predicate::Lt);
    println!(
        "LT circuit: {} levels, {} products + {} rotations per ciphertext",
        cost.levels, cost.products, cost.rotations
    );

    let preds = [
        Predicate::Lt,
        Predicate::Le,
        Predicate::Gt,
        Predicate::Ge,
        Predicate::Eq,
        Predicate::Ne,
    ];
    for p in preds {
        for plain in [false, true] {
            let clock = Instant::now();
            let r = if plain {
                cmp.compare_plain(&ca, &bi, p)?
            } else {
                cmp.compare(&ca, &cb, p)?
            };
            let secs = clock.elapsed().as_secs_f64();
            let got = cmp.decrypt_bits(&dec, &r)?;
            let dec_secs = clock.elapsed().as_secs_f64() - secs;
            let ok = got
                .iter()
                .zip(ai.iter().zip(&bi))
                .all(|(&g, (&x, &y))| g == u64::from(p.eval(x, y)));
            correct &= ok;
            println!(
                "{p:?} {}: {} pairs in {:.3} s ({:.0} comparisons/s), decrypt {:.3} s, level {} left, matches plaintext: {ok}",
                if plain {
                    "vs constants "
                } else {
                    "vs ciphertext"
                },
                a.len(),
                secs,
                a.len() as f64 / secs,
                dec_secs,
                r.level(),
            );
        }
    }
    println!("correct: {correct}");
    Ok(())
}
