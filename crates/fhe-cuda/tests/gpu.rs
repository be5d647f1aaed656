//! GPU tests: every `Backend` method of `CudaBackend` against `CpuBackend`, bit for bit, on
//! random inputs; a CKKS end-to-end run on both backends with the same seeds; the memory pool
//! returning to its baseline. All need a CUDA device; the device helper panics without one.

use fhe_cuda::{CudaBackend, Device};
use fhe_math::backend::prelude::*;
use fhe_math::cpu::CpuBackend;
use fhe_math::poly::{RnsPoly, Shape};
use fhe_math::primes::ntt_primes;
use fhe_math::ring::RingContext;
use fhe_math::sampler::{Domain, Seed};
use std::ops::Range;
use std::sync::{Arc, OnceLock};

type CpuOp<'a> = Box<dyn Fn(&mut RnsPoly) -> fhe_math::Result<()> + 'a>;
type GpuOp<'a> = Box<dyn Fn(&mut fhe_cuda::DevicePoly) -> fhe_math::Result<()> + 'a>;

/// The first CUDA device; panics (never a silent pass) when there is none.
fn device() -> Arc<Device> {
    static DEV: OnceLock<Arc<Device>> = OnceLock::new();
    DEV.get_or_init(|| {
        let d = Device::new(0)
            .unwrap_or_else(|e| panic!("a CUDA device is required for gpu_* tests: {e}"));
        d.warm_up().expect("kernel modules compile");
        eprintln!("device: {} ({})", d.name(), d.arch());
        d
    })
    .clone()
}

/// A ring of degree `n` with `q` ciphertext primes (first 60 bits, others 40), `k` special 60-bit
/// primes and `dnum` digits.
fn ring(log_n: u32, q: usize, k: usize, dnum: usize) -> Arc<RingContext> {
    ring_of(log_n, q, k, dnum, 40)
}

/// `q` ciphertext primes (60 bits, then `bits` bits), `k` special primes of 60 bits, `dnum`
/// digits of equal size (the last may be shorter).
fn ring_of(log_n: u32, q: usize, k: usize, dnum: usize, bits: u32) -> Arc<RingContext> {
    let n = 1usize << log_n;
    let two_n = 2 * n as u64;
    let mut qs = ntt_primes(60, two_n, 1, &[]).unwrap();
    qs.extend(ntt_primes(bits, two_n, q - 1, &qs).unwrap());
    let ps = ntt_primes(60, two_n, k, &qs).unwrap();
    let per = q.div_ceil(dnum);
    let digits: Vec<Range<usize>> = (0..q).step_by(per).map(|s| s..(s + per).min(q)).collect();
    RingContext::new(n, &qs, &ps, digits).unwrap()
}

fn seed(b: u8) -> Seed {
    Seed([b; 32])
}

/// Active limbs of both buffers are equal (inactive capacity is unspecified).
fn assert_same(what: &str, cpu: &RnsPoly, gpu: &RnsPoly) {
    assert_eq!(cpu.shape(), gpu.shape(), "{what}: shapes");
    for c in 0..cpu.components() {
        for s in cpu.active_slots() {
            if cpu.limb(c, s) != gpu.limb(c, s) {
                let k = cpu
                    .limb(c, s)
                    .iter()
                    .zip(gpu.limb(c, s))
                    .position(|(a, b)| a != b)
                    .unwrap();
                panic!(
                    "{what}: component {c} slot {s} differs first at coefficient {k}: cpu {} gpu {}",
                    cpu.limb(c, s)[k],
                    gpu.limb(c, s)[k]
                );
            }
        }
    }
}

struct Pair {
    cpu: CpuBackend,
    gpu: CudaBackend,
    ring: Arc<RingContext>,
}

impl Pair {
    fn new(ring: Arc<RingContext>) -> Self {
        Self::on(device(), ring)
    }

    fn on(dev: Arc<Device>, ring: Arc<RingContext>) -> Self {
        let gpu = CudaBackend::new(dev, ring.clone()).unwrap();
        Pair {
            cpu: CpuBackend::new(ring.clone()),
            gpu,
            ring,
        }
    }

    /// A random buffer (uniform residues), on both backends.
    fn random(&self, shape: Shape, idx: u32) -> (RnsPoly, fhe_cuda::DevicePoly) {
        let h = self
            .cpu
            .sample_uniform(&seed(0xA5), Domain::Other, idx * 16, shape)
            .unwrap();
        let d = self.gpu.upload(&h).unwrap();
        (h, d)
    }

    fn same(&self, what: &str, cpu: &RnsPoly, gpu: &fhe_cuda::DevicePoly) {
        let g = self.gpu.download(gpu).unwrap();
        assert_same(what, cpu, &g);
    }
}

fn check_all(ring: Arc<RingContext>) {
    check_all_on(device(), ring);
}

/// Every backend method on `dev` against the CPU backend, bit for bit.
fn check_all_on(dev: Arc<Device>, ring: Arc<RingContext>) {
    let p = Pair::on(dev, ring.clone());
    let top = ring.max_level();
    let mid = top / 2;
    let (cpu, gpu) = (&p.cpu, &p.gpu);
    let sh = |components, level, extended| Shape {
        components,
        level,
        extended,
    };

    // Samplers (same seeds), full and partial levels, extended.
    for (i, shape) in [sh(2, top, true), sh(1, mid, false), sh(3, top, false)]
        .into_iter()
        .enumerate()
    {
        let i = i as u32;
        p.same(
            "sample_uniform",
            &cpu.sample_uniform(&seed(1), Domain::PublicA, i, shape)
                .unwrap(),
            &gpu.sample_uniform(&seed(1), Domain::PublicA, i, shape)
                .unwrap(),
        );
        p.same(
            "sample_ternary",
            &cpu.sample_ternary(&seed(2), Domain::Secret, i, shape)
                .unwrap(),
            &gpu.sample_ternary(&seed(2), Domain::Secret, i, shape)
                .unwrap(),
        );
        p.same(
            "sample_gaussian",
            &cpu.sample_gaussian(&seed(3), Domain::Error, i, shape)
                .unwrap(),
            &gpu.sample_gaussian(&seed(3), Domain::Error, i, shape)
                .unwrap(),
        );
    }

    // Upload / download / duplicate / zeros.
    let (h, d) = p.random(sh(2, top, true), 1);
    p.same("upload", &h, &d);
    p.same("duplicate", &h, &gpu.duplicate(&d).unwrap());
    p.same(
        "zeros",
        &cpu.zeros(sh(2, mid, true)).unwrap(),
        &gpu.zeros(sh(2, mid, true)).unwrap(),
    );

    // Element-wise operations: `a` at `mid`, operands at the top level (they cover `a`).
    for ext in [false, true] {
        let (ah, ad) = p.random(sh(2, mid, ext), 2);
        let (bh, bd) = p.random(sh(2, top, ext), 3);
        let (ph, pd) = p.random(sh(1, top, ext), 4);
        let ops: Vec<(&str, CpuOp, GpuOp)> = vec![
            (
                "add_assign",
                Box::new(|a| cpu.add_assign(a, &bh)),
                Box::new(|a| gpu.add_assign(a, &bd)),
            ),
            (
                "sub_assign",
                Box::new(|a| cpu.sub_assign(a, &bh)),
                Box::new(|a| gpu.sub_assign(a, &bd)),
            ),
            (
                "neg_assign",
                Box::new(|a| cpu.neg_assign(a)),
                Box::new(|a| gpu.neg_assign(a)),
            ),
            (
                "mul_plain_assign",
                Box::new(|a| cpu.mul_plain_assign(a, &ph)),
                Box::new(|a| gpu.mul_plain_assign(a, &pd)),
            ),
            (
                "mul_plain_acc",
                Box::new(|a| cpu.mul_plain_acc(a, &bh, &ph)),
                Box::new(|a| gpu.mul_plain_acc(a, &bd, &pd)),
            ),
            (
                "add_component_assign",
                Box::new(|a| cpu.add_component_assign(a, 1, &ph)),
                Box::new(|a| gpu.add_component_assign(a, 1, &pd)),
            ),
            (
                "combine_leading_assign (add)",
                Box::new(|a| cpu.combine_leading_assign(a, &ph, false)),
                Box::new(|a| gpu.combine_leading_assign(a, &pd, false)),
            ),
            (
                "combine_leading_assign (subtract)",
                Box::new(|a| cpu.combine_leading_assign(a, &ph, true)),
                Box::new(|a| gpu.combine_leading_assign(a, &pd, true)),
            ),
            (
                "copy_component",
                Box::new(|a| cpu.copy_component(&bh, 1, a, 0)),
                Box::new(|a| gpu.copy_component(&bd, 1, a, 0)),
            ),
            ("ntt", Box::new(|a| cpu.ntt(a)), Box::new(|a| gpu.ntt(a))),
            ("intt", Box::new(|a| cpu.intt(a)), Box::new(|a| gpu.intt(a))),
        ];
        for (name, fc, fg) in ops {
            let (mut x, mut y) = (ah.clone(), gpu.duplicate(&ad).unwrap());
            fc(&mut x).unwrap();
            fg(&mut y).unwrap();
            p.same(&format!("{name} (extended {ext})"), &x, &y);
        }
        for subtract in [false, true] {
            p.same(
                &format!("add_new subtract={subtract} (extended {ext})"),
                &cpu.add_new(&ah, &bh, subtract).unwrap(),
                &gpu.add_new(&ad, &bd, subtract).unwrap(),
            );
        }
        let count = ah.active_slots().count();
        let scalars: Vec<u64> = (0..count as u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let (mut x, mut y) = (ah.clone(), gpu.duplicate(&ad).unwrap());
        cpu.mul_scalar_assign(&mut x, &scalars).unwrap();
        gpu.mul_scalar_assign(&mut y, &scalars).unwrap();
        p.same("mul_scalar_assign", &x, &y);
        cpu.add_scalar_assign(&mut x, 1, &scalars).unwrap();
        gpu.add_scalar_assign(&mut y, 1, &scalars).unwrap();
        p.same("add_scalar_assign", &x, &y);
        assert!(gpu.mul_scalar_assign(&mut y, &scalars[1..]).is_err());
        // Round trip through the NTT is the identity.
        gpu.ntt(&mut y).unwrap();
        gpu.intt(&mut y).unwrap();
        p.same("ntt/intt round trip", &x, &y);
    }

    // The fused plaintext multiply-sum against the CPU backend's default (a chain of
    // multiply-accumulates into zeros): no term, one, and more than one 32-term reduction
    // chunk; operands at the output's level and above it.
    {
        let (ah, ad) = p.random(sh(2, top, false), 7);
        let (bh, bd) = p.random(sh(2, mid, false), 8);
        let (ph, pd) = p.random(sh(1, top, false), 9);
        let (qh, qd) = p.random(sh(1, mid, false), 10);
        for count in [0usize, 1, 3, 40] {
            let th: Vec<(&_, &_)> = (0..count)
                .map(|t| if t % 2 == 0 { (&ah, &qh) } else { (&bh, &ph) })
                .collect();
            let td: Vec<(&_, &_)> = (0..count)
                .map(|t| if t % 2 == 0 { (&ad, &qd) } else { (&bd, &pd) })
                .collect();
            p.same(
                &format!("mul_plain_sum ({count} terms)"),
                &cpu.mul_plain_sum(sh(2, mid, false), &th).unwrap(),
                &gpu.mul_plain_sum(sh(2, mid, false), &td).unwrap(),
            );
        }
        let low = gpu.zeros(sh(2, mid - 1, false)).unwrap();
        assert!(
            gpu.mul_plain_sum(sh(2, mid, false), &[(&low, &pd)])
                .is_err()
        );
    }

    // Tensor at the lower of two levels.
    let (ah, ad) = p.random(sh(2, top, false), 5);
    let (bh, bd) = p.random(sh(2, top - 1, false), 6);
    p.same(
        "tensor",
        &cpu.tensor(&ah, &bh).unwrap(),
        &gpu.tensor(&ad, &bd).unwrap(),
    );
    assert!(
        gpu.tensor(&ad, &gpu.zeros(sh(3, top, false)).unwrap())
            .is_err()
    );

    // Automorphisms.
    let two_n = 2 * ring.n() as u64;
    for (g, mapped) in [
        (5u64, 2usize),
        (25, 1),
        (two_n - 1, 2),
        (5u64.pow(7) % two_n, 2),
    ] {
        let (mut oh, mut od) = p.random(sh(2, mid, false), 7);
        cpu.automorphism_into(&ah, g, &mut oh, mapped).unwrap();
        gpu.automorphism_into(&ad, g, &mut od, mapped).unwrap();
        p.same(&format!("automorphism g={g} mapped={mapped}"), &oh, &od);
    }
    assert!(
        gpu.automorphism_into(&ad, 4, &mut gpu.zeros(sh(2, top, false)).unwrap(), 2)
            .is_err()
    );

    // Rescale at the top and a middle level.
    for level in [top, mid.max(1)] {
        let (mut x, mut y) = p.random(sh(3, level, false), 8);
        cpu.rescale(&mut x).unwrap();
        gpu.rescale(&mut y).unwrap();
        p.same(&format!("rescale from {level}"), &x, &y);
        // BGV's t-preserving modulus switch (CUDA folds the t scalings into its kernels).
        let (mut x, mut y) = p.random(sh(2, level, false), 16);
        cpu.rescale_mod_t(&mut x, 65537).unwrap();
        gpu.rescale_mod_t(&mut y, 65537).unwrap();
        p.same(&format!("rescale_mod_t from {level}"), &x, &y);
    }
    let (_, mut z) = p.random(sh(2, 0, false), 9);
    assert!(gpu.rescale(&mut z).is_err());
    // Rescaled into a new buffer: the CPU's active limbs, and every word (inactive slots
    // included, here holding data left by lowering the level) what the GPU's own copy rescaled
    // in place holds; with t = 1 that is also every word of the CPU's. The input is unchanged.
    for level in [top, mid.max(1)] {
        for (components, t) in [(2, 1), (3, 1), (2, 65537)] {
            let (mut x, mut y) = p.random(sh(components, top, false), 12);
            cpu.set_level(&mut x, level).unwrap();
            gpu.set_level(&mut y, level).unwrap();
            let want = cpu.rescaled_mod_t(&x, t).unwrap();
            let got = gpu.rescaled_mod_t(&y, t).unwrap();
            let what = format!("rescaled_mod_t from {level}, {components} components, t {t}");
            p.same(&what, &want, &got);
            let mut copy = gpu.duplicate(&y).unwrap();
            gpu.rescale_mod_t(&mut copy, t).unwrap();
            let got = gpu.download(&got).unwrap();
            assert!(
                got == gpu.download(&copy).unwrap(),
                "{what}: not the copy's words"
            );
            assert!(t != 1 || got == want, "{what}: not the CPU's words");
            assert!(gpu.download(&y).unwrap() == x, "{what}: input changed");
        }
    }
    assert!(gpu.rescaled_mod_t(&z, 1).is_err());

    // Key switching parts at several levels.
    for level in [top, mid, 0] {
        let (ch, cd) = p.random(sh(3, level, false), 10);
        let (kh, kd) = p.random(sh(2 * ring.digits().len(), top, true), 11);
        for component in [0, 2] {
            let eh = cpu.mod_up(&ch, component).unwrap();
            let ed = gpu.mod_up(&cd, component).unwrap();
            p.same(
                &format!("mod_up level {level} component {component}"),
                &eh,
                &ed,
            );
        }
        let eh = cpu.mod_up(&ch, 1).unwrap();
        let ed = gpu.mod_up(&cd, 1).unwrap();
        let (mut acc_h, mut acc_d) = p.random(sh(2, level, true), 12);
        cpu.key_product(&eh, &kh, None, &mut acc_h).unwrap();
        gpu.key_product(&ed, &kd, None, &mut acc_d).unwrap();
        p.same(&format!("key_product level {level}"), &acc_h, &acc_d);
        cpu.key_product(&eh, &kh, Some(5), &mut acc_h).unwrap();
        gpu.key_product(&ed, &kd, Some(5), &mut acc_d).unwrap();
        p.same(&format!("key_product galois level {level}"), &acc_h, &acc_d);
        for rescale in [false, true] {
            if rescale && level == 0 {
                continue;
            }
            let (mut oh, mut od) = p.random(sh(2, level, false), 13);
            cpu.mod_down_into(&acc_h, &mut oh, rescale).unwrap();
            gpu.mod_down_into(&acc_d, &mut od, rescale).unwrap();
            p.same(
                &format!("mod_down level {level} rescale {rescale}"),
                &oh,
                &od,
            );
            // BGV's t-preserving variant (acc may be overwritten: work on copies).
            let (mut ah2, mut ad2) = (acc_h.clone(), gpu.duplicate(&acc_d).unwrap());
            let (mut oh, mut od) = p.random(sh(2, level, false), 17);
            cpu.mod_down_into_mod_t(&mut ah2, &mut oh, rescale, 65537)
                .unwrap();
            gpu.mod_down_into_mod_t(&mut ad2, &mut od, rescale, 65537)
                .unwrap();
            p.same(
                &format!("mod_down_mod_t level {level} rescale {rescale}"),
                &oh,
                &od,
            );
        }
        // Composites.
        for (component, galois) in [(2, Some(5)), (1, None)] {
            p.same(
                &format!("key_switch level {level} component {component} galois {galois:?}"),
                &cpu.key_switch(&ch, component, &kh, galois).unwrap(),
                &gpu.key_switch(&cd, component, &kd, galois).unwrap(),
            );
        }
        if level > 0 {
            let (ah, ad) = p.random(sh(2, level, false), 14);
            let (bh, bd) = p.random(sh(2, level, false), 15);
            p.same(
                "mul_relin rescale",
                &cpu.mul_relin(&ah, &bh, &kh, true).unwrap(),
                &gpu.mul_relin(&ad, &bd, &kd, true).unwrap(),
            );
            // The composite multiply + relinearize preserving a message mod t, with and without
            // BGV's switch, with the operands at two levels and for a square.
            let (lh, ld) = p.random(sh(2, level - 1, false), 16);
            for (name, (xh, xd), (yh, yd), low) in [
                ("same level", (&ah, &ad), (&bh, &bd), level),
                ("two levels", (&lh, &ld), (&ah, &ad), level - 1),
                ("square", (&ah, &ad), (&ah, &ad), level),
            ] {
                for switch in [false, true].into_iter().filter(|&s| !s || low > 0) {
                    p.same(
                        &format!("mul_relin_mod_t {name} level {level} switch {switch}"),
                        &cpu.mul_relin_mod_t(xh, yh, &kh, switch, 65537).unwrap(),
                        &gpu.mul_relin_mod_t(xd, yd, &kd, switch, 65537).unwrap(),
                    );
                }
            }
            let hc = cpu.rotate_hoisted(&ah, &[(5, &kh), (25, &kh)]).unwrap();
            let hg = gpu.rotate_hoisted(&ad, &[(5, &kd), (25, &kd)]).unwrap();
            for (x, y) in hc.iter().zip(&hg) {
                p.same("rotate_hoisted", x, y);
            }
            // BGV's t-preserving composites (CUDA folds the t scalings into mod_down).
            let t = 65537;
            let hc = cpu
                .rotate_hoisted_mod_t(&ah, &[(5, &kh), (25, &kh)], t)
                .unwrap();
            let hg = gpu
                .rotate_hoisted_mod_t(&ad, &[(5, &kd), (25, &kd)], t)
                .unwrap();
            for (x, y) in hc.iter().zip(&hg) {
                p.same("rotate_hoisted_mod_t", x, y);
            }
            // A 3-component buffer read as coefficient form (BFV's unrelinearized product).
            p.same(
                &format!("relinearize_from_coeff level {level}"),
                &cpu.relinearize_from_coeff(ch.clone(), &kh).unwrap(),
                &gpu.relinearize_from_coeff(gpu.duplicate(&cd).unwrap(), &kd)
                    .unwrap(),
            );
            for switch in [false, true] {
                p.same(
                    &format!("relinearize_mod_t level {level} switch {switch}"),
                    &cpu.relinearize_mod_t(ch.clone(), &kh, switch, t).unwrap(),
                    &gpu.relinearize_mod_t(gpu.duplicate(&cd).unwrap(), &kd, switch, t)
                        .unwrap(),
                );
            }
        }
    }
    gpu.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_backend_matches_cpu_n13() {
    check_all(ring(13, 6, 2, 3));
}

/// A second device handle reads every kernel module from the on-disk cache that the first one's
/// warm-up filled (NVRTC is not run again), and those modules compute bit for bit what the CPU
/// backend does. With the cache off (or its folder not writable) it compiles them all.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_second_device_loads_its_modules_from_the_disk_cache() {
    let first = device();
    let units: Vec<String> = fhe_cuda::kernels::MODULES
        .iter()
        .flat_map(|m| fhe_cuda::kernels::units(m).unwrap())
        .map(|u| u.name)
        .collect();
    let all = units.len();
    let has_entry = |dir: &std::path::Path, unit: &str| {
        std::fs::read_dir(dir).is_ok_and(|mut es| {
            es.any(|e| {
                e.is_ok_and(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("{unit}-"))
                })
            })
        })
    };
    let cached = first
        .kernel_cache()
        .map_or(0, |dir| units.iter().filter(|u| has_entry(dir, u)).count());
    let second = Device::new(0).unwrap();
    second.warm_up().unwrap();
    let loads = second.module_loads();
    eprintln!(
        "kernel cache {:?}: {cached} of {all} units stored; second device {loads:?}",
        first.kernel_cache()
    );
    assert_eq!(loads.from_cache + loads.compiled, all);
    if cached == all {
        assert_eq!(loads.from_cache, all, "every unit has an entry");
    }
    if second.kernel_cache().is_none() {
        assert_eq!(loads.compiled, all);
    }
    check_all_on(second, ring(13, 6, 2, 3));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_backend_matches_cpu_n16() {
    check_all(ring(16, 25, 7, 3));
}

/// Every backend method at the ring degrees the other `check_all` tests leave out: 2^11 (one
/// pass), 2^12 (two of 6 stages), 2^15 (8 and 7: the N = 2^15 presets' shape) and 2^17 (9 and 8,
/// the largest degree the backend takes, with the compacted twiddle regions of 8-stage passes
/// that `kernels::ntt::compaction` lays out on the host).
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_backend_matches_cpu_other_degrees() {
    check_all(ring(11, 4, 1, 2));
    check_all(ring(12, 5, 2, 3));
    check_all(ring(15, 6, 2, 3));
    check_all(ring(17, 5, 2, 3));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_one_prime_digits_match_cpu() {
    // dnum = L + 1: the forward NTT of mod_up lifts each one-prime digit as it loads it (two
    // passes), 60- and 40-bit sources, FP64 and integer targets.
    check_all(ring(13, 6, 1, 6));
    check_all(ring(14, 5, 2, 5));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_few_prime_digits_match_cpu() {
    // Digits of 2..=4 primes: mod_up's inverse NTT writes them prescaled and the forward NTT
    // converts them as it loads them (two passes); digits of 4 with the 60-bit prime, of 3, of
    // 2, and, at lower levels, the truncated last digits (one prime: lifted). Digits of 40-bit
    // primes form the sums of 40-bit targets in doubles, those holding the 60-bit prime and the
    // 60-bit targets in integers. A digit of 5 keeps the conversion kernel.
    check_all(ring(13, 8, 1, 2));
    check_all(ring(14, 7, 2, 3));
    check_all(ring(13, 8, 2, 4));
    check_all(ring(13, 10, 2, 2));
    check_all(ring(13, 6, 3, 3));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_many_prime_digits_match_cpu() {
    // Digits and special bases of 5..=16 primes: the tensor-core conversions (convert_mma.cuh)
    // of two, three and four k32 chunks, plain (mod_up) and exact, with and without the fused
    // rescale (mod_down), into 40- and 60-bit targets.
    check_all(ring(13, 11, 5, 2)); // digits of 6 and 5, 5 special primes
    check_all(ring(13, 16, 6, 2)); // digits of 8, 6 special primes
    check_all(ring(13, 12, 12, 1)); // one digit of 12, 12 special primes
    check_all(ring(12, 16, 16, 1)); // one digit of 16, 16 special primes
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_wide_prime_digits_match_cpu() {
    // Primes in [2^42, 2^50) (the integer schemes' 50-bit chains): the wide FP64 butterflies,
    // and digits of 2..=4 such primes converted on load with their sums in doubles
    // (CONVERT_F64_WIDE_SOURCES); 45-bit digits carry both FP64 flags, 50-bit ones the wide
    // flag only, the digit holding the 60-bit q_0 neither.
    check_all(ring_of(13, 8, 2, 4, 50));
    check_all(ring_of(14, 10, 2, 3, 49));
    check_all(ring_of(13, 7, 1, 3, 45));
    check_all(ring_of(13, 5, 1, 5, 50));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_small_ring_and_odd_digits() {
    // N below one NTT tile, one prime per digit.
    check_all(ring(10, 4, 1, 4));
}

/// SplitMix64 words from `seed` (reproducible test inputs).
fn words(seed: u64, count: usize) -> Vec<u64> {
    let mut s = seed;
    (0..count)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

/// `n` random i128 of every bit length and sign, with zero and the extremes first.
fn random_i128(seed: u64, n: usize) -> Vec<i128> {
    let w = words(seed, 4 * n);
    let mut v: Vec<i128> = (0..n)
        .map(|k| {
            let x =
                ((w[4 * k] as u128) << 64 | w[4 * k + 1] as u128) as i128 >> (w[4 * k + 2] % 128);
            if w[4 * k + 3] & 1 == 1 { -x } else { x }
        })
        .collect();
    let ext = [
        0,
        1,
        -1,
        i128::MAX,
        i128::MIN,
        i128::MIN + 1,
        i64::MIN as i128,
        u64::MAX as i128,
    ];
    v[..ext.len()].copy_from_slice(&ext);
    v
}

/// `upload_lifted`, `upload_lifted_i64` and `download_centered_q0` against the CPU backend
/// (whose bodies are the trait's host defaults), at several levels.
fn check_lift(ring: Arc<RingContext>) {
    let p = Pair::new(ring.clone());
    let (cpu, gpu) = (&p.cpu, &p.gpu);
    let n = ring.n();
    let top = ring.max_level();
    let v = random_i128(1, n);
    let v64: Vec<i64> = random_i128(2, n).iter().map(|&x| x as i64).collect();
    let half_q0 = (ring.modulus(0).value() - 1) / 2;
    // Small centred values (flags true), some at and just beyond q_0's centred range, then
    // values far beyond it (flags false above level 0).
    let mut small: Vec<i128> = words(3, n)
        .iter()
        .map(|&w| (w >> 14) as i128 - (1i128 << 49))
        .collect();
    small[..4].copy_from_slice(&[
        half_q0 as i128,
        -(half_q0 as i128),
        half_q0 as i128 + 1,
        -(half_q0 as i128) - 1,
    ]);
    for x in small[3 * n / 4..].iter_mut() {
        *x <<= 50;
    }
    for level in [0, 1, top / 2, top] {
        let what = |m: &str| format!("{m} n={n} level {level}");
        let want = cpu.upload_lifted(&v, level).unwrap();
        let got = gpu.upload_lifted(&v, level).unwrap();
        p.same(&what("upload_lifted"), &want, &got);
        // Inactive slots are zero, as on the CPU.
        let g = gpu.download(&got).unwrap();
        assert!(
            (level + 1..ring.q_count()).all(|s| g.limb(0, s).iter().all(|&x| x == 0)),
            "{}",
            what("upload_lifted inactive slots")
        );
        p.same(
            &what("upload_lifted_i64"),
            &cpu.upload_lifted_i64(&v64, level).unwrap(),
            &gpu.upload_lifted_i64(&v64, level).unwrap(),
        );
        // The i64 and i128 entry points agree on the same integers.
        let wide: Vec<i128> = v64.iter().map(|&x| x as i128).collect();
        p.same(
            &what("upload_lifted i64 = i128"),
            &cpu.upload_lifted(&wide, level).unwrap(),
            &gpu.upload_lifted_i64(&v64, level).unwrap(),
        );

        // Centred residues: random polynomials (large, flags false above level 0), lifted
        // small and large values, and the second component of a 2-component buffer ignored.
        let (rh, rd) = p.random(
            Shape {
                components: 2,
                level,
                extended: false,
            },
            level as u32,
        );
        let sh = cpu.upload_lifted(&small, level).unwrap();
        let sd = gpu.upload_lifted(&small, level).unwrap();
        for (name, h, d) in [("random", &rh, &rd), ("small", &sh, &sd)] {
            let c = cpu.download_centered_q0(h).unwrap();
            let g = gpu.download_centered_q0(d).unwrap();
            if let Some(k) = (0..n).find(|&k| c[k] != g[k]) {
                panic!(
                    "{}: coefficient {k}: cpu {:?} gpu {:?}",
                    what(&format!("download_centered_q0 {name}")),
                    c[k],
                    g[k]
                );
            }
            let somes = c.iter().filter(|x| x.is_some()).count();
            if level == 0 {
                assert_eq!(somes, n, "{}", what("level 0: every value is small"));
            } else if name == "small" {
                assert_eq!(somes, 3 * n / 4 - 2, "{}", what("small values"));
                assert_eq!(c[0], Some(half_q0 as i64));
                assert_eq!(c[1], Some(-(half_q0 as i64)));
            }
        }
    }
    // Bad arguments are errors on both backends.
    assert!(gpu.upload_lifted(&v[1..], 0).is_err());
    assert!(gpu.upload_lifted_i64(&v64, top + 1).is_err());
    let ext = gpu
        .zeros(Shape {
            components: 1,
            level: top,
            extended: true,
        })
        .unwrap();
    assert!(gpu.download_centered_q0(&ext).is_err());
    gpu.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_lift_and_centered_q0_match_cpu_n13() {
    check_lift(ring(13, 6, 2, 3));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_lift_and_centered_q0_match_cpu_n16() {
    check_lift(ring(16, 25, 7, 3));
}

/// `tensor_scale_round` (BFV's integer scale-and-round product) on the GPU against the CPU's
/// host reference, bit for bit, at the top level and one below.
fn check_scale_round(ring: Arc<RingContext>, t: u64) {
    let pair = Pair::new(ring.clone());
    let top = ring.max_level();
    for level in [top, top - 1] {
        let tables = fhe_math::ScaleRoundTables::new(&ring, level, t).unwrap();
        let shape = Shape {
            components: 2,
            level,
            extended: false,
        };
        let (ha, da) = pair.random(shape, 1 + level as u32);
        let (hb, db) = pair.random(shape, 40 + level as u32);
        let want = pair.cpu.tensor_scale_round(&ha, &hb, &tables).unwrap();
        // Twice: the second call reuses the cached device tables.
        for _ in 0..2 {
            let got = pair.gpu.tensor_scale_round(&da, &db, &tables).unwrap();
            pair.same(
                &format!("tensor_scale_round n={} level {level}", ring.n()),
                &want,
                &got,
            );
        }
        // Relinearized in the same call (the GPU hands c_2 to mod_up in coefficient form).
        let key = Shape {
            components: 2 * ring.digits().len(),
            level: top,
            extended: true,
        };
        let (hk, dk) = pair.random(key, 70);
        let want = pair
            .cpu
            .tensor_scale_round_relin(&ha, &hb, &tables, &hk)
            .unwrap();
        let got = pair
            .gpu
            .tensor_scale_round_relin(&da, &db, &tables, &dk)
            .unwrap();
        pair.same(
            &format!("tensor_scale_round_relin n={} level {level}", ring.n()),
            &want,
            &got,
        );
        // The product left in coefficient form, and its relinearization from that form.
        let want = pair
            .cpu
            .tensor_scale_round_coeff(&ha, &hb, &tables)
            .unwrap();
        let got = pair
            .gpu
            .tensor_scale_round_coeff(&da, &db, &tables)
            .unwrap();
        let name = format!("n={} level {level}", ring.n());
        pair.same(&format!("tensor_scale_round_coeff {name}"), &want, &got);
        pair.same(
            &format!("relinearize_from_coeff {name}"),
            &pair.cpu.relinearize_from_coeff(want, &hk).unwrap(),
            &pair.gpu.relinearize_from_coeff(got, &dk).unwrap(),
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_tensor_scale_round_matches_cpu_n13() {
    check_scale_round(ring(13, 4, 1, 1), 65537);
    // One-prime digits (lifted on load, not prescaled) and a mixed split.
    check_scale_round(ring(13, 4, 2, 4), 65537);
    check_scale_round(ring(13, 5, 2, 2), 65537);
    // More than 16 Q limbs (18 and 17 at the two levels checked): the rounding into B and the
    // conversion back to Q run as two kernels instead of `scale_round_to_q`.
    check_scale_round(ring(13, 18, 2, 3), 65537);
}

/// A ring of one NTT pass, where the relinearization of a coefficient-form product takes the
/// unfused key product (its c_2 transformed in place, then the NTT-form mod_up).
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_tensor_scale_round_matches_cpu_small_ring() {
    check_scale_round(ring(10, 4, 1, 4), 65537);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_tensor_scale_round_matches_cpu_n15() {
    check_scale_round(ring(15, 12, 2, 3), (1 << 31) - 1);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_pool_returns_to_baseline() {
    let dev = device();
    dev.synchronize().unwrap();
    let before_backend = dev.pool_stats().unwrap();
    let p = Pair::new(ring(13, 6, 2, 3));
    let top = p.ring.max_level();
    let gpu = &p.gpu;
    let key = gpu
        .sample_uniform(
            &seed(4),
            Domain::KeySwitchA,
            0,
            Shape {
                components: 6,
                level: top,
                extended: true,
            },
        )
        .unwrap();
    // A mixed operator loop: sampling, tensor + relinearize + rescale, NTT, hoisted rotations,
    // element-wise ops, a download.
    let round = || {
        let a = gpu
            .sample_uniform(
                &seed(5),
                Domain::PublicA,
                0,
                Shape {
                    components: 2,
                    level: top,
                    extended: false,
                },
            )
            .unwrap();
        let mut b = gpu.duplicate(&a).unwrap();
        gpu.add_assign(&mut b, &a).unwrap();
        let mut c = gpu.mul_relin(&a, &b, &key, true).unwrap();
        gpu.ntt(&mut c).unwrap();
        let r = gpu.rotate_hoisted(&a, &[(5, &key), (25, &key)]).unwrap();
        let _ = gpu.download(&r[0]).unwrap();
    };
    // A warm-up round fills the backend's caches (the Galois index maps of 5 and 25 are uploaded
    // once, on first use, and live as long as the backend) and its scratch workspace (the
    // operators' internal temporaries, kept for reuse; see `fhe_cuda::scratch`); the baseline is
    // taken after it, so it includes the warm scratch, which must not grow afterwards. Every
    // object the rounds create is dropped within the round, so in-use bytes return to the
    // baseline exactly; dropping the backend at the end returns the tables, maps and scratch.
    round();
    gpu.synchronize().unwrap();
    let base = dev.pool_stats().unwrap();
    let scratch = gpu.scratch_stats();
    assert!(
        base.in_use >= scratch.bytes,
        "the scratch is part of the pool's in-use bytes"
    );
    dev.reset_pool_peak().unwrap();
    round();
    gpu.synchronize().unwrap();
    let first = dev.pool_stats().unwrap();
    for _ in 1..1000 {
        round();
    }
    gpu.synchronize().unwrap();
    let after = dev.pool_stats().unwrap();
    let scratch_after = gpu.scratch_stats();
    eprintln!(
        "pool: baseline {base:?}, after the first iteration {first:?}, after 1000 {after:?}; \
         scratch after the warm-up {scratch:?}, after 1000 {scratch_after:?}"
    );
    assert_eq!(
        (
            scratch_after.allocations,
            scratch_after.bytes,
            scratch_after.lent
        ),
        (scratch.allocations, scratch.bytes, 0),
        "the scratch neither grows nor leaks borrows after the warm-up round"
    );
    assert_eq!(
        after.in_use, base.in_use,
        "in-use bytes return to the baseline"
    );
    assert!(
        after.reserved <= first.peak_reserved,
        "reserved bytes stay at or below the first iteration's peak"
    );
    assert!(
        after.reserved >= after.in_use,
        "freed memory stays cached (release threshold)"
    );
    drop(key);
    drop(p);
    dev.synchronize().unwrap();
    assert_eq!(
        dev.pool_stats().unwrap().in_use,
        before_backend.in_use,
        "dropping the backend frees its tables, Galois maps and scratch"
    );
}

/// CKKS end to end on a backend: returns the downloaded ciphertexts and the decoded values.
fn ckks_run<B: Backend>(ctx: ckks::Context<B>) -> (Vec<RnsPoly>, Vec<fhe_math::fft::Complex64>) {
    let be = ctx.backend().clone();
    let kg = ctx.key_generator();
    let sk = kg.secret_key_from_seed(seed(10)).unwrap();
    let rlk = kg.relin_key_with_seeds(&sk, seed(11), &seed(12)).unwrap();
    let ev = ckks::Evaluator::new(&ctx).unwrap();
    let g = ev.rotation_element(1);
    let gk = kg
        .galois_key_with_seeds(&sk, g, seed(13), &seed(14))
        .unwrap();
    let keys = rlwe::GaloisKeys {
        keys: [(g, gk)].into_iter().collect(),
        fingerprint: ctx.params().fingerprint(),
    };
    let enc = ckks::Encoder::new(&ctx).unwrap();
    let slots = enc.max_slots();
    let top = ctx.params().max_level();
    let x: Vec<f64> = (0..slots)
        .map(|i| (i as f64 / slots as f64) - 0.5)
        .collect();
    let y: Vec<f64> = (0..slots).map(|i| ((i * 7 % 13) as f64) / 13.0).collect();
    let px = enc.encode_real(&x, top).unwrap();
    let py = enc.encode_real(&y, top).unwrap();
    let cx = rlwe::encrypt::encrypt_sk_with_seeds(&be, &sk, &px, seed(20), &seed(21)).unwrap();
    let cy = rlwe::encrypt::encrypt_sk_with_seeds(&be, &sk, &py, seed(22), &seed(23)).unwrap();
    let prod = ev.mul_relin_rescale(&cx, &cy, &rlk).unwrap();
    let rot = ev.rotate(&prod, 1, &keys).unwrap();
    let pt = rlwe::encrypt::decrypt(&be, &sk, &rot).unwrap();
    let out = enc.decode(&pt).unwrap();
    // Approximate correctness: slot i holds x[i+1] * y[i+1].
    for (i, o) in out.iter().enumerate().take(64) {
        let j = (i + 1) % slots;
        assert!(
            (o.re - x[j] * y[j]).abs() < 1e-3,
            "slot {i}: {} vs {}",
            o.re,
            x[j] * y[j]
        );
    }
    let polys = [cx.poly(), cy.poly(), prod.poly(), rot.poly(), pt.poly()]
        .iter()
        .map(|p| be.download(p).unwrap())
        .collect();
    (polys, out)
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_ckks_end_to_end_matches_cpu() {
    let params = ckks::Parameters::new(&ckks::params::N13).unwrap();
    let cpu_ctx = ckks::Context::cpu(params.clone()).unwrap();
    let ring = cpu_ctx.backend().ring().clone();
    let gpu_ctx =
        ckks::Context::with_backend(params, CudaBackend::new(device(), ring).unwrap()).unwrap();
    let (cpu_polys, cpu_out) = ckks_run(cpu_ctx);
    let (gpu_polys, gpu_out) = ckks_run(gpu_ctx);
    for (i, (c, g)) in cpu_polys.iter().zip(&gpu_polys).enumerate() {
        assert_same(&format!("ckks buffer {i}"), c, g);
    }
    for (a, b) in cpu_out.iter().zip(&gpu_out) {
        assert_eq!(a.re.to_bits(), b.re.to_bits());
        assert_eq!(a.im.to_bits(), b.im.to_bits());
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_device_reports() {
    let d = device();
    assert!(!d.name().is_empty());
    assert!(d.arch().starts_with("sm_"));
    assert!(matches!(
        Device::new(1 << 20),
        Err(fhe_cuda::Error::NoDevice { .. })
    ));
}

/// One operator of the scratch tests: its name, the GPU call (outputs returned, inputs made
/// inside) and the CPU backend's outputs for the same inputs.
type ScratchOp<'a> = (
    &'static str,
    Box<dyn Fn() -> Vec<fhe_cuda::DevicePoly> + 'a>,
    Vec<RnsPoly>,
);

/// Operators take their internal temporaries from the backend's scratch workspace: after one
/// warm-up call, further calls of relinearize (plain and with the fused rescale), mul_relin with
/// rescale, rotate_hoisted, rescale (BGV's modulus switch is this rescale between two scalar
/// multiplications) and tensor_scale_round make no scratch allocation, the pool never grows,
/// in-use bytes return to the post-warm-up level once the outputs are dropped, a later call needs
/// no more transient memory than the warm-up call less what the scratch kept, and every result is
/// bit-identical to the CPU backend's.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_scratch_no_allocation_after_warm_up() {
    const CALLS: usize = 20;
    let dev = device();
    let ring = ring(14, 8, 2, 3);
    let p = Pair::new(ring.clone());
    let (cpu, gpu) = (&p.cpu, &p.gpu);
    let top = ring.max_level();
    let sh = |components, level, extended| Shape {
        components,
        level,
        extended,
    };
    let (kh, kd) = p.random(sh(2 * ring.digits().len(), top, true), 11);
    let (ah, ad) = p.random(sh(2, top, false), 14);
    let (bh, bd) = p.random(sh(2, top, false), 15);
    let (th, td) = p.random(sh(3, top, false), 16);
    let (mh, md) = p.random(sh(3, top - 2, false), 17);
    let tables = fhe_math::ScaleRoundTables::new(&ring, top, 65537).unwrap();
    let rescaled = |x: &RnsPoly| {
        let mut x = x.clone();
        cpu.rescale(&mut x).unwrap();
        x
    };
    let ops: Vec<ScratchOp> = vec![
        (
            "relinearize",
            Box::new(|| {
                vec![
                    gpu.relinearize(gpu.duplicate(&td).unwrap(), &kd, false)
                        .unwrap(),
                ]
            }),
            vec![cpu.relinearize(th.clone(), &kh, false).unwrap()],
        ),
        (
            "relinearize + rescale",
            Box::new(|| {
                vec![
                    gpu.relinearize(gpu.duplicate(&td).unwrap(), &kd, true)
                        .unwrap(),
                ]
            }),
            vec![cpu.relinearize(th.clone(), &kh, true).unwrap()],
        ),
        (
            "relinearize + rescale, lower level",
            Box::new(|| {
                vec![
                    gpu.relinearize(gpu.duplicate(&md).unwrap(), &kd, true)
                        .unwrap(),
                ]
            }),
            vec![cpu.relinearize(mh.clone(), &kh, true).unwrap()],
        ),
        (
            "mul_relin_rescale",
            Box::new(|| vec![gpu.mul_relin(&ad, &bd, &kd, true).unwrap()]),
            vec![cpu.mul_relin(&ah, &bh, &kh, true).unwrap()],
        ),
        (
            "rotate_hoisted",
            Box::new(|| {
                gpu.rotate_hoisted(&ad, &[(5, &kd), (25, &kd), (125, &kd)])
                    .unwrap()
            }),
            cpu.rotate_hoisted(&ah, &[(5, &kh), (25, &kh), (125, &kh)])
                .unwrap(),
        ),
        (
            "BGV relinearize_mod_t",
            Box::new(|| {
                vec![
                    gpu.relinearize_mod_t(gpu.duplicate(&td).unwrap(), &kd, false, 65537)
                        .unwrap(),
                ]
            }),
            vec![
                cpu.relinearize_mod_t(th.clone(), &kh, false, 65537)
                    .unwrap(),
            ],
        ),
        (
            "BGV rotate_hoisted_mod_t",
            Box::new(|| {
                gpu.rotate_hoisted_mod_t(&ad, &[(5, &kd), (25, &kd)], 65537)
                    .unwrap()
            }),
            cpu.rotate_hoisted_mod_t(&ah, &[(5, &kh), (25, &kh)], 65537)
                .unwrap(),
        ),
        (
            "rescale",
            Box::new(|| {
                let mut y = gpu.duplicate(&td).unwrap();
                gpu.rescale(&mut y).unwrap();
                vec![y]
            }),
            vec![rescaled(&th)],
        ),
        (
            "tensor_scale_round",
            Box::new(|| vec![gpu.tensor_scale_round(&ad, &bd, &tables).unwrap()]),
            vec![cpu.tensor_scale_round(&ah, &bh, &tables).unwrap()],
        ),
    ];
    for (name, run, want) in &ops {
        // Warm-up call: fills the scratch (and per-backend caches: Galois maps, B tables).
        gpu.synchronize().unwrap();
        let pre = dev.pool_stats().unwrap();
        let pre_scratch = gpu.scratch_stats();
        dev.reset_pool_peak().unwrap();
        let got = run();
        gpu.synchronize().unwrap();
        let warm_peak = dev.pool_stats().unwrap().peak;
        for (i, (w, g)) in want.iter().zip(&got).enumerate() {
            p.same(&format!("{name} (warm-up) output {i}"), w, g);
        }
        drop(got);
        gpu.synchronize().unwrap();
        let base = dev.pool_stats().unwrap();
        let scratch = gpu.scratch_stats();
        let kept = scratch.bytes.saturating_sub(pre_scratch.bytes);
        dev.reset_pool_peak().unwrap();
        for call in 0..CALLS {
            let got = run();
            if call + 1 == CALLS {
                for (i, (w, g)) in want.iter().zip(&got).enumerate() {
                    p.same(&format!("{name} call {call} output {i}"), w, g);
                }
            }
        }
        gpu.synchronize().unwrap();
        let after = dev.pool_stats().unwrap();
        let after_scratch = gpu.scratch_stats();
        eprintln!(
            "{name}: pool before {pre:?}, after warm-up {base:?}, after {CALLS} calls {after:?}; \
             scratch after warm-up {scratch:?}, after {CALLS} calls {after_scratch:?}"
        );
        assert_eq!(
            after_scratch.allocations, scratch.allocations,
            "{name}: no scratch allocation after the warm-up call"
        );
        assert_eq!(after_scratch.bytes, scratch.bytes, "{name}: scratch bytes");
        assert_eq!(
            after_scratch.lent, 0,
            "{name}: every scratch buffer returned"
        );
        assert!(
            after_scratch.takes >= scratch.takes + CALLS as u64,
            "{name}: the operator borrows from the scratch"
        );
        assert_eq!(
            after.in_use, base.in_use,
            "{name}: in-use bytes back to the base"
        );
        assert_eq!(after.reserved, base.reserved, "{name}: no pool growth");
        assert!(
            after.peak_reserved <= base.reserved,
            "{name}: no pool growth during the calls"
        );
        assert!(
            after.peak.saturating_sub(base.in_use) + kept <= warm_peak.saturating_sub(pre.in_use),
            "{name}: a later call allocates at most the warm-up call's transient bytes less the \
             scratch it kept (later peak {} over the base, kept {kept}, warm-up peak {} over {})",
            after.peak.saturating_sub(base.in_use),
            warm_peak,
            pre.in_use
        );
    }
    // The same operators in a mixed order: the workspace is shared by all of them.
    let scratch = gpu.scratch_stats();
    for round in 0..3 {
        for i in 0..ops.len() {
            let _ = (ops[(i * 3 + round) % ops.len()].1)();
        }
    }
    gpu.synchronize().unwrap();
    assert_eq!(gpu.scratch_stats().allocations, scratch.allocations);
    assert!(scratch.buffers <= scratch.peak_lent);
    // A backend on another stream has its own workspace.
    let other = CudaBackend::on_stream(dev.clone(), dev.stream(1).clone(), ring.clone()).unwrap();
    assert_eq!(other.scratch_stats().allocations, 0);
    let _ = other.rescale(&mut other.duplicate(&td).unwrap());
    other.synchronize().unwrap();
    assert!(other.scratch_stats().allocations > 0);
    assert_eq!(gpu.scratch_stats().allocations, scratch.allocations);
}

/// Two threads share one backend (one stream, one scratch workspace): their enqueues interleave,
/// each live scratch borrow is a distinct buffer, and every result stays bit-identical to the CPU.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_scratch_shared_by_two_threads() {
    let p = Pair::new(ring(13, 6, 2, 3));
    let top = p.ring.max_level();
    let sh = |components, level, extended| Shape {
        components,
        level,
        extended,
    };
    let (kh, kd) = p.random(sh(2 * p.ring.digits().len(), top, true), 21);
    let inputs: Vec<_> = (0..2u32)
        .map(|t| {
            let a = p.random(sh(2, top, false), 22 + 2 * t);
            let b = p.random(sh(2, top, false), 23 + 2 * t);
            let want = p.cpu.mul_relin(&a.0, &b.0, &kh, true).unwrap();
            let rot = p.cpu.rotate_hoisted(&want, &[(5, &kh), (25, &kh)]).unwrap();
            (a.1, b.1, want, rot)
        })
        .collect();
    std::thread::scope(|s| {
        for (t, (ad, bd, want, rot)) in inputs.iter().enumerate() {
            let (gpu, kd) = (p.gpu.clone(), &kd);
            let p = &p;
            s.spawn(move || {
                for i in 0..200 {
                    let c = gpu.mul_relin(ad, bd, kd, true).unwrap();
                    let r = gpu.rotate_hoisted(&c, &[(5, kd), (25, kd)]).unwrap();
                    if i % 50 == 49 {
                        p.same(&format!("thread {t} call {i}: mul_relin_rescale"), want, &c);
                        for (j, (w, g)) in rot.iter().zip(&r).enumerate() {
                            p.same(&format!("thread {t} call {i}: rotation {j}"), w, g);
                        }
                    }
                }
            });
        }
    });
    let st = p.gpu.scratch_stats();
    eprintln!("scratch after two threads: {st:?}");
    assert_eq!(st.lent, 0);
    assert!(st.buffers <= st.peak_lent);
}

/// `decode_mod_t` (decryption's CRT decoding into `Z_t`) against the CPU backend: values and
/// noise summary, both modes, at several levels and plaintext moduli, on uniform residues (far
/// above `Q/4`), on small values, and on coefficients at `⌊Q/4⌋` and `⌊Q/4⌋ + 1` (where the
/// fixed point cannot decide and the exact path must).
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_decode_mod_t_matches_cpu() {
    use fhe_math::crt_decode::{CrtDecoder, DecodeMode};
    use fhe_math::modulus::Modulus;
    use num_bigint::BigUint;
    let r = ring(12, 5, 1, 2);
    let (cpu, gpu) = (
        CpuBackend::new(r.clone()),
        CudaBackend::new(device(), r.clone()).unwrap(),
    );
    let n = r.n();
    let mut checked_above = [false; 2];
    for level in [0usize, 2, 4] {
        let moduli: Vec<Modulus> = (0..=level).map(|s| *r.modulus(s)).collect();
        let q: BigUint = moduli.iter().map(|m| BigUint::from(m.value())).product();
        let shape = Shape {
            components: 1,
            level,
            extended: false,
        };
        for t in [2u64, 65537, 786433] {
            let dec = CrtDecoder::new(&moduli, Modulus::new(t).unwrap()).unwrap();
            for mode in [DecodeMode::ScaleRound, DecodeMode::Centred { scale: 12345 }] {
                // ν = x (BGV) or [t·x]_Q (BFV): x = ν·t^-1 mod Q puts ν where wanted.
                let t_inv = BigUint::from(t).modinv(&q).expect("t coprime to Q");
                let with_noise = |nu: &BigUint| -> BigUint {
                    match mode {
                        DecodeMode::ScaleRound => (nu * &t_inv) % &q,
                        DecodeMode::Centred { .. } => nu.clone(),
                    }
                };
                let quarter: BigUint = &q >> 2u32;
                let mut inputs: Vec<(String, RnsPoly)> = Vec::new();
                inputs.push((
                    "uniform".into(),
                    cpu.sample_uniform(&seed(level as u8), Domain::Other, t as u32, shape)
                        .unwrap(),
                ));
                let small: Vec<i64> = (0..n as i64).map(|k| (k * 7919) % 2001 - 1000).collect();
                let small = cpu.upload_lifted_i64(&small, level).unwrap();
                inputs.push(("small".into(), small.clone()));
                for (name, nu) in [
                    ("floor(Q/4)", quarter.clone()),
                    ("floor(Q/4)+1", &quarter + 1u32),
                    ("-floor(Q/4)", &q - &quarter),
                ] {
                    let mut p = small.clone();
                    let x = with_noise(&nu);
                    for (s, m) in moduli.iter().enumerate() {
                        let rem = (&x % m.value()).iter_u64_digits().next().unwrap_or(0);
                        p.limb_mut(0, s)[n / 3] = rem;
                    }
                    inputs.push((name.into(), p));
                }
                // The slot transform modulo t (where t allows it at this degree).
                let plain_ntt = fhe_math::ntt::NttTable::new(Modulus::new(t).unwrap(), n).ok();
                for (name, host) in &inputs {
                    let want = cpu.decode_mod_t(host, &dec, mode).unwrap();
                    let dev = gpu.upload(host).unwrap();
                    if let Some(ntt) = &plain_ntt {
                        let want = cpu.decode_mod_t_ntt(host, &dec, mode, ntt).unwrap();
                        let got = gpu.decode_mod_t_ntt(&dev, &dec, mode, ntt).unwrap();
                        assert!(want == got, "decode_mod_t_ntt {name} level {level} t {t}");
                    }
                    let got = gpu.decode_mod_t(&dev, &dec, mode).unwrap();
                    assert!(
                        want == got,
                        "decode_mod_t {name} level {level} t {t} {mode:?}: GPU {:?} CPU {:?}",
                        got.1,
                        want.1
                    );
                    if name == "floor(Q/4)+1" {
                        assert!(got.1.above_quarter, "{name} is above Q/4");
                        checked_above[matches!(mode, DecodeMode::ScaleRound) as usize] = true;
                    }
                    if name == "floor(Q/4)" {
                        assert!(!got.1.above_quarter, "{name} is not above Q/4");
                    }
                }
            }
        }
    }
    assert_eq!(checked_above, [true, true]);
    // A decoder of another basis is refused.
    let moduli: Vec<Modulus> = (0..=1).map(|s| *r.modulus(s)).collect();
    let dec = CrtDecoder::new(&moduli, Modulus::new(65537).unwrap()).unwrap();
    let p = gpu
        .zeros(Shape {
            components: 1,
            level: 2,
            extended: false,
        })
        .unwrap();
    assert!(gpu.decode_mod_t(&p, &dec, DecodeMode::ScaleRound).is_err());
    // An NTT modulo another t is refused.
    let dec = CrtDecoder::new(&moduli, Modulus::new(786433).unwrap()).unwrap();
    let ntt = fhe_math::ntt::NttTable::new(Modulus::new(65537).unwrap(), r.n()).unwrap();
    let p = gpu
        .zeros(Shape {
            components: 1,
            level: 1,
            extended: false,
        })
        .unwrap();
    assert!(
        gpu.decode_mod_t_ntt(&p, &dec, DecodeMode::ScaleRound, &ntt)
            .is_err()
    );
}

/// `upload_lifted_intt_mod_t` (batch encoding's inverse slot transform and centred lift) against
/// the CPU backend: the lifted buffer and the message, at two levels and two `t`; a value
/// `≥ t` is refused.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_upload_lifted_intt_mod_t_matches_cpu() {
    use fhe_math::modulus::Modulus;
    use fhe_math::ntt::NttTable;
    let r = ring(12, 5, 1, 2);
    let (cpu, gpu) = (
        CpuBackend::new(r.clone()),
        CudaBackend::new(device(), r.clone()).unwrap(),
    );
    let n = r.n();
    for t in [65537u64, 786433] {
        let ntt = NttTable::new(Modulus::new(t).unwrap(), n).unwrap();
        let values: Vec<u64> = (0..n as u64).map(|k| (k * 40503 + 17) % t).collect();
        for level in [0usize, 4] {
            let (hp, hm) = cpu.upload_lifted_intt_mod_t(&values, &ntt, level).unwrap();
            let (dp, dm) = gpu.upload_lifted_intt_mod_t(&values, &ntt, level).unwrap();
            assert_eq!(hm, dm, "message t {t} level {level}");
            assert_same(
                &format!("upload_lifted_intt_mod_t t {t} level {level}"),
                &hp,
                &gpu.download(&dp).unwrap(),
            );
        }
        let mut bad = values.clone();
        bad[3] = t;
        assert!(gpu.upload_lifted_intt_mod_t(&bad, &ntt, 0).is_err());
        assert!(cpu.upload_lifted_intt_mod_t(&bad, &ntt, 0).is_err());
    }
}

/// `outputs·k·a` canonical coefficients for `linear_combination` over `shape`'s active limbs,
/// laid out `[(j·k + i)·a + s']`: random residues with 0, 1 and `q - 1` among them, or every
/// one `q - 1` with `worst`.
fn lincomb_coeffs(
    ring: &RingContext,
    shape: Shape,
    k: usize,
    outputs: usize,
    seed: u64,
    worst: bool,
) -> Vec<u64> {
    let slots: Vec<usize> = ring.zeros(shape).unwrap().active_slots().collect();
    let a = slots.len();
    words(seed, outputs * k * a)
        .into_iter()
        .enumerate()
        .map(|(idx, w)| {
            let q = ring.modulus(slots[idx % a]).value();
            match (worst, w % 8) {
                (true, _) | (false, 0) => q - 1,
                (false, 1) => 0,
                (false, 2) => 1,
                _ => w % q,
            }
        })
        .collect()
}

/// A buffer of `shape` whose every active residue is `q_s - 1` (the largest products).
fn all_q_minus_one(ring: &RingContext, shape: Shape) -> RnsPoly {
    let mut h = ring.zeros(shape).unwrap();
    for s in h.active_slots() {
        let top = ring.modulus(s).value() - 1;
        for c in 0..shape.components {
            h.limb_mut(c, s).fill(top);
        }
    }
    h
}

/// `linear_combination` of `k` inputs into `outputs` buffers of `shape`, on both backends, bit
/// for bit (active limbs), the inactive `Q` slots zero as on the CPU. With `worst` every input
/// residue and coefficient is `q - 1`.
fn check_lincomb(p: &Pair, shape: Shape, k: usize, outputs: usize, worst: bool, tag: u64) {
    let what = format!("linear_combination {shape:?} k {k} outputs {outputs} worst {worst}");
    let (hosts, devs): (Vec<RnsPoly>, Vec<fhe_cuda::DevicePoly>) = (0..k)
        .map(|i| {
            if worst {
                let h = all_q_minus_one(&p.ring, shape);
                let d = p.gpu.upload(&h).unwrap();
                (h, d)
            } else {
                p.random(shape, (tag as u32) * 64 + i as u32)
            }
        })
        .unzip();
    let coeffs = lincomb_coeffs(&p.ring, shape, k, outputs, tag, worst);
    let host_refs: Vec<&RnsPoly> = hosts.iter().collect();
    let dev_refs: Vec<&fhe_cuda::DevicePoly> = devs.iter().collect();
    let want = p
        .cpu
        .linear_combination(&host_refs, &coeffs, outputs)
        .unwrap();
    let got = p
        .gpu
        .linear_combination(&dev_refs, &coeffs, outputs)
        .unwrap();
    assert_eq!(got.len(), outputs, "{what}");
    for (j, (w, g)) in want.iter().zip(&got).enumerate() {
        let g = p.gpu.download(g).unwrap();
        assert_same(&format!("{what}: output {j}"), w, &g);
        for s in (0..g.slots_per_component()).filter(|&s| !g.is_active(s)) {
            for c in 0..shape.components {
                assert!(
                    g.limb(c, s).iter().all(|&v| v == 0),
                    "{what}: output {j} inactive slot {s} of component {c} not zero"
                );
            }
        }
    }
}

/// The fused `linear_combination` kernel against the CPU backend, bit for bit: N = 2^10..2^13,
/// 1..6 active Q limbs, over Q and Q·P, 1..3 components, k = 1, 3, 17 inputs (40 and 70: more
/// than one 32-product chunk between reductions), 1 and 4 outputs (5 and 9: partial output
/// tiles), random canonical coefficients with 0, 1 and q - 1; every residue q - 1 on a ring of
/// 61-bit primes (the largest 128-bit sums); and the CPU's errors for bad arguments.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_linear_combination_matches_cpu() {
    let sh = |components, level, extended| Shape {
        components,
        level,
        extended,
    };
    let mut tag = 1u64;
    for log_n in 10..=13 {
        let p = Pair::new(ring(log_n, 6, 2, 3));
        let cases = [
            (sh(1, 0, false), 1, 1),
            (sh(2, 5, false), 3, 4),
            (sh(3, 2, true), 17, 1),
            (sh(2, 1, true), 1, 4),
            (sh(1, 5, true), 17, 4),
            (sh(3, 3, false), 3, 1),
            (sh(2, 4, false), 17, 5),
            (sh(2, 0, true), 40, 9),
        ];
        for (shape, k, outputs) in cases {
            check_lincomb(&p, shape, k, outputs, false, tag);
            tag += 1;
        }
        // Outputs 0: an empty list on both backends.
        let (h, d) = p.random(sh(2, 3, false), 900);
        let none = p.gpu.linear_combination(&[&d], &[], 0).unwrap();
        assert!(none.is_empty());
        assert!(p.cpu.linear_combination(&[&h], &[], 0).unwrap().is_empty());
    }
    // Large sums: every product (q - 1)^2 with q near 2^61, across chunk boundaries.
    let wide = Pair::new(ring_of(11, 5, 2, 2, 61));
    for (shape, k, outputs) in [
        (sh(2, 4, true), 70, 4),
        (sh(1, 4, false), 33, 1),
        (sh(3, 2, false), 17, 5),
        (sh(2, 1, true), 63, 2),
        (sh(1, 0, false), 64, 1),
    ] {
        check_lincomb(&wide, shape, k, outputs, true, tag);
        check_lincomb(&wide, shape, k, outputs, false, tag + 1);
        tag += 2;
    }

    // Errors: the same values as the CPU's.
    let p = Pair::new(ring(12, 6, 2, 3));
    let shape = sh(2, 3, false);
    let (h0, d0) = p.random(shape, 1000);
    let (h1, d1) = p.random(shape, 1001);
    let coeffs = lincomb_coeffs(&p.ring, shape, 2, 3, 77, false);
    let both = |hs: &[&RnsPoly], ds: &[&fhe_cuda::DevicePoly], cs: &[u64], outputs: usize| {
        let cpu = p.cpu.linear_combination(hs, cs, outputs).unwrap_err();
        let gpu = p.gpu.linear_combination(ds, cs, outputs).unwrap_err();
        assert!(
            matches!(cpu, fhe_math::Error::ShapeMismatch { .. }),
            "cpu: {cpu}"
        );
        assert_eq!(gpu, cpu);
    };
    // No input.
    both(&[], &[], &[], 1);
    // A coefficient too few, one too many.
    both(&[&h0, &h1], &[&d0, &d1], &coeffs[1..], 3);
    let mut more = coeffs.clone();
    more.push(0);
    both(&[&h0, &h1], &[&d0, &d1], &more, 3);
    // A coefficient equal to its limb's prime (slot 2 of the second input of output 1), and one
    // above it.
    let a = shape.level + 1;
    let mut big = coeffs.clone();
    big[(2 + 1) * a + 2] = p.ring.modulus(2).value();
    both(&[&h0, &h1], &[&d0, &d1], &big, 3);
    big[(2 + 1) * a + 2] = u64::MAX;
    both(&[&h0, &h1], &[&d0, &d1], &big, 3);
    // Inputs of different levels, components and extension.
    for other in [sh(2, 2, false), sh(1, 3, false), sh(2, 3, true)] {
        let (ho, d_o) = p.random(other, 1002);
        both(&[&h0, &ho], &[&d0, &d_o], &coeffs, 3);
    }
    // A buffer of another ring.
    let other = Pair::new(ring(11, 6, 2, 3));
    let (_, foreign) = other.random(shape, 1003);
    assert!(matches!(
        p.gpu.linear_combination(&[&d0, &foreign], &coeffs, 3),
        Err(fhe_math::Error::ShapeMismatch { .. })
    ));
    // The inputs are unchanged.
    p.same("linear_combination input 0", &h0, &d0);
    p.same("linear_combination input 1", &h1, &d1);
}
