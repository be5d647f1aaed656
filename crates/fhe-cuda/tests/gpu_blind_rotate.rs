//! GPU tests of `BlindRotateBackend for CudaBackend`: blind rotation with extraction, key
//! switching and whole programmable bootstrapping give the CPU reference's words, for a batch
//! and for each ciphertext alone, at the insecure test sets (binary and ternary), at
//! `LPF_STD128_556_1024` (3 gadget levels, ternary), at `CLASSIC_918_2048` and with multi-bit
//! keys (`TEST_MULTI_BIT_256_INSECURE`, `MULTI_BIT3_918_2048`); the bootstrapped
//! ciphertexts decrypt to the lookup table's entries; the key switch of samples extracted on
//! the device from RLWE entries. All need a CUDA device and panic without.

use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::RingBackend;
use fhe_math::backend::blind_rotate::{BlindRotateBackend, ExtractionEntries, LweBatchHost};
use fhe_math::sampler::Seed;
use std::sync::{Arc, OnceLock};
use tfhe_switch::*;

/// The first CUDA device's backend for the ring of `params`; panics without a device.
fn backends(params: &Parameters) -> (fhe_math::CpuBackend, CudaBackend) {
    static DEV: OnceLock<Arc<Device>> = OnceLock::new();
    let dev = DEV.get_or_init(|| {
        Device::new(0).unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"))
    });
    let cpu = cpu_backend(params).unwrap();
    let gpu = CudaBackend::new(dev.clone(), Arc::clone(cpu.ring())).unwrap();
    (cpu, gpu)
}

/// Encryptions of `i mod p` for `i < count` (distinct seeds), as one host batch.
fn inputs(ck: &ClientKey, params: &Parameters, count: usize) -> (Vec<u64>, LweBatchHost) {
    let p = params.message_space();
    let msgs: Vec<u64> = (0..count as u64).map(|i| (i * 7 + 3) % p).collect();
    let mut data = Vec::new();
    for (i, &m) in msgs.iter().enumerate() {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&(i as u64 + 1000).to_le_bytes());
        data.extend_from_slice(ck.encrypt(m, &Seed(seed)).unwrap().as_residues());
    }
    let batch = LweBatchHost {
        dimension: params.lwe_dimension,
        modulus: params.q().unwrap(),
        data,
    };
    (msgs, batch)
}

/// One ciphertext of a host batch as a batch of its own.
fn single(b: &LweBatchHost, i: usize) -> LweBatchHost {
    LweBatchHost {
        dimension: b.dimension,
        modulus: b.modulus,
        data: b.get(i).unwrap().to_vec(),
    }
}

/// The whole comparison at `params`: a GPU batch of `count`, the CPU on its first `cpu_count`,
/// `alone` ciphertexts alone on the GPU.
fn compare(params: Parameters, count: usize, cpu_count: usize, alone: usize) {
    let name = params.name;
    let ck = ClientKey::generate(&params, &Seed([21; 32])).unwrap();
    let sk = ck.server_key(&Seed([22; 32])).unwrap();
    let (cpu, gpu) = backends(&params);
    let p = params.message_space();
    let table: Vec<u64> = (0..p).map(|m| (3 * m * m + 5) % p).collect();
    let lut = LookupTable::new(&params, &table).unwrap();
    let tp = lut.test_polynomial();
    let (msgs, host) = inputs(&ck, &params, count);
    let head = LweBatchHost {
        data: host.data[..cpu_count * (host.dimension + 1)].to_vec(),
        ..host.clone()
    };

    let cbk = cpu.upload_bootstrap_key(sk.bootstrap_key()).unwrap();
    let cks = cpu.upload_key_switch_key(sk.key_switch_key()).unwrap();
    let gbk = gpu.upload_bootstrap_key(sk.bootstrap_key()).unwrap();
    let gks = gpu.upload_key_switch_key(sk.key_switch_key()).unwrap();

    // Blind rotation + extraction: the batch, then each of the first `alone` by itself.
    let want = cpu.blind_rotate_extract(&cbk, tp, &head).unwrap();
    let gin = gpu.upload_lwe_batch(&host).unwrap();
    let got = gpu
        .download_lwe_batch(&gpu.blind_rotate_extract(&gbk, tp, &gin).unwrap())
        .unwrap();
    assert_eq!(got.dimension, want.dimension);
    assert_eq!(got.len(), count);
    assert_eq!(
        &got.data[..want.data.len()],
        &want.data[..],
        "{name}: batched blind rotation differs from the CPU"
    );
    for i in 0..alone {
        let one = gpu.upload_lwe_batch(&single(&host, i)).unwrap();
        let out = gpu
            .download_lwe_batch(&gpu.blind_rotate_extract(&gbk, tp, &one).unwrap())
            .unwrap();
        assert_eq!(
            &out.data[..],
            got.get(i).unwrap(),
            "{name}: ciphertext {i} alone differs from the batch"
        );
    }

    // Key switching of the extracted batch.
    let want_ks = cpu.key_switch(&cks, &want).unwrap();
    let gx = gpu.upload_lwe_batch(&got).unwrap();
    let got_ks = gpu
        .download_lwe_batch(&gpu.key_switch(&gks, &gx).unwrap())
        .unwrap();
    assert_eq!(
        &got_ks.data[..want_ks.data.len()],
        &want_ks.data[..],
        "{name}: key switching differs from the CPU"
    );

    // Whole PBS on the GPU: the same words as the two steps, and the table's entries.
    let pbs = gpu
        .download_lwe_batch(&gpu.programmable_bootstrap(&gbk, &gks, tp, &gin).unwrap())
        .unwrap();
    assert_eq!(
        &pbs.data[..want_ks.data.len()],
        &want_ks.data[..],
        "{name}: PBS differs"
    );
    for (i, &m) in msgs.iter().enumerate() {
        let ct = LweCiphertext::from_residues(pbs.modulus, pbs.get(i).unwrap().to_vec()).unwrap();
        assert_eq!(
            ck.decrypt(&ct).unwrap(),
            table[m as usize],
            "{name}: PBS of m = {m} (ciphertext {i})"
        );
    }
    eprintln!("{name}: {count} on the GPU, {cpu_count} on the CPU, {alone} alone: identical");
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_blind_rotate_test_sets_match_cpu() {
    // 200 > the SM count: the batched launch shape; alone: the small-batch shape.
    compare(TEST_256_INSECURE.opt_in_insecure(), 200, 200, 3);
    compare(TEST_TERNARY_256_INSECURE.opt_in_insecure(), 200, 200, 3);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_blind_rotate_mid_batch_matches_cpu() {
    // 64: more ciphertexts than a quarter of the SMs and fewer than the SMs on an H100/H200,
    // the 512-thread launch shape (`blind_rotate_run_wide`).
    compare(TEST_TERNARY_256_INSECURE.opt_in_insecure(), 64, 64, 0);
    compare(CLASSIC_918_2048, 64, 16, 0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_blind_rotate_lpf_matches_cpu() {
    compare(LPF_STD128_556_1024, 160, 32, 2);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_blind_rotate_classic_matches_cpu() {
    compare(CLASSIC_918_2048, 300, 32, 2);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_blind_rotate_multi_bit_matches_cpu() {
    // Batched, mid-batch and alone (the cluster entry) for groups of 3.
    compare(TEST_MULTI_BIT_256_INSECURE.opt_in_insecure(), 200, 200, 3);
    compare(MULTI_BIT3_918_2048, 64, 8, 0);
    compare(MULTI_BIT3_918_2048, 300, 16, 2);
}

/// The key switch of samples extracted from entries on the device
/// (`key_switch_extracted`) gives the CPU's words (there: the host batch of the samples,
/// switched), for a batch of coefficients with repeats and the ends `0`, `N − 1`, and for
/// three alone (the sliced small-batch shape); bad coefficients and entries are refused.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_key_switch_of_extracted_samples_matches_cpu() {
    for params in [TEST_256_INSECURE.opt_in_insecure(), CLASSIC_918_2048] {
        let ck = ClientKey::generate(&params, &Seed([23; 32])).unwrap();
        let sk = ck.server_key(&Seed([24; 32])).unwrap();
        let (cpu, gpu) = backends(&params);
        let host_key = sk.key_switch_key();
        let n = host_key.params.input_dimension;
        let q = host_key.params.modulus;
        // Pseudo-random residues (splitmix64), reduced mod q.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % q.value()
        };
        let entries = ExtractionEntries {
            dimension: n,
            modulus: q,
            words: (0..3 * n).map(|_| next()).collect(),
        };
        let cks = cpu.upload_key_switch_key(host_key).unwrap();
        let gks = gpu.upload_key_switch_key(host_key).unwrap();
        let mut many: Vec<usize> = (0..300).map(|i| (i * 7919) % n).collect();
        many.extend([0, n - 1, n - 1]);
        for coeffs in [many, vec![n - 1, 0, 5]] {
            let want = cpu.key_switch_extracted(&cks, &entries, &coeffs).unwrap();
            let got = gpu
                .download_lwe_batch(&gpu.key_switch_extracted(&gks, &entries, &coeffs).unwrap())
                .unwrap();
            assert_eq!(got, want, "{}: {} coefficients", params.name, coeffs.len());
        }
        assert!(gpu.key_switch_extracted(&gks, &entries, &[n]).is_err());
        let short = ExtractionEntries {
            dimension: n - 1,
            words: entries.words[..3 * (n - 1)].to_vec(),
            ..entries.clone()
        };
        assert!(gpu.key_switch_extracted(&gks, &short, &[0]).is_err());
        let mut big = entries.clone();
        big.words[7] = q.value();
        assert!(gpu.key_switch_extracted(&gks, &big, &[0]).is_err());
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_blind_rotate_rejects_bad_inputs() {
    let params = TEST_256_INSECURE.opt_in_insecure();
    let ck = ClientKey::generate(&params, &Seed([1; 32])).unwrap();
    let sk = ck.server_key(&Seed([2; 32])).unwrap();
    let (_, gpu) = backends(&params);
    let gbk = gpu.upload_bootstrap_key(sk.bootstrap_key()).unwrap();
    let gks = gpu.upload_key_switch_key(sk.key_switch_key()).unwrap();
    let (_, host) = inputs(&ck, &params, 4);
    let gin = gpu.upload_lwe_batch(&host).unwrap();
    // A test polynomial of the wrong length, a batch of the wrong dimension for the key switch.
    assert!(gpu.blind_rotate_extract(&gbk, &[0; 3], &gin).is_err());
    assert!(gpu.key_switch(&gks, &gin).is_err());
    // An empty batch gives an empty batch.
    let empty = gpu
        .upload_lwe_batch(&LweBatchHost {
            data: Vec::new(),
            ..host.clone()
        })
        .unwrap();
    let out = gpu.blind_rotate_extract(&gbk, &[0; 3], &empty).unwrap();
    assert!(gpu.download_lwe_batch(&out).unwrap().is_empty());
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_blind_rotate_spread_over_all_gpus_matches_cpu() {
    // Every visible GPU (one or more) takes a part of the batch; the words are the CPU's.
    let params = TEST_256_INSECURE.opt_in_insecure();
    let ck = ClientKey::generate(&params, &Seed([31; 32])).unwrap();
    let sk = ck.server_key(&Seed([32; 32])).unwrap();
    let cpu = cpu_backend(&params).unwrap();
    let spread = fhe_cuda::Spread::all_gpus(Arc::clone(cpu.ring()))
        .unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
    eprintln!("spread over {} GPU(s)", spread.backends().len());
    let p = params.message_space();
    let lut = LookupTable::from_fn(&params, |m| (5 * m + 1) % p).unwrap();
    let (msgs, host) = inputs(&ck, &params, 301);
    let want = {
        let (bk, kk) = (
            cpu.upload_bootstrap_key(sk.bootstrap_key()).unwrap(),
            cpu.upload_key_switch_key(sk.key_switch_key()).unwrap(),
        );
        cpu.programmable_bootstrap(&bk, &kk, lut.test_polynomial(), &host)
            .unwrap()
    };
    let (bk, kk) = (
        spread.upload_bootstrap_key(sk.bootstrap_key()).unwrap(),
        spread.upload_key_switch_key(sk.key_switch_key()).unwrap(),
    );
    let input = spread.upload_lwe_batch(&host).unwrap();
    let got = spread
        .download_lwe_batch(
            &spread
                .programmable_bootstrap(&bk, &kk, lut.test_polynomial(), &input)
                .unwrap(),
        )
        .unwrap();
    assert_eq!(got, want, "spread PBS differs from the CPU");
    for (i, &m) in msgs.iter().enumerate() {
        let ct = LweCiphertext::from_residues(got.modulus, got.get(i).unwrap().to_vec()).unwrap();
        assert_eq!(ck.decrypt(&ct).unwrap(), lut.table()[m as usize]);
    }
}
