//! Host side of the tensor-core basis conversions (`kernels/mma.cuh`, `convert_mma.cuh`): the
//! B fragments a conversion's `[to][from]` matrix is uploaded as, built once with the ring's
//! tables ([`crate::tables`]), and CPU models of the kernels' exact sums.

use fhe_math::modulus::Modulus;

/// Most sources a tensor-core conversion takes (four k32 chunks of four sources: the kernels'
/// sums need k ≤ 128).
pub(crate) const MMA_MAX_FROM: usize = 16;

/// The B fragments of the tensor-core conversion (convert_mma.cuh) of the `[to][from]` matrix
/// `h` into the moduli `to`: for target `t` and chunk `c` of four sources, 32 words (one a
/// lane, its two fragment registers `b0 | b1 << 32`) at `(t·chunks + c)·32`. Lane
/// `4b + i` holds byte `b` of `c_{s,a} = h_{t,s}·2^(8a) mod p_t` for the sources `s` and bytes
/// `a` of the k rows `4i..4i+4` (`b0`) and `16 + 4i..16 + 4i + 4` (`b1`) of the chunk, where k
/// row `8·(s mod 4) + a`. `None` above 16 sources (the kernel's sums need k ≤ 128) and for a
/// target below 2^32 (the bound of mma.cuh's `mma_reduce`): such conversions stay on the
/// integer kernels.
pub(crate) fn mma_fragments(h: &[u64], to: &[Modulus]) -> Option<Vec<u64>> {
    let from = h.len().checked_div(to.len()).unwrap_or(0);
    if from == 0 || from > MMA_MAX_FROM || to.iter().any(|m| m.value() < MMA_MIN_TARGET) {
        return None;
    }
    let chunks = from.div_ceil(4);
    let mut words = vec![0u64; to.len() * chunks * 32];
    for (t, m) in to.iter().enumerate() {
        for s in 0..from {
            // c_a = h·2^(8a) mod p, a = 0..8.
            let mut c = [0u64; 8];
            c[0] = h[t * from + s];
            for a in 1..8 {
                c[a] = m.reduce_u128(u128::from(c[a - 1]) << 8);
            }
            let (chunk, r) = (s / 4, s % 4);
            let (reg, par) = (r / 2, r % 2);
            for hh in 0..2 {
                let tig = 2 * par + hh;
                for b in 0..8 {
                    let w = (0..4).fold(0u64, |w, j| {
                        w | ((c[4 * hh + j] >> (8 * b)) & 0xff) << (8 * j)
                    });
                    words[(t * chunks + chunk) * 32 + b * 4 + tig] |= w << (32 * reg);
                }
            }
        }
    }
    Some(words)
}

/// The smallest target modulus the tensor-core kernels reduce into (`mma_reduce` of mma.cuh).
const MMA_MIN_TARGET: u64 = 1 << 32;

#[cfg(test)]
mod tests {
    use super::*;

    /// A model of convert_mma.cuh's sums on the CPU: with `c_{i,a} = h_i·2^(8a) mod p`, the byte
    /// products `U_b = Σ byte_a(v_i)·byte_b(c_{i,a})` stay below 2^23 (exact in the MMA's s32
    /// accumulators) for up to 16 sources, the lanes' partial words and their gathered sum stay
    /// in the widths the kernel gives them, and `Σ U_b·2^(8b)` is congruent to `Σ v_i·h_i`
    /// mod p: the kernel's one reduction then gives the unrolled kernel's word.
    #[test]
    fn mma_byte_sums_are_exact_and_congruent() {
        let mut next = crate::kernels::xorshift(0x9e37_79b9_7f4a_7c15u64);
        for (from, p_bits) in [
            (16usize, 61u32),
            (16, 60),
            (16, 40),
            (9, 40),
            (5, 50),
            (1, 61),
        ] {
            let p = fhe_math::primes::ntt_primes(p_bits, 1 << 14, 1, &[]).unwrap()[0];
            let m = Modulus::new(p).unwrap();
            for round in 0..200 {
                // Worst case first: every byte 255 (above any modulus, still the bound).
                let (v, h): (Vec<u64>, Vec<u64>) = if round == 0 {
                    (vec![u64::MAX >> 3; from], vec![p - 1; from])
                } else {
                    (0..from).map(|_| (next() >> 3, next() % p)).unzip()
                };
                let mut u = [0u64; 8];
                for i in 0..from {
                    let mut c = h[i];
                    for a in 0..8 {
                        let va = (v[i] >> (8 * a)) & 0xff;
                        for (b, ub) in u.iter_mut().enumerate() {
                            *ub += va * ((c >> (8 * b)) & 0xff);
                        }
                        c = (((c as u128) << 8) % p as u128) as u64;
                    }
                }
                // 4·KC·8 ≤ 128 products of at most 255² each.
                assert!(u.iter().all(|&x| x < 1 << 23), "{u:?}");
                // Lane words (bytes 2i, 2i+1), pair sums, then the gathered 128-bit total.
                let w: Vec<u64> = (0..4).map(|i| u[2 * i] + (u[2 * i + 1] << 8)).collect();
                assert!(w.iter().all(|&x| x < 1 << 32));
                let s = [w[0] + (w[1] << 16), w[2] + (w[3] << 16)];
                let total = s[0] as u128 + ((s[1] as u128) << 32);
                assert!(total < 1 << 82);
                // The finish adds alpha·p (alpha at most 16), the offset (below p) and the
                // rescale's rounding term (below 2^61 + p) before `mma_reduce`.
                let x = total + 17 * p as u128 + (1 << 61) + p as u128;
                assert_eq!(mma_reduce_model(x, p), (x % p as u128) as u64);
                let direct = v.iter().zip(&h).fold(0u128, |acc, (&x, &y)| {
                    (acc + x as u128 * y as u128) % p as u128
                });
                assert_eq!(
                    m.reduce_u128(total),
                    direct as u64,
                    "{from} sources, {p_bits} bits"
                );
            }
        }
    }

    /// mma.cuh's `mma_reduce` on the CPU: x mod q for x < 2^(s+32), s = bitlen(q) - 1, with
    /// mu = floor(2^128 / q) >> (96 - s) (the slot table's Barrett constant).
    fn mma_reduce_model(x: u128, q: u64) -> u64 {
        let s = 63 - q.leading_zeros();
        assert!(x < 1u128 << (s + 32), "x = {x} above the bound of q = {q}");
        let mu = ((u128::MAX / u128::from(q)) >> (96 - s)) as u32;
        let xs = (x >> s) as u32;
        let e = ((u64::from(xs) * u64::from(mu)) >> 32) as u32;
        let r = (x as u64).wrapping_sub(u64::from(e).wrapping_mul(q));
        assert!(r < 3 * q, "r = {r} for q = {q}");
        let r = if r >= q { r - q } else { r };
        if r >= q { r - q } else { r }
    }

    /// The reduction's bound holds for every target the kernels take (2^32 <= q < 2^61) at its
    /// largest input: the byte sums of a 16-source conversion (T < 2^(bitlen(q) + 22.01)) plus
    /// alpha·q, the offset and the rescale's rounding term; and the result is x mod q there and
    /// on random inputs below the bound.
    #[test]
    fn mma_reduce_bound_holds() {
        let mut next = crate::kernels::xorshift(0x6a09_e667_f3bc_c909u64);
        for bits in [32u32, 33, 36, 40, 41, 50, 55, 59, 60, 61] {
            for q in fhe_math::primes::ntt_primes(bits, 1 << 12, 3, &[]).unwrap() {
                let nb = bits.div_ceil(8);
                // Σ_b U_b·2^(8b) with U_b < 2^23 for the bytes of q's constants.
                let t_max: u128 = (0..nb).map(|b| ((1u128 << 23) - 1) << (8 * b)).sum();
                let x_max = t_max + 17 * u128::from(q) + (1 << 61) + u128::from(q);
                assert_eq!(mma_reduce_model(x_max, q), (x_max % u128::from(q)) as u64);
                for _ in 0..2000 {
                    let x = ((u128::from(next()) << 64) | u128::from(next())) % (x_max + 1);
                    assert_eq!(mma_reduce_model(x, q), (x % u128::from(q)) as u64);
                }
            }
        }
        // Below 2^32 no fragments are built (the integer kernels convert).
        let small = fhe_math::primes::ntt_primes(31, 1 << 12, 1, &[]).unwrap()[0];
        let m = Modulus::new(small).unwrap();
        assert!(mma_fragments(&[1, 2, 3], &[m]).is_none());
    }

    /// A model of one warp of convert_mma.cuh on the CPU, with the fragment layouts of PTX's
    /// `mma.m16n8k32` for u8 (A: lane `4g + i` holds row `g` (and `g + 8`), k `4i..4i+4` (and
    /// `16 + ...`); B: k rows alike, column `g`; D: rows `g`, `g + 8`, columns `2i`, `2i + 1`):
    /// the A words as the lanes build them (own row, halves swapped with lane^1), the B words of
    /// [`mma_fragments`], the two exchanges, and the finish give `Σ v_s·h_{t,s} mod p_t` for the
    /// coefficient each lane stores.
    #[test]
    #[allow(clippy::needless_range_loop)] // indices name fragment rows, columns and lanes
    fn mma_warp_model_matches_the_direct_sums() {
        let mut next = crate::kernels::xorshift(0x2545_f491_4f6c_dd1du64);
        for (from, bits) in [
            (5usize, [60u32, 40]),
            (9, [40, 40]),
            (14, [60, 60]),
            (16, [61, 40]),
        ] {
            let to: Vec<Modulus> = bits
                .iter()
                .enumerate()
                .map(|(k, &b)| {
                    let p = fhe_math::primes::ntt_primes(b, 1 << 12, k + 1, &[]).unwrap()[k];
                    Modulus::new(p).unwrap()
                })
                .collect();
            let h: Vec<u64> = to
                .iter()
                .flat_map(|m| (0..from).map(|_| next() % m.value()).collect::<Vec<_>>())
                .collect();
            // v[s][k] for the warp's 32 coefficients.
            let v: Vec<Vec<u64>> = (0..from)
                .map(|_| (0..32).map(|_| next() >> 3).collect())
                .collect();
            let frag = mma_fragments(&h, &to).unwrap();
            let chunks = from.div_ceil(4);
            let v_at = |s: usize, k: usize| if s < from { v[s][k] } else { 0 };
            // A words: lane (g, i), chunk c, tile t, register r (rows g, g + 8, g, g + 8 for
            // sources 4c + (i >> 1), 4c + (i >> 1), 4c + 2 + (i >> 1), ...), half i & 1.
            let a_word = |lane: usize, c: usize, t: usize, r: usize| -> u32 {
                let (g, i) = (lane / 4, lane % 4);
                let s = 4 * c + 2 * (r / 2) + i / 2;
                let k = 16 * t + g + 8 * (r % 2);
                (v_at(s, k) >> (32 * (i % 2))) as u32
            };
            let byte = |w: u32, j: usize| u64::from((w >> (8 * j)) & 0xff);
            for (t, m) in to.iter().enumerate() {
                // d[lane][tile][4] by the PTX fragment layouts.
                let mut d = vec![[[0u64; 4]; 2]; 32];
                for c in 0..chunks {
                    let b_word = |lane: usize, reg: usize| -> u32 {
                        (frag[(t * chunks + c) * 32 + lane] >> (32 * reg)) as u32
                    };
                    for tile in 0..2 {
                        for row in 0..16 {
                            for col in 0..8 {
                                let mut sum = 0u64;
                                for kk in 0..32 {
                                    let (areg, breg) = (2 * (kk / 16) + row / 8, kk / 16);
                                    let a = byte(
                                        a_word(4 * (row % 8) + (kk % 16) / 4, c, tile, areg),
                                        kk % 4,
                                    );
                                    let b = byte(b_word(4 * col + (kk % 16) / 4, breg), kk % 4);
                                    sum += a * b;
                                }
                                let lane = 4 * (row % 8) + col / 2;
                                d[lane][tile][2 * (row / 8) + col % 2] += sum;
                            }
                        }
                    }
                }
                assert!(d.iter().flatten().flatten().all(|&x| x < 1 << 23));
                // The exchanges of `mma_target_sum`.
                let w = |lane: usize, tile: usize, row: usize| {
                    d[lane][tile][2 * row] + (d[lane][tile][2 * row + 1] << 8)
                };
                let s_of = |lane: usize, tile: usize| {
                    let i = lane % 4;
                    let (row, partner) = (i % 2, lane ^ 1);
                    let (mine, got) = (w(lane, tile, row), w(partner, tile, row));
                    if row == 1 {
                        got + (mine << 16)
                    } else {
                        mine + (got << 16)
                    }
                };
                for lane in 0..32 {
                    let (g, i) = (lane / 4, lane % 4);
                    let tile = i / 2;
                    let (keep, got) = (s_of(lane, tile), s_of(lane ^ 2, tile));
                    let (lo, hi) = if tile == 1 { (got, keep) } else { (keep, got) };
                    let total = lo as u128 + ((hi as u128) << 32);
                    let k = 16 * tile + g + 8 * (i % 2);
                    let direct = (0..from).fold(0u128, |acc, s| {
                        (acc + v[s][k] as u128 * h[t * from + s] as u128) % m.value() as u128
                    });
                    assert_eq!(
                        mma_reduce_model(total, m.value()),
                        direct as u64,
                        "{from} sources, lane {lane}"
                    );
                }
            }
        }
    }
}
