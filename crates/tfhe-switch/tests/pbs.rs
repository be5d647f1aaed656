//! Bootstrapping on the CPU backend at the insecure test sets.

use fhe_math::NttTable;
use fhe_math::backend::blind_rotate::{
    BlindRotateBackend, Gadget, LweBatchHost, cmux, external_product,
};
use fhe_math::sampler::Seed;
use proptest::prelude::*;
use tfhe_switch::glwe::encrypt_rgsw;
use tfhe_switch::lwe::{decode, encode};
use tfhe_switch::serialize::*;
use tfhe_switch::*;

fn setup(params: Parameters) -> (ClientKey, ServerKey) {
    let ck = ClientKey::generate(&params, &Seed([11; 32])).unwrap();
    let sk = ck.server_key(&Seed([12; 32])).unwrap();
    (ck, sk)
}

fn test_params() -> Parameters {
    TEST_256_INSECURE.opt_in_insecure()
}

fn lut_table(p: u64) -> Vec<u64> {
    // A non-linear, non-monotone table: (3 m^2 + 5) mod p.
    (0..p).map(|m| (3 * m * m + 5) % p).collect()
}

#[test]
fn external_product_and_cmux_select() {
    let params = test_params();
    let (ck, _) = setup(params);
    let br = params.blind_rotate_params().unwrap();
    let ntt = NttTable::new(br.modulus, br.ring_degree).unwrap();
    let q = br.modulus.value();
    let p = params.message_space();
    let n = params.ring_degree;
    let msg = |shift: u64| -> Vec<u64> {
        (0..n as u64)
            .map(|i| encode((i + shift) % p, p, q))
            .collect()
    };
    let (m0, m1) = (msg(0), msg(5));
    let g = ck.glwe_key();
    let c0 = g
        .encrypt(&ntt, &m0, params.glwe_noise_bound, &Seed([1; 32]), 0)
        .unwrap();
    let c1 = g
        .encrypt(&ntt, &m1, params.glwe_noise_bound, &Seed([2; 32]), 0)
        .unwrap();
    let decoded = |ct: &[u64]| -> Vec<u64> {
        g.phase(&ntt, ct)
            .unwrap()
            .iter()
            .map(|&x| decode(x, p, q))
            .collect()
    };
    let expect = |m: &[u64]| -> Vec<u64> { m.iter().map(|&x| decode(x, p, q)).collect() };
    let mut out = vec![0u64; c0.len()];
    for bit in [0i64, 1] {
        let rgsw = encrypt_rgsw(g, &br, bit, params.glwe_noise_bound, &Seed([3; 32]), 0).unwrap();
        external_product(&br, &ntt, &rgsw, &c1, &mut out).unwrap();
        let want = if bit == 1 { expect(&m1) } else { vec![0; n] };
        assert_eq!(decoded(&out), want, "external product with RGSW({bit})");
        cmux(&br, &ntt, &rgsw, &c0, &c1, &mut out).unwrap();
        let want = if bit == 1 { expect(&m1) } else { expect(&m0) };
        assert_eq!(decoded(&out), want, "CMux with RGSW({bit})");
    }
}

fn blind_rotation_gives_every_entry(params: Parameters) {
    let (ck, sk) = setup(params);
    let backend = cpu_backend(&params).unwrap();
    let boot = Bootstrapper::new(&backend, &sk).unwrap();
    let p = params.message_space();
    let lut = LookupTable::new(&params, &lut_table(p)).unwrap();
    let cts: Vec<_> = (0..p)
        .map(|m| ck.encrypt(m, &Seed([m as u8 + 40; 32])).unwrap())
        .collect();
    let extracted = boot.blind_rotate_extract(&lut, &cts).unwrap();
    for (m, ct) in extracted.iter().enumerate() {
        assert_eq!(ct.dimension(), params.ring_degree * params.glwe_dimension);
        assert_eq!(
            ck.decrypt(ct).unwrap(),
            lut.table()[m],
            "{}: m = {m}",
            params.name
        );
    }
    let out = boot.bootstrap(&lut, &cts).unwrap();
    for (m, ct) in out.iter().enumerate() {
        assert_eq!(ct.dimension(), params.lwe_dimension);
        assert_eq!(
            ck.decrypt(ct).unwrap(),
            lut.table()[m],
            "{}: PBS of m = {m}",
            params.name
        );
    }
    // Bootstrapping the outputs again applies the table a second time.
    let twice = boot.bootstrap(&lut, &out).unwrap();
    for (m, ct) in twice.iter().enumerate() {
        let want = lut.table()[lut.table()[m] as usize];
        assert_eq!(
            ck.decrypt(ct).unwrap(),
            want,
            "{}: PBS twice of m = {m}",
            params.name
        );
    }
}

#[test]
fn blind_rotation_and_pbs_binary_4_bits() {
    blind_rotation_gives_every_entry(test_params());
}

#[test]
fn blind_rotation_and_pbs_ternary_3_bits() {
    blind_rotation_gives_every_entry(TEST_TERNARY_256_INSECURE.opt_in_insecure());
}

#[test]
fn blind_rotation_and_pbs_multi_bit_4_bits() {
    blind_rotation_gives_every_entry(TEST_MULTI_BIT_256_INSECURE.opt_in_insecure());
}

#[test]
fn key_switching_decrypts() {
    let params = test_params();
    let (ck, sk) = setup(params);
    let backend = cpu_backend(&params).unwrap();
    let boot = Bootstrapper::new(&backend, &sk).unwrap();
    let big = ck.glwe_key().extracted_lwe_key();
    let p = params.message_space();
    let cts: Vec<_> = (0..p)
        .map(|m| {
            big.encrypt_raw(
                encode(m, p, params.modulus),
                params.lwe_noise_bound,
                &params.q().unwrap(),
                &Seed([m as u8; 32]),
            )
        })
        .collect();
    let switched = boot.key_switch(&cts).unwrap();
    for (m, ct) in switched.iter().enumerate() {
        assert_eq!(ct.dimension(), params.lwe_dimension);
        assert_eq!(ck.lwe_key().decrypt(&params, ct).unwrap(), m as u64);
    }
}

#[test]
fn batch_equals_one_by_one() {
    let params = test_params();
    let (ck, sk) = setup(params);
    let backend = cpu_backend(&params).unwrap();
    let boot = Bootstrapper::new(&backend, &sk).unwrap();
    let lut = LookupTable::from_fn(&params, |m| m ^ 5).unwrap();
    let cts: Vec<_> = (0..9)
        .map(|i| ck.encrypt(i % 16, &Seed([i as u8 + 100; 32])).unwrap())
        .collect();
    let batch = boot.bootstrap(&lut, &cts).unwrap();
    for (ct, b) in cts.iter().zip(&batch) {
        let one = boot.bootstrap(&lut, std::slice::from_ref(ct)).unwrap();
        assert_eq!(one[0].as_residues(), b.as_residues());
    }
    // An empty batch gives an empty result.
    assert!(boot.bootstrap(&lut, &[]).unwrap().is_empty());
}

#[test]
fn backend_refuses_mismatched_inputs() {
    let params = test_params();
    let (_, sk) = setup(params);
    let backend = cpu_backend(&params).unwrap();
    let bsk = backend.upload_bootstrap_key(sk.bootstrap_key()).unwrap();
    let q = params.q().unwrap();
    let wrong_dim = LweBatchHost {
        dimension: 3,
        modulus: q,
        data: vec![1; 8],
    };
    let batch = backend.upload_lwe_batch(&wrong_dim).unwrap();
    let poly = vec![0u64; params.ring_degree];
    assert!(backend.blind_rotate_extract(&bsk, &poly, &batch).is_err());
    let not_reduced = LweBatchHost {
        dimension: 3,
        modulus: q,
        data: vec![q.value(); 4],
    };
    assert!(backend.upload_lwe_batch(&not_reduced).is_err());
    let ragged = LweBatchHost {
        dimension: 3,
        modulus: q,
        data: vec![0; 5],
    };
    assert!(backend.upload_lwe_batch(&ragged).is_err());
    let mut bad_key = sk.bootstrap_key().clone();
    bad_key.data.pop();
    assert!(backend.upload_bootstrap_key(&bad_key).is_err());
}

#[test]
fn lookup_tables_are_checked() {
    let params = test_params();
    assert!(matches!(
        LookupTable::new(&params, &[0; 15]),
        Err(Error::InvalidLookupTable { .. })
    ));
    let mut t = vec![0; 16];
    t[3] = 16;
    assert!(matches!(
        LookupTable::new(&params, &t),
        Err(Error::InvalidLookupTable { .. })
    ));
}

#[test]
fn serialization_round_trips_and_refuses_malformed_blobs() {
    let params = test_params();
    let (ck, sk) = setup(params);
    let ct = ck.encrypt(7, &Seed([5; 32])).unwrap();

    let bytes = ciphertext_to_bytes(&params, &ct).unwrap();
    assert_eq!(ciphertext_from_bytes(&params, &bytes).unwrap(), ct);
    let skb = server_key_to_bytes(&sk).unwrap();
    assert_eq!(server_key_from_bytes(&params, &skb).unwrap(), sk);
    let ckb = client_key_to_bytes(&ck).unwrap();
    let ck2 = client_key_from_bytes(&params, &ckb).unwrap();
    assert_eq!(ck2.lwe_key(), ck.lwe_key());
    assert_eq!(ck2.glwe_key(), ck.glwe_key());

    let refused = |r: Result<()>| matches!(r, Err(Error::Malformed { .. }));
    let ct_load = |b: &[u8]| ciphertext_from_bytes(&params, b).map(|_| ());
    // Header damage.
    for i in 0..7 {
        let mut b = bytes.clone();
        b[i] ^= 0x40;
        assert!(refused(ct_load(&b)), "header byte {i}");
    }
    // Truncation and trailing bytes.
    assert!(refused(ct_load(&bytes[..bytes.len() - 1])));
    assert!(refused(ct_load(&bytes[..3])));
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(refused(ct_load(&longer)));
    // A residue not below q (the last word is the body).
    let mut b = bytes.clone();
    let at = b.len() - 8;
    b[at..].copy_from_slice(&params.modulus.to_le_bytes());
    assert!(refused(ct_load(&b)));
    // A forged vector length.
    let mut b = bytes.clone();
    b[15] = 0x7f;
    assert!(refused(ct_load(&b)));
    // Another parameter set's fingerprint.
    let other = TEST_TERNARY_256_INSECURE.opt_in_insecure();
    assert!(matches!(
        ciphertext_from_bytes(&other, &bytes),
        Err(Error::Malformed { .. })
    ));
    // Server key: a residue not below q, truncation, another kind.
    let mut b = skb.clone();
    b[7 + 8 + 8..7 + 8 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        server_key_from_bytes(&params, &b),
        Err(Error::Malformed { .. })
    ));
    assert!(matches!(
        server_key_from_bytes(&params, &skb[..skb.len() - 8]),
        Err(Error::Malformed { .. })
    ));
    assert!(matches!(
        server_key_from_bytes(&params, &bytes),
        Err(Error::Malformed { .. })
    ));
    // Client key: a coefficient outside the binary support.
    let mut b = ckb.to_vec();
    b[7 + 8 + 8..7 + 8 + 16].copy_from_slice(&2i64.to_le_bytes());
    assert!(matches!(
        client_key_from_bytes(&params, &b),
        Err(Error::Malformed { .. })
    ));
}

#[test]
fn insecure_sets_need_the_opt_in() {
    assert!(matches!(
        ClientKey::generate(&TEST_256_INSECURE, &Seed([0; 32])),
        Err(Error::InsecureWithoutOptIn { .. })
    ));
}

#[test]
fn keys_are_deterministic_in_the_seed() {
    let params = test_params();
    let (ck1, sk1) = setup(params);
    let (ck2, sk2) = setup(params);
    assert_eq!(ck1.lwe_key(), ck2.lwe_key());
    assert_eq!(sk1, sk2);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn decomposition_recomposes_for_the_sets_gadgets(x in any::<u64>(), which in 0usize..6) {
        let sets = [CLASSIC_918_2048, LPF_STD128_556_1024, TEST_256_INSECURE];
        let p = sets[which / 2];
        let g: Gadget = if which % 2 == 0 { p.pbs_gadget } else { p.ks_gadget };
        let q = p.modulus;
        let x = x % q;
        let mut d = vec![0i64; g.levels as usize];
        g.decompose(x, q, &mut d);
        let half = 1i64 << (g.base_log - 1);
        prop_assert!(d.iter().all(|&v| (-half..half).contains(&v)));
        let sum: i128 = g.values(q).iter().zip(&d).map(|(&v, &di)| i128::from(v) * i128::from(di)).sum();
        let r = (sum - i128::from(x)).rem_euclid(i128::from(q));
        let err = r.min(i128::from(q) - r);
        let bound = (i128::from(q) >> (g.base_log * g.levels + 1)) + i128::from(g.levels) * (1i128 << g.base_log) / 4 + 1;
        prop_assert!(err <= bound);
        // Exactly: the digits are the signed base-B representation of round(x B^l / q) mod B^l.
        let bits = g.base_log * g.levels;
        let y = ((u128::from(x) << bits) + u128::from(q / 2)) / u128::from(q) % (1u128 << bits);
        let mut r = 0i128;
        for &di in &d { r = (r << g.base_log) + i128::from(di); }
        prop_assert_eq!(r.rem_euclid(1i128 << bits) as u128, y);
    }
}

#[test]
fn measured_noise_is_within_the_model() {
    measured_noise_is_within_the_model_of(test_params());
}

#[test]
fn measured_multi_bit_noise_is_within_the_model() {
    measured_noise_is_within_the_model_of(TEST_MULTI_BIT_256_INSECURE.opt_in_insecure());
}

fn measured_noise_is_within_the_model_of(params: Parameters) {
    // The output noise of a bootstrap (after key switching) against the variance the failure
    // probability is computed from: the model is an upper bound (it counts the rounding term of
    // every step, while only those with a selecting key carry it), so the measurement lies
    // below it, and not far below.
    let (ck, sk) = setup(params);
    let backend = cpu_backend(&params).unwrap();
    let boot = Bootstrapper::new(&backend, &sk).unwrap();
    let lut = LookupTable::from_fn(&params, |m| m).unwrap();
    let p = params.message_space();
    let cts: Vec<_> = (0..256u64)
        .map(|i| {
            ck.encrypt(
                i % p,
                &Seed([
                    (i % 251) as u8,
                    (i / 251) as u8,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                    9,
                ]),
            )
            .unwrap()
        })
        .collect();
    let out = boot.bootstrap(&lut, &cts).unwrap();
    let q = params.q().unwrap();
    let mut sum_sq = 0f64;
    for (i, ct) in out.iter().enumerate() {
        let phase = ck.lwe_key().phase(ct).unwrap();
        let err = q.center(q.sub(phase, encode(i as u64 % p, p, q.value())));
        sum_sq += (err as f64).powi(2);
    }
    let measured = sum_sq / out.len() as f64;
    let model = params.blind_rotation_variance() + params.key_switch_variance();
    println!(
        "{}: output noise variance: measured {measured:.3e}, model {model:.3e}",
        params.name
    );
    assert!(
        measured < model,
        "measured {measured:.3e} above the model {model:.3e}"
    );
    assert!(
        measured > model / 8.0,
        "measured {measured:.3e} far below the model {model:.3e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn damaged_blobs_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4), cut in any::<usize>()) {
        let params = test_params();
        let ck = ClientKey::generate(&params, &Seed([21; 32])).unwrap();
        let ct = ck.encrypt(3, &Seed([22; 32])).unwrap();
        let blobs = [ciphertext_to_bytes(&params, &ct).unwrap(), client_key_to_bytes(&ck).unwrap().to_vec()];
        for (which, blob) in blobs.iter().enumerate() {
            let mut b = blob.clone();
            for &(at, x) in &flips {
                let i = at % b.len();
                b[i] ^= x | 1;
            }
            let truncated = &blob[..cut % blob.len()];
            for bytes in [&b[..], truncated] {
                // Loading returns an error or a value, never panics.
                let _ = if which == 0 {
                    ciphertext_from_bytes(&params, bytes).map(|_| ())
                } else {
                    client_key_from_bytes(&params, bytes).map(|_| ())
                };
            }
            let truncated_refused = if which == 0 {
                ciphertext_from_bytes(&params, truncated).is_err()
            } else {
                client_key_from_bytes(&params, truncated).is_err()
            };
            prop_assert!(truncated_refused);
        }
    }
}
