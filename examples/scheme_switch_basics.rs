//! Scheme switching: two CKKS vectors compared slot by slot through LWE and back.
//!
//! The slots of `a − b` go to LWE ciphertexts under the PBS key (SlotToCoeff, the ring key
//! switch to the subring secret, extraction, the PBS's key switch), a step table `[x > 0]` is
//! applied by programmable bootstrapping at `CLASSIC_918_2048`, and the bits come back into
//! CKKS slots by homomorphic decryption and a sine. Checked against the comparison on
//! plaintext; the last line is `correct: true` only when every slot is within 0.05 of its bit (measured: below 10^-2).
//!
//! Run with `cargo run --release --example scheme_switch_basics`: a CI-sized, **insecure**
//! CKKS ring (`N = 2^11`, 32 slots) so that it finishes on a CPU in seconds; `-- n16` runs the
//! production shape (`N = 2^16`, 128-bit chain `N16_L24_D3`, 4096 slots; needs a GPU to be
//! quick). The backend is `AnyBackend::auto` (`FHE_BACKEND=cpu` forces the CPU).

use gpufhe::ckks::{Context, Parameters};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::fft::Complex64;
use gpufhe::math::sampler::Seed;
use gpufhe::tfhe::ClientKey;
use gpufhe::tfhe::scheme_switch::{
    CKKS_SWITCH_N16, CKKS_SWITCH_TEST_INSECURE, SWITCH_CLASSIC, SchemeSwitch, SwitchKeys,
};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let big = std::env::args().any(|a| a == "n16");
    let (literal, slots) = if big {
        (CKKS_SWITCH_N16, 4096)
    } else {
        (CKKS_SWITCH_TEST_INSECURE, 32)
    };
    let params = SWITCH_CLASSIC;
    let ckks_params = Parameters::new(&literal)?;
    let ring = gpufhe::ckks::context::ring_for(&ckks_params)?;
    let (backend, why_cpu) = AnyBackend::auto_explained(ring);
    match (&backend, why_cpu) {
        (AnyBackend::Cuda(b), _) => println!("backend: GPU ({})", b.device().name()),
        (_, Some(e)) => println!("backend: CPU (no GPU: {e})"),
        _ => println!("backend: CPU"),
    }
    println!(
        "CKKS N = 2^{}, {} levels, {slots} slots; PBS {} (n = {}, N = {}, {}-bit messages)",
        literal.log_n,
        literal.levels,
        params.tfhe.name,
        params.tfhe.lwe_dimension,
        params.tfhe.ring_degree,
        params.tfhe.message_bits
    );
    let ctx = Context::with_backend(ckks_params.clone(), backend)?;

    let clock = Instant::now();
    let sk = ctx.key_generator().secret_key()?;
    let client = ClientKey::generate_random(&params.tfhe)?;
    let keys = SwitchKeys::generate(&ctx, &sk, &client, &params, slots, &Seed::random())?;
    let sw = SchemeSwitch::new(&ctx, &keys)?;
    let bytes = keys.bytes(&ctx);
    println!(
        "keys: {:.2} s, {:.1} MB (rotation {:.1}, ring key {:.1}, bootstrapping {:.1}, LWE key switch {:.1})",
        clock.elapsed().as_secs_f64(),
        bytes.total as f64 / 1e6,
        bytes.rotation_keys as f64 / 1e6,
        bytes.ring_key as f64 / 1e6,
        bytes.bootstrap_key as f64 / 1e6,
        bytes.lwe_key_switch as f64 / 1e6
    );

    // Two vectors in [−1, 1] whose differences stay at least 0.2 from 0 (the gap is
    // 2/14 ≈ 0.14 at 4-bit messages).
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let a: Vec<f64> = (0..slots).map(|_| 2.0 * next() - 1.0).collect();
    let b: Vec<f64> = a
        .iter()
        .map(|&x| {
            let d = 0.2 + 0.6 * next();
            if (x > 0.0) == (next() < 0.7) {
                x - d
            } else {
                x + d
            }
            .clamp(-1.0, 1.0)
        })
        .collect();
    let encrypt = |v: &[f64]| -> Result<_, Box<dyn std::error::Error>> {
        let z: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        let top = ckks_params.max_level();
        let pt = sw
            .evaluator()
            .encoder()
            .encode_with(&z, top, ckks_params.scale(top)?, slots)?;
        Ok(ctx.encrypt_sk(&sk, &pt)?)
    };
    let (ca, cb) = (encrypt(&a)?, encrypt(&b)?);

    // The comparison's stages, timed one by one (what `ckks_compare` does).
    let eval = sw.evaluator();
    let clock = Instant::now();
    let d = eval.sub(&ca, &cb)?;
    let enc = gpufhe::tfhe::scheme_switch::LweEncoding::sign(params.tfhe.message_space(), 2.0)?;
    let lwes = sw.switch_to_lwe(&d, &enc)?;
    let t_lwe = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let bits = sw.apply_lut(&lwes, &sw.step_table()?)?;
    let t_pbs = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let out = sw.switch_to_ckks(&bits)?;
    let t_back = clock.elapsed().as_secs_f64();
    let total = t_lwe + t_pbs + t_back;
    println!(
        "compare {slots} slots: {:.3} s ({:.1} us per slot): to LWE {:.0}%, PBS {:.0}%, back to CKKS {:.0}%",
        total,
        total * 1e6 / slots as f64,
        100.0 * t_lwe / total,
        100.0 * t_pbs / total,
        100.0 * t_back / total
    );

    let pt = ctx.decrypt(&sk, &out)?;
    let got = sw.evaluator().encoder().decode_slots(&pt, slots)?;
    let mut worst = 0f64;
    let mut correct = true;
    for j in 0..slots {
        let want = f64::from(u8::from(a[j] > b[j]));
        let err = (got[j].re - want).abs();
        worst = worst.max(err);
        if err >= 0.05 {
            correct = false;
            println!(
                "slot {j}: a = {:.4}, b = {:.4}, got {:.4}",
                a[j], b[j], got[j].re
            );
        }
    }
    let agree = (0..slots)
        .filter(|&j| (got[j].re > 0.5) == (a[j] > b[j]))
        .count();
    println!(
        "slots agreeing with a > b on plaintext: {agree}/{slots}; largest distance to the bit {worst:.2e}"
    );
    println!("output level {}", out.level());
    println!("correct: {correct}");
    Ok(())
}
