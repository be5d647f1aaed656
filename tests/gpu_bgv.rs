//! BGV on the CUDA backend: every evaluator operator bit-identical to the CPU backend for the
//! same seeds, and exact against the plaintext computation mod t. `#[ignore]`d on machines
//! without a GPU (run with `--include-ignored` on the GPU machine); the device helper panics
//! when no device is found, so these tests never pass silently.

mod common;

use common::{assert_bit_identical, cuda_backend};
use gpufhe::bgv::RowRotations;
use gpufhe::bgv::params::{CAT, CAT_COMPAT, N13, ParametersLiteral};
use gpufhe::bgv::{Context, Decryptor, Encoder, Evaluator, Parameters, context::ring_for};
use gpufhe::cuda::CudaBackend;
use gpufhe::math::backend::prelude::*;
use test_support::{
    SeededKeys, active_limbs, mul_slots, random_values, rotate_rows, seed, seeded_galois_keys,
    swap_rows,
};

fn gpu_context(lit: &ParametersLiteral) -> Context<CudaBackend> {
    let params = Parameters::new(lit).unwrap();
    let backend = cuda_backend(ring_for(&params).unwrap());
    Context::with_backend(params, backend).unwrap()
}

fn cpu_context(lit: &ParametersLiteral) -> Context<gpufhe::math::CpuBackend> {
    Context::cpu(Parameters::new(lit).unwrap()).unwrap()
}

/// Runs every evaluator operator with fixed seeds; returns each result's limbs and checks each
/// decryption against the plaintext computation.
fn all_operators<B: Backend>(ctx: &Context<B>) -> Vec<(String, Vec<u64>)> {
    let be = ctx.backend();
    let (n, t) = (ctx.params().n(), ctx.params().t());
    let top = ctx.params().max_level();
    let enc = Encoder::new(ctx);
    let eval = Evaluator::new(ctx);
    let kg = ctx.key_generator();
    let SeededKeys { sk, pk, rlk } = SeededKeys::new(&kg).unwrap();
    let elements = eval.galois_elements(&[1, 2, 4, 5], true).unwrap();
    let gk = seeded_galois_keys(&kg, &sk, &elements, 10, 20).unwrap();
    let dec = Decryptor::new(ctx, &sk);
    let x = random_values(1, n, t);
    let y = random_values(2, n, t);
    let px = enc.encode(&x, top).unwrap();
    let py = enc.encode(&y, top).unwrap();
    let cx = ctx.encrypt_pk_with_seed(&pk, &px, &seed(30)).unwrap();
    let cy = ctx
        .encrypt_sk_with_seeds(&sk, &py, seed(31), &seed(32))
        .unwrap();
    let mul = |a: u64, b: u64| ((a as u128 * b as u128) % t as u128) as u64;
    let xy = mul_slots(&x, &y, t);
    let mut out = Vec::new();
    let mut keep = |name: &str, ct: &gpufhe::bgv::Ciphertext<B>, want: Option<&[u64]>| {
        if let Some(w) = want {
            assert!(
                dec.decrypt(ct).unwrap() == w,
                "{name}: differs from the plaintext computation on {}",
                be.device_name()
            );
            // The measured budget (decoded on the backend) must have the CPU's bits too.
            let budget = dec.noise_budget(ct).unwrap().to_bits();
            out.push((format!("{name}: noise budget"), vec![budget]));
        }
        out.push((
            name.to_string(),
            active_limbs(be, ct.inner().poly()).unwrap(),
        ));
    };
    keep("encrypt_pk", &cx, Some(&x));
    keep("encrypt_sk", &cy, Some(&y));
    let sum: Vec<u64> = x.iter().zip(&y).map(|(&a, &b)| (a + b) % t).collect();
    keep("add", &eval.add(&cx, &cy).unwrap(), Some(&sum));
    keep("sub", &eval.sub(&cx, &cy).unwrap(), None);
    keep("negate", &eval.negate(&cx).unwrap(), None);
    keep("add_plain", &eval.add_plain(&cx, &py).unwrap(), Some(&sum));
    keep("mul_plain", &eval.mul_plain(&cx, &py).unwrap(), Some(&xy));
    let prod = eval.mul(&cx, &cy).unwrap();
    keep("mul", &prod, Some(&xy));
    keep("square", &eval.square(&cx).unwrap(), None);
    let relin = eval.relinearize(prod, &rlk).unwrap();
    keep("relinearize", &relin, Some(&xy));
    keep("mod_switch", &eval.mod_switch(&relin).unwrap(), Some(&xy));
    let fused = eval.mul_relin(&cx, &cy, &rlk).unwrap();
    keep("mul_relin", &fused, Some(&xy));
    keep(
        "mul_relin_no_switch",
        &eval.mul_relin_no_switch(&cx, &cy, &rlk).unwrap(),
        Some(&xy),
    );
    keep(
        "rotate_rows_1",
        &eval.rotate_rows(&cx, 1, &gk).unwrap(),
        Some(&rotate_rows(&x, 1)),
    );
    keep(
        "rotate_rows_7",
        &eval.rotate_rows(&cx, 7, &gk).unwrap(),
        Some(&rotate_rows(&x, 7)),
    );
    keep(
        "rotate_columns",
        &eval.rotate_columns(&cx, &gk).unwrap(),
        Some(&swap_rows(&x)),
    );
    for (i, ct) in eval
        .rotate_rows_hoisted(&fused, &[1, 2, 5], &gk)
        .unwrap()
        .iter()
        .enumerate()
    {
        keep(&format!("rotate_rows_hoisted_{i}"), ct, None);
    }
    let x3: Vec<u64> = x.iter().map(|&a| mul(mul(a, a), a)).collect();
    keep("pow_3", &eval.pow(&cx, 3, &rlk).unwrap(), Some(&x3));
    keep("add_aligned", &eval.add(&fused, &cx).unwrap(), None);
    out.push(("relin_key".into(), active_limbs(be, &rlk.0.poly).unwrap()));
    out.push(("public_key".into(), active_limbs(be, &pk.poly).unwrap()));
    out
}

fn compare(lit: &ParametersLiteral) {
    let cpu = all_operators(&cpu_context(lit));
    let gpu = all_operators(&gpu_context(lit));
    assert_bit_identical(&cpu, &gpu);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bgv_operators_bit_identical_n13() {
    compare(&N13);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bgv_operators_bit_identical_cat() {
    compare(&CAT);
}

/// One prime per digit and one special prime: key switching through the lifted NTT loads.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bgv_operators_bit_identical_cat_compat() {
    compare(&CAT_COMPAT);
}
