//! Programmable bootstrapping (TFHE-style): a 4-bit lookup table applied to every possible
//! input at the `CLASSIC_918_2048` set (tfhe-rs's classic shape over a 50-bit prime), checked
//! against the table on plaintexts.
//!
//! Run with `cargo run --release --example pbs_basics` (`-- std128` runs the latency set
//! `LPF_STD128_556_1024` with its 1-bit table instead). The backend is `AnyBackend::auto`: the GPU
//! when one is usable (the fused blind-rotation kernels of fhe-cuda, the CPU's words), else the
//! CPU; `FHE_BACKEND=cpu` forces the CPU. The last line is `correct: true` only when every
//! bootstrapped result decrypts to the table's entry.

use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::RingBackend;
use gpufhe::math::sampler::Seed;
use gpufhe::tfhe::{
    Bootstrapper, CLASSIC_918_2048, ClientKey, LPF_STD128_556_1024, LookupTable, cpu_backend,
};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let latency = std::env::args().any(|a| a == "std128");
    let params = if latency {
        LPF_STD128_556_1024
    } else {
        CLASSIC_918_2048
    };
    println!(
        "{}: LWE n = {} ({:?}), N = {}, k = {}, q = {} ({} bits), PBS gadget 2^{} x {}, \
         KS gadget 2^{} x {}, {}-bit messages",
        params.name,
        params.lwe_dimension,
        params.lwe_secret,
        params.ring_degree,
        params.glwe_dimension,
        params.modulus,
        64 - params.modulus.leading_zeros(),
        params.pbs_gadget.base_log,
        params.pbs_gadget.levels,
        params.ks_gadget.base_log,
        params.ks_gadget.levels,
        params.message_bits,
    );
    println!(
        "failure probability per PBS <= 2^{:.1}",
        params.log2_failure_probability()
    );
    // The ring of the CPU backend (q and one special prime) serves both sides.
    let ring = cpu_backend(&params)?.ring().clone();
    let (backend, why_cpu) = AnyBackend::auto_explained(ring);
    match (&backend, why_cpu) {
        (AnyBackend::Cuda(b), _) => println!("backend: GPU ({})", b.device().name()),
        (_, Some(e)) => println!(
            "backend: CPU ({} rayon threads; no GPU: {e})",
            rayon_threads()
        ),
        _ => println!("backend: CPU ({} rayon threads)", rayon_threads()),
    }

    let clock = Instant::now();
    let client = ClientKey::generate_random(&params)?;
    let server = client.server_key(&Seed::random())?;
    let boot = Bootstrapper::new(&backend, &server)?;
    println!("key generation: {:.2} s", clock.elapsed().as_secs_f64());

    // A non-linear table: m -> (7 m + 3) XOR (m >> 1), reduced to the message space.
    let p = params.message_space();
    let lut = LookupTable::from_fn(&params, |m| ((7 * m + 3) ^ (m >> 1)) % p)?;
    let inputs: Vec<u64> = (0..p).collect();
    let cts = inputs
        .iter()
        .map(|&m| client.encrypt_random(m))
        .collect::<Result<Vec<_>, _>>()?;

    // One at a time (latency), then all inputs as one batch (one launch on the GPU, rayon over
    // the batch on the CPU).
    let clock = Instant::now();
    let single = boot.bootstrap(&lut, &cts[..1])?;
    let alone = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let batch = boot.bootstrap(&lut, &cts)?;
    let batched = clock.elapsed().as_secs_f64();
    println!("one PBS alone: {:.1} ms", alone * 1e3);
    println!(
        "batch of {}: {:.1} ms, {:.1} ms per PBS",
        cts.len(),
        batched * 1e3,
        batched * 1e3 / cts.len() as f64
    );

    let mut correct = single[0].as_residues() == batch[0].as_residues();
    for (&m, ct) in inputs.iter().zip(&batch) {
        let got = client.decrypt(ct)?;
        let want = lut.table()[m as usize];
        println!("f({m:2}) = {got:2} (expected {want:2})");
        correct &= got == want;
    }
    println!("correct: {correct}");
    Ok(())
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
