//! HEAP bootstrapping at the CI set against the plaintext.

use ckks::precision::{InputGenerator, median_precision_bits, precision_bits, uniform_complex};
use ckks::{Context, Encoder, Evaluator, Parameters};
use fhe_math::cpu::CpuBackend;
use fhe_math::sampler::Seed;
use heap::{HEAP_N10_INSECURE, HeapBootstrapper, HeapKeys, budget};
use rlwe::encrypt;

struct Setup {
    ctx: Context<CpuBackend>,
    sk: rlwe::SecretKey<CpuBackend>,
    boot: HeapBootstrapper<CpuBackend>,
}

fn setup(slots: usize) -> Setup {
    let params = Parameters::new(&HEAP_N10_INSECURE.ckks).unwrap();
    let ctx = Context::cpu(params).unwrap();
    let sk = ctx
        .key_generator()
        .secret_key_from_seed(Seed([7; 32]))
        .unwrap();
    let keys = HeapKeys::generate(&ctx, &HEAP_N10_INSECURE, &sk, &Seed([9; 32])).unwrap();
    let boot = HeapBootstrapper::new(&ctx, &HEAP_N10_INSECURE, keys)
        .unwrap()
        .with_slots(slots)
        .unwrap();
    Setup { ctx, sk, boot }
}

#[test]
fn heap_bootstrap_matches_plaintext_within_the_model() {
    let slots = 4;
    let s = setup(slots);
    let enc = Encoder::new(&s.ctx).unwrap();
    let be = s.ctx.backend();
    let z = uniform_complex(&mut InputGenerator::new(1), slots);
    let d0 = s.ctx.params().scale(0).unwrap();
    let ct = encrypt::encrypt_sk(be, &s.sk, &enc.encode_with(&z, 0, d0, slots).unwrap()).unwrap();
    let t = std::time::Instant::now();
    let out = s.boot.heap_bootstrap(&ct).unwrap();
    let elapsed = t.elapsed();
    assert_eq!(out.level(), HEAP_N10_INSECURE.output_level());
    let got = enc
        .decode_slots(&encrypt::decrypt(be, &s.sk, &out).unwrap(), slots)
        .unwrap();
    let bits = precision_bits(&got, &z);
    let p = s.ctx.params();
    let model = budget(
        &HEAP_N10_INSECURE,
        p.moduli_q(),
        d0,
        p.scale(out.level()).unwrap(),
        slots,
    );
    println!(
        "{slots} slots: {bits:.2} bits max, {:.2} median (model {:.2} / {:.2}), {elapsed:.2?}",
        median_precision_bits(&got, &z),
        model.precision_max_bits,
        model.precision_median_bits
    );
    assert!(
        bits >= model.precision_max_bits - 3.0,
        "{bits} bits against the model's {model:?}"
    );
}
