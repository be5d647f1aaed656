//! CKKS on the CUDA backend: the precision bounds of the CPU tests, and every evaluator operator
//! (slot sums and polynomial evaluation included) bit-identical to the CPU backend for the same seeds. `#[ignore]`d on machines without a GPU
//! (run with `--include-ignored` on the GPU machine); the device helper panics when no device is
//! found, so these tests never pass silently.

mod common;

use common::{assert_bit_identical, cuda_backend};
use gpufhe::ckks::params::{CAT, CAT_COMPAT, N13, N16_L24_D3, ParametersLiteral};
use gpufhe::ckks::precision::{InputGenerator, measure};
use gpufhe::ckks::{Context, Encoder, Evaluator, Parameters, Polynomial, context::ring_for};
use gpufhe::cuda::CudaBackend;
use gpufhe::math::RnsPoly;
use gpufhe::math::backend::prelude::*;
use gpufhe::math::fft::Complex64;
use gpufhe::rlwe::encrypt;
use test_support::{SeededKeys, seed, seeded_galois_keys};

fn gpu_context(lit: &ParametersLiteral) -> Context<CudaBackend> {
    let params = Parameters::new(lit).unwrap();
    let backend = cuda_backend(ring_for(&params).unwrap());
    Context::with_backend(params, backend).unwrap()
}

fn cpu_context(lit: &ParametersLiteral) -> Context<gpufhe::math::CpuBackend> {
    Context::cpu(Parameters::new(lit).unwrap()).unwrap()
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_precision_n13() {
    let r = measure(&gpu_context(&N13), 1, false).unwrap();
    println!("GPU N13: {r:?}");
    assert!(r.fresh_public_key >= 21.0 && r.add >= 21.0, "{r:?}");
    assert!(
        r.mul_relin_rescale >= 19.0 && r.rotate >= 19.0 && r.conjugate >= 19.0,
        "{r:?}"
    );
    assert!(r.fresh_secret_key >= 27.0, "{r:?}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_precision_chain_of_ten_cat() {
    let r = measure(&gpu_context(&CAT), 3, true).unwrap();
    println!("GPU CAT: {r:?}");
    assert!(r.chain_of_ten.expect("16 levels") >= 15.0, "{r:?}");
}

/// Runs every evaluator operator with fixed seeds and returns each result on the host.
fn all_operators<B: Backend>(ctx: &Context<B>) -> Vec<(String, RnsPoly)> {
    let be = ctx.backend();
    let enc = Encoder::new(ctx).unwrap();
    let eval = Evaluator::new(ctx).unwrap();
    let kg = ctx.key_generator();
    let SeededKeys { sk, pk, rlk } = SeededKeys::new(&kg).unwrap();
    let elements = eval.galois_elements(&[1, 2, 4, 5], true);
    let gk = seeded_galois_keys(&kg, &sk, &elements, 10, 20).unwrap();
    let top = ctx.params().max_level();
    let mut rng = InputGenerator::new(9);
    let x = rng.unit_complex(enc.max_slots());
    let y = rng.real(enc.max_slots());
    let px = enc.encode(&x, top).unwrap();
    let py = enc.encode(&y, top).unwrap();
    let cx = encrypt::encrypt_pk_with_seed(be, &pk, &px, &seed(30)).unwrap();
    let cy = encrypt::encrypt_sk_with_seeds(be, &sk, &py, seed(31), &seed(32)).unwrap();
    let mut out = Vec::new();
    let mut keep = |name: &str, p: &B::Poly| out.push((name.to_string(), be.download(p).unwrap()));
    keep("encode", px.poly());
    keep("encrypt_pk", cx.poly());
    keep("encrypt_sk", cy.poly());
    keep("decrypt", encrypt::decrypt(be, &sk, &cx).unwrap().poly());
    keep("add", eval.add(&cx, &cy).unwrap().poly());
    keep("sub", eval.sub(&cx, &cy).unwrap().poly());
    keep("negate", eval.negate(&cx).unwrap().poly());
    keep("add_plain", eval.add_plain(&cx, &py).unwrap().poly());
    keep(
        "add_const",
        eval.add_const(&cx, Complex64::new(0.5, 0.25))
            .unwrap()
            .poly(),
    );
    let prod = eval.mul(&cx, &cy).unwrap();
    keep("mul", prod.poly());
    keep("square", eval.square(&cx).unwrap().poly());
    let relin = eval.relinearize(prod, &rlk).unwrap();
    keep("relinearize", relin.poly());
    keep("rescale", eval.rescale(&relin).unwrap().poly());
    keep(
        "mul_relin_rescale",
        eval.mul_relin_rescale(&cx, &cy, &rlk).unwrap().poly(),
    );
    keep("mul_relin", eval.mul_relin(&cx, &cy, &rlk).unwrap().poly());
    keep("mul_plain", eval.mul_plain(&cx, &py).unwrap().poly());
    keep("mul_const", eval.mul_const(&cx, 0.3).unwrap().poly());
    keep("mul_int", eval.mul_int(&cx, -7).unwrap().poly());
    keep(
        "drop_to_level",
        eval.drop_to_level(&cx, top - 2).unwrap().poly(),
    );
    keep("rotate_1", eval.rotate(&cx, 1, &gk).unwrap().poly());
    keep(
        "rotate_7_composed",
        eval.rotate(&cx, 7, &gk).unwrap().poly(),
    );
    keep("conjugate", eval.conjugate(&cx, &gk).unwrap().poly());
    for (i, ct) in eval
        .rotate_hoisted(&cx, &[1, 2, 5], &gk)
        .unwrap()
        .iter()
        .enumerate()
    {
        keep(&format!("rotate_hoisted_{i}"), ct.poly());
    }
    keep("inner_sum_8", eval.inner_sum(&cx, 8, &gk).unwrap().poly());
    keep(
        "sum_rotations",
        eval.sum_rotations(&cx, &[1, 2, 5, 5], &gk).unwrap().poly(),
    );
    // Paterson–Stockmeyer over the fused linear combination: a Chebyshev polynomial of the
    // largest degree 2^d − 1 the levels allow (d ≤ 4) and a power-basis one of degree 3.
    let depth = top.min(4) as u32;
    let cheb = Polynomial::chebyshev(
        (0..(1usize << depth))
            .map(|i| 0.5 / (1.0 + i as f64))
            .collect(),
        -1.0,
        1.0,
    )
    .unwrap();
    let power = Polynomial::power(vec![0.1, -0.4, 0.3, -0.2]).unwrap();
    keep(
        "evaluate_polynomial_chebyshev",
        eval.evaluate_polynomial(&cy, &cheb, &rlk).unwrap().poly(),
    );
    keep(
        "evaluate_polynomial_power",
        eval.evaluate_polynomial(&cy, &power, &rlk).unwrap().poly(),
    );
    keep("galois_key", &gk.keys.values().next().unwrap().poly);
    keep("relin_key", &rlk.0.poly);
    keep("public_key", &pk.poly);
    out
}

fn compare(lit: &ParametersLiteral) {
    let cpu = all_operators(&cpu_context(lit));
    let gpu = all_operators(&gpu_context(lit));
    assert_bit_identical(&cpu, &gpu);
    // Repeated runs give identical bits.
    let again = all_operators(&gpu_context(lit));
    assert!(
        gpu.iter().zip(&again).all(|(a, b)| a.1 == b.1),
        "GPU results are not reproducible"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_ckks_operators_bit_identical_n13() {
    compare(&N13);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_ckks_operators_bit_identical_n16_l24_d3() {
    compare(&N16_L24_D3);
}

/// One prime per digit (dnum = L + 1): mod_up's forward NTT lifts the digits as it loads them.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_ckks_operators_bit_identical_cat_compat() {
    compare(&CAT_COMPAT);
}

/// The runtime-selected backend: on a GPU machine `AnyBackend::auto` picks CUDA, every operator
/// gives the CPU backend's bits through it, and a buffer of the other side is refused.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_any_backend_picks_the_gpu_and_matches_the_cpu() {
    use gpufhe::cuda::{AnyBackend, AnyPoly};
    use gpufhe::math::Error as MathError;
    let _ = common::device(); // panics without a device: never a silent pass
    let params = Parameters::new(&N13).unwrap();
    let ring = ring_for(&params).unwrap();
    let any = AnyBackend::auto(ring.clone());
    assert!(any.is_gpu(), "auto chose {}", any.device_name());
    // Later choices share the process's device (context, streams, compiled modules).
    let again = AnyBackend::auto(ring.clone());
    assert!(std::sync::Arc::ptr_eq(
        any.as_cuda().unwrap().device(),
        again.as_cuda().unwrap().device()
    ));
    let ctx = Context::with_backend(params, any.clone()).unwrap();
    assert_bit_identical(&all_operators(&cpu_context(&N13)), &all_operators(&ctx));

    let host = AnyBackend::cpu(ring);
    let on_host = host
        .zeros(gpufhe::math::poly::Shape {
            components: 2,
            level: 1,
            extended: false,
        })
        .unwrap();
    let mut on_gpu = any
        .duplicate(&any.upload(&host.download(&on_host).unwrap()).unwrap())
        .unwrap();
    assert!(matches!(on_gpu, AnyPoly::Cuda(_)));
    let refused = [any.add_assign(&mut on_gpu, &on_host), host.ntt(&mut on_gpu)];
    for r in refused {
        assert!(
            matches!(r, Err(MathError::DeviceMismatch { .. })),
            "mixing devices must be an error: {r:?}"
        );
    }
}
