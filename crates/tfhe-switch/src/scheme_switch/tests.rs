//! Scheme switching against plaintext at the CI set (insecure, `N = 2^11`, PBS `N = 256`).

use super::*;
use crate::keys::ClientKey;
use ckks::{Context, Parameters};
use fhe_math::CpuBackend;
use fhe_math::sampler::Seed;
use rlwe::{Ciphertext, SecretKey};
use std::sync::OnceLock;

const SLOTS: usize = 16;
const BOUND: f64 = 1.0;

struct Fixture {
    ctx: Context<CpuBackend>,
    sk: SecretKey<CpuBackend>,
    client: ClientKey,
    keys: SwitchKeys<CpuBackend>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let params = SWITCH_TEST_INSECURE.opt_in_insecure();
        let ctx = Context::cpu(Parameters::new(&CKKS_SWITCH_TEST_INSECURE).unwrap()).unwrap();
        let sk = ctx
            .key_generator()
            .secret_key_from_seed(Seed([1; 32]))
            .unwrap();
        let client = ClientKey::generate(&params.tfhe, &Seed([2; 32])).unwrap();
        let keys =
            SwitchKeys::generate(&ctx, &sk, &client, &params, SLOTS, &Seed([3; 32])).unwrap();
        Fixture {
            ctx,
            sk,
            client,
            keys,
        }
    })
}

/// Inputs spread over `[−0.95, 0.95]`, none closer to 0 than 0.1 (the gap at `p = 16` is
/// `1/14 ≈ 0.071`).
fn inputs(shift: f64) -> Vec<f64> {
    (0..SLOTS)
        .map(|j| {
            let v = -0.95 + 1.9 * ((j as f64 * 0.618 + shift).fract());
            if v.abs() < 0.1 {
                0.1f64.copysign(v + 1e-9)
            } else {
                v
            }
        })
        .collect()
}

fn encrypt(
    f: &Fixture,
    sw: &SchemeSwitch<'_, CpuBackend>,
    v: &[f64],
    level: usize,
) -> Ciphertext<CpuBackend> {
    let z: Vec<fhe_math::fft::Complex64> = v
        .iter()
        .map(|&x| fhe_math::fft::Complex64::new(x, 0.0))
        .collect();
    let scale = f.ctx.params().scale(level).unwrap();
    let pt = sw
        .evaluator()
        .encoder()
        .encode_with(&z, level, scale, SLOTS)
        .unwrap();
    f.ctx.encrypt_sk(&f.sk, &pt).unwrap()
}

fn decrypt(
    f: &Fixture,
    sw: &SchemeSwitch<'_, CpuBackend>,
    ct: &Ciphertext<CpuBackend>,
) -> Vec<f64> {
    let pt = f.ctx.decrypt(&f.sk, ct).unwrap();
    sw.evaluator()
        .encoder()
        .decode_slots(&pt, SLOTS)
        .unwrap()
        .iter()
        .map(|c| c.re)
        .collect()
}

/// CKKS → LWE: each LWE's phase is the encoded real message within a small fraction of a step.
#[test]
fn switch_to_lwe_keeps_the_values() {
    let f = fixture();
    let sw = SchemeSwitch::new(&f.ctx, &f.keys).unwrap();
    let x = inputs(0.1);
    let top = f.ctx.params().max_level();
    let ct = encrypt(f, &sw, &x, top);
    let p = f.keys.params().tfhe.message_space();
    let enc = LweEncoding::sign(p, BOUND).unwrap();
    let lwes = sw.switch_to_lwe(&ct, &enc).unwrap();
    assert_eq!(lwes.len(), SLOTS);
    let q = f.keys.params().tfhe.modulus as f64;
    let mut worst = 0f64;
    for (ct, &xj) in lwes.iter().zip(&x) {
        let phase = f.client.lwe_key().phase(ct).unwrap() as f64;
        let mu = phase * 2.0 * p as f64 / q;
        worst = worst.max((mu - enc.message(xj)).abs());
    }
    // The LWE key switch of the test set dominates; well below the half step.
    assert!(worst < 0.1, "message error {worst}");
}

/// The full comparison and sign against plaintext: exact on slots away from the gap.
#[test]
fn compare_and_sign_match_plaintext() {
    let f = fixture();
    let sw = SchemeSwitch::new(&f.ctx, &f.keys).unwrap();
    let a = inputs(0.0);
    let b: Vec<f64> = inputs(0.37).iter().map(|v| v * 0.9).collect();
    let top = f.ctx.params().max_level();
    let (ca, cb) = (encrypt(f, &sw, &a, top), encrypt(f, &sw, &b, top - 1));
    let gt = decrypt(f, &sw, &sw.ckks_compare(&ca, &cb, BOUND).unwrap());
    let gap = 2.0 * BOUND / 14.0;
    let mut checked = 0;
    for j in 0..SLOTS {
        let d = a[j] - b[j];
        if d.abs() >= gap {
            let want = if d > 0.0 { 1.0 } else { 0.0 };
            // The test set's PBS output noise (about 2^-13.5 of q) times 2π, six deviations.
            assert!(
                (gt[j] - want).abs() < 1e-2,
                "slot {j}: {} vs {want} (a−b = {d})",
                gt[j]
            );
            checked += 1;
        }
    }
    assert!(
        checked >= SLOTS / 2,
        "only {checked} slots away from the gap"
    );
    let worst = (0..SLOTS)
        .map(|j| (gt[j] - f64::from(u8::from(a[j] > b[j]))).abs())
        .fold(0.0, f64::max);
    eprintln!("compare: worst distance to the bit {worst:.2e}");
    let sign = decrypt(f, &sw, &sw.ckks_sign(&ca, BOUND).unwrap());
    for j in 0..SLOTS {
        assert!(
            (sign[j] - a[j].signum()).abs() < 2e-2,
            "slot {j}: {} vs {}",
            sign[j],
            a[j]
        );
    }
}

/// Any table through the PBS: the LWE results decrypt to the table's entries.
#[test]
fn apply_lut_matches_the_table() {
    let f = fixture();
    let sw = SchemeSwitch::new(&f.ctx, &f.keys).unwrap();
    let params = f.keys.params().tfhe;
    let p = params.message_space();
    // x ∈ [0, 15/16·…]: messages 0..p−1 exactly.
    let m: Vec<u64> = (0..SLOTS as u64).map(|j| j % p).collect();
    // Slots m − 7.5 (centred), messages m = x + 7.5.
    let half = (p - 1) as f64 / 2.0;
    let x: Vec<f64> = m.iter().map(|&v| v as f64 - half).collect();
    let top = f.ctx.params().max_level();
    let ct = encrypt(f, &sw, &x, top);
    let enc = LweEncoding::new(p, 1.0, half, half).unwrap();
    let lwes = sw.switch_to_lwe(&ct, &enc).unwrap();
    let lut = crate::LookupTable::from_fn(&params, |m| (5 * m + 3) % p).unwrap();
    let out = sw.apply_lut(&lwes, &lut).unwrap();
    for (o, &m) in out.iter().zip(&m) {
        assert_eq!(f.client.decrypt(o).unwrap(), (5 * m + 3) % p);
    }
}

/// Typed errors: too low a level, too many ciphertexts, a range the space cannot hold, keys
/// of another context.
#[test]
fn bad_inputs_are_refused() {
    let f = fixture();
    let sw = SchemeSwitch::new(&f.ctx, &f.keys).unwrap();
    let p = f.keys.params().tfhe.message_space();
    let enc = LweEncoding::sign(p, BOUND).unwrap();
    let low = encrypt(f, &sw, &inputs(0.2), 0);
    assert!(matches!(
        sw.switch_to_lwe(&low, &enc),
        Err(Error::LevelTooLow { .. })
    ));
    let lwe = f.client.encrypt(0, &Seed([9; 32])).unwrap();
    let many = vec![lwe; SLOTS + 1];
    assert!(matches!(
        sw.switch_to_ckks(&many),
        Err(Error::SlotCount { .. })
    ));
    assert!(matches!(
        LweEncoding::new(p, 8.0, 7.5, 1.0),
        Err(Error::Range { .. })
    ));
    let other = Context::cpu(Parameters::new(&ckks::params::TEST_N11_INSECURE).unwrap()).unwrap();
    assert!(matches!(
        SchemeSwitch::new(&other, &f.keys),
        Err(Error::Mismatch { .. })
    ));
    let bytes = f.keys.bytes(&f.ctx);
    assert!(bytes.total > bytes.rotation_keys && bytes.ring_key == 4 * 2 * 2048 * 8);
}

/// Any table back in CKKS: a ReLU-like table on the messages, slot values `f(m)` within a few
/// hundredths.
#[test]
fn ckks_apply_gives_the_table_in_slots() {
    let f = fixture();
    let sw = SchemeSwitch::new(&f.ctx, &f.keys).unwrap();
    let p = f.keys.params().tfhe.message_space();
    let half = (p - 1) as f64 / 2.0;
    let m: Vec<u64> = (0..SLOTS as u64).map(|j| (j * 7 + 3) % p).collect();
    let x: Vec<f64> = m.iter().map(|&v| v as f64 - half).collect();
    let top = f.ctx.params().max_level();
    let ct = encrypt(f, &sw, &x, top);
    let enc = LweEncoding::new(p, 1.0, half, half).unwrap();
    let table = |v: u64| v.saturating_sub(p / 2) * 2;
    let out = decrypt(f, &sw, &sw.ckks_apply(&ct, &enc, table).unwrap());
    for (j, &mj) in m.iter().enumerate() {
        let want = (table(mj) % p) as f64;
        assert!(
            (out[j] - want).abs() < 0.1,
            "slot {j}: {} vs {want}",
            out[j]
        );
    }
}

/// The composite on batches kept in the backend's memory gives the same words as the three
/// public stages on host ciphertexts.
#[test]
fn batch_path_equals_the_host_stages() {
    use fhe_math::RingBackend;
    let f = fixture();
    let sw = SchemeSwitch::new(&f.ctx, &f.keys).unwrap();
    let top = f.ctx.params().max_level();
    let ct = encrypt(f, &sw, &inputs(0.21), top);
    let enc = LweEncoding::sign(f.keys.params().tfhe.message_space(), BOUND).unwrap();
    let lwes = sw.switch_to_lwe(&ct, &enc).unwrap();
    let batch = sw.switch_to_lwe_batch(&ct, &enc).unwrap();
    let table = sw.step_table().unwrap();
    let bits = sw.apply_lut(&lwes, &table).unwrap();
    let host = sw.switch_to_ckks(&bits).unwrap();
    let composite = sw.ckks_step(&ct, BOUND).unwrap();
    let be = f.ctx.backend();
    assert_eq!(
        be.download(host.poly()).unwrap(),
        be.download(composite.poly()).unwrap()
    );
    let on_device = sw
        .switch_to_ckks_batch(&sw.apply_lut_batch(&batch, &table).unwrap())
        .unwrap();
    assert_eq!(
        be.download(on_device.poly()).unwrap(),
        be.download(host.poly()).unwrap()
    );
}

/// The key bundle round-trips through bytes (the loaded keys switch to the same words) and
/// damaged or foreign blobs are refused without a panic.
#[test]
fn switch_keys_round_trip_and_refuse_bad_blobs() {
    use fhe_math::RingBackend;
    let f = fixture();
    let params = SWITCH_TEST_INSECURE.opt_in_insecure();
    let bytes = f.keys.to_bytes(&f.ctx).unwrap();
    let loaded = SwitchKeys::from_bytes(&f.ctx, &params, &bytes).unwrap();
    assert_eq!(loaded.slots(), f.keys.slots());
    assert_eq!(loaded.to_bytes(&f.ctx).unwrap(), bytes);
    let (sw, sw2) = (
        SchemeSwitch::new(&f.ctx, &f.keys).unwrap(),
        SchemeSwitch::new(&f.ctx, &loaded).unwrap(),
    );
    let ct = encrypt(f, &sw, &inputs(0.4), f.ctx.params().max_level());
    let be = f.ctx.backend();
    assert_eq!(
        be.download(sw.ckks_step(&ct, BOUND).unwrap().poly())
            .unwrap(),
        be.download(sw2.ckks_step(&ct, BOUND).unwrap().poly())
            .unwrap()
    );
    let refused = |b: &[u8]| SwitchKeys::from_bytes(&f.ctx, &params, b).is_err();
    assert!(refused(&bytes[..5]), "short");
    assert!(refused(&bytes[..bytes.len() - 1]), "truncated");
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(refused(&longer), "trailing byte");
    for (pos, what) in [(0, "magic"), (4, "version"), (8, "set name length")] {
        let mut bad = bytes.clone();
        bad[pos] ^= 0x5a;
        assert!(refused(&bad), "{what}");
    }
    // The first residue of the ring key pushed beyond q_sw: after the header, the name
    // (length and bytes), slot count, two fingerprints, modulus, degree (8 bytes each),
    // gadget (two u32), ratio and the rows' length.
    let rows_at = 6 + 8 + params.name.len() + 5 * 8 + 8 + 8 + 8;
    let mut bad = bytes.clone();
    bad[rows_at..rows_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let err = SwitchKeys::from_bytes(&f.ctx, &params, &bad).err().unwrap();
    assert!(
        err.to_string().contains("not below q_sw"),
        "ring residue: {err}"
    );
    // Keys of another set.
    assert!(SwitchKeys::from_bytes(&f.ctx, &SWITCH_CLASSIC, &bytes).is_err());
}
