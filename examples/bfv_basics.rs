//! The BFV pipeline at the `CAT` shape (N = 2^15, 17 ciphertext primes of 60 + 16 × 40 bits,
//! 3 special primes, dnum 6, t = 65537): key generation, public-key encryption, multiply (tensor
//! with integer-only scale-and-round), relinearize, rotate rows and columns, decrypt, printing
//! the remaining noise budget of every step (measured exactly, and the analytic bound).
//!
//! Run with `cargo run --release --example bfv_basics`. The last line is `exact: true` only
//! when every decrypted result equals the same computation on plaintext mod t.

use gpufhe::bfv::RowRotations;
use gpufhe::bfv::{Ciphertext, Context, Decryptor, Evaluator, params};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::prelude::*;
use std::time::Instant;
use test_support::{mul_slots, random_values, rotate_rows, swap_rows};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let params = params::new(&params::CAT)?;
    let (n, t) = (params.n(), params.t());
    println!(
        "BFV at CAT: N = {n}, {} + {} primes, dnum {}, log2 QP = {:.1}, t = {t}",
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
    println!(
        "scale-and-round: {} auxiliary primes of 60 bits",
        ctx.tables().aux_moduli().len()
    );
    let encoder = ctx.encoder();
    let eval = Evaluator::new(&ctx);
    let clock = Instant::now();
    let keygen = ctx.key_generator();
    let sk = keygen.secret_key()?;
    let pk = keygen.public_key(&sk)?;
    let rlk = keygen.relin_key(&sk)?;
    let gk = keygen.galois_keys(&sk, &eval.galois_elements(&[1, 5], true)?)?;
    println!("keys: {:.2?}", clock.elapsed());
    let dec = Decryptor::new(&ctx, &sk);

    let top = ctx.level();
    let x = random_values(1, n, t);
    let y = random_values(2, n, t);
    let cx = ctx.encrypt_pk(&pk, &encoder.encode(&x, top)?)?;
    let cy = ctx.encrypt_pk(&pk, &encoder.encode(&y, top)?)?;

    let mut exact = true;
    let mut report = |name: &str, ct: &Ciphertext<AnyBackend>, want: &[u64], secs: f64| {
        let ok = dec.decrypt(ct).map(|v| v == want).unwrap_or(false);
        let budget = dec.noise_budget(ct).unwrap_or(0.0);
        println!(
            "{name:<24} {:>9.2} ms  budget {budget:>6.1} bits (bound {:>6.1})  {}",
            secs * 1e3,
            ctx.noise().capacity() - ct.noise_bits(),
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
    let r1 = eval.rotate_rows(&relin, 1, &gk)?;
    report(
        "rotate rows by 1",
        &r1,
        &rotate_rows(&xy, 1),
        c.elapsed().as_secs_f64(),
    );
    let c = Instant::now();
    let r5 = eval.rotate_rows(&relin, 5, &gk)?;
    report(
        "rotate rows by 5",
        &r5,
        &rotate_rows(&xy, 5),
        c.elapsed().as_secs_f64(),
    );
    let c = Instant::now();
    let col = eval.rotate_columns(&relin, &gk)?;
    report(
        "rotate columns",
        &col,
        &swap_rows(&xy),
        c.elapsed().as_secs_f64(),
    );
    let c = Instant::now();
    let sq = eval.square_relin(&relin, &rlk)?;
    let xy2 = mul_slots(&xy, &xy, t);
    report("square + relinearize", &sq, &xy2, c.elapsed().as_secs_f64());
    println!("remaining noise budget: {:.1} bits", dec.noise_budget(&sq)?);
    println!("exact: {exact}");
    Ok(())
}
