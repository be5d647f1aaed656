use super::*;
use crate::encrypt;
use crate::wire::{FORMAT_VERSION, MAGIC};
use fhe_math::backend::RingBackend;
use fhe_math::cpu::CpuBackend;
use fhe_math::primes::ntt_primes;
use proptest::prelude::*;

const FP: u64 = 0x0123_4567_89ab_cdef;
const OTHER_FP: u64 = 0xfeed_f00d;

/// A ring of degree `n` with `q` ciphertext primes of 50 bits, 2 special primes of 55 bits and
/// one prime per digit.
fn backend(n: usize, q: usize) -> CpuBackend {
    let two_n = 2 * n as u64;
    let qs = ntt_primes(50, two_n, q, &[]).unwrap();
    let ps = ntt_primes(55, two_n, 2, &[]).unwrap();
    let digits = (0..q).map(|i| i..i + 1).collect();
    CpuBackend::new(RingContext::new(n, &qs, &ps, digits).unwrap())
}

fn seed(b: u8) -> Seed {
    Seed([b; 32])
}

/// A plaintext (NTT form) of small pseudo-random integers at `level`.
fn plaintext(be: &CpuBackend, level: usize, salt: u64) -> Plaintext<CpuBackend> {
    let ring = be.ring();
    let mut host = ring
        .zeros(Shape {
            components: 1,
            level,
            extended: false,
        })
        .unwrap();
    let vals: Vec<i64> = (0..ring.n() as u64)
        .map(|i| ((i.wrapping_mul(2654435761).wrapping_add(salt) >> 7) % 2001) as i64 - 1000)
        .collect();
    for s in 0..=level {
        let m = ring.modulus(s);
        for (d, &v) in host.limb_mut(0, s).iter_mut().zip(&vals) {
            *d = m.reduce_i64(v);
        }
    }
    let mut poly = be.upload(&host).unwrap();
    be.ntt(&mut poly).unwrap();
    Plaintext {
        poly,
        meta: encrypt::fresh_meta(level, 1024.0, FP),
    }
}

struct Keys {
    be: CpuBackend,
    sk: SecretKey<CpuBackend>,
    pk: PublicKey<CpuBackend>,
    rlk: RelinKey<CpuBackend>,
    gk: GaloisKeys<CpuBackend>,
}

fn keys(n: usize, q: usize) -> Keys {
    let be = backend(n, q);
    let kg = KeyGenerator::new(&be, FP);
    let sk = kg.secret_key_from_seed(seed(1)).unwrap();
    let pk = kg.public_key_with_seeds(&sk, seed(2), &seed(3)).unwrap();
    let rlk = kg.relin_key_with_seeds(&sk, seed(4), &seed(5)).unwrap();
    let mut map = BTreeMap::new();
    for (i, g) in [5u64, 25, 2 * n as u64 - 1].into_iter().enumerate() {
        let k = kg
            .galois_key_with_seeds(&sk, g, seed(10 + i as u8), &seed(20 + i as u8))
            .unwrap();
        map.insert(g, k);
    }
    let gk = GaloisKeys {
        keys: map,
        fingerprint: FP,
    };
    Keys {
        be,
        sk,
        pk,
        rlk,
        gk,
    }
}

/// The downloaded buffer with its inactive capacity slots zeroed (a buffer whose level was
/// lowered keeps stale limbs there, which serialization rightly drops).
fn dl(be: &CpuBackend, p: &RnsPoly) -> RnsPoly {
    let mut h = be.download(p).unwrap();
    let slots = h.slots_per_component();
    for c in 0..h.components() {
        for s in 0..slots {
            if !h.is_active(s) {
                h.limb_mut(c, s).fill(0);
            }
        }
    }
    h
}

fn pk_ct(k: &Keys, level: usize) -> Ciphertext<CpuBackend> {
    encrypt::encrypt_pk_with_seed(&k.be, &k.pk, &plaintext(&k.be, level, 7), &seed(30)).unwrap()
}

fn sk_ct(k: &Keys, level: usize) -> Ciphertext<CpuBackend> {
    encrypt::encrypt_sk_with_seeds(
        &k.be,
        &k.sk,
        &plaintext(&k.be, level, 9),
        seed(31),
        &seed(32),
    )
    .unwrap()
}

fn three_ct(k: &Keys) -> Ciphertext<CpuBackend> {
    let a = pk_ct(k, 1);
    let poly = k.be.tensor(&a.poly, &a.poly).unwrap();
    Ciphertext {
        poly,
        meta: Meta {
            scale: a.meta.scale * a.meta.scale,
            ..a.meta
        },
        seed: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

#[test]
fn secret_key_round_trip() {
    let k = keys(1024, 3);
    let bytes = secret_key_to_bytes(&k.sk).unwrap();
    assert_eq!(bytes.len(), HEADER_LEN + 8 + 32);
    let sk = secret_key_from_bytes(&k.be, FP, &bytes).unwrap();
    assert_eq!(dl(&k.be, sk.poly()), dl(&k.be, k.sk.poly()));
    assert_eq!(sk.seed(), k.sk.seed());
    assert_eq!(sk.fingerprint(), FP);
    // Decryption with the loaded key is bit-identical.
    let ct = pk_ct(&k, 2);
    assert_eq!(
        encrypt::decrypt_to_host(&k.be, &sk, &ct).unwrap(),
        encrypt::decrypt_to_host(&k.be, &k.sk, &ct).unwrap()
    );
}

#[test]
fn public_key_round_trip() {
    let k = keys(1024, 3);
    let bytes = public_key_to_bytes(&k.be, &k.pk).unwrap();
    let pk = public_key_from_bytes(&k.be, FP, &bytes).unwrap();
    assert_eq!(dl(&k.be, &pk.poly), dl(&k.be, &k.pk.poly));
    assert_eq!(pk.seed, k.pk.seed);
    assert_eq!(pk.fingerprint, FP);
    let pt = plaintext(&k.be, 2, 3);
    let a = encrypt::encrypt_pk_with_seed(&k.be, &k.pk, &pt, &seed(40)).unwrap();
    let b = encrypt::encrypt_pk_with_seed(&k.be, &pk, &pt, &seed(40)).unwrap();
    assert_eq!(dl(&k.be, &a.poly), dl(&k.be, &b.poly));
    // Re-serializing gives the same bytes.
    assert_eq!(public_key_to_bytes(&k.be, &pk).unwrap(), bytes);
}

#[test]
fn relin_key_round_trip() {
    let k = keys(1024, 3);
    let bytes = relin_key_to_bytes(&k.be, &k.rlk).unwrap();
    let rlk = relin_key_from_bytes(&k.be, FP, &bytes).unwrap();
    assert_eq!(dl(&k.be, &rlk.0.poly), dl(&k.be, &k.rlk.0.poly));
    assert_eq!(rlk.0.seed, k.rlk.0.seed);
    let t = three_ct(&k);
    let t2 = t.duplicate(&k.be).unwrap();
    let a = crate::keyswitch::relinearize(&k.be, t, &k.rlk, false).unwrap();
    let b = crate::keyswitch::relinearize(&k.be, t2, &rlk, false).unwrap();
    assert_eq!(dl(&k.be, &a.poly), dl(&k.be, &b.poly));
    assert_eq!(relin_key_to_bytes(&k.be, &rlk).unwrap(), bytes);
}

#[test]
fn switching_key_round_trip() {
    let k = keys(1024, 3);
    let key = &k.gk.keys[&5];
    let bytes = switching_key_to_bytes(&k.be, key).unwrap();
    assert_eq!(peek(&bytes), BlobKind::KeySwitchingKey);
    let back = switching_key_from_bytes(&k.be, FP, &bytes).unwrap();
    assert_eq!(dl(&k.be, &back.poly), dl(&k.be, &key.poly));
}

fn peek(bytes: &[u8]) -> BlobKind {
    wire::peek_kind(bytes).unwrap()
}

#[test]
fn galois_keys_round_trip() {
    let k = keys(1024, 3);
    let bytes = galois_keys_to_bytes(&k.be, &k.gk).unwrap();
    let gk = galois_keys_from_bytes(&k.be, FP, &bytes).unwrap();
    assert_eq!(
        gk.elements().collect::<Vec<_>>(),
        k.gk.elements().collect::<Vec<_>>()
    );
    assert_eq!(gk.fingerprint, FP);
    for (g, key) in &k.gk.keys {
        assert_eq!(dl(&k.be, &gk.keys[g].poly), dl(&k.be, &key.poly));
    }
    let ct = pk_ct(&k, 2);
    for g in k.gk.elements() {
        let a = crate::keyswitch::apply_galois(&k.be, &ct, g, &k.gk.keys[&g]).unwrap();
        let b = crate::keyswitch::apply_galois(&k.be, &ct, g, &gk.keys[&g]).unwrap();
        assert_eq!(dl(&k.be, &a.poly), dl(&k.be, &b.poly));
    }
    assert_eq!(galois_keys_to_bytes(&k.be, &gk).unwrap(), bytes);
    // An empty set round-trips too.
    let empty = GaloisKeys::<CpuBackend> {
        keys: BTreeMap::new(),
        fingerprint: FP,
    };
    let e = galois_keys_to_bytes(&k.be, &empty).unwrap();
    assert_eq!(galois_keys_from_bytes(&k.be, FP, &e).unwrap().keys.len(), 0);
}

#[test]
fn plaintext_round_trip() {
    let k = keys(1024, 3);
    for level in 0..3 {
        let mut pt = plaintext(&k.be, level, level as u64);
        for ntt in [true, false] {
            if !ntt {
                k.be.intt(&mut pt.poly).unwrap();
                pt.meta.ntt = false;
            }
            let bytes = plaintext_to_bytes(&k.be, &pt).unwrap();
            let back = plaintext_from_bytes(&k.be, FP, &bytes).unwrap();
            assert_eq!(back.meta, pt.meta);
            assert_eq!(dl(&k.be, &back.poly), dl(&k.be, &pt.poly));
        }
    }
}

/// Serializes `ct` and loads it back: the same metadata, buffer and decryption, and the same
/// bytes when written again. Returns the loaded ciphertext.
fn ciphertext_round_trip_of(k: &Keys, ct: &Ciphertext<CpuBackend>) -> Ciphertext<CpuBackend> {
    let bytes = ciphertext_to_bytes(&k.be, ct).unwrap();
    let back = ciphertext_from_bytes(&k.be, FP, &bytes).unwrap();
    assert_eq!(back.meta, ct.meta);
    assert_eq!(dl(&k.be, &back.poly), dl(&k.be, &ct.poly));
    assert_eq!(
        encrypt::decrypt_to_host(&k.be, &k.sk, &back).unwrap(),
        encrypt::decrypt_to_host(&k.be, &k.sk, ct).unwrap()
    );
    assert_eq!(ciphertext_to_bytes(&k.be, &back).unwrap(), bytes);
    back
}

#[test]
fn ciphertext_round_trip() {
    let k = keys(1024, 3);
    for ct in [pk_ct(&k, 2), pk_ct(&k, 0), three_ct(&k)] {
        let back = ciphertext_round_trip_of(&k, &ct);
        assert!(back.seed.is_none());
    }
}

#[test]
fn seeded_ciphertext_round_trip() {
    let k = keys(1024, 3);
    for level in [0, 2] {
        let ct = sk_ct(&k, level);
        assert!(ct.seed.is_some());
        let back = ciphertext_round_trip_of(&k, &ct);
        assert_eq!(back.seed, ct.seed);
    }
}

#[test]
fn seeded_sizes() {
    let k = keys(1024, 3);
    let pk_ct = ciphertext_to_bytes(&k.be, &pk_ct(&k, 2)).unwrap().len();
    let sk_ct = ciphertext_to_bytes(&k.be, &sk_ct(&k, 2)).unwrap().len();
    let ratio = sk_ct as f64 / pk_ct as f64;
    assert!((0.49..0.52).contains(&ratio), "{sk_ct} / {pk_ct}");
    // A public key is about one polynomial at the top level: half of a 2-component ciphertext.
    let pk = public_key_to_bytes(&k.be, &k.pk).unwrap().len();
    let ratio = pk as f64 / pk_ct as f64;
    assert!((0.49..0.52).contains(&ratio), "{pk} / {pk_ct}");
    // Switching keys store one polynomial per digit over Q·P.
    let ring = k.be.ring();
    let limbs = ring.digits().len() * (ring.q_count() + ring.p_count());
    let rlk = relin_key_to_bytes(&k.be, &k.rlk).unwrap().len();
    assert!(rlk >= limbs * ring.n() * 8 && rlk < limbs * (ring.n() * 8 + 16) + 128);
    for kind in BlobKind::ALL {
        let _ = max_blob_len(ring, kind);
    }
    assert!(pk_ct <= max_blob_len(ring, BlobKind::Ciphertext));
    assert!(rlk <= max_blob_len(ring, BlobKind::RelinKey));
}

#[test]
fn writers_reject_inconsistent_objects() {
    let k = keys(1024, 3);
    let mut ct = pk_ct(&k, 2);
    ct.meta.level = 1;
    assert!(ciphertext_to_bytes(&k.be, &ct).is_err());
    let mut ct = three_ct(&k);
    ct.seed = Some(seed(1));
    assert!(ciphertext_to_bytes(&k.be, &ct).is_err());
    let pt = plaintext(&k.be, 1, 0);
    let as_ct = Ciphertext::<CpuBackend> {
        poly: pt.poly,
        meta: pt.meta,
        seed: None,
    };
    assert!(ciphertext_to_bytes(&k.be, &as_ct).is_err());
}

// ---------------------------------------------------------------------------------------------
// Malformed input
// ---------------------------------------------------------------------------------------------

/// Every loader, by kind, on a tiny ring: returns whether loading succeeded, and the bytes the
/// loaded object re-serializes to.
fn load(be: &CpuBackend, kind: BlobKind, bytes: &[u8]) -> Result<Vec<u8>> {
    Ok(match kind {
        BlobKind::SecretKey => {
            secret_key_to_bytes(&secret_key_from_bytes(be, FP, bytes)?)?.to_vec()
        }
        BlobKind::PublicKey => public_key_to_bytes(be, &public_key_from_bytes(be, FP, bytes)?)?,
        BlobKind::RelinKey => relin_key_to_bytes(be, &relin_key_from_bytes(be, FP, bytes)?)?,
        BlobKind::KeySwitchingKey => {
            switching_key_to_bytes(be, &switching_key_from_bytes(be, FP, bytes)?)?
        }
        BlobKind::GaloisKeys => galois_keys_to_bytes(be, &galois_keys_from_bytes(be, FP, bytes)?)?,
        BlobKind::Plaintext => plaintext_to_bytes(be, &plaintext_from_bytes(be, FP, bytes)?)?,
        BlobKind::Ciphertext => ciphertext_to_bytes(be, &ciphertext_from_bytes(be, FP, bytes)?)?,
        _ => unreachable!(),
    })
}

/// One valid blob of every kind (two ciphertexts: plain and seeded) on a tiny ring.
fn tiny_blobs() -> (Keys, Vec<(BlobKind, Vec<u8>)>) {
    let k = keys(16, 2);
    let be = &k.be;
    let blobs = vec![
        (
            BlobKind::SecretKey,
            secret_key_to_bytes(&k.sk).unwrap().to_vec(),
        ),
        (BlobKind::PublicKey, public_key_to_bytes(be, &k.pk).unwrap()),
        (BlobKind::RelinKey, relin_key_to_bytes(be, &k.rlk).unwrap()),
        (
            BlobKind::KeySwitchingKey,
            switching_key_to_bytes(be, &k.gk.keys[&5]).unwrap(),
        ),
        (
            BlobKind::GaloisKeys,
            galois_keys_to_bytes(be, &k.gk).unwrap(),
        ),
        (
            BlobKind::Plaintext,
            plaintext_to_bytes(be, &plaintext(be, 1, 0)).unwrap(),
        ),
        (
            BlobKind::Ciphertext,
            ciphertext_to_bytes(be, &pk_ct(&k, 1)).unwrap(),
        ),
        (
            BlobKind::Ciphertext,
            ciphertext_to_bytes(be, &sk_ct(&k, 0)).unwrap(),
        ),
    ];
    (k, blobs)
}

#[test]
fn tiny_blobs_load() {
    let (k, blobs) = tiny_blobs();
    for (kind, b) in &blobs {
        assert_eq!(load(&k.be, *kind, b).unwrap(), *b, "{kind}");
    }
}

#[test]
fn every_truncation_fails() {
    let (k, blobs) = tiny_blobs();
    for (kind, b) in &blobs {
        for len in 0..b.len() {
            assert!(
                load(&k.be, *kind, &b[..len]).is_err(),
                "{kind}: prefix of {len} of {} bytes loaded",
                b.len()
            );
        }
        let mut long = b.clone();
        long.push(0);
        assert!(matches!(
            load(&k.be, *kind, &long),
            Err(Error::TrailingBytes { .. })
        ));
    }
}

#[test]
fn flipped_bytes_fail_or_round_trip() {
    // A flipped byte is either rejected or gives an object that re-serializes to exactly the
    // flipped bytes (a residue or seed byte that still decodes to a valid value).
    let (k, blobs) = tiny_blobs();
    for (kind, b) in &blobs {
        let mut rejected = 0;
        for pos in 0..b.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut f = b.clone();
                f[pos] ^= mask;
                match load(&k.be, *kind, &f) {
                    Ok(again) => {
                        assert!(pos >= HEADER_LEN, "{kind}: header flip at {pos} accepted");
                        assert_eq!(again, f, "{kind}: flip at {pos} not canonical");
                    }
                    Err(_) => rejected += 1,
                }
            }
        }
        assert!(rejected > 0, "{kind}");
    }
}

#[test]
fn wrong_fingerprint() {
    let (k, blobs) = tiny_blobs();
    // The same objects generated under another fingerprint.
    let kg = KeyGenerator::new(&k.be, OTHER_FP);
    let sk = kg.secret_key_from_seed(seed(1)).unwrap();
    let pk = kg.public_key_with_seeds(&sk, seed(2), &seed(3)).unwrap();
    let rlk = kg.relin_key_with_seeds(&sk, seed(4), &seed(5)).unwrap();
    let mut pt = plaintext(&k.be, 1, 0);
    pt.meta.fingerprint = OTHER_FP;
    let ct = encrypt::encrypt_sk_with_seeds(&k.be, &sk, &pt, seed(6), &seed(7)).unwrap();
    let others = [
        (
            BlobKind::SecretKey,
            secret_key_to_bytes(&sk).unwrap().to_vec(),
        ),
        (
            BlobKind::PublicKey,
            public_key_to_bytes(&k.be, &pk).unwrap(),
        ),
        (BlobKind::RelinKey, relin_key_to_bytes(&k.be, &rlk).unwrap()),
        (BlobKind::Plaintext, plaintext_to_bytes(&k.be, &pt).unwrap()),
        (
            BlobKind::Ciphertext,
            ciphertext_to_bytes(&k.be, &ct).unwrap(),
        ),
    ];
    for (kind, b) in &others {
        let e = load(&k.be, *kind, b).unwrap_err();
        assert!(
            matches!(
                e,
                Error::ParameterMismatch {
                    left: OTHER_FP,
                    right: FP,
                    ..
                }
            ),
            "{kind}: {e:?}"
        );
    }
    // And every valid blob under the wrong expected fingerprint.
    for (kind, b) in &blobs {
        let e = match kind {
            BlobKind::SecretKey => secret_key_from_bytes(&k.be, OTHER_FP, b).err(),
            BlobKind::PublicKey => public_key_from_bytes(&k.be, OTHER_FP, b).err(),
            BlobKind::RelinKey => relin_key_from_bytes(&k.be, OTHER_FP, b).err(),
            BlobKind::KeySwitchingKey => switching_key_from_bytes(&k.be, OTHER_FP, b).err(),
            BlobKind::GaloisKeys => galois_keys_from_bytes(&k.be, OTHER_FP, b).err(),
            BlobKind::Plaintext => plaintext_from_bytes(&k.be, OTHER_FP, b).err(),
            _ => ciphertext_from_bytes(&k.be, OTHER_FP, b).err(),
        };
        assert!(
            matches!(e, Some(Error::ParameterMismatch { .. })),
            "{kind}: {e:?}"
        );
    }
}

#[test]
fn blob_from_another_ring() {
    // A ring of another degree: the blobs are rejected (by fingerprint first).
    let small = keys(16, 2);
    let big = keys(32, 2);
    let b = ciphertext_to_bytes(&small.be, &pk_ct(&small, 1)).unwrap();
    // Same fingerprint constant in both test rings: the limb lengths catch it.
    let e = ciphertext_from_bytes(&big.be, FP, &b).err().unwrap();
    assert!(matches!(e, Error::Malformed { .. }), "{e:?}");
    let b = relin_key_to_bytes(&big.be, &big.rlk).unwrap();
    assert!(relin_key_from_bytes(&small.be, FP, &b).is_err());
}

#[test]
fn wrong_kind() {
    let (k, blobs) = tiny_blobs();
    for (kind, b) in &blobs {
        for other in BlobKind::ALL {
            if other == *kind || other == BlobKind::Parameters {
                continue;
            }
            let e = load(&k.be, other, b).unwrap_err();
            assert!(
                matches!(e, Error::WrongKind { .. } | Error::TooLarge { .. }),
                "{kind} as {other}: {e:?}"
            );
        }
    }
}

/// [`load`] of `w` encoded as a blob of `kind`.
fn load_wire<T: Serialize>(be: &CpuBackend, kind: BlobKind, w: &T) -> Result<Vec<u8>> {
    load(be, kind, &wire::encode(kind, w).unwrap())
}

fn malformed_reason(r: Result<Vec<u8>>) -> String {
    match r {
        Err(Error::Malformed { reason, .. }) => reason,
        other => panic!("expected Malformed, got {:?}", other.map(|b| b.len())),
    }
}

#[test]
fn patched_payloads() {
    let k = keys(16, 2);
    let be = &k.be;
    let ring = be.ring().clone();
    let n = ring.n();
    let q0 = ring.modulus(0).value();
    let host = dl(be, &pk_ct(&k, 1).poly);
    let good = || CiphertextWire {
        meta: encrypt::fresh_meta(1, 1024.0, FP),
        seed: None,
        components: (0..2).map(|c| limbs_of(&host, c)).collect(),
    };
    let ct = |w: &CiphertextWire| load_wire(be, BlobKind::Ciphertext, w);
    assert!(ct(&good()).is_ok());

    // A residue equal to, or above, its modulus; in a special slot of a key, too.
    let mut w = good();
    w.components[1][0][3] = q0;
    assert!(malformed_reason(ct(&w)).contains("not below its modulus"));
    let mut w = good();
    w.components[0][1][0] = u64::MAX;
    assert!(malformed_reason(ct(&w)).contains("not below its modulus"));
    // Level above the maximum, and level disagreeing with the limb count.
    let mut w = good();
    w.meta.level = ring.max_level() + 1;
    assert!(malformed_reason(ct(&w)).contains("above the maximum level"));
    let mut w = good();
    w.meta.level = usize::MAX;
    assert!(malformed_reason(ct(&w)).contains("above the maximum level"));
    let mut w = good();
    w.meta.level = 0;
    assert!(malformed_reason(ct(&w)).contains("limbs, expected 1"));
    // Bad scales.
    for scale in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let mut w = good();
        w.meta.scale = scale;
        assert!(malformed_reason(ct(&w)).contains("scale"));
    }
    // Coefficient form.
    let mut w = good();
    w.meta.ntt = false;
    assert!(malformed_reason(ct(&w)).contains("NTT"));
    // Component counts: 1, 4; seeded with 2 stored.
    let mut w = good();
    w.components.truncate(1);
    assert!(malformed_reason(ct(&w)).contains("components"));
    let mut w = good();
    w.components.push(w.components[0].clone());
    w.components.push(w.components[0].clone());
    assert!(malformed_reason(ct(&w)).contains("components"));
    let mut w = good();
    w.seed = Some(seed(9));
    assert!(malformed_reason(ct(&w)).contains("seeded"));
    // Limb of the wrong length.
    let mut w = good();
    w.components[0][1].pop();
    assert!(malformed_reason(ct(&w)).contains("coefficients"));
    let mut w = good();
    w.components[0][1].push(0);
    assert!(malformed_reason(ct(&w)).contains("coefficients"));

    // Plaintexts: level, residues, limb count.
    let pt_host = dl(be, &plaintext(be, 1, 0).poly);
    let pgood = || PlaintextWire {
        meta: encrypt::fresh_meta(1, 1024.0, FP),
        limbs: limbs_of(&pt_host, 0),
    };
    let pt = |w: &PlaintextWire| load_wire(be, BlobKind::Plaintext, w);
    assert!(pt(&pgood()).is_ok());
    let mut w = pgood();
    w.meta.level = 5;
    assert!(malformed_reason(pt(&w)).contains("above the maximum level"));
    let mut w = pgood();
    w.limbs[1][n - 1] = ring.modulus(1).value();
    assert!(malformed_reason(pt(&w)).contains("not below its modulus"));
    let mut w = pgood();
    w.limbs.pop();
    assert!(malformed_reason(pt(&w)).contains("limbs"));

    // Public key: residue at q, short limb list.
    let pk_host = dl(be, &k.pk.poly);
    let pkgood = || PublicKeyWire {
        fingerprint: FP,
        seed: seed(2),
        b: limbs_of(&pk_host, 0),
    };
    let pkl = |w: &PublicKeyWire| load_wire(be, BlobKind::PublicKey, w);
    assert!(pkl(&pkgood()).is_ok());
    let mut w = pkgood();
    w.b[0][0] = q0;
    assert!(malformed_reason(pkl(&w)).contains("not below its modulus"));
    let mut w = pkgood();
    w.b.pop();
    assert!(malformed_reason(pkl(&w)).contains("limbs"));

    // Switching keys: digit count, special-slot residue, limb count.
    let skw = || switching_wire(be, &k.rlk.0).unwrap();
    let rl = |w: &SwitchingKeyWire| load_wire(be, BlobKind::RelinKey, w);
    assert!(rl(&skw()).is_ok());
    let mut w = skw();
    w.b.pop();
    assert!(malformed_reason(rl(&w)).contains("digits"));
    let mut w = skw();
    w.b.push(w.b[0].clone());
    assert!(matches!(rl(&w), Err(Error::TooLarge { .. })));
    let mut w = skw();
    let p_last = ring.modulus(ring.q_count() + ring.p_count() - 1).value();
    let last = w.b[1].len() - 1;
    w.b[1][last][7] = p_last;
    assert!(malformed_reason(rl(&w)).contains("not below its modulus"));
    let mut w = skw();
    w.b[0].pop();
    assert!(malformed_reason(rl(&w)).contains("limbs"));

    // Galois keys: even element, element >= 2N, repeated element, one bad key among good
    // ones, a key with another fingerprint.
    let gw = || GaloisKeysWire {
        fingerprint: FP,
        keys: k
            .gk
            .keys
            .iter()
            .map(|(&g, key)| (g, switching_wire(be, key).unwrap()))
            .collect(),
    };
    let gl = |w: &GaloisKeysWire| load_wire(be, BlobKind::GaloisKeys, w);
    assert!(gl(&gw()).is_ok());
    for bad in [0u64, 4, 2 * n as u64, 2 * n as u64 + 1, u64::MAX] {
        let mut w = gw();
        w.keys[1].0 = bad;
        assert!(malformed_reason(gl(&w)).contains("Galois element"), "{bad}");
    }
    let mut w = gw();
    w.keys[2].0 = w.keys[0].0;
    assert!(malformed_reason(gl(&w)).contains("repeated"));
    let mut w = gw();
    w.keys[2].1.b[0][0][0] = q0;
    assert!(malformed_reason(gl(&w)).contains("not below its modulus"));
    let mut w = gw();
    w.keys[1].1.fingerprint = OTHER_FP;
    assert!(matches!(gl(&w), Err(Error::ParameterMismatch { .. })));
}

#[test]
fn oversize_blobs_rejected() {
    let (k, blobs) = tiny_blobs();
    for (kind, b) in &blobs {
        let max = max_blob_len(k.be.ring(), *kind);
        assert!(b.len() <= max, "{kind}");
        let mut big = b.clone();
        big.resize(max + 1, 0);
        assert!(
            matches!(load(&k.be, *kind, &big), Err(Error::TooLarge { .. })),
            "{kind}"
        );
    }
}

fn header(kind: BlobKind) -> Vec<u8> {
    let mut b = Vec::from(MAGIC);
    b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    b.push(kind.tag());
    b
}

const LOADABLE: [BlobKind; 7] = [
    BlobKind::SecretKey,
    BlobKind::PublicKey,
    BlobKind::RelinKey,
    BlobKind::KeySwitchingKey,
    BlobKind::GaloisKeys,
    BlobKind::Plaintext,
    BlobKind::Ciphertext,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let be = backend(16, 2);
        for kind in LOADABLE {
            prop_assert!(load(&be, kind, &bytes).is_err());
        }
    }

    #[test]
    fn arbitrary_payload_never_panics(
        tail in proptest::collection::vec(any::<u8>(), 0..512),
        which in 0usize..7,
    ) {
        let be = backend(16, 2);
        let kind = LOADABLE[which];
        let mut b = header(kind);
        b.extend_from_slice(&tail);
        let _ = load(&be, kind, &b);
    }

    #[test]
    fn random_corruptions_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        which in 0usize..8,
        cut in any::<usize>(),
    ) {
        let (k, blobs) = tiny_blobs();
        let (kind, mut b) = blobs[which].clone();
        for (pos, byte) in edits {
            let p = pos % b.len();
            b[p] = byte;
        }
        let _ = load(&k.be, kind, &b);
        let _ = load(&k.be, kind, &b[..cut % (b.len() + 1)]);
    }
}
