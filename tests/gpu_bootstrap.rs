//! CKKS linear transforms and bootstrapping on the CUDA backend, bit-identical to the CPU
//! backend for the same seeds (every DFT diagonal and Chebyshev coefficient is computed once on
//! the host, so both backends encode the same integers). `#[ignore]`d without a GPU (run with
//! `--include-ignored` on the GPU machine); the device helper panics when no device is found.

mod common;

use common::{assert_bit_identical, cuda_backend, device};
use gpufhe::ckks::bootstrap::{
    BOOT_N12_CONFIG, BOOT_N12_STC_FIRST_CONFIG, BootstrapConfig, Bootstrapper, EncapsulationKeys,
};
use gpufhe::ckks::linear_transform::LinearTransform;
use gpufhe::ckks::params::{
    BOOT_N12_INSECURE, BOOT_N12_MIXED_INSECURE, BOOT_N12_STC_FIRST_INSECURE, BOOT_SECRET_WEIGHT,
    ParametersLiteral,
};
use gpufhe::ckks::precision::{InputGenerator, precision_bits, uniform_complex};
use gpufhe::ckks::{Context, Evaluator, Parameters, context::ring_for};
use gpufhe::cuda::CudaBackend;
use gpufhe::math::backend::prelude::*;
use gpufhe::math::fft::Complex64;
use gpufhe::rlwe::encrypt;
use std::collections::BTreeMap;
use test_support::{active_limbs, seed, seeded_galois_keys};

/// Named results: the active limbs of each buffer (the inactive capacity may hold stale data).
type Named = Vec<(String, Vec<u64>)>;

/// A linear transform (7 diagonals on full slots) and a whole bootstrap (each stage kept), on
/// `ctx`'s backend with fixed seeds; with `encapsulated`, a dense secret with sparse-secret
/// encapsulation; with `side`, EvalMod's two halves run side by side, the second on that
/// context's backend. Also returns the bootstrap's precision in bits.
fn run<B: Backend>(
    ctx: &Context<B>,
    config: BootstrapConfig,
    encapsulated: bool,
    side: Option<&Context<B>>,
) -> (Named, f64) {
    let be = ctx.backend();
    let params = ctx.params();
    let mut boot = Bootstrapper::new(ctx, config).unwrap();
    if let Some(side) = side {
        boot = boot
            .with_side_evaluator(Evaluator::new(side).unwrap())
            .unwrap();
    }
    let eval = boot.evaluator();
    let kg = ctx.key_generator();
    let sparse = kg
        .sparse_secret_key_from_seed(seed(1), BOOT_SECRET_WEIGHT)
        .unwrap();
    let dense = kg.secret_key_from_seed(seed(2)).unwrap();
    let sk = if encapsulated { &dense } else { &sparse };
    let rlk = kg.relin_key_with_seeds(sk, seed(3), &seed(4)).unwrap();
    let slots = params.slots();
    let mut g = InputGenerator::new(12);
    let diagonals: BTreeMap<i64, Vec<Complex64>> = [0i64, 1, 3, -4, 100, -512, 1023]
        .into_iter()
        .map(|k| (k, uniform_complex(&mut g, slots)))
        .collect();
    let top = params.max_level();
    let lt = LinearTransform::new(eval, &diagonals, slots, top).unwrap();
    let mut elements = boot.galois_elements();
    elements.extend(lt.galois_elements(eval));
    elements.sort_unstable();
    elements.dedup();
    let gk = seeded_galois_keys(&kg, sk, &elements, 10, 20).unwrap();
    let enc = EncapsulationKeys::generate_with_seeds(ctx, &dense, &sparse, [5, 6, 7, 8].map(seed))
        .unwrap();
    let enc = encapsulated.then_some(&enc);

    let mut out = Vec::new();
    let mut keep =
        |name: &str, p: &B::Poly| out.push((name.to_string(), active_limbs(be, p).unwrap()));
    let x = uniform_complex(&mut g, slots);
    let px = eval.encoder().encode(&x, top).unwrap();
    let cx = encrypt::encrypt_sk_with_seeds(be, sk, &px, seed(30), &seed(31)).unwrap();
    keep(
        "linear_transform",
        eval.linear_transform(&cx, &lt, &gk).unwrap().poly(),
    );

    let z = uniform_complex(&mut g, slots);
    let pz = eval
        .encoder()
        .encode(&z, boot.levels().input_level)
        .unwrap();
    let mut cz = encrypt::encrypt_sk_with_seeds(be, sk, &pz, seed(32), &seed(33)).unwrap();
    if boot.levels().input_level > 0 {
        cz = boot.slot_to_coeff_first(&cz, &gk).unwrap();
        keep("slot_to_coeff_first", cz.poly());
    }
    let raised = boot.mod_raise_with(&cz, enc).unwrap();
    keep("mod_raise", raised.poly());
    let halves = boot.coeff_to_slot(&raised, &gk).unwrap();
    for h in &halves {
        keep("coeff_to_slot", h.poly());
    }
    let modded = boot.eval_mod_all(&halves, &rlk).unwrap();
    for h in &modded {
        keep("eval_mod", h.poly());
    }
    let result = boot.slot_to_coeff(&modded, &gk).unwrap();
    keep("slot_to_coeff", result.poly());
    let got = eval
        .encoder()
        .decode(&encrypt::decrypt(be, sk, &result).unwrap())
        .unwrap();
    (out, precision_bits(&got, &z))
}

/// With `side_stream`, the GPU runs EvalMod's second half on a second backend on another
/// stream of the same device ([`Bootstrapper::with_side_evaluator`]).
fn compare(
    lit: &ParametersLiteral,
    config: BootstrapConfig,
    encapsulated: bool,
    side_stream: bool,
) {
    let params = Parameters::new(lit).unwrap();
    let cpu = Context::cpu(params.clone()).unwrap();
    let ring = ring_for(&params).unwrap();
    let gpu = Context::with_backend(params.clone(), cuda_backend(ring.clone())).unwrap();
    let side = side_stream.then(|| {
        let dev = device();
        let be = CudaBackend::on_stream(dev.clone(), dev.stream(1).clone(), ring).unwrap();
        Context::with_backend(params.clone(), be).unwrap()
    });
    let (c, cpu_bits) = run(&cpu, config, encapsulated, None);
    let (g, gpu_bits) = run(&gpu, config, encapsulated, side.as_ref());
    println!("bootstrap precision: CPU {cpu_bits:.2} bits, GPU {gpu_bits:.2} bits");
    assert!(gpu_bits >= 21.0, "{gpu_bits:.2} bits");
    assert_bit_identical(&c, &g);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bootstrap_bit_identical_to_cpu() {
    compare(&BOOT_N12_INSECURE, BOOT_N12_CONFIG, false, false);
}

/// The mixed chain (45-bit application primes under 54-bit bootstrapping primes): SlotToCoeff's
/// last matrix crosses the ladder step with its landing scale, on both backends alike.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bootstrap_mixed_chain_bit_identical_to_cpu() {
    compare(&BOOT_N12_MIXED_INSECURE, BOOT_N12_CONFIG, false, false);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bootstrap_encapsulated_bit_identical_to_cpu() {
    compare(&BOOT_N12_INSECURE, BOOT_N12_CONFIG, true, false);
}

/// EvalMod's halves side by side on two streams of one GPU: the same words as the CPU.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bootstrap_side_stream_bit_identical_to_cpu() {
    compare(&BOOT_N12_INSECURE, BOOT_N12_CONFIG, true, true);
}

/// SlotToCoeff first (its matrices before ModRaise, the landing matrix after EvalMod),
/// encapsulated, EvalMod's halves on two streams: the same words as the CPU at every stage.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bootstrap_slot_to_coeff_first_bit_identical_to_cpu() {
    compare(
        &BOOT_N12_STC_FIRST_INSECURE,
        BOOT_N12_STC_FIRST_CONFIG,
        true,
        true,
    );
}
