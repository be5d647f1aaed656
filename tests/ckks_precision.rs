//! CKKS precision against plaintext computation (bits = -log2 of the max absolute slot error).
//!
//! Bounds (issue 2): public-key fresh and add >= 21 bits, multiply-relinearize-rescale >= 19,
//! rotate and conjugate >= 19, secret-key fresh >= 27, and a chain of 10
//! multiply-relinearize-rescale on unit-modulus complex inputs >= 15.

use gpufhe::ckks::{self, Context, Encoder, Evaluator, Parameters, ParametersLiteral};
use gpufhe::math::CpuBackend;
use gpufhe::math::fft::Complex64;
use gpufhe::rlwe::encrypt;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn precision_bits(got: &[Complex64], want: &[Complex64]) -> f64 {
    let err = got
        .iter()
        .zip(want)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    -err.log2()
}

fn random_real(n: usize, seed: u64) -> Vec<Complex64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| Complex64::new(rng.random_range(-1.0..1.0), 0.0))
        .collect()
}

fn random_unit(n: usize, seed: u64) -> Vec<Complex64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| Complex64::from_polar(1.0, rng.random_range(0.0..std::f64::consts::TAU)))
        .collect()
}

struct Setup {
    ctx: Context<CpuBackend>,
    enc: Encoder<CpuBackend>,
    eval: Evaluator<CpuBackend>,
}

fn setup(lit: &ParametersLiteral) -> Setup {
    let params = Parameters::new(lit).expect("parameters");
    let ctx = Context::cpu(params).expect("context");
    let enc = Encoder::new(&ctx).expect("encoder");
    let eval = Evaluator::new(&ctx).expect("evaluator");
    Setup { ctx, enc, eval }
}

#[test]
fn precision_n13_public_key() {
    let s = setup(&ckks::params::N13);
    let kg = s.ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let gk = kg
        .galois_keys(&sk, &s.eval.galois_elements(&[1], true))
        .unwrap();
    let be = s.ctx.backend();
    let slots = s.enc.max_slots();
    let top = s.ctx.params().max_level();
    let x = random_real(slots, 1);
    let y = random_real(slots, 2);
    let cx = encrypt::encrypt_pk(be, &pk, &s.enc.encode(&x, top).unwrap()).unwrap();
    let cy = encrypt::encrypt_pk(be, &pk, &s.enc.encode(&y, top).unwrap()).unwrap();
    let dec = |ct: &gpufhe::rlwe::Ciphertext<CpuBackend>| {
        s.enc
            .decode(&encrypt::decrypt(be, &sk, ct).unwrap())
            .unwrap()
    };

    let fresh = precision_bits(&dec(&cx), &x);
    let sum: Vec<Complex64> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    let add = precision_bits(&dec(&s.eval.add(&cx, &cy).unwrap()), &sum);
    let prod: Vec<Complex64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
    let mrr = s.eval.mul_relin_rescale(&cx, &cy, &rlk).unwrap();
    let mul = precision_bits(&dec(&mrr), &prod);
    let rotated: Vec<Complex64> = (0..slots).map(|j| x[(j + 1) % slots]).collect();
    let rot = precision_bits(&dec(&s.eval.rotate(&cx, 1, &gk).unwrap()), &rotated);
    let conj = precision_bits(
        &dec(&s.eval.conjugate(&cx, &gk).unwrap()),
        &x.iter().map(|v| v.conj()).collect::<Vec<_>>(),
    );
    println!(
        "N13 public key: fresh {fresh:.2} add {add:.2} mul_relin_rescale {mul:.2} rotate {rot:.2} conjugate {conj:.2}"
    );
    assert!(fresh >= 21.0, "fresh precision {fresh}");
    assert!(add >= 21.0, "add precision {add}");
    assert!(mul >= 19.0, "multiply precision {mul}");
    assert!(rot >= 19.0, "rotate precision {rot}");
    assert!(conj >= 19.0, "conjugate precision {conj}");
}

#[test]
fn precision_n13_secret_key() {
    let s = setup(&ckks::params::N13);
    let kg = s.ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let be = s.ctx.backend();
    let x = random_real(s.enc.max_slots(), 3);
    let ct = encrypt::encrypt_sk(
        be,
        &sk,
        &s.enc.encode(&x, s.ctx.params().max_level()).unwrap(),
    )
    .unwrap();
    let got = s
        .enc
        .decode(&encrypt::decrypt(be, &sk, &ct).unwrap())
        .unwrap();
    let bits = precision_bits(&got, &x);
    println!("N13 secret-key fresh: {bits:.2}");
    assert!(bits >= 27.0, "secret-key fresh precision {bits}");
}

fn chain_of_ten(lit: &ParametersLiteral) -> f64 {
    let s = setup(lit);
    let kg = s.ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let be = s.ctx.backend();
    let slots = s.enc.max_slots();
    let top = s.ctx.params().max_level();
    assert!(top >= 10, "the chain needs 10 levels");
    let x = random_unit(slots, 4);
    let mut want = x.clone();
    let mut ct = encrypt::encrypt_pk(be, &pk, &s.enc.encode(&x, top).unwrap()).unwrap();
    let mut worst = f64::INFINITY;
    for step in 0..10 {
        let y = random_unit(slots, 100 + step);
        let cy = encrypt::encrypt_pk(be, &pk, &s.enc.encode(&y, ct.meta.level).unwrap()).unwrap();
        // The ladder keeps every rescaled ciphertext at its level's scale, so fresh operands match.
        ct = s.eval.mul_relin_rescale(&ct, &cy, &rlk).unwrap();
        want = want.iter().zip(&y).map(|(a, b)| a * b).collect();
        let bits = precision_bits(
            &s.enc
                .decode(&encrypt::decrypt(be, &sk, &ct).unwrap())
                .unwrap(),
            &want,
        );
        worst = worst.min(bits);
    }
    worst
}

#[test]
fn precision_chain_of_ten_insecure_test_set() {
    let bits = chain_of_ten(&ckks::params::TEST_N11_INSECURE);
    println!("TEST_N11_INSECURE chain of 10: {bits:.2}");
    assert!(bits >= 15.0, "chain precision {bits}");
}

#[test]
fn precision_chain_of_ten_cat() {
    let bits = chain_of_ten(&ckks::params::CAT);
    println!("CAT chain of 10: {bits:.2}");
    assert!(bits >= 15.0, "chain precision {bits}");
}
