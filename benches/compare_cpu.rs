//! Comparisons of encrypted 64-bit integers on the CPU backend (`compare` crate): `a < b` on
//! full ciphertexts at `U64_THROUGHPUT` (2048 pairs; divide by 2048 for the amortized time per
//! comparison) and on one pair at `U64_LATENCY`, digit-level parallelism on and off.
//!
//! `cargo bench --bench compare_cpu`

mod common;

use common::quick_group;
use compare::presets::{Preset, U64_LATENCY, U64_THROUGHPUT};
use compare::{Comparator, CompareKeys, EncryptedWords};
use criterion::{Criterion, criterion_group, criterion_main};
use gpufhe::bgv::{Context, Parameters};
use gpufhe::math::cpu::CpuBackend;
use test_support::SplitMix;

/// A comparator at `preset` and two encrypted vectors of `words` random words.
fn setup(
    preset: &Preset,
    words: usize,
) -> (
    Comparator<CpuBackend>,
    EncryptedWords<CpuBackend>,
    EncryptedWords<CpuBackend>,
) {
    let ctx = Context::cpu(Parameters::new(&preset.params).unwrap()).unwrap();
    let layout = preset.layout().unwrap();
    let kg = ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let cmp = Comparator::new(
        &ctx,
        layout,
        CompareKeys::generate(&ctx, &sk, &layout).unwrap(),
    )
    .unwrap();
    let mut r = SplitMix::new(3);
    let a: Vec<i128> = (0..words).map(|_| r.next_u64() as i128).collect();
    let b: Vec<i128> = (0..words).map(|_| r.next_u64() as i128).collect();
    let ca = cmp.encrypt(&pk, &a).unwrap();
    let cb = cmp.encrypt(&pk, &b).unwrap();
    (cmp, ca, cb)
}

fn compare_cpu(c: &mut Criterion) {
    for (preset, words) in [(U64_THROUGHPUT, 2048), (U64_LATENCY, 1)] {
        let (cmp, ca, cb) = setup(&preset, words);
        let mut g = quick_group(c, &format!("compare/{}", preset.name));
        for on in [true, false] {
            cmp.set_digit_parallelism(on);
            let name = format!("lt64_{words}_words_parallel_{on}");
            g.bench_function(&name, |b| b.iter(|| cmp.lt(&ca, &cb).unwrap()));
        }
        g.finish();
    }
}

criterion_group!(benches, compare_cpu);
criterion_main!(benches);
