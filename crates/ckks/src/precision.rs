//! Precision measurement: how many bits of each slot survive an operation, against the same
//! computation on plaintext. `bits = -log2(max_j |got_j - want_j|)`.
//!
//! Used by the precision tests, the `ckks_basics` example and the OpenFHE comparison in
//! BENCHMARKS.md; inputs come from a fixed seed so runs are comparable.

use crate::context::Context;
use crate::encoder::Encoder;
use crate::error::Result;
use crate::evaluator::Evaluator;
use crate::params::{Parameters, ParametersLiteral};
use fhe_math::backend::KeySwitchBackend;
use fhe_math::fft::Complex64;
use rlwe::Ciphertext;

/// `-log2` of the largest absolute difference between `got` and `want`.
pub fn precision_bits(got: &[Complex64], want: &[Complex64]) -> f64 {
    let err = got
        .iter()
        .zip(want)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    -err.log2()
}

/// `-log2` of the median absolute difference between `got` and `want` (the typical slot's
/// precision, beside [`precision_bits`]'s worst slot).
pub fn median_precision_bits(got: &[Complex64], want: &[Complex64]) -> f64 {
    let mut err: Vec<f64> = got.iter().zip(want).map(|(a, b)| (a - b).norm()).collect();
    if err.is_empty() {
        return f64::INFINITY;
    }
    err.sort_by(f64::total_cmp);
    -err[err.len() / 2].log2()
}

/// `n` complex values with real and imaginary parts uniform in `[-1, 1]` (bootstrapping's
/// test inputs).
pub fn uniform_complex(g: &mut InputGenerator, n: usize) -> Vec<Complex64> {
    (0..n)
        .map(|_| Complex64::new(2.0 * g.unit() - 1.0, 2.0 * g.unit() - 1.0))
        .collect()
}

/// A small deterministic generator of test inputs (SplitMix64); not for secrets.
#[derive(Clone, Debug)]
pub struct InputGenerator(u64);

impl InputGenerator {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        InputGenerator(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `n` real values uniform in `[-1, 1]` (imaginary part 0).
    pub fn real(&mut self, n: usize) -> Vec<Complex64> {
        (0..n)
            .map(|_| Complex64::new(2.0 * self.unit() - 1.0, 0.0))
            .collect()
    }

    /// `n` complex values of modulus 1 with uniform phase.
    pub fn unit_complex(&mut self, n: usize) -> Vec<Complex64> {
        (0..n)
            .map(|_| Complex64::from_polar(1.0, std::f64::consts::TAU * self.unit()))
            .collect()
    }
}

/// Precision of each step, in bits.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PrecisionReport {
    /// Public-key encrypt then decrypt.
    pub fresh_public_key: f64,
    /// Secret-key encrypt then decrypt.
    pub fresh_secret_key: f64,
    /// Sum of two fresh ciphertexts.
    pub add: f64,
    /// Multiply, relinearize and rescale.
    pub mul_relin_rescale: f64,
    /// Rotation by one slot.
    pub rotate: f64,
    /// Conjugation (real inputs, so the expected result is the input).
    pub conjugate: f64,
    /// Worst step of 10 chained multiply-relinearize-rescale on unit-modulus complex inputs
    /// (`None` when the parameters have fewer than 10 levels or the chain was not asked for).
    pub chain_of_ten: Option<f64>,
}

/// Measures every step of [`PrecisionReport`] on the CPU backend at `lit`, with real inputs
/// uniform in `[-1, 1]` from `seed`, public-key encryption at the top level.
pub fn measure_cpu(lit: &ParametersLiteral, seed: u64, chain: bool) -> Result<PrecisionReport> {
    let ctx = Context::cpu(Parameters::new(lit)?)?;
    measure(&ctx, seed, chain)
}

/// [`measure_cpu`] on any backend.
pub fn measure<B: KeySwitchBackend>(
    ctx: &Context<B>,
    seed: u64,
    chain: bool,
) -> Result<PrecisionReport> {
    let enc = Encoder::new(ctx)?;
    let eval = Evaluator::new(ctx)?;
    let kg = ctx.key_generator();
    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let rlk = kg.relin_key(&sk)?;
    let gk = kg.galois_keys(&sk, &eval.galois_elements(&[1], true))?;
    let slots = enc.max_slots();
    let top = ctx.params().max_level();
    let mut rng = InputGenerator::new(seed);
    let x = rng.real(slots);
    let y = rng.real(slots);
    let decrypt =
        |ct: &Ciphertext<B>| -> Result<Vec<Complex64>> { enc.decode(&ctx.decrypt(&sk, ct)?) };

    let cx = ctx.encrypt_pk(&pk, &enc.encode(&x, top)?)?;
    let cy = ctx.encrypt_pk(&pk, &enc.encode(&y, top)?)?;
    let c_sk = ctx.encrypt_sk(&sk, &enc.encode(&x, top)?)?;
    let sum: Vec<Complex64> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    let prod: Vec<Complex64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
    let rotated: Vec<Complex64> = (0..slots).map(|j| x[(j + 1) % slots]).collect();
    let mut report = PrecisionReport {
        fresh_public_key: precision_bits(&decrypt(&cx)?, &x),
        fresh_secret_key: precision_bits(&decrypt(&c_sk)?, &x),
        add: precision_bits(&decrypt(&eval.add(&cx, &cy)?)?, &sum),
        mul_relin_rescale: precision_bits(
            &decrypt(&eval.mul_relin_rescale(&cx, &cy, &rlk)?)?,
            &prod,
        ),
        rotate: precision_bits(&decrypt(&eval.rotate(&cx, 1, &gk)?)?, &rotated),
        conjugate: precision_bits(&decrypt(&eval.conjugate(&cx, &gk)?)?, &x),
        chain_of_ten: None,
    };
    if chain && top >= 10 {
        let mut want = rng.unit_complex(slots);
        let mut ct = ctx.encrypt_pk(&pk, &enc.encode(&want, top)?)?;
        let mut worst = f64::INFINITY;
        for _ in 0..10 {
            let factor = rng.unit_complex(slots);
            let cf = ctx.encrypt_pk(&pk, &enc.encode(&factor, ct.level())?)?;
            ct = eval.mul_relin_rescale(&ct, &cf, &rlk)?;
            want = want.iter().zip(&factor).map(|(a, b)| a * b).collect();
            worst = worst.min(precision_bits(&decrypt(&ct)?, &want));
        }
        report.chain_of_ten = Some(worst);
    }
    Ok(report)
}
