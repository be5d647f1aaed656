//! A private query (BoostCom's listing): the query type is encrypted, the server computes
//! every branch and keeps the one the type selects by `EQ`, the comparisons running on other
//! threads ([`compare::Pending`]) while the branches' arithmetic goes on.
//!
//! At the CAT chain (`U32_THROUGHPUT`'s parameters: N = 2^15, 16 levels, 128-bit secure) with
//! the query type an encrypted 8-bit word (base-2^4 digits): a column of 100 encrypted values,
//! branches `Σ x_i` (type 0), `Σ x_i²` (type 1) and `Σ w_i·x_i` for plaintext weights (type 2);
//! the answer is `Σ_k [q = k]·branch_k` in slot 0. Every query type is run with the
//! comparisons non-blocking and blocking (timed), and checked against the plaintext query.
//!
//! Run with `cargo run --release --example compare_query`; the last line is `correct: true`
//! only when every answer equals the plaintext one.

use compare::presets::U32_THROUGHPUT;
use compare::{Comparator, CompareKeys, DigitLayout, Predicate, WordType};
use gpufhe::bgv::{Ciphertext, Context, Decryptor, Encoder, Evaluator, Parameters, RowRotations};
use gpufhe::math::cpu::CpuBackend;
use std::sync::Arc;
use std::time::Instant;
use test_support::SplitMix;

type Ct = Ciphertext<CpuBackend>;

/// Slots of the column: the values sit in slots `0..N` (the rest 0).
const SPAN: usize = 128;

/// The sum of slots `0..SPAN` in slot 0 (`log2 SPAN` power-of-two rotations).
fn sum_slots(cmp: &Comparator<CpuBackend>, x: &Ct) -> Result<Ct, Box<dyn std::error::Error>> {
    let ev = cmp.evaluator();
    let gk = &cmp.keys().galois;
    let mut acc = x.duplicate(cmp.context().backend())?;
    let mut s = 1;
    while s < SPAN {
        acc = ev.add(&acc, &ev.rotate_rows(&acc, s as i64, gk)?)?;
        s *= 2;
    }
    Ok(acc)
}

/// The three branches on the column `x` with plaintext weights `w`.
fn branches(
    cmp: &Comparator<CpuBackend>,
    x: &Ct,
    w: &[u64],
) -> Result<Vec<Ct>, Box<dyn std::error::Error>> {
    let ev = cmp.evaluator();
    let enc = Encoder::new(cmp.context());
    let sq = ev.mul_relin(x, x, &cmp.keys().relin)?;
    let wx = ev.mul_plain(x, &enc.encode(w, x.level())?)?;
    Ok(vec![
        sum_slots(cmp, x)?,
        sum_slots(cmp, &sq)?,
        sum_slots(cmp, &wx)?,
    ])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let params = Parameters::new(&U32_THROUGHPUT.params)?;
    let ctx = Context::cpu(params.clone())?;
    let layout = DigitLayout::new(WordType::U8, 4, params.n())?;
    let clock = Instant::now();
    let kg = ctx.key_generator();
    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let keys = CompareKeys::generate_with_sums(&ctx, &sk, &layout)?;
    let cmp = Arc::new(Comparator::new(&ctx, layout, keys)?);
    let dec = Decryptor::new(&ctx, &sk);
    let enc = Encoder::new(&ctx);
    let ev = Evaluator::new(&ctx);
    println!("keys: {:.1} s", clock.elapsed().as_secs_f64());

    let n = 100; // ≤ SPAN
    let t = params.t();
    let mut rng = SplitMix::new(77);
    let x: Vec<u64> = (0..n).map(|_| rng.below(20)).collect();
    let w: Vec<u64> = (0..n).map(|_| rng.below(10)).collect();
    let plain = [
        x.iter().sum::<u64>() % t,
        x.iter().map(|v| v * v).sum::<u64>() % t,
        x.iter().zip(&w).map(|(a, b)| a * b).sum::<u64>() % t,
    ];
    let cx = ctx.encrypt_pk(&pk, &enc.encode(&x, params.max_level())?)?;
    let mut correct = true;
    for q in 0..3i128 {
        let cq = Arc::new(cmp.encrypt(&pk, &[q])?);
        for overlap in [true, false] {
            let start = Instant::now();
            let (eqs, br) = if overlap {
                let pending: Vec<_> = (0..3)
                    .map(|k| cmp.compare_scalar_async(cq.clone(), k, Predicate::Eq))
                    .collect();
                let br = branches(&cmp, &cx, &w)?;
                let eqs = pending
                    .into_iter()
                    .map(|p| p.join())
                    .collect::<Result<Vec<_>, _>>()?;
                (eqs, br)
            } else {
                let eqs = (0..3)
                    .map(|k| cmp.compare_scalar(&cq, k, Predicate::Eq))
                    .collect::<Result<Vec<_>, _>>()?;
                (eqs, branches(&cmp, &cx, &w)?)
            };
            // Σ_k [q = k]·branch_k: the bit sits in slot 0 (other slots 0), the branch sum in
            // slot 0.
            let mut answer: Option<Ct> = None;
            for (e, b) in eqs.iter().zip(&br) {
                let term = ev.mul_relin(&e.ciphertexts()[0], b, &cmp.keys().relin)?;
                answer = Some(match answer {
                    Some(a) => ev.add(&a, &term)?,
                    None => term,
                });
            }
            let answer = answer.expect("three branches");
            let secs = start.elapsed().as_secs_f64();
            let got = dec.decrypt(&answer)?[0];
            let ok = got == plain[q as usize];
            correct &= ok;
            println!(
                "query type {q}, comparisons {}: {secs:.2} s, answer {got} (plaintext {}), level {} left, matches: {ok}",
                if overlap {
                    "non-blocking"
                } else {
                    "blocking    "
                },
                plain[q as usize],
                answer.level()
            );
        }
    }
    println!("correct: {correct}");
    Ok(())
}
