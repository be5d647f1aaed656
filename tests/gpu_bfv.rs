//! BFV on the CUDA backend: every evaluator operator bit-identical to the CPU backend for the
//! same seeds (the integer-only scale-and-round included), and exact against the plaintext
//! computation mod t. `#[ignore]`d without a GPU (run with `--include-ignored` on the GPU
//! machine); the device helper panics when no device is found, so these never pass silently.

mod common;

use common::{assert_bit_identical, cuda_backend};
use gpufhe::bfv::RowRotations;
use gpufhe::bfv::params::{self, N13};
use gpufhe::bfv::{Context, Decryptor, Evaluator, ParametersLiteral};
use gpufhe::cuda::CudaBackend;
use gpufhe::math::backend::prelude::*;
use test_support::{
    SeededKeys, active_limbs, mul_slots, random_values, rotate_rows, seed, seeded_galois_keys,
    swap_rows,
};

fn gpu_context(lit: &ParametersLiteral) -> Context<CudaBackend> {
    let params = params::new(lit).unwrap();
    let backend = cuda_backend(gpufhe::bgv::context::ring_for(&params).unwrap());
    Context::with_backend(params, backend).unwrap()
}

fn cpu_context(lit: &ParametersLiteral) -> Context<gpufhe::math::CpuBackend> {
    Context::cpu(params::new(lit).unwrap()).unwrap()
}

fn all_operators<B: Backend>(ctx: &Context<B>) -> Vec<(String, Vec<u64>)> {
    let be = ctx.backend();
    let (n, t) = (ctx.params().n(), ctx.params().t());
    let top = ctx.level();
    let enc = ctx.encoder();
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
    let xx = mul_slots(&x, &x, t);
    let sum: Vec<u64> = x.iter().zip(&y).map(|(&a, &b)| (a + b) % t).collect();
    let diff: Vec<u64> = x.iter().zip(&y).map(|(&a, &b)| (a + t - b) % t).collect();
    let neg: Vec<u64> = x.iter().map(|&a| (t - a) % t).collect();
    let mut out = Vec::new();
    let mut keep = |name: &str, ct: &gpufhe::bfv::Ciphertext<B>, want: &[u64]| {
        assert!(
            dec.decrypt(ct).unwrap() == want,
            "{name}: differs from the plaintext computation on {}",
            be.device_name()
        );
        out.push((
            name.to_string(),
            active_limbs(be, ct.inner().poly()).unwrap(),
        ));
    };
    keep("encrypt_pk", &cx, &x);
    keep("encrypt_sk", &cy, &y);
    keep("add", &eval.add(&cx, &cy).unwrap(), &sum);
    keep("sub", &eval.sub(&cx, &cy).unwrap(), &diff);
    keep("negate", &eval.negate(&cx).unwrap(), &neg);
    keep("add_plain", &eval.add_plain(&cx, &py).unwrap(), &sum);
    keep("sub_plain", &eval.sub_plain(&cx, &py).unwrap(), &diff);
    keep("mul_plain", &eval.mul_plain(&cx, &py).unwrap(), &xy);
    let prod = eval.mul(&cx, &cy).unwrap();
    keep("mul", &prod, &xy);
    keep("square", &eval.square(&cx).unwrap(), &xx);
    let relin = eval.relinearize(prod, &rlk).unwrap();
    keep("relinearize", &relin, &xy);
    keep("mul_relin", &eval.mul_relin(&cx, &cy, &rlk).unwrap(), &xy);
    keep(
        "rotate_rows_1",
        &eval.rotate_rows(&cx, 1, &gk).unwrap(),
        &rotate_rows(&x, 1),
    );
    keep(
        "rotate_rows_7",
        &eval.rotate_rows(&cx, 7, &gk).unwrap(),
        &rotate_rows(&x, 7),
    );
    keep(
        "rotate_columns",
        &eval.rotate_columns(&cx, &gk).unwrap(),
        &swap_rows(&x),
    );
    for (ct, k) in eval
        .rotate_rows_hoisted(&relin, &[1, 2, 5], &gk)
        .unwrap()
        .iter()
        .zip([1, 2, 5])
    {
        keep(
            &format!("rotate_rows_hoisted_{k}"),
            ct,
            &rotate_rows(&xy, k),
        );
    }
    // Operators on a relinearized product (from `mul`'s coefficient form), and the
    // relinearization of a product in NTT form (a plaintext product of `mul`'s output is).
    keep(
        "rotate_rows_1_of_relinearized",
        &eval.rotate_rows(&relin, 1, &gk).unwrap(),
        &rotate_rows(&xy, 1),
    );
    keep(
        "rotate_columns_of_relinearized",
        &eval.rotate_columns(&relin, &gk).unwrap(),
        &swap_rows(&xy),
    );
    let xyx = mul_slots(&xy, &x, t);
    keep(
        "mul_relin_relinearized_by_fresh",
        &eval.mul_relin(&relin, &cx, &rlk).unwrap(),
        &xyx,
    );
    keep(
        "mul_relin_fresh_by_relinearized",
        &eval.mul_relin(&cx, &relin, &rlk).unwrap(),
        &xyx,
    );
    let xyxy = mul_slots(&xy, &xy, t);
    keep(
        "square_relin_relinearized",
        &eval.square_relin(&relin, &rlk).unwrap(),
        &xyxy,
    );
    let prod_ntt = eval.mul_plain(&eval.mul(&cx, &cy).unwrap(), &py).unwrap();
    keep(
        "relinearize_ntt_form",
        &eval.relinearize(prod_ntt, &rlk).unwrap(),
        &mul_slots(&xy, &y, t),
    );
    let x3: Vec<u64> = x.iter().map(|&a| mul(mul(a, a), a)).collect();
    keep("pow_3", &eval.pow(&cx, 3, &rlk).unwrap(), &x3);
    out.push(("relin_key".into(), active_limbs(be, &rlk.0.poly).unwrap()));
    out.push(("public_key".into(), active_limbs(be, &pk.poly).unwrap()));
    out
}

/// The operator list's own checks (exact against the plaintext computation) on the CPU, so
/// that CI runs them without a GPU.
#[test]
fn cpu_bfv_operators_exact_n13() {
    let ops = all_operators(&cpu_context(&N13));
    assert!(ops.iter().any(|(name, _)| name == "relinearize_ntt_form"));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bfv_operators_bit_identical_n13() {
    let cpu = all_operators(&cpu_context(&N13));
    let gpu = all_operators(&gpu_context(&N13));
    assert_bit_identical(&cpu, &gpu);
}

/// One prime per digit and one special prime (key switching through the lifted NTT loads).
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bfv_operators_bit_identical_cat_compat() {
    let cpu = all_operators(&cpu_context(&params::CAT_COMPAT));
    let gpu = all_operators(&gpu_context(&params::CAT_COMPAT));
    assert_bit_identical(&cpu, &gpu);
}

/// Two special primes (PHANTOM_INT): on the GPU, multiply + relinearize (and `pow`) leave the
/// product untransformed, its first two components entering through mod_down's converting pass
/// in coefficient form, its third through mod_up's own passes.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bfv_operators_bit_identical_phantom_int() {
    let cpu = all_operators(&cpu_context(&params::PHANTOM_INT));
    let gpu = all_operators(&gpu_context(&params::PHANTOM_INT));
    assert_bit_identical(&cpu, &gpu);
}

/// Modulus switching and the operators at lower levels: `mod_switch` of fresh and product
/// ciphertexts, `mul` (per-level scale-and-round tables), `relinearize`, `mul_plain` with a
/// re-lifted plaintext and a rotation, each level down to 1; exact against the plaintext.
fn switched_operators<B: Backend>(ctx: &Context<B>) -> Vec<(String, Vec<u64>)> {
    let be = ctx.backend();
    let (n, t) = (ctx.params().n(), ctx.params().t());
    let top = ctx.level();
    let enc = ctx.encoder();
    let eval = Evaluator::new(ctx);
    let kg = ctx.key_generator();
    let SeededKeys { sk, pk, rlk } = SeededKeys::new(&kg).unwrap();
    let elements = eval.galois_elements(&[1], false).unwrap();
    let gk = seeded_galois_keys(&kg, &sk, &elements, 10, 20).unwrap();
    let dec = Decryptor::new(ctx, &sk);
    let x = random_values(3, n, t);
    let y = random_values(4, n, t);
    let px = enc.encode(&x, top).unwrap();
    let py = enc.encode(&y, top).unwrap();
    let cx = ctx.encrypt_pk_with_seed(&pk, &px, &seed(40)).unwrap();
    let cy = ctx
        .encrypt_sk_with_seeds(&sk, &py, seed(41), &seed(42))
        .unwrap();
    let xy = mul_slots(&x, &y, t);
    let mut out = Vec::new();
    let mut keep = |name: String, ct: &gpufhe::bfv::Ciphertext<B>, want: &[u64]| {
        assert!(
            dec.decrypt(ct).unwrap() == want,
            "{name}: differs from the plaintext computation on {}",
            be.device_name()
        );
        // The measured budget (decoded on the backend) must have the CPU's bits too.
        let budget = dec.noise_budget(ct).unwrap().to_bits();
        out.push((format!("{name}: noise budget"), vec![budget]));
        out.push((name, active_limbs(be, ct.inner().poly()).unwrap()));
    };
    let tensor = eval.mul(&cx, &cy).unwrap();
    keep(
        "mod_switch of a tensor".into(),
        &eval.mod_switch(&tensor).unwrap(),
        &xy,
    );
    for level in (1..top).rev() {
        let a = eval.mod_switch_to(&cx, level).unwrap();
        let b = eval.mod_switch_to(&cy, level).unwrap();
        keep(format!("mod_switch_to {level}"), &a, &x);
        let prod = eval.mul(&a, &b).unwrap();
        keep(format!("mul at {level}"), &prod, &xy);
        let relin = eval.relinearize(prod, &rlk).unwrap();
        keep(format!("relinearize at {level}"), &relin, &xy);
        keep(
            format!("mul_plain at {level}"),
            &eval.mul_plain(&a, &py).unwrap(),
            &xy,
        );
        keep(
            format!("rotate_rows_1 at {level}"),
            &eval.rotate_rows(&relin, 1, &gk).unwrap(),
            &rotate_rows(&xy, 1),
        );
        if level > 1 {
            keep(
                format!("mod_switch of the product at {level}"),
                &eval.mod_switch(&relin).unwrap(),
                &xy,
            );
        }
    }
    out
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bfv_mod_switch_mul_relin_bit_identical_n13() {
    let cpu = switched_operators(&cpu_context(&N13));
    let gpu = switched_operators(&gpu_context(&N13));
    assert_bit_identical(&cpu, &gpu);
}

/// BFV's device `tensor_scale_round` at N = 2^15 (PHANTOM_INT) gives the words of the trait's
/// default body: the inputs' inverse NTT, a download, the host scale-and-round, an upload and
/// the NTT. (Its speed is gpu_bench's business.)
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_bfv_tensor_scale_round_matches_host_path_n15() {
    use gpufhe::math::poly::Shape;
    let ctx = gpu_context(&params::PHANTOM_INT);
    let be = ctx.backend();
    let (n, t) = (ctx.params().n(), ctx.params().t());
    let top = ctx.level();
    let enc = ctx.encoder();
    let kg = ctx.key_generator();
    let sk = kg.secret_key_from_seed(seed(1)).unwrap();
    let px = enc.encode(&random_values(1, n, t), top).unwrap();
    let py = enc.encode(&random_values(2, n, t), top).unwrap();
    let cx = ctx
        .encrypt_sk_with_seeds(&sk, &px, seed(3), &seed(4))
        .unwrap();
    let cy = ctx
        .encrypt_sk_with_seeds(&sk, &py, seed(5), &seed(6))
        .unwrap();
    // The default body: inverse NTT of copies, download, host reference, upload, NTT.
    let tables = ctx.tables();
    let (a, b) = (cx.inner().poly(), cy.inner().poly());
    let host_path = {
        let mut ac = be.duplicate(a).unwrap();
        be.intt(&mut ac).unwrap();
        let ha = be.download(&ac).unwrap();
        let mut bc = be.duplicate(b).unwrap();
        be.intt(&mut bc).unwrap();
        let hb = be.download(&bc).unwrap();
        let mut out = be
            .ring()
            .zeros(Shape {
                components: 3,
                level: tables.level(),
                extended: false,
            })
            .unwrap();
        tables
            .tensor_scale_round_host(be.ring(), &ha, &hb, &mut out)
            .unwrap();
        let mut d = be.upload(&out).unwrap();
        be.ntt(&mut d).unwrap();
        be.synchronize().unwrap();
        d
    };
    let want = active_limbs(be, &host_path).unwrap();
    assert!(
        active_limbs(be, &be.tensor_scale_round(a, b, tables).unwrap()).unwrap() == want,
        "tensor_scale_round differs from the host path"
    );
}
