use super::*;
use crate::params::TEST_N11_INSECURE;
use crate::precision::{InputGenerator, precision_bits};
use crate::{Context, Parameters};
use fhe_math::cpu::CpuBackend;
use rlwe::{PublicKey, SecretKey, encrypt};

type Be = CpuBackend;

/// Bits of absolute precision the transforms below keep at the test set (inputs of modulus 1,
/// matrix entries in `[-1, 1]²`, so outputs up to `√2·(diagonals)`): measured 24.3 (7 full-slot
/// diagonals) and 27.2 (dense 16 × 16).
const MIN_BITS: f64 = 22.0;

struct Setup {
    ctx: Context<Be>,
    eval: Evaluator<Be>,
    sk: SecretKey<Be>,
    pk: PublicKey<Be>,
}

fn setup() -> Setup {
    let ctx = Context::cpu(Parameters::new(&TEST_N11_INSECURE).unwrap()).unwrap();
    let eval = Evaluator::new(&ctx).unwrap();
    let kg = ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    Setup { ctx, eval, sk, pk }
}

fn random_vec(g: &mut InputGenerator, n: usize) -> Vec<Complex64> {
    (0..n)
        .map(|_| Complex64::new(2.0 * g.unit() - 1.0, 2.0 * g.unit() - 1.0))
        .collect()
}

/// `M·x` on the host from the diagonals: `(M·x)_i = Σ_k d_k[i]·x_{(i+k) mod n}`.
fn apply_plain(diagonals: &BTreeMap<i64, Vec<Complex64>>, x: &[Complex64]) -> Vec<Complex64> {
    let n = x.len();
    (0..n)
        .map(|i| {
            diagonals
                .iter()
                .map(|(&k, d)| d[i] * x[(i as i64 + k).rem_euclid(n as i64) as usize])
                .sum()
        })
        .collect()
}

impl Setup {
    fn run(&self, what: &str, diagonals: &BTreeMap<i64, Vec<Complex64>>, slots: usize) -> f64 {
        let level = self.ctx.params().max_level();
        let lt = LinearTransform::new(&self.eval, diagonals, slots, level).unwrap();
        let kg = self.ctx.key_generator();
        let gk = kg
            .galois_keys(&self.sk, &lt.galois_elements(&self.eval))
            .unwrap();
        let x = InputGenerator::new(5).unit_complex(slots);
        let pt = self
            .eval
            .encoder()
            .encode_with(&x, level, self.ctx.params().scale(level).unwrap(), slots)
            .unwrap();
        let ct = encrypt::encrypt_pk(self.ctx.backend(), &self.pk, &pt).unwrap();
        let out = self.eval.linear_transform(&ct, &lt, &gk).unwrap();
        assert_eq!(out.level(), level - 1);
        let ladder = self.ctx.params().scale(level - 1).unwrap();
        assert!(
            ((out.scale() - ladder) / ladder).abs() < 1e-12,
            "{what}: off the ladder"
        );
        let dec = encrypt::decrypt(self.ctx.backend(), &self.sk, &out).unwrap();
        let got = self.eval.encoder().decode_slots(&dec, slots).unwrap();
        let want = apply_plain(diagonals, &x);
        let bits = precision_bits(&got, &want);
        println!(
            "{what}: {bits:.2} bits, baby step {}, {} key switches, {} diagonals",
            lt.baby_step(),
            lt.key_switches(),
            lt.diagonal_count()
        );
        assert!(bits >= MIN_BITS, "{what}: {bits:.2} bits < {MIN_BITS}");
        bits
    }
}

#[test]
fn dense_matrix_on_sparse_slots_matches_plaintext() {
    let f = setup();
    let n = 16;
    let mut g = InputGenerator::new(1);
    let matrix: Vec<Vec<Complex64>> = (0..n).map(|_| random_vec(&mut g, n)).collect();
    let diagonals = diagonals_of(&matrix).unwrap();
    assert_eq!(diagonals.len(), n);
    // The diagonals reproduce the matrix-vector product.
    let x = random_vec(&mut g, n);
    let direct: Vec<Complex64> = matrix
        .iter()
        .map(|row| row.iter().zip(&x).map(|(a, b)| a * b).sum())
        .collect();
    let via = apply_plain(&diagonals, &x);
    assert!(precision_bits(&via, &direct) > 45.0);
    f.run("dense 16x16", &diagonals, n);
}

#[test]
fn sparse_diagonals_on_full_slots_match_plaintext() {
    let f = setup();
    let s = f.eval.encoder().max_slots();
    let mut g = InputGenerator::new(2);
    let diagonals: BTreeMap<i64, Vec<Complex64>> = [0i64, 1, 5, -3, 100, -512, 511]
        .into_iter()
        .map(|k| (k, random_vec(&mut g, s)))
        .collect();
    f.run("7 diagonals, full slots", &diagonals, s);
}

#[test]
fn bad_transforms_give_errors() {
    let f = setup();
    let level = f.ctx.params().max_level();
    let s = f.eval.encoder().max_slots();
    let empty = BTreeMap::new();
    let short: BTreeMap<i64, Vec<Complex64>> = [(0, vec![Complex64::new(1.0, 0.0); 3])].into();
    let twice: BTreeMap<i64, Vec<Complex64>> = [
        (1, vec![Complex64::new(1.0, 0.0); 8]),
        (9, vec![Complex64::new(1.0, 0.0); 8]),
    ]
    .into();
    for (d, slots) in [
        (&empty, 8),
        (&short, 8),
        (&twice, 8),
        (&short, 3),
        (&short, 2 * s),
    ] {
        assert!(matches!(
            LinearTransform::new(&f.eval, d, slots, level),
            Err(Error::InvalidTransform { .. })
        ));
    }
    let one: BTreeMap<i64, Vec<Complex64>> = [(1, vec![Complex64::new(1.0, 0.0); 8])].into();
    assert!(matches!(
        LinearTransform::with_options(&f.eval, &one, 8, level, 2f64.powi(30), Some(3)),
        Err(Error::InvalidTransform { .. })
    ));
    // Wrong level, missing key.
    let lt = LinearTransform::new(&f.eval, &one, 8, level - 1).unwrap();
    let kg = f.ctx.key_generator();
    let gk = kg.galois_keys(&f.sk, &lt.galois_elements(&f.eval)).unwrap();
    let pt = f.eval.encoder().encode(&[], level).unwrap();
    let ct = encrypt::encrypt_pk(f.ctx.backend(), &f.pk, &pt).unwrap();
    assert!(matches!(
        f.eval.linear_transform(&ct, &lt, &gk),
        Err(Error::LevelMismatch { .. })
    ));
    let lt = LinearTransform::new(&f.eval, &one, 8, level).unwrap();
    let none = kg.galois_keys(&f.sk, &[]).unwrap();
    assert!(matches!(
        f.eval.linear_transform(&ct, &lt, &none),
        Err(Error::Rlwe(rlwe::Error::MissingGaloisKey { .. }))
    ));
}
