//! Host-side checks of the NTT launches and CPU models of the kernels' arithmetic.

use super::*;
use crate::kernels::keyprod::R8_KEYPROD;
use crate::kernels::moddown_finish::R8_FINISH;
use crate::kernels::tensor::TensorDeltas;
use crate::kernels::xorshift;

/// The operands' deltas point from `a_0`'s limb of a slot at `a_1`'s, `b_0`'s and `b_1`'s limb
/// of that slot, whichever buffer lies lower.
#[test]
fn tensor_operand_deltas_reach_each_operand() {
    let set = |ptr: u64, spc: u32| LimbSet {
        ptr,
        n: 1 << 12,
        spc,
        comp_lo: 0,
        comps: 2,
        q_lo: 0,
        q_cnt: 3,
        p_lo: 0,
        p_cnt: 0,
    };
    for (pa, pb) in [(1u64 << 40, (1u64 << 40) + (1 << 30)), (1 << 41, 1 << 40)] {
        let (a, b) = (set(pa, 5), set(pb, 7));
        let d = TensorDeltas::operands(&a, &b);
        let at = |base: u64, words: i64| base.wrapping_add_signed(8 * words);
        let limb = |l: &LimbSet, c: u64, s: u64| l.ptr + 8 * (c * l.spc as u64 + s) * l.n as u64;
        for s in 0..3 {
            let a0 = limb(&a, 0, s);
            assert_eq!(at(a0, d[0]), limb(&a, 1, s));
            assert_eq!(at(a0, d[1]), limb(&b, 0, s));
            assert_eq!(at(a0, d[2]), limb(&b, 1, s));
        }
    }
}

/// `chunks` lists every limb once, ordered by slot and stable within a slot (as a stable
/// sort would), in lists of at most `MAX_LIST`, with each list's count; the counting sort,
/// the already-sorted path and the fallback for large slots alike.
#[test]
fn chunks_is_a_stable_sort_by_slot() {
    let mut rng = xorshift(7);
    for (len, slots) in [
        (0usize, 4u64),
        (1, 1),
        (5, 3),
        (26, 14),
        (98, 16),
        (128, 30),
        (300, 40),
        (200, 600),
    ] {
        for presorted in [false, true] {
            let mut limbs: Vec<Limb> = (0..len)
                .map(|i| Limb {
                    src: 1000 + i as u64,
                    dst: 5000 + i as u64,
                    slot: (rng() % slots) as u32,
                    load: if i % 3 == 0 {
                        Load::Lift(2)
                    } else {
                        Load::Plain
                    },
                })
                .collect();
            if presorted {
                limbs.sort_by_key(|l| l.slot);
            }
            let mut want = limbs.clone();
            want.sort_by_key(|l| l.slot);
            let got = chunks(&limbs, true);
            assert_eq!(got.len(), len.div_ceil(MAX_LIST));
            let mut k = 0;
            for (list, count) in &got {
                assert_eq!(*count as usize, (len - k).min(MAX_LIST));
                for i in 0..*count as usize {
                    let w = &want[k];
                    assert_eq!(
                        (list.src[i], list.dst[i]),
                        (w.src, w.dst),
                        "len {len} at {k}"
                    );
                    assert_eq!(list.slot[i], slot_word(w));
                    k += 1;
                }
            }
            assert_eq!(k, len);
        }
    }
}

/// The launches' mirrors of ntt.cu's FP64 bounds ([`NTT_F64_BITS`], [`NTT_F64_WIDE_BITS`])
/// equal the kernel source's defaults, so block shapes follow the butterflies that run.
#[test]
fn f64_bounds_mirror_the_kernel_defaults() {
    let src = crate::kernels::source("ntt").expect("ntt source");
    for (name, value) in [
        ("NTT_F64_BITS", NTT_F64_BITS),
        ("NTT_F64_WIDE_BITS", NTT_F64_WIDE_BITS),
        // The tables' (twiddle, double) pairs (tables.rs, `runs_in_f64`).
        ("TABLE_F64_BITS", NTT_F64_WIDE_BITS),
    ] {
        let line = format!("#define {name} {value}\n");
        assert!(src.contains(&line), "ntt.cu lacks `{}`", line.trim());
    }
}

/// A CPU model of `F64Arith::mul` and `F64Arith::reduce` of ntt.cu, step for step (Rust's
/// `f64` operations and `mul_add` are correctly rounded IEEE operations, as the kernel's
/// intrinsics are).
mod f64_model {
    pub const MAGIC: f64 = 6755399441055744.0;
    pub fn mul(w: f64, y: f64, q: f64, qinv: f64) -> f64 {
        let hi = w * y;
        let lo = w.mul_add(y, -hi);
        let quot = hi.mul_add(qinv, MAGIC) - MAGIC;
        (-quot).mul_add(q, hi) + lo
    }
    pub fn reduce(x: f64, q: f64, qinv: f64) -> f64 {
        let quot = x.mul_add(qinv, MAGIC) - MAGIC;
        (-quot).mul_add(q, x)
    }
}

/// The error bounds the FP64 butterflies rely on (ntt.cu): for w < q < 2^42 and
/// |y| < 2^46, `mul` gives an integer congruent to w·y with |.| < 0.52q, and `reduce` an
/// integer congruent to x with |.| < 0.51q; checked against exact i128 arithmetic at the
/// edges (q just below 2^42, |y| up to 2^46 - 1, w = q - 1) and on random values.
#[test]
fn f64_butterfly_arithmetic_is_exact_within_its_bounds() {
    let mut rnd = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let lim = 1i64 << 46;
    for q in [
        (1u64 << 42) - 11,
        (1 << 40) + 15,
        1_099_511_922_689,
        786_433,
        65_537,
        3,
    ] {
        let (qf, qinv) = (q as f64, 1.0 / q as f64);
        let mut ws = vec![q - 1, 1, 0, q / 2];
        let mut ys = vec![lim - 1, -(lim - 1), 10 * q as i64, -(10 * q as i64), 0, 1];
        for _ in 0..4000 {
            ws.push(rnd() % q);
            ys.push((rnd() % (2 * lim as u64 - 1)) as i64 - (lim - 1));
        }
        for (i, &y) in ys.iter().enumerate() {
            let w = ws[i % ws.len()];
            let r = f64_model::mul(w as f64, y as f64, qf, qinv);
            assert_eq!(r.fract(), 0.0, "q {q} w {w} y {y}");
            assert!(r.abs() < 0.52 * qf, "q {q} w {w} y {y}: {r}");
            let diff = (w as i128) * (y as i128) - r as i128;
            assert_eq!(diff.rem_euclid(q as i128), 0, "q {q} w {w} y {y}");
            let x = f64_model::reduce(y as f64, qf, qinv);
            assert!(x.abs() < 0.51 * qf, "q {q} x {y}: {x}");
            assert_eq!(
                (y as i128 - x as i128).rem_euclid(q as i128),
                0,
                "q {q} x {y}"
            );
        }
    }
}

/// One trial's conversion inputs for `d` sources: `v_i` below `bound(i)`, the row `h` and
/// `h_out` below `q`; at the edge every value is its bound less one.
fn conversion_trial(
    rnd: &mut impl FnMut() -> u64,
    d: usize,
    q: u64,
    bound: impl Fn(usize) -> u64,
    edge: bool,
) -> (Vec<u64>, Vec<u64>, u64) {
    let mut below = |b: u64| if edge { b - 1 } else { rnd() % b };
    let v = (0..d).map(|i| below(bound(i))).collect();
    let h = (0..d).map(|_| below(q)).collect();
    (v, h, below(q))
}

/// `x`, an FP64 conversion sum, is an integer below 2^46 (where `f64_canonical` is exact;
/// 2^52 for a wide target, whose forward round reduces it first) congruent mod `q` to the
/// integer path's word `(Σ v_i·h_i mod q) - h_out`.
fn assert_is_the_integer_word(x: f64, v: &[u64], h: &[u64], h_out: u64, q: u64) {
    let limit_bits = if q < 1 << NTT_F64_BITS { 46 } else { 52 };
    assert_eq!(x.fract(), 0.0);
    assert!(x.abs() < (1u64 << limit_bits) as f64);
    let exact: u128 = v.iter().zip(h).map(|(&a, &b)| a as u128 * b as u128).sum();
    let want = (exact % q as u128) as i128 - h_out as i128;
    assert_eq!(
        (x as i128 - want).rem_euclid(q as i128),
        0,
        "q {q} d {}",
        v.len()
    );
}

/// 3000 FP64 conversion sums `x = Σ_i mul(v_i, h_i) - h_out` for every target `q` and
/// source count `d` (source i below `sources[i % 4]`, the first trial at the edges):
/// every term below `term_bound·q`, `|x| < (term_bound·d + 1)·q`, and `x` the integer path's
/// word ([`assert_is_the_integer_word`]).
fn check_f64_conversion_sums(
    seed: u64,
    sources: [u64; 4],
    targets: &[u64],
    counts: std::ops::RangeInclusive<usize>,
    term_bound: f64,
) {
    let mut rnd = xorshift(seed);
    for &q in targets {
        let (qf, qinv) = (q as f64, 1.0 / q as f64);
        for d in counts.clone() {
            for trial in 0..3000 {
                let (v, h, h_out) =
                    conversion_trial(&mut rnd, d, q, |i| sources[i % 4], trial == 0);
                let x = (0..d).fold(-(h_out as f64), |acc, i| {
                    let term = f64_model::mul(h[i] as f64, v[i] as f64, qf, qinv);
                    assert!(term.abs() < term_bound * qf, "q {q} d {d}: term {term}");
                    acc + term
                });
                assert!(
                    x.abs() < (term_bound * d as f64 + 1.0) * qf,
                    "q {q} d {d}: {x}"
                );
                assert_is_the_integer_word(x, &v, &h, h_out, q);
            }
        }
    }
}

/// The FP64 conversion sums (`convert_words_f64` of ntt.cu for D <= 4 sources, the
/// unrolled `keyswitch_convert_f<D>` for D <= 16): for a target q < 2^42 and sources below
/// 2^46, Σ_i mul(v_i, h_i) - h_out is an integer congruent to the integer path's word
/// (Σ v_i·h_i mod q) - h_out, with |.| < (0.52·D + 1)·q: below 3.08q for D <= 4 (inside
/// the forward pass's input range of 4q) and below 9.4q < 2^46 for D <= 16 (where
/// `f64_canonical` is exact); at the edges (v_i = q_i - 1 for sources just below 2^46,
/// h_i = q - 1) and on random values.
#[test]
fn f64_converted_words_match_the_integer_sums() {
    let sources = [
        (1 << 46) - 27,
        (1 << 46) - 57,
        (1 << 40) + 15,
        1_099_511_922_689,
    ];
    let targets = [(1 << 42) - 11, (1 << 40) + 15, 786_433, 65_537];
    check_f64_conversion_sums(0x6a09_e667_f3bc_c908, sources, &targets, 2..=16, 0.52);
}

/// The wide FP64 conversion sums (`convert_words_f64` with `F64WideArith`, D <= 4): for a
/// target 2^42 <= q < 2^50 and sources below 2^50 (CONVERT_F64_WIDE_SOURCES), every term is
/// below 0.75q and Σ_i mul(v_i, h_i) - h_out below (0.75·D + 1)·q <= 4q, an integer
/// congruent to the integer path's word; at the edges (v_i = q_i - 1 for sources just below
/// 2^50, h_i = q - 1) and on random values.
#[test]
fn f64_wide_converted_words_match_the_integer_sums() {
    let sources = [
        (1 << 50) - 27,
        (1 << 50) - 55,
        (1 << 49) + 69,
        (1 << 45) + 15,
    ];
    let targets = [(1 << 50) - 111, (1 << 49) + 145, (1 << 42) + 15];
    check_f64_conversion_sums(0x510e_527f_ade6_82d1, sources, &targets, 2..=4, 0.75);
}

/// The split first source of the unrolled conversion's FP64 sums (`target_f64` of
/// keyswitch.cu, `CONVERT_F64_SPLIT`): a v_0 below 2^61 enters as
/// mul(a, 2^30·h_0 mod q) + mul(b, h_0) with v_0 = a·2^30 + b, so with D - 1 narrow sources
/// the sum less h_out has D + 1 terms, stays below (0.52·(D + 1) + 1)·q < 9.9q < 2^46 for
/// D <= 16, and is congruent to the integer path's word; at the edges (v_0 = 2^61 - 2 and
/// narrow sources just below 2^46, h = q - 1) and on random values.
#[test]
fn f64_converted_words_with_a_wide_first_source_match_the_integer_sums() {
    let mut rnd = xorshift(0xbb67_ae85_84ca_a73bu64);
    let (wide, narrow) = ((1u64 << 61) - 1, (1u64 << 46) - 27);
    for q in [(1u64 << 42) - 11, (1 << 40) + 15, 786_433] {
        let (qf, qinv) = (q as f64, 1.0 / q as f64);
        for d in 1..=16usize {
            for trial in 0..3000 {
                let bound = |i| if i == 0 { wide } else { narrow };
                let (v, h, h_out) = conversion_trial(&mut rnd, d, q, bound, trial == 0);
                let h0_hi = ((h[0] as u128) << 30) % q as u128;
                let (a, b) = (v[0] >> 30, v[0] & ((1 << 30) - 1));
                let split = f64_model::mul(h0_hi as f64, a as f64, qf, qinv)
                    + f64_model::mul(h[0] as f64, b as f64, qf, qinv);
                let x = (1..d).fold(split - h_out as f64, |acc, i| {
                    acc + f64_model::mul(h[i] as f64, v[i] as f64, qf, qinv)
                });
                assert!(
                    x.abs() < (0.52 * (d + 1) as f64 + 1.0) * qf,
                    "q {q} d {d}: {x}"
                );
                assert_is_the_integer_word(x, &v, &h, h_out, q);
            }
        }
    }
}

/// The wide FP64 butterflies (`F64Arith<true>` of ntt.cu, 2^42 <= q < 2^50), round by
/// round: a forward round reduces its 8 values and runs three stages of `x ± mul(y, w)`, an
/// inverse round reduces and runs three stages of `(reduce(u + v), mul(u - v, w))`. Every
/// multiplicand must stay below 2^51 (the quotient trick's range) and every value be an
/// integer below 2^52 congruent to the exact butterfly's; the stage bounds of ntt.cu
/// (forward 1.14q, 1.93q, 2.91q; inverse 0.76q, 0.88q, 0.94q) are checked. Moduli just
/// below 2^50 and 2^49 and above 2^42; inputs at the edges of the previous round's range
/// (forward |x| up to 2.91q, inverse 0.94q), twiddles q - 1 and random.
#[test]
fn f64_wide_rounds_stay_in_range() {
    let mut rnd = xorshift(0x3c6e_f372_fe94_f82bu64);
    let stage_fwd = [1.14, 1.93, 2.91];
    let stage_inv = [0.76, 0.88, 0.94];
    for q in [
        (1u64 << 50) - 27,
        (1 << 50) - 1,
        (1 << 49) + 69,
        (1 << 42) + 15,
    ] {
        let (qf, qinv) = (q as f64, 1.0 / q as f64);
        let qi = q as i128;
        let in_range = |v: f64| v.fract() == 0.0 && v.abs() < (1u64 << 52) as f64;
        for trial in 0..20_000 {
            for inverse in [false, true] {
                let lim = if inverse { 0.94 } else { 2.91 };
                let edge = trial < 4;
                let x0: Vec<f64> = (0..8)
                    .map(|k| {
                        let m = (lim * qf) as i64;
                        let v = if edge {
                            m - (k as i64 & 1)
                        } else {
                            (rnd() % (2 * m as u64)) as i64 - m
                        };
                        if edge && trial % 2 == 1 {
                            -v as f64
                        } else {
                            v as f64
                        }
                    })
                    .collect();
                let mut x: Vec<f64> = x0.iter().map(|&v| f64_model::reduce(v, qf, qinv)).collect();
                let mut exact: Vec<i128> = x0.iter().map(|&v| v as i128).collect();
                for (k, v) in x.iter().enumerate() {
                    assert!(v.abs() < 0.51 * qf, "q {q} reduce {}: {v}", x0[k]);
                }
                for (stage, kb) in [2usize, 1, 0].into_iter().enumerate() {
                    for j in 0..8 {
                        if j & (1 << kb) != 0 {
                            continue;
                        }
                        let (a, b) = (j, j | (1 << kb));
                        let w = if edge { q - 1 } else { rnd() % q };
                        let (wf, wi) = (w as f64, w as i128);
                        if inverse {
                            let (u, v) = (x[a], x[b]);
                            assert!((u - v).abs() < (1u64 << 51) as f64, "q {q}");
                            x[a] = f64_model::reduce(u + v, qf, qinv);
                            x[b] = f64_model::mul(wf, u - v, qf, qinv);
                            let (eu, ev) = (exact[a], exact[b]);
                            exact[a] = eu + ev;
                            exact[b] = (eu - ev) * wi;
                        } else {
                            let (u, y) = (x[a], x[b]);
                            assert!(y.abs() < (1u64 << 51) as f64, "q {q}");
                            let m = f64_model::mul(wf, y, qf, qinv);
                            x[a] = u + m;
                            x[b] = u - m;
                            let (eu, ey) = (exact[a], exact[b] * wi % qi);
                            exact[a] = eu + ey;
                            exact[b] = eu - ey;
                        }
                    }
                    let bound = if inverse {
                        stage_inv[stage]
                    } else {
                        stage_fwd[stage]
                    };
                    for k in 0..8 {
                        assert!(in_range(x[k]), "q {q}: {}", x[k]);
                        assert!(
                            x[k].abs() < bound * qf,
                            "q {q} stage {stage}: {}",
                            x[k] / qf
                        );
                        exact[k] = exact[k].rem_euclid(qi);
                        assert_eq!((x[k] as i128 - exact[k]).rem_euclid(qi), 0, "q {q}");
                    }
                }
            }
        }
    }
}

/// The lifted loads of ntt.cu against the definition of mod_up's one-prime conversion (the
/// centred value `c = y` for `y <= (q_f - 1)/2`, else `y - q_f`, taken modulo `q_t`): the
/// reducing form gives `c mod q_t` exactly, and the reduction-free form (integer path, used
/// where `q_f < 2·q_t`) a word below `2·q_t` congruent to it. Also the slot word's encoding.
#[test]
fn lifted_loads_match_the_centred_lift() {
    let primes = |bits| fhe_math::primes::ntt_primes(bits, 1 << 16, 2, &[]).unwrap();
    let mut all: Vec<u64> = [30, 40, 50, 55, 56, 60]
        .into_iter()
        .flat_map(primes)
        .collect();
    all.push(65_537);
    let mut rnd = xorshift(0x2545_f491_4f6c_dd1du64);
    let (mut lazy_pairs, mut checked) = (0, 0);
    for &qf in &all {
        let half = qf >> 1;
        let mut ys = vec![0, 1, half - 1, half, half + 1, qf - 1];
        ys.extend((0..200).map(|_| rnd() % qf));
        for &qt in &all {
            let lazy = qf < 2 * qt;
            lazy_pairs += usize::from(lazy);
            for &y in &ys {
                let c = if y <= half {
                    y as i128
                } else {
                    y as i128 - qf as i128
                };
                let want = c.rem_euclid(qt as i128) as u64;
                // ((y + half) mod q_f) mod q_t - (half mod q_t), as the kernel's mod_add,
                // reduce_u64 and mod_sub compute it.
                let (a, h) = ((y + half) % qf % qt, half % qt);
                let got = if a >= h { a - h } else { a + qt - h };
                assert_eq!(got, want, "q_f {qf} q_t {qt} y {y}");
                if lazy {
                    let v = if y > half { y + (2 * qt - qf) } else { y };
                    assert!(v < 2 * qt, "q_f {qf} q_t {qt} y {y}: {v}");
                    assert_eq!(v % qt, want, "q_f {qf} q_t {qt} y {y}");
                }
                checked += 1;
            }
        }
    }
    assert!(lazy_pairs > 0 && checked > 10_000);
    let l = Limb {
        src: 0,
        dst: 0,
        slot: 17,
        load: Load::Lift(3),
    };
    assert_eq!(slot_word(&l) & LIFT_SLOT_MASK, 17);
    assert_eq!(slot_word(&l) >> LIFT_SHIFT, 4);
    assert_eq!(
        slot_word(&Limb {
            load: Load::Plain,
            ..l
        }),
        17
    );
    let c = slot_word(&Limb {
        load: Load::Convert(0x7ffe),
        ..l
    });
    assert_eq!(c & LIFT_SLOT_MASK, 17);
    assert_eq!(c >> LIFT_SHIFT, CONVERT_FLAG | 0x7ffe);
    for comp in 0..3 {
        let t = slot_word(&Limb {
            load: Load::Tensor(comp),
            ..l
        });
        assert_eq!(t & LIFT_SLOT_MASK, 17);
        assert_eq!(t >> LIFT_SHIFT, TENSOR_FLAG | comp);
        // Neither a converted nor (for any slot a ring has) a lifted limb's field.
        assert_eq!((t >> LIFT_SHIFT) & CONVERT_FLAG, 0);
    }
}

/// The slot word's fields mirror ntt.cu's defines, which the kernels decode.
#[test]
fn slot_word_fields_mirror_the_kernel_defines() {
    let src = crate::kernels::source("ntt").expect("ntt source");
    for line in [
        format!("#define LIFT_SHIFT {LIFT_SHIFT}\n"),
        format!("#define LIFT_SLOT_MASK {LIFT_SLOT_MASK:#x}u\n"),
        format!("#define CONVERT_FLAG {CONVERT_FLAG:#x}u\n"),
        format!("#define TENSOR_FLAG {TENSOR_FLAG:#x}u\n"),
    ] {
        assert!(src.contains(&line), "ntt.cu lacks `{}`", line.trim());
    }
}

#[test]
fn kernel_name_tables_cover_every_pass_size() {
    assert_eq!(R8_FWD[0], "ntt_fwd_r8_3");
    assert_eq!(R8_KEYPROD[5], "ntt_keyprod_r8_8");
    assert_eq!(R8_FINISH[8], "ntt_finish_r8_11");
    assert_eq!(R8_FWD_RESCALE[5], "ntt_fwd_rescale_r8_8");
    assert_eq!(R8_FWD_CONVERT[5], "ntt_fwd_convert_r8_8");
    assert_eq!(R8_FWD_CONVERT_EXACT[5], "ntt_fwd_convert_exact_r8_8");
    assert_eq!(R8_FWD_CONVERT_COEF[5], "ntt_fwd_convert_coef_r8_8");
    for (i, name) in R8_INV.iter().enumerate() {
        assert_eq!(*name, format!("ntt_inv_r8_{}", i + 3));
    }
    for (i, name) in R8_INV_TENSOR.iter().enumerate() {
        assert_eq!(*name, format!("ntt_inv_tensor_r8_{}", i + 3));
    }
    for (i, name) in R8_INV_ADD.iter().enumerate() {
        assert_eq!(*name, format!("ntt_inv_add_r8_{}", i + 3));
    }
}

/// The strided batch's grid covers every limb exactly once (`limb(y, Y, z)` of each block, as
/// `strided_limb` of ntt.cu computes it), at `base + 8·x·n` with slot `period[x % P]`, also past
/// 65535 limbs (grid layers); periods longer than the kernels' table are refused (the list
/// passes take those), and the define matches.
#[test]
fn strided_batches_cover_each_limb_once_with_its_periodic_slot() {
    use super::strided::{MAX_PERIOD, R8_FWD_STRIDED, R8_INV_STRIDED, StridedBatch};
    let src = crate::kernels::source("ntt").expect("ntt source");
    assert!(src.contains(&format!("#define STRIDED_MAX_PERIOD {MAX_PERIOD}\n")));
    assert_eq!(R8_FWD_STRIDED[4], "ntt_fwd_strided_r8_7");
    assert_eq!(R8_INV_STRIDED[3], "ntt_inv_strided_r8_6");
    let (base, logn) = (1u64 << 40, 13);
    let mut rng = xorshift(11);
    for (count, p) in [
        (1usize, 1usize),
        (7, 6),
        (65535, 12),
        (65536, 6),
        (131_064, 12),
        (200_003, 64),
    ] {
        let period: Vec<u32> = (0..p).map(|_| (rng() % 40) as u32).collect();
        let sb = StridedBatch::new(base, count, &period).expect("a batch the kernels take");
        let (rows, layers) = sb.grid();
        assert!(rows <= 65535 && layers <= 65535);
        let mut seen = vec![false; count];
        for z in 0..layers {
            for y in 0..rows {
                let Some((addr, slot)) = sb.limb(logn, y, rows, z) else {
                    assert!((y + rows * z) as usize >= count);
                    continue;
                };
                let x = (((addr - base) / 8) >> logn) as usize;
                assert_eq!(addr, base + 8 * ((x as u64) << logn));
                assert_eq!(slot, period[x % p], "{count} limbs, period {p}: limb {x}");
                assert!(!seen[x], "limb {x} twice");
                seen[x] = true;
            }
        }
        assert!(seen.iter().all(|&s| s), "{count} limbs: one missed");
    }
    assert!(StridedBatch::new(base, 10, &[0; MAX_PERIOD + 1]).is_none());
    assert!(StridedBatch::new(base, 10, &[]).is_none());
}
