//! Checks of the packed tables against fhe-math's host tables.

use super::*;
use fhe_math::backend::prelude::*;
use fhe_math::cpu::CpuBackend;
use fhe_math::poly::Shape;
use fhe_math::primes::ntt_primes;
use fhe_math::sampler::{Domain, Seed};

/// The conversion rows and prescaled inverse constants, applied on the host the way
/// mod_up's inverse NTT and the converting forward pass apply them, give the CPU backend's
/// `mod_up` at every level (digits of 4, 3, 2 and 1 primes; the kernels' arithmetic itself
/// is checked against the CPU by the GPU tests). Chains of 40-bit primes (both FP64 flags
/// on their digits), 45-bit (both), 50-bit (the wide flag only) after a 60-bit q_0 (neither).
#[test]
fn convert_rows_reproduce_mod_up() {
    for bits in [40, 45, 50] {
        convert_rows_reproduce_mod_up_with(bits);
    }
}

/// The top level's mod_down conversion has the Q slots as its targets, in order, and its
/// `Q mod p_j` words hold `P = Π p_j` modulo each of them: the key product reads them as
/// `P mod q` by slot ([`p_mod_q`]).
#[test]
fn p_mod_q_is_the_special_product() {
    let n = 1usize << 10;
    let two_n = 2 * n as u64;
    let qs = ntt_primes(50, two_n, 5, &[]).unwrap();
    let ps = ntt_primes(60, two_n, 3, &qs).unwrap();
    let ring = RingContext::new(n, &qs, &ps, vec![0..2, 2..4, 4..5]).unwrap();
    let (buf, layout) = build(&ring);
    let at = p_mod_q(&layout).expect("a ring with special primes");
    let top = layout.mod_down.last().unwrap();
    for (i, &q) in qs.iter().enumerate() {
        assert_eq!(buf[top.to_slots + i], i as u64, "target {i} is slot {i}");
        let want = ps
            .iter()
            .fold(1u128, |acc, &p| acc * (p % q) as u128 % q as u128);
        assert_eq!(buf[at + i] as u128, want, "slot {i}");
    }
}

/// mod_down's exact rows and prescaled inverse constants, applied on the host the way the
/// prescaled inverse NTT and the converting forward pass apply them (the row's `α` from the
/// source slots' Barrett constants), give the CPU backend's exact conversion of `t^-1·acc_P`
/// at every level, for 2, 3 and 4 special primes and `t` = 1 and 65537.
#[test]
fn mod_down_rows_reproduce_the_exact_conversion() {
    for (k, t) in [(2usize, 65537u64), (3, 1), (4, 65537)] {
        let n = 1usize << 10;
        let two_n = 2 * n as u64;
        let mut qs = ntt_primes(60, two_n, 1, &[]).unwrap();
        qs.extend(ntt_primes(50, two_n, 4, &qs).unwrap());
        let ps = ntt_primes(60, two_n, k, &qs).unwrap();
        let ring = RingContext::new(n, &qs, &ps, vec![0..2, 2..4, 4..5]).unwrap();
        let (buf, layout) = build(&ring);
        let row0 = layout.mod_down_row0.expect("rows for 2..=4 special primes") as usize;
        let pre = mod_down_prescale(&ring, t).unwrap();
        let s_count = ring.q_count() + ring.p_count();
        let cpu = CpuBackend::new(ring.clone());
        let shape = Shape {
            components: 1,
            level: ring.q_count() - 1,
            extended: true,
        };
        let acc = cpu
            .sample_uniform(&Seed([9; 32]), Domain::Other, k as u32, shape)
            .unwrap();
        // INTT(acc_P)_i·k_i for special prime i, with k_i from `scale(modulus, slot)`.
        let scaled = |scale: &dyn Fn(&fhe_math::modulus::Modulus, usize) -> u64| -> Vec<Vec<u64>> {
            (0..k)
                .map(|i| {
                    let s = ring.q_count() + i;
                    let nt = ring.ntt(s);
                    let m = nt.modulus();
                    let mut x = acc.limb(0, s).to_vec();
                    nt.inverse(&mut x);
                    let f = scale(m, s);
                    x.iter().map(|&y| m.mul(y, f)).collect()
                })
                .collect()
        };
        // x_i = t^-1·INTT(acc_P)_i, as the unscaled path computes it.
        let xs = scaled(&|m, _| m.inv(m.reduce(t)).unwrap());
        // v_i from the prescaled inverse: INTT·(c0·n) + the offset.
        let v: Vec<Vec<u64>> = scaled(&|m, s| m.mul(pre[4 * s], m.reduce(n as u64)))
            .into_iter()
            .enumerate()
            .map(|(i, x)| {
                let m = ring.modulus(ring.q_count() + i);
                let off = pre[4 * s_count + ring.q_count() + i];
                x.iter().map(|&y| m.add(y, off)).collect()
            })
            .collect();
        for level in 0..ring.q_count() {
            let table = ring.mod_down_table(level).unwrap();
            // The CPU's exact conversion of the centred x.
            let centred: Vec<Vec<u64>> = (0..k)
                .map(|i| {
                    let m = ring.modulus(ring.q_count() + i);
                    xs[i]
                        .iter()
                        .map(|&y| m.add(y, table.half_p_mod_p[i]))
                        .collect()
                })
                .collect();
            let input: Vec<&[u64]> = centred.iter().map(|v| v.as_slice()).collect();
            let mut want = vec![vec![0u64; n]; level + 1];
            let mut outs: Vec<&mut [u64]> = want.iter_mut().map(|v| v.as_mut_slice()).collect();
            table.converter.convert_exact(&input, &mut outs);
            for s in 0..=level {
                let row = &buf[layout.convert_rows + (row0 + s) * CONVERT_ROW..][..CONVERT_ROW];
                assert_eq!(row[0] & 0xff, k as u64);
                assert_ne!(row[0] & CONVERT_EXACT, 0);
                assert_eq!(row[0] & (CONVERT_F64_SOURCES | CONVERT_F64_WIDE_SOURCES), 0);
                let src0 = (row[0] >> CONVERT_SOURCE_SHIFT) as usize;
                assert_eq!(src0, ring.q_count());
                let m = ring.modulus(s);
                let got: Vec<u64> = (0..n)
                    .map(|c| {
                        let mut acc: u128 = 0;
                        let mut f: u128 = 0;
                        for i in 0..k {
                            acc += v[i][c] as u128 * row[2 + i] as u128;
                            let (bhi, blo) = ring.modulus(src0 + i).barrett_constant();
                            f += v[i][c] as u128 * bhi as u128
                                + ((v[i][c] as u128 * blo as u128) >> 64);
                        }
                        let alpha = (f >> 64) as u64;
                        let q_mod_p = row[CONVERT_ROW - 1];
                        acc += alpha as u128 * (m.value() - q_mod_p) as u128;
                        m.sub(m.reduce_u128(acc), row[1])
                    })
                    .collect();
                let want_s: Vec<u64> = want[s]
                    .iter()
                    .map(|&y| m.sub(y, table.half_p_mod_q[s]))
                    .collect();
                assert_eq!(got, want_s, "k {k} t {t} level {level} target {s}");
            }
        }
    }
}

/// The register-blocked passes' twiddle tables: (twiddle, Shoup companion) pairs on slots
/// whose passes use integer butterflies; on the others the twiddles as doubles, then the
/// integer twiddles; for both directions (a 60-bit, a 50-bit and a 40-bit prime, and a
/// 60-bit special prime).
#[test]
fn twiddle_tables_hold_what_each_butterfly_reads() {
    let n = 1usize << 10;
    let two_n = 2 * n as u64;
    let mut qs = ntt_primes(60, two_n, 1, &[]).unwrap();
    qs.extend(ntt_primes(50, two_n, 1, &qs).unwrap());
    qs.extend(ntt_primes(40, two_n, 1, &qs).unwrap());
    let ps = ntt_primes(60, two_n, 1, &qs).unwrap();
    let ring = RingContext::new(n, &qs, &ps, vec![0..1, 1..2, 2..3]).unwrap();
    let (buf, layout) = build(&ring);
    let l = &layout.ntt;
    assert_eq!(l.f64_slots, vec![false, true, true, false]);
    for s in 0..4 {
        let t = ring.ntt(s);
        for (table, w, ws) in [
            (l.fwd_pair, t.forward_twiddles(), t.forward_twiddles_shoup()),
            (l.inv_pair, t.inverse_twiddles(), t.inverse_twiddles_shoup()),
        ] {
            let slot = table + 2 * s * n;
            for k in [0, 1, n / 2, n - 1] {
                if l.f64_slots[s] {
                    // The doubles as `f64_twiddles` lays them out, then the integers.
                    let doubles = f64_twiddles(w, table == l.inv_pair);
                    assert_eq!(buf[slot..slot + n], doubles[..], "slot {s}");
                    assert_eq!(buf[slot + n + k], w[k], "slot {s} k {k}");
                } else {
                    assert_eq!(buf[slot + 2 * k], w[k], "slot {s} k {k}");
                    assert_eq!(buf[slot + 2 * k + 1], ws[k], "slot {s} k {k}");
                }
            }
        }
    }
}

/// `twiddle_group` of ntt.cu rebuilds the compacted regions' twiddles: `w[2^m + 2^c·i + j]
/// = w[2^m + 2^c·i]·w[j] mod q` for j < 2^c, forward and inverse, at sizes with one and two
/// passes.
#[test]
fn compacted_twiddles_factor_through_the_kept_ones() {
    for log_n in [3u32, 7, 10, 12, 13, 15, 16] {
        let n = 1usize << log_n;
        let q = ntt_primes(40, 2 * n as u64, 1, &[]).unwrap()[0];
        let t = NttTable::new(fhe_math::modulus::Modulus::new(q).unwrap(), n).unwrap();
        for (w, inverse) in [(t.forward_twiddles(), false), (t.inverse_twiddles(), true)] {
            let compact = f64_twiddles(w, inverse);
            let c = crate::kernels::ntt::compaction(log_n, inverse);
            assert!(c[0] > 0, "n {n}: the lowest stage is compacted");
            for (b, &cb) in c.iter().enumerate().take(log_n as usize) {
                let m = log_n as usize - 1 - b;
                let (start, f) = (1usize << m, 1usize << cb);
                for k in start..2 * start {
                    let (i, j) = ((k - start) / f, (k - start) % f);
                    let kept = f64::from_bits(compact[start + i]) as u128;
                    assert_eq!(kept as u64, w[start + f * i]);
                    assert_eq!(
                        (kept * w[j] as u128 % q as u128) as u64,
                        w[k],
                        "n {n} k {k}"
                    );
                }
            }
        }
    }
}

/// The compaction follows the radix-8 rounds of the pass over the low bits: at n = 2^16 (8
/// stages: forward windows [5, 8), [2, 5), [0, 2); inverse [0, 3), [3, 6), [5, 8)) a thread
/// reads 4, 2, 4 twiddles of stages 0, 1, 2 forward and 4, 2, 1 inverse; shorter passes
/// compact the lowest stage only.
#[test]
fn compaction_follows_the_rounds() {
    use crate::kernels::ntt::compaction;
    assert_eq!(compaction(16, false), [2, 1, 2]);
    assert_eq!(compaction(16, true), [2, 1, 0]);
    // n = 2^15: passes of 7 stages, the lowest stage only.
    assert_eq!(compaction(15, false), [2, 0, 0]);
    assert_eq!(compaction(15, true), [2, 0, 0]);
}

fn convert_rows_reproduce_mod_up_with(prime_bits: u32) {
    let n = 1usize << 10;
    let two_n = 2 * n as u64;
    let mut qs = ntt_primes(60, two_n, 1, &[]).unwrap();
    qs.extend(ntt_primes(prime_bits, two_n, 9, &qs).unwrap());
    let ps = ntt_primes(60, two_n, 2, &qs).unwrap();
    let ring = RingContext::new(n, &qs, &ps, vec![0..4, 4..7, 7..9, 9..10]).unwrap();
    let (buf, layout) = build(&ring);
    let cpu = CpuBackend::new(ring.clone());
    let mut converted_digits = 0;
    for level in 0..ring.q_count() {
        let shape = Shape {
            components: 1,
            level,
            extended: false,
        };
        let c = cpu
            .sample_uniform(&Seed([7; 32]), Domain::Other, level as u32, shape)
            .unwrap();
        let want = cpu.mod_up(&c, 0).unwrap();
        let pre = layout.mod_up_prescale[level];
        for (j, up) in layout.mod_up[level].iter().enumerate() {
            let Some(row0) = up.row0 else {
                assert!(!(2..=CONVERT_MAX_FROM).contains(&up.digit.len()));
                continue;
            };
            converted_digits += 1;
            // v_i = (x_i + h_in)·q̂^-1: the inverse NTT's output with constants scaled by
            // q̂^-1 (so c0·n = q̂^-1) plus the offset.
            let v: Vec<Vec<u64>> = up
                .digit
                .clone()
                .map(|s| {
                    let nt = ring.ntt(s);
                    let m = nt.modulus();
                    let mut x = c.limb(0, s).to_vec();
                    nt.inverse(&mut x);
                    let c0 = buf[pre.consts + 4 * s];
                    let qhi = m.mul(c0, m.reduce(n as u64));
                    let off = buf[pre.offs + s];
                    x.iter().map(|&y| m.add(m.mul(y, qhi), off)).collect()
                })
                .collect();
            for (t, &s) in up.targets.iter().enumerate() {
                let row = &buf[layout.convert_rows + (row0 as usize + t) * CONVERT_ROW..];
                assert_eq!(row[0] as usize & 0xff, up.digit.len());
                let largest = up.digit.clone().map(|s| ring.modulus(s).value()).max();
                let below = |bits: u32| largest.unwrap() < 1 << bits;
                assert_eq!(
                    row[0] & CONVERT_F64_SOURCES != 0,
                    below(CONVERT_F64_SOURCE_BITS)
                );
                assert_eq!(
                    row[0] & CONVERT_F64_WIDE_SOURCES != 0,
                    below(CONVERT_F64_WIDE_SOURCE_BITS)
                );
                let nt = ring.ntt(s);
                let m = nt.modulus();
                let mut out: Vec<u64> = (0..n)
                    .map(|k| {
                        let acc: u128 = (0..v.len())
                            .map(|i| v[i][k] as u128 * row[2 + i] as u128)
                            .sum();
                        m.sub(m.reduce_u128(acc), row[1])
                    })
                    .collect();
                nt.forward(&mut out);
                assert_eq!(out, want.limb(j, s), "level {level} digit {j} target {s}");
            }
        }
    }
    // Levels 1..=9 hold 16 digits of 2..=4 primes.
    assert_eq!(converted_digits, 16);
}
