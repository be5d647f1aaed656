//! The comparisons on the CUDA backend: the ciphertext words of every result bit-identical to
//! the CPU backend's for the same seeds (keys, encryptions), and exact against the plaintext
//! predicates. `#[ignore]`d without a GPU (run with `--include-ignored` on the GPU machine);
//! the device helper panics when no device is found, so these tests never pass silently.

mod common;

use bgv::context::ring_for;
use bgv::{Context, Parameters};
use common::{Setup, TEST_N11_DEEP};
use compare::{ArrayOp, EncryptedWords, Predicate, WordType};
use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::IntegerBackend;
use test_support::{SplitMix, active_limbs, seed};

fn gpu_context() -> Context<CudaBackend> {
    let dev =
        Device::new(0).unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
    dev.warm_up().expect("kernel modules compile");
    let params = Parameters::new(&TEST_N11_DEEP).unwrap();
    let backend = CudaBackend::new(dev, ring_for(&params).unwrap()).unwrap();
    Context::with_backend(params, backend).unwrap()
}

/// Runs lt, eq, ge, lt against constants, a weighted comparison, min and a sort with fixed
/// seeds on `ctx`; checks each against plaintext and returns each result's limbs.
fn run_all<B: IntegerBackend>(ctx: Context<B>, word: WordType) -> Vec<(String, Vec<u64>)> {
    let s = Setup::new(ctx, word, 4);
    let be = s.cmp.context().backend();
    let top = s.cmp.context().params().max_level();
    let mut r = SplitMix::new(99);
    let n = 100;
    let draw = |r: &mut SplitMix| {
        let u = r.next_u64() as u128 & ((1u128 << word.bits()) - 1);
        word.from_offset(u as u64)
    };
    let a: Vec<i128> = (0..n).map(|_| draw(&mut r)).collect();
    let b: Vec<i128> = (0..n)
        .map(|i| if i % 3 == 0 { a[i] } else { draw(&mut r) })
        .collect();
    let enc = |v: &[i128], sd: u8| {
        let pts = s.cmp.encode(v, top).unwrap();
        let ct = s
            .cmp
            .context()
            .encrypt_pk_with_seed(&s.pk, &pts[0], &seed(sd))
            .unwrap();
        EncryptedWords::from_parts(vec![ct], v.len(), true)
    };
    let (ca, cb) = (enc(&a, 40), enc(&b, 41));
    let limbs = |ct: &bgv::Ciphertext<B>| active_limbs(be, ct.inner().poly()).unwrap();
    let mut out = Vec::new();
    for p in [Predicate::Lt, Predicate::Eq, Predicate::Ge] {
        let res = s.cmp.compare(&ca, &cb, p).unwrap();
        s.check_bits(&res, &a, &b, p);
        out.push((format!("{p:?}"), limbs(&res.ciphertexts()[0])));
    }
    let res = s.cmp.lt_plain(&ca, &b).unwrap();
    s.check_bits(&res, &a, &b, Predicate::Lt);
    out.push(("lt_plain".into(), limbs(&res.ciphertexts()[0])));
    let w: Vec<u64> = (0..n as u64).collect();
    let res = s.cmp.compare_weighted(&ca, &cb, Predicate::Gt, &w).unwrap();
    out.push(("gt_weighted".into(), limbs(&res.ciphertexts()[0])));
    let m = s.cmp.min(&ca, &cb).unwrap();
    let want: Vec<i128> = a.iter().zip(&b).map(|(x, y)| *x.min(y)).collect();
    assert_eq!(s.cmp.decrypt(&s.dec(), &m).unwrap(), want, "min");
    out.push(("min".into(), limbs(&m.ciphertexts()[0])));
    out
}

fn assert_same(cpu: &[(String, Vec<u64>)], gpu: &[(String, Vec<u64>)]) {
    assert_eq!(cpu.len(), gpu.len());
    for ((name, c), (_, g)) in cpu.iter().zip(gpu) {
        assert!(c == g, "{name}: the GPU result differs from the CPU's");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_comparisons_bit_identical_u8() {
    let cpu = run_all(common::cpu_ctx(&TEST_N11_DEEP), WordType::U8);
    let gpu = run_all(gpu_context(), WordType::U8);
    assert_same(&cpu, &gpu);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_comparisons_bit_identical_i64() {
    let cpu = run_all(common::cpu_ctx(&TEST_N11_DEEP), WordType::I64);
    let gpu = run_all(gpu_context(), WordType::I64);
    assert_same(&cpu, &gpu);
}

/// The sort of 8 signed bytes (the array path: strided sums, EQ on ranks) on both backends.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_sort_bit_identical() {
    fn sort<B: IntegerBackend>(ctx: Context<B>) -> Vec<u64> {
        let s = Setup::new(ctx, WordType::I8, 4);
        let v: Vec<i128> = vec![5, -3, 5, 127, -128, 0, -3, 1];
        let input = s.cmp.encrypt_array(&s.pk, &v, ArrayOp::Sort).unwrap();
        let out = s.cmp.sort(&input).unwrap();
        let mut want = v.clone();
        want.sort();
        assert_eq!(s.cmp.decrypt(&s.dec(), &out).unwrap(), want);
        // Encryptions are random here: compare the decrypted slots (exact) instead of limbs.
        s.dec().decrypt(&out.ciphertexts()[0]).unwrap()
    }
    let cpu = sort(common::cpu_ctx(&TEST_N11_DEEP));
    let gpu = sort(gpu_context());
    assert!(cpu[..16] == gpu[..16], "sorted words differ");
}
