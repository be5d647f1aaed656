//! GPU tests of HEAP bootstrapping: the CUDA backend gives the CPU backend's words — the batched
//! blind rotation (`RnsBlindRotateBackend`) alone, and the whole bootstrap (same seeds for keys
//! and encryption; host work on several threads, and at `N = 2^10` also in one) — and the result
//! decrypts within the model's precision. All need a CUDA device and panic without.

mod common;

use ckks::precision::{InputGenerator, precision_bits, uniform_complex};
use ckks::{Context, Encoder, Parameters};
use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::{BlindRotateBackend, KeySwitchBackend, RingBackend, RnsBlindRotateBackend};
use fhe_math::poly::RnsPoly;
use fhe_math::sampler::Seed;
use heap::{HEAP_N10_INSECURE, HEAP_N13, HeapBootstrapper, HeapKeys, HeapParams, budget};
use num_complex::Complex64;
use rlwe::encrypt;
use std::sync::Arc;

/// Keys, encryption and bootstrap of the same inputs with fixed seeds on `ctx`'s backend:
/// the output words (coefficient form) and the decoded slots.
fn run<B: KeySwitchBackend + RnsBlindRotateBackend + BlindRotateBackend>(
    ctx: &Context<B>,
    hp: &HeapParams,
    z: &[Complex64],
    slots: usize,
    parallel: bool,
) -> (RnsPoly, Vec<Complex64>) {
    let sk = ctx
        .key_generator()
        .secret_key_from_seed(Seed([31; 32]))
        .unwrap();
    let keys = HeapKeys::generate(ctx, hp, &sk, &Seed([32; 32])).unwrap();
    let boot = HeapBootstrapper::new(ctx, hp, keys)
        .unwrap()
        .with_slots(slots)
        .unwrap()
        .with_parallel_rotations(parallel);
    let enc = Encoder::new(ctx).unwrap();
    let pt = enc
        .encode_with(z, 0, ctx.params().scale(0).unwrap(), slots)
        .unwrap();
    let ct = ctx
        .encrypt_sk_with_seeds(&sk, &pt, Seed([33; 32]), &Seed([34; 32]))
        .unwrap();
    let out = boot.heap_bootstrap(&ct).unwrap();
    let be = ctx.backend();
    let mut p = be.duplicate(out.poly()).unwrap();
    be.intt(&mut p).unwrap();
    let words = be.download(&p).unwrap();
    let got = enc
        .decode_slots(&encrypt::decrypt(be, &sk, &out).unwrap(), slots)
        .unwrap();
    (words, got)
}

/// CPU (parallel rotations) against the GPU (parallel, and sequential when `sequential_too`).
fn compare(hp: HeapParams, slots: usize, sequential_too: bool) {
    let params = Parameters::new(&hp.ckks).unwrap();
    let cpu = Context::cpu(params.clone()).unwrap();
    let dev =
        Device::new(0).unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
    let ring = Arc::clone(cpu.backend().ring());
    let gpu = Context::with_backend(params.clone(), CudaBackend::new(dev, ring).unwrap()).unwrap();
    let z = uniform_complex(&mut InputGenerator::new(5), slots);
    let t = std::time::Instant::now();
    let (cw, cz) = run(&cpu, &hp, &z, slots, true);
    let tc = t.elapsed();
    let t = std::time::Instant::now();
    let (gw, gz) = run(&gpu, &hp, &z, slots, true);
    let tg = t.elapsed();
    assert!(
        cw.raw() == gw.raw(),
        "{}: the GPU's output words differ from the CPU's",
        hp.name
    );
    if sequential_too {
        let (sw, _) = run(&gpu, &hp, &z, slots, false);
        assert!(
            cw.raw() == sw.raw(),
            "{}: the GPU's sequential words differ from the CPU's",
            hp.name
        );
    }
    let out = hp.output_level();
    let model = budget(
        &hp,
        params.moduli_q(),
        params.scale(0).unwrap(),
        params.scale(out).unwrap(),
        slots,
    );
    let bits = precision_bits(&gz, &z);
    println!(
        "{} {slots} slots: {bits:.2} bits (model {:.2}), keys+bootstrap CPU {tc:.2?}, GPU {tg:.2?}",
        hp.name, model.precision_max_bits
    );
    assert_eq!(precision_bits(&cz, &z), bits);
    assert!(
        bits >= model.precision_max_bits - 3.0,
        "{bits} bits against {model:?}"
    );
}

/// A CPU context and a context on device 0 over the same ring (same primes and tables).
fn contexts(hp: &HeapParams) -> (Context<fhe_math::cpu::CpuBackend>, Context<CudaBackend>) {
    let params = Parameters::new(&hp.ckks).unwrap();
    let cpu = Context::cpu(params.clone()).unwrap();
    let dev =
        Device::new(0).unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
    let ring = Arc::clone(cpu.backend().ring());
    let gpu = Context::with_backend(params, CudaBackend::new(dev, ring).unwrap()).unwrap();
    (cpu, gpu)
}

/// The batched blind rotation (`RnsBlindRotateBackend`) on the GPU against the CPU reference:
/// the same rows (seeded), test polynomial and batch give the same accumulator words. Also
/// prints the GPU's time per external product for the batch.
fn compare_rotations(hp: HeapParams, dim: usize, count: usize) {
    use common::{rotation_case, row_refs};
    let (cpu, gpu) = contexts(&hp);
    let (g, rows, test, batch) = rotation_case(&cpu, &hp, dim, count);
    let want = cpu
        .backend()
        .rns_blind_rotate(&g, &row_refs(&rows), &test, &batch)
        .unwrap();
    let (gg, grows, gtest, gbatch) = rotation_case(&gpu, &hp, dim, count);
    assert_eq!((gtest.raw(), &gbatch), (test.raw(), &batch));
    let be = gpu.backend();
    be.synchronize().unwrap();
    let t = std::time::Instant::now();
    let got = be
        .rns_blind_rotate(&gg, &row_refs(&grows), &gtest, &gbatch)
        .unwrap();
    let el = t.elapsed();
    println!(
        "{}: {count} blind rotations of {dim} steps on the GPU in {el:.2?} ({:.2} µs per external product)",
        hp.name,
        el.as_secs_f64() * 1e6 / (count * dim) as f64
    );
    assert_eq!(got.len(), want.len());
    for (e, (a, b)) in got.iter().zip(&want).enumerate() {
        assert!(a.raw() == b.raw(), "{}: sample {e} differs", hp.name);
    }
}

/// Blind rotations and the packing in one call (`rns_blind_rotate_packed`: on the GPU the
/// accumulators stay on the device for the packing) against the CPU's reference, with the
/// RGSW rows standing in for the automorphism keys (any rows of the right shape give a
/// comparison of words).
fn compare_packed(hp: HeapParams, dim: usize, count: usize) {
    use common::{rotation_case, row_refs};
    let (cpu, gpu) = contexts(&hp);
    let levels = count.trailing_zeros() as usize;
    let (g, rows, test, batch) = rotation_case(&cpu, &hp, dim, count);
    let pack: Vec<_> = (1..=levels)
        .map(|lv| ((1usize << lv) + 1, rows[lv % dim][lv % 2].refs()))
        .collect();
    let want = cpu
        .backend()
        .rns_blind_rotate_packed(&g, &row_refs(&rows), &test, &batch, &pack)
        .unwrap();
    let (gg, grows, gtest, gbatch) = rotation_case(&gpu, &hp, dim, count);
    let gpack: Vec<_> = (1..=levels)
        .map(|lv| ((1usize << lv) + 1, grows[lv % dim][lv % 2].refs()))
        .collect();
    let got = gpu
        .backend()
        .rns_blind_rotate_packed(&gg, &row_refs(&grows), &gtest, &gbatch, &gpack)
        .unwrap();
    assert!(
        got.raw() == want.raw(),
        "{}: the packed words differ",
        hp.name
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_rns_blind_rotate_packed_matches_cpu() {
    compare_packed(HEAP_N10_INSECURE, 6, 64);
    compare_packed(HEAP_N13, 2, 1024);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_rns_blind_rotate_matches_cpu() {
    compare_rotations(HEAP_N10_INSECURE, 32, 70);
    compare_rotations(HEAP_N13, 4, 1024);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_heap_matches_cpu_n10() {
    compare(HEAP_N10_INSECURE, 8, true);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_heap_matches_cpu_n13_one_slot() {
    compare(HEAP_N13, 1, false);
}

/// The blind rotations spread over one bootstrapper per entry of `devices` (a CUDA device
/// ordinal each; keys from the same seed) give the CPU's words: bootstrapper `w` takes the
/// coefficients `w, w + g, …` and packs them on its device, the first merges the packs.
fn spread_matches_cpu(devices: &[usize]) {
    let hp = HEAP_N10_INSECURE;
    let slots = 16;
    let params = Parameters::new(&hp.ckks).unwrap();
    let cpu = Context::cpu(params.clone()).unwrap();
    let ring = Arc::clone(cpu.backend().ring());
    let gpus: Vec<Context<CudaBackend>> = devices
        .iter()
        .map(|&i| {
            let dev = Device::new(i)
                .unwrap_or_else(|e| panic!("CUDA device {i} is required for this gpu_* test: {e}"));
            Context::with_backend(params.clone(), CudaBackend::new(dev, ring.clone()).unwrap())
                .unwrap()
        })
        .collect();
    let z = uniform_complex(&mut InputGenerator::new(6), slots);
    let (cw, _) = run(&cpu, &hp, &z, slots, true);
    let boot = |ctx: &Context<CudaBackend>| {
        let sk = ctx
            .key_generator()
            .secret_key_from_seed(Seed([31; 32]))
            .unwrap();
        let keys = HeapKeys::generate(ctx, &hp, &sk, &Seed([32; 32])).unwrap();
        let b = HeapBootstrapper::new(ctx, &hp, keys)
            .unwrap()
            .with_slots(slots)
            .unwrap();
        (sk, b)
    };
    let workers: Vec<_> = gpus.iter().map(boot).collect();
    let (sk, first) = &workers[0];
    let helpers: Vec<&HeapBootstrapper<CudaBackend>> = workers[1..].iter().map(|w| &w.1).collect();
    let enc = Encoder::new(&gpus[0]).unwrap();
    let pt = enc
        .encode_with(&z, 0, params.scale(0).unwrap(), slots)
        .unwrap();
    let ct = gpus[0]
        .encrypt_sk_with_seeds(sk, &pt, Seed([33; 32]), &Seed([34; 32]))
        .unwrap();
    let t = std::time::Instant::now();
    let out = first.heap_bootstrap_spread(&ct, &helpers).unwrap();
    println!(
        "{} {slots} slots on devices {devices:?}: {:.2?}",
        hp.name,
        t.elapsed()
    );
    let be = gpus[0].backend();
    let mut p = be.duplicate(out.poly()).unwrap();
    be.intt(&mut p).unwrap();
    assert!(
        be.download(&p).unwrap().raw() == cw.raw(),
        "the spread over devices {devices:?} differs from the CPU"
    );
}

/// Two GPUs, one bootstrapper each. Needs two CUDA devices: on a one-GPU machine it fails,
/// never passes (`--skip two_devices` leaves it out there).
#[test]
#[ignore = "needs two CUDA devices"]
fn gpu_heap_spread_over_two_devices_matches_cpu() {
    spread_matches_cpu(&[0, 1]);
}

/// Two and four bootstrappers, each with its own backend (context handle and stream) on the
/// first device: the strided shares and the merge on the device code path, where one GPU is
/// all there is.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_heap_spread_over_bootstrappers_on_one_device_matches_cpu() {
    spread_matches_cpu(&[0, 0]);
    spread_matches_cpu(&[0, 0, 0, 0]);
}
