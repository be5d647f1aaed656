//! The BGV pipeline at the `CAT` preset (N = 2^15, 17 ciphertext primes of 60 + 16 × 40 bits,
//! 3 special primes, dnum 6, t = 65537): key generation, public-key encryption, multiply,
//! relinearize (with the fused modulus switch), rotate rows and columns, a plaintext multiply,
//! an exponentiation and decryption, printing the remaining noise budget of every step
//! (measured exactly, and the analytic bound).
//!
//! Run with `cargo run --release --example bgv_basics`. The last line is `exact: true` only
//! when every decrypted result equals the same computation on plaintext mod t.

use gpufhe::bgv::RowRotations;
use gpufhe::bgv::{Ciphertext, Context, Decryptor, Encoder, Evaluator, Parameters, params};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::prelude::*;
use std::time::Instant;
use test_support::{mul_mod, mul_slots, random_values, rotate_rows, swap_rows, zip_with};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let params = Parameters::new(&params::CAT)?;
    let (n, t) = (params.n(), params.t());
    println!(
        "BGV at CAT: N = {n}, {} + {} primes, dnum {}, log2 QP = {:.1}, t = {t}",
        params.moduli_q().len(),
        params.moduli_p().len(),
        params.dnum(),
        params.log2_qp(),
    );
    // The GPU when one is usable (FHE_BACKEND=cpu forces the CPU), else the CPU.
    let (backend, why_cpu) = AnyBackend::auto_explained(gpufhe::bgv::context::ring_for(&params)?);
    if let Some(e) = why_cpu {
        println!("no usable GPU ({e}): running on the CPU");
    }
    println!("backend: {}", backend.device_name());
    let ctx = Context::with_backend(params.clone(), backend)?;
    let encoder = Encoder::new(&ctx);
    let eval = Evaluator::new(&ctx);

    let clock = Instant::now();
    let keygen = ctx.key_generator();
    let sk = keygen.secret_key()?;
    let pk = keygen.public_key(&sk)?;
    let rlk = keygen.relin_key(&sk)?;
    let gk = keygen.galois_keys(&sk, &eval.galois_elements(&[1, 5], true)?)?;
    println!("keys: {:.2?}", clock.elapsed());
    let dec = Decryptor::new(&ctx, &sk);

    let top = params.max_level();
    let x = random_values(1, n, t);
    let y = random_values(2, n, t);
    let z = random_values(3, n, t);
    let cx = ctx.encrypt_pk(&pk, &encoder.encode(&x, top)?)?;
    let cy = ctx.encrypt_pk(&pk, &encoder.encode(&y, top)?)?;
    let pz = encoder.encode(&z, top)?;

    let mut exact = true;
    let mut report = |name: &str, ct: &Ciphertext<AnyBackend>, want: &[u64], secs: f64| {
        let ok = dec.decrypt(ct).map(|v| v == want).unwrap_or(false);
        let budget = dec.noise_budget(ct).unwrap_or(0.0);
        println!(
            "{name:<28} level {:>2}  {:>9.2} ms  budget {budget:>6.1} bits (bound {:>6.1})  {}",
            ct.level(),
            secs * 1e3,
            ct.budget_bound(&ctx),
            if ok { "ok" } else { "WRONG" }
        );
        exact &= ok;
    };

    report("encrypt x", &cx, &x, 0.0);
    let xy = mul_slots(&x, &y, t);
    let c = Instant::now();
    let prod = eval.mul(&cx, &cy)?;
    report(
        "multiply (3 components)",
        &prod,
        &xy,
        c.elapsed().as_secs_f64(),
    );
    let c = Instant::now();
    let relin = eval.relinearize(prod, &rlk)?;
    report("relinearize", &relin, &xy, c.elapsed().as_secs_f64());
    let c = Instant::now();
    let switched = eval.mod_switch(&relin)?;
    report("modulus switch", &switched, &xy, c.elapsed().as_secs_f64());
    let c = Instant::now();
    let fused = eval.mul_relin(&cx, &cy, &rlk)?;
    report(
        "mul+relin+switch (fused)",
        &fused,
        &xy,
        c.elapsed().as_secs_f64(),
    );
    let c = Instant::now();
    let r1 = eval.rotate_rows(&fused, 1, &gk)?;
    report(
        "rotate rows by 1",
        &r1,
        &rotate_rows(&xy, 1),
        c.elapsed().as_secs_f64(),
    );
    let c = Instant::now();
    let r5 = eval.rotate_rows(&fused, 5, &gk)?;
    report(
        "rotate rows by 5",
        &r5,
        &rotate_rows(&xy, 5),
        c.elapsed().as_secs_f64(),
    );
    let c = Instant::now();
    let col = eval.rotate_columns(&fused, &gk)?;
    report(
        "rotate columns",
        &col,
        &swap_rows(&xy),
        c.elapsed().as_secs_f64(),
    );
    let c = Instant::now();
    let mp = eval.mul_plain(&col, &pz)?;
    report(
        "multiply plain",
        &mp,
        &mul_slots(&swap_rows(&xy), &z, t),
        c.elapsed().as_secs_f64(),
    );
    let c = Instant::now();
    let sum = eval.add(&mp, &cx)?;
    let want_sum = zip_with(&mul_slots(&swap_rows(&xy), &z, t), &x, |a, b| (a + b) % t);
    report(
        "add (levels aligned)",
        &sum,
        &want_sum,
        c.elapsed().as_secs_f64(),
    );
    let c = Instant::now();
    let p7 = eval.pow(&cx, 7, &rlk)?;
    let x7 = x
        .iter()
        .map(|&v| (0..7).fold(1, |a, _| mul_mod(a, v, t)))
        .collect::<Vec<_>>();
    report("pow 7", &p7, &x7, c.elapsed().as_secs_f64());

    println!("remaining noise budget: {:.1} bits", dec.noise_budget(&p7)?);
    println!("exact: {exact}");
    Ok(())
}
