//! Every CKKS evaluator operation against the same computation on plaintext (CPU backend, small
//! ring), and the errors an evaluator must return instead of wrong results.

use gpufhe::ckks::params::TEST_N11_INSECURE;
use gpufhe::ckks::precision::{InputGenerator, precision_bits};
use gpufhe::ckks::{Context, Encoder, Error, Evaluator, Parameters};
use gpufhe::math::CpuBackend;
use gpufhe::math::fft::Complex64;
use gpufhe::rlwe::{Ciphertext, GaloisKeys, PublicKey, RelinKey, SecretKey, encrypt};

/// Bits every operation below must keep at the insecure test set (fresh is about 25).
const MIN_BITS: f64 = 18.0;

struct Fixture {
    ctx: Context<CpuBackend>,
    enc: Encoder<CpuBackend>,
    eval: Evaluator<CpuBackend>,
    sk: SecretKey<CpuBackend>,
    pk: PublicKey<CpuBackend>,
    rlk: RelinKey<CpuBackend>,
    gk: GaloisKeys<CpuBackend>,
    x: Vec<Complex64>,
    y: Vec<Complex64>,
}

impl Fixture {
    fn new(steps: &[i64]) -> Self {
        let ctx = Context::cpu(Parameters::new(&TEST_N11_INSECURE).unwrap()).unwrap();
        let enc = Encoder::new(&ctx).unwrap();
        let eval = Evaluator::new(&ctx).unwrap();
        let kg = ctx.key_generator();
        let sk = kg.secret_key().unwrap();
        let pk = kg.public_key(&sk).unwrap();
        let rlk = kg.relin_key(&sk).unwrap();
        let gk = kg
            .galois_keys(&sk, &eval.galois_elements(steps, true))
            .unwrap();
        let mut rng = InputGenerator::new(7);
        let slots = enc.max_slots();
        let x = rng.unit_complex(slots);
        let y = rng.real(slots);
        Fixture {
            ctx,
            enc,
            eval,
            sk,
            pk,
            rlk,
            gk,
            x,
            y,
        }
    }

    fn encrypt(&self, v: &[Complex64], level: usize) -> Ciphertext<CpuBackend> {
        encrypt::encrypt_pk(
            self.ctx.backend(),
            &self.pk,
            &self.enc.encode(v, level).unwrap(),
        )
        .unwrap()
    }

    fn top(&self) -> usize {
        self.ctx.params().max_level()
    }

    fn check(&self, what: &str, ct: &Ciphertext<CpuBackend>, want: &[Complex64]) {
        let got = self
            .enc
            .decode(&encrypt::decrypt(self.ctx.backend(), &self.sk, ct).unwrap())
            .unwrap();
        let bits = precision_bits(&got, want);
        assert!(bits >= MIN_BITS, "{what}: {bits:.2} bits");
    }

    fn zip(&self, f: impl Fn(Complex64, Complex64) -> Complex64) -> Vec<Complex64> {
        self.x.iter().zip(&self.y).map(|(&a, &b)| f(a, b)).collect()
    }
}

#[test]
fn additive_operations() {
    let f = Fixture::new(&[]);
    let (cx, cy) = (f.encrypt(&f.x, f.top()), f.encrypt(&f.y, f.top()));
    let py = f.enc.encode(&f.y, f.top()).unwrap();
    f.check("add", &f.eval.add(&cx, &cy).unwrap(), &f.zip(|a, b| a + b));
    f.check("sub", &f.eval.sub(&cx, &cy).unwrap(), &f.zip(|a, b| a - b));
    f.check("negate", &f.eval.negate(&cx).unwrap(), &f.zip(|a, _| -a));
    f.check(
        "add_plain",
        &f.eval.add_plain(&cx, &py).unwrap(),
        &f.zip(|a, b| a + b),
    );
    f.check(
        "sub_plain",
        &f.eval.sub_plain(&cx, &py).unwrap(),
        &f.zip(|a, b| a - b),
    );
    let c = Complex64::new(0.25, -0.5);
    f.check(
        "add_const",
        &f.eval.add_const(&cx, c).unwrap(),
        &f.zip(|a, _| a + c),
    );
    f.check(
        "sub_const",
        &f.eval.sub_const(&cx, c).unwrap(),
        &f.zip(|a, _| a - c),
    );
}

#[test]
fn multiplicative_operations() {
    let f = Fixture::new(&[]);
    let (cx, cy) = (f.encrypt(&f.x, f.top()), f.encrypt(&f.y, f.top()));
    let ev = &f.eval;
    // 3-component product decrypts correctly (decryption uses s²) and relinearizes.
    let prod = ev.mul(&cx, &cy).unwrap();
    f.check("mul (3 components)", &prod, &f.zip(|a, b| a * b));
    let relin = ev.relinearize(prod, &f.rlk).unwrap();
    f.check("relinearize", &relin, &f.zip(|a, b| a * b));
    let rescaled = ev.rescale(&relin).unwrap();
    assert_eq!(rescaled.level(), f.top() - 1);
    assert!((rescaled.scale() / f.ctx.params().scale(f.top() - 1).unwrap() - 1.0).abs() < 1e-12);
    f.check("rescale", &rescaled, &f.zip(|a, b| a * b));
    f.check(
        "mul_relin",
        &ev.mul_relin(&cx, &cy, &f.rlk).unwrap(),
        &f.zip(|a, b| a * b),
    );
    let sq = ev.relinearize(ev.square(&cx).unwrap(), &f.rlk).unwrap();
    f.check("square", &ev.rescale(&sq).unwrap(), &f.zip(|a, _| a * a));
    let py = f.enc.encode(&f.y, f.top()).unwrap();
    f.check(
        "mul_plain",
        &ev.rescale(&ev.mul_plain(&cx, &py).unwrap()).unwrap(),
        &f.zip(|a, b| a * b),
    );
    f.check(
        "mul_const",
        &ev.rescale(&ev.mul_const(&cx, -0.75).unwrap()).unwrap(),
        &f.zip(|a, _| a * -0.75),
    );
    let c = Complex64::new(0.3, 0.4);
    f.check(
        "mul_const_complex",
        &ev.rescale(&ev.mul_const_complex(&cx, c).unwrap()).unwrap(),
        &f.zip(|a, _| a * c),
    );
    let tripled = ev.mul_int(&cx, 3).unwrap();
    assert_eq!(tripled.level(), f.top());
    f.check("mul_int", &tripled, &f.zip(|a, _| a * 3.0));
}

#[test]
fn fused_multiply_matches_separate_steps() {
    let f = Fixture::new(&[]);
    let (cx, cy) = (f.encrypt(&f.x, f.top()), f.encrypt(&f.y, f.top()));
    let fused = f.eval.mul_relin_rescale(&cx, &cy, &f.rlk).unwrap();
    let separate = f
        .eval
        .rescale(&f.eval.mul_relin(&cx, &cy, &f.rlk).unwrap())
        .unwrap();
    let be = f.ctx.backend();
    use gpufhe::math::backend::prelude::*;
    assert_eq!(
        be.download(fused.poly()).unwrap(),
        be.download(separate.poly()).unwrap()
    );
    assert_eq!(fused.meta(), separate.meta());
}

#[test]
fn level_alignment() {
    let f = Fixture::new(&[]);
    let cx = f.encrypt(&f.x, f.top());
    let low = f.eval.drop_to_level(&cx, f.top() - 3).unwrap();
    assert_eq!(low.level(), f.top() - 3);
    assert!((low.scale() / f.ctx.params().scale(f.top() - 3).unwrap() - 1.0).abs() < 1e-11);
    f.check("drop_to_level", &low, &f.x);
    // Aligned operands can be added; unaligned ones are an error, not garbage.
    let cy = f.encrypt(&f.y, f.top() - 3);
    assert!(matches!(
        f.eval.add(&cx, &cy),
        Err(Error::LevelMismatch { .. })
    ));
    let (a, b) = f.eval.align(&cx, &cy).unwrap();
    f.check(
        "add after align",
        &f.eval.add(&a, &b).unwrap(),
        &f.zip(|a, b| a + b),
    );
}

#[test]
fn rotations_and_conjugation() {
    let f = Fixture::new(&[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 5]);
    let slots = f.enc.max_slots();
    let cx = f.encrypt(&f.x, f.top());
    let shifted =
        |k: usize| -> Vec<Complex64> { (0..slots).map(|j| f.x[(j + k) % slots]).collect() };
    f.check(
        "rotate exact key",
        &f.eval.rotate(&cx, 5, &f.gk).unwrap(),
        &shifted(5),
    );
    f.check(
        "rotate composed (7 = 4+2+1)",
        &f.eval.rotate(&cx, 7, &f.gk).unwrap(),
        &shifted(7),
    );
    f.check(
        "rotate negative",
        &f.eval.rotate(&cx, -1, &f.gk).unwrap(),
        &shifted(slots - 1),
    );
    f.check(
        "conjugate",
        &f.eval.conjugate(&cx, &f.gk).unwrap(),
        &f.x.iter().map(|v| v.conj()).collect::<Vec<_>>(),
    );
    let hoisted = f.eval.rotate_hoisted(&cx, &[1, 2, 5], &f.gk).unwrap();
    for (ct, k) in hoisted.iter().zip([1, 2, 5]) {
        f.check("hoisted rotation", ct, &shifted(k));
    }
    let span = 8;
    let want: Vec<Complex64> = (0..slots)
        .map(|j| (0..span).map(|t| f.x[(j + t) % slots]).sum())
        .collect();
    f.check(
        "inner_sum",
        &f.eval.inner_sum(&cx, span, &f.gk).unwrap(),
        &want,
    );
}

#[test]
fn errors_instead_of_garbage() {
    let f = Fixture::new(&[1]);
    let cx = f.encrypt(&f.x, f.top());
    // Missing Galois key (no key for 3 and none for 2 to compose with).
    assert!(matches!(f.eval.rotate(&cx, 3, &f.gk), Err(Error::Rlwe(_))));
    // Scale mismatch: a product has scale Δ², a fresh ciphertext Δ.
    let prod = f.eval.mul_relin(&cx, &cx, &f.rlk).unwrap();
    assert!(matches!(
        f.eval.add(&prod, &cx),
        Err(Error::ScaleMismatch { .. })
    ));
    // Rescale at level 0.
    let bottom = f.eval.drop_to_level(&cx, 0).unwrap();
    assert!(matches!(f.eval.rescale(&bottom), Err(Error::CannotRescale)));
    // Three components cannot be multiplied again.
    let three = f.eval.mul(&cx, &cx).unwrap();
    assert!(f.eval.mul(&three, &cx).is_err());
    // Too many values to encode.
    let too_many = vec![Complex64::new(0.0, 0.0); f.enc.max_slots() + 1];
    assert!(matches!(
        f.enc.encode(&too_many, 0),
        Err(Error::TooManyValues { .. })
    ));
    // Level above the top.
    assert!(f.enc.encode(&f.x, f.top() + 1).is_err());
    // Ciphertexts of another parameter set are refused.
    let other = Fixture::new(&[]);
    let foreign = other.encrypt(&other.x, other.top());
    assert_eq!(
        foreign.fingerprint(),
        cx.fingerprint(),
        "same literal, same fingerprint"
    );
    let ctx2 = Context::cpu(Parameters::new(&gpufhe::ckks::params::N13).unwrap()).unwrap();
    let enc2 = Encoder::new(&ctx2).unwrap();
    let pt2 = enc2.encode(&f.x[..16], 0).unwrap();
    assert!(
        f.eval
            .add_plain(&f.eval.drop_to_level(&cx, 0).unwrap(), &pt2)
            .is_err()
    );
}

#[test]
fn sparse_slots_round_trip() {
    let f = Fixture::new(&[1]);
    let slots = 64;
    let v: Vec<Complex64> = f.x[..slots].to_vec();
    let scale = f.ctx.params().scale(f.top()).unwrap();
    let pt = f.enc.encode_with(&v, f.top(), scale, slots).unwrap();
    let ct = encrypt::encrypt_pk(f.ctx.backend(), &f.pk, &pt).unwrap();
    let rotated = f.eval.rotate(&ct, 1, &f.gk).unwrap();
    let got = f
        .enc
        .decode_slots(
            &encrypt::decrypt(f.ctx.backend(), &f.sk, &rotated).unwrap(),
            slots,
        )
        .unwrap();
    let want: Vec<Complex64> = (0..slots).map(|j| v[(j + 1) % slots]).collect();
    assert!(precision_bits(&got, &want) >= MIN_BITS);
}
