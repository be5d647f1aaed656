//! The CKKS canonical-embedding ("special") FFT.
//!
//! For ring degree `n` (power of two) let `ζ = exp(iπ/n)`, a primitive `2n`-th root of unity.
//! A real-coefficient polynomial `m ∈ R[X]/(X^n + 1)` is identified with its values at the
//! primitive `2n`-th roots; because the coefficients are real, the values at `ζ^{-e}` are the
//! conjugates of those at `ζ^e`, so the `n/2` points `ζ^{5^j mod 2n}` (`0 <= j < n/2`) determine
//! `m`. These are the CKKS *slots*.
//!
//! # Slot convention
//!
//! With `s` slots (`s` a power of two, `1 <= s <= n/2`) slot `j` holds `m(ζ^{5^j mod 2n})`.
//! For `s < n/2` ("sparse packing") `m` has non-zero coefficients only at multiples of
//! `gap = n / (2s)`, i.e. `m(X) = m'(X^gap)` with `m'` of degree `< 2s` encoded at ring degree
//! `2s`. With this convention the Galois automorphism `X -> X^{5^k}` rotates the slots left by
//! `k` (new slot `j` = old slot `(j + k) mod s`) and `X -> X^{2n-1}` conjugates every slot.
//!
//! # Algorithm
//!
//! Writing `w_k = m'_k + i·m'_{k+s}` (`k < s`) and `ξ = ζ^gap = exp(2πi / 4s)`, the identity
//! `ξ^{s·5^j} = i` gives `slot_j = Σ_{k<s} w_k ξ^{5^j k}`: an `s`-point evaluation at the
//! `4s`-th roots `ξ^{5^j}`. Splitting `k` into even and odd parts and using
//! `5^{s/2} ≡ 2s + 1 (mod 4s)` yields radix-2 butterflies `(a, b) -> (a + t·b, a - t·b)` with
//! twiddle `t = ξ_{4ℓ}^{5^j mod 4ℓ}` at sub-length `ℓ`, applied to the bit-reversed input.
//! [`SpecialFft::decode`] runs these butterflies; [`SpecialFft::encode`] runs their exact inverse
//! in reverse order. Both are `O(s log s)` plus `O(n)` for reading / writing coefficients.

use crate::error::{Error, Result};
use rayon::prelude::*;

pub use num_complex::Complex64;

/// Elements per work item of the parallel phases (inputs below four of these run on one
/// thread).
const PAR_CHUNK: usize = 2048;

/// Smallest supported `log2 n`.
const MIN_LOG_N: u32 = 2;
/// Largest supported `log2 n`.
const MAX_LOG_N: u32 = 17;

/// Precomputed tables for the CKKS special FFT at ring degree `n`: `slot_j = m(ζ^{5^j mod 2n})`, `ζ = exp(iπ/n)`.
#[derive(Clone, Debug)]
pub struct SpecialFft {
    /// Ring degree `n`.
    n: usize,
    /// `roots[k] = ζ^k = exp(iπk/n)` for `0 <= k < 2n`.
    roots: Vec<Complex64>,
    /// `rot_group[j] = 5^j mod 2n` for `0 <= j < n/2`.
    rot_group: Vec<usize>,
    /// Per stage `log2 ℓ` (`ℓ = 2..=n/2`), the `ℓ/2` butterfly twiddles `ξ_{4ℓ}^{5^j mod 4ℓ}`
    /// (`roots[twiddle_index(j, ℓ)]`) in butterfly order, so a stage reads them sequentially.
    stage_tw: Vec<Vec<Complex64>>,
    /// The same for the inverse: `roots[2n - twiddle_index(j, ℓ)]` (the conjugates).
    stage_tw_inv: Vec<Vec<Complex64>>,
}

impl SpecialFft {
    /// Builds the tables for ring degree `n = 2^k`, `2 <= k <= 17`: roots `ζ^k = exp(iπk/n)` and `5^j mod 2n`.
    ///
    /// Every root is computed from `cos`/`sin` of an angle in the first octant (`<= π/4`) and
    /// mapped to the other octants by the exact symmetries `(x, y) -> (y, x)` and
    /// multiplication by `i`, so `ζ^{2n-k}` is exactly the conjugate of `ζ^k`.
    pub fn new(n: usize) -> Result<Self> {
        if !n.is_power_of_two() || !((1 << MIN_LOG_N)..=(1 << MAX_LOG_N)).contains(&n) {
            return Err(Error::InvalidDegree {
                n,
                min_log: MIN_LOG_N,
                max_log: MAX_LOG_N,
            });
        }
        let two_n = 2 * n;
        let quarter = n / 2; // ζ^{n/2} = i
        let eighth = n / 4; // ζ^{n/4} = exp(iπ/4)
        let mut roots = vec![Complex64::new(0.0, 0.0); two_n];
        // First quadrant, k in 0..=n/2 (angle πk/n in [0, π/2]), from the first octant.
        for k in 0..eighth {
            let angle = std::f64::consts::PI * (k as f64) / (n as f64);
            let (s, c) = angle.sin_cos();
            roots[k] = Complex64::new(c, s);
            // exp(i(π/2 - θ)) = (sin θ, cos θ).
            roots[quarter - k] = Complex64::new(s, c);
        }
        // The octant point exp(iπ/4), symmetric by construction.
        let h = std::f64::consts::FRAC_1_SQRT_2;
        roots[eighth] = Complex64::new(h, h);
        // Other quadrants: ζ^{k + n/2} = i·ζ^k, i.e. (x, y) -> (-y, x), exact.
        for k in quarter..two_n {
            let r = roots[k - quarter];
            roots[k] = Complex64::new(-r.im, r.re);
        }
        let mut rot_group = Vec::with_capacity(n / 2);
        let mut g = 1usize;
        for _ in 0..n / 2 {
            rot_group.push(g);
            g = (g * 5) % two_n;
        }
        let mut fft = Self {
            n,
            roots,
            rot_group,
            stage_tw: Vec::new(),
            stage_tw_inv: Vec::new(),
        };
        // Index log2 ℓ; entries 0 (ℓ = 1) and above n/2 stay empty.
        for log_len in 0..=n.trailing_zeros() {
            let len = 1usize << log_len;
            let (fwd, inv) = if (2..=n / 2).contains(&len) {
                (0..len / 2)
                    .map(|j| {
                        let idx = fft.twiddle_index(j, len);
                        (fft.roots[idx], fft.roots[two_n - idx])
                    })
                    .unzip()
            } else {
                (Vec::new(), Vec::new())
            };
            fft.stage_tw.push(fwd);
            fft.stage_tw_inv.push(inv);
        }
        Ok(fft)
    }

    /// The ring degree `n` (the polynomial `m` lives in `R[X]/(X^n + 1)`).
    pub fn n(&self) -> usize {
        self.n
    }

    /// The largest slot count, `n/2` (full packing).
    pub fn max_slots(&self) -> usize {
        self.n / 2
    }

    /// Checks `slots` is a power of two in `1..=n/2` and returns `gap = n / (2·slots)`.
    fn check_slots(&self, slots: usize) -> Result<usize> {
        if !slots.is_power_of_two() || slots > self.n / 2 {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "slot count {slots} must be a power of two in 1..={} for ring degree {}",
                    self.n / 2,
                    self.n
                ),
            });
        }
        Ok(self.n / (2 * slots))
    }

    /// Encodes: writes the real coefficients of `m` with `m(ζ^{5^j mod 2n}) = values[j]` for `j < slots` (missing values are 0).
    ///
    /// `out.len()` must be `n`. For `slots < n/2` only coefficients at multiples of
    /// `gap = n / (2·slots)` are non-zero; every other entry of `out` is set to 0. The output is
    /// unscaled: the caller multiplies by the CKKS scale and rounds.
    pub fn encode(&self, values: &[Complex64], slots: usize, out: &mut [f64]) -> Result<()> {
        let gap = self.check_slots(slots)?;
        if values.len() > slots {
            return Err(Error::ShapeMismatch {
                what: format!("{} values for {slots} slots", values.len()),
            });
        }
        if out.len() != self.n {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "output has {} coefficients, ring degree is {}",
                    out.len(),
                    self.n
                ),
            });
        }
        let mut w = vec![Complex64::new(0.0, 0.0); slots];
        w[..values.len()].copy_from_slice(values);
        self.inverse_special_fft(&mut w);
        out.fill(0.0);
        for (k, wk) in w.iter().enumerate() {
            out[k * gap] = wk.re;
            out[(k + slots) * gap] = wk.im;
        }
        Ok(())
    }

    /// Decodes: returns `m(ζ^{5^j mod 2n})` for `j < slots`, reading only coefficients at multiples of `gap = n/(2·slots)`.
    ///
    /// `coeffs.len()` must be `n`. For sparse packing (`slots < n/2`) the polynomial is assumed
    /// to be of the form `m'(X^gap)`: only the coefficients `coeffs[k·gap]` (`k < 2·slots`) are
    /// read and all others are ignored, so the result is `m'` evaluated at the slot points, which
    /// equals `m` evaluated there whenever `m` has that form (as every output of
    /// [`SpecialFft::encode`] does).
    pub fn decode(&self, coeffs: &[f64], slots: usize) -> Result<Vec<Complex64>> {
        let gap = self.check_slots(slots)?;
        if coeffs.len() != self.n {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "input has {} coefficients, ring degree is {}",
                    coeffs.len(),
                    self.n
                ),
            });
        }
        let mut w: Vec<Complex64> = (0..slots)
            .map(|k| Complex64::new(coeffs[k * gap], coeffs[(k + slots) * gap]))
            .collect();
        self.special_fft(&mut w);
        Ok(w)
    }

    /// Root index of the twiddle `ξ_{4ℓ}^{5^j mod 4ℓ}` as a power of `ζ` (`ℓ` = `len`).
    #[inline]
    fn twiddle_index(&self, j: usize, len: usize) -> usize {
        let lenq = 4 * len;
        (self.rot_group[j] & (lenq - 1)) * (2 * self.n / lenq)
    }

    /// In place: `w_j <- Σ_k w_k ξ^{5^j k}` with `ξ = exp(2πi / 4s)`, `s = w.len()`.
    ///
    /// Parallel in two phases with the same arithmetic per butterfly as a sequential loop (so
    /// the same bits): the stages with `ℓ <= blk` act inside contiguous blocks of `blk`
    /// elements, one rayon task per block; the remaining `log2(s/blk)` stages are split across
    /// threads one stage at a time.
    fn special_fft(&self, w: &mut [Complex64]) {
        let s = w.len();
        bit_reverse(w);
        let blk = local_block(s);
        let fwd = |a: &mut Complex64, b: &mut Complex64, t: Complex64| {
            let u = *a;
            let v = *b * t;
            *a = u + v;
            *b = u - v;
        };
        let local = |block: &mut [Complex64]| {
            let mut len = 2;
            while len <= block.len() {
                stage_seq(
                    block,
                    len,
                    &self.stage_tw[len.trailing_zeros() as usize],
                    fwd,
                );
                len *= 2;
            }
        };
        if blk == s {
            local(w);
        } else {
            w.par_chunks_mut(blk).for_each(local);
        }
        let mut len = 2 * blk;
        while len <= s {
            stage_par(w, len, &self.stage_tw[len.trailing_zeros() as usize], fwd);
            len *= 2;
        }
    }

    /// In place: the exact inverse of [`Self::special_fft`] (the same two phases, reversed).
    fn inverse_special_fft(&self, w: &mut [Complex64]) {
        let s = w.len();
        let blk = local_block(s);
        // ζ^{2n-idx} = conj(ζ^idx): the inverse twiddles.
        let inv = |a: &mut Complex64, b: &mut Complex64, t_conj: Complex64| {
            let u = *a;
            let v = *b;
            *a = u + v;
            *b = (u - v) * t_conj;
        };
        let mut len = s;
        while len > blk {
            stage_par(
                w,
                len,
                &self.stage_tw_inv[len.trailing_zeros() as usize],
                inv,
            );
            len /= 2;
        }
        let local = |block: &mut [Complex64]| {
            let mut len = block.len();
            while len >= 2 {
                stage_seq(
                    block,
                    len,
                    &self.stage_tw_inv[len.trailing_zeros() as usize],
                    inv,
                );
                len /= 2;
            }
        };
        if blk == s {
            local(w);
        } else {
            w.par_chunks_mut(blk).for_each(local);
        }
        bit_reverse(w);
        let scale = 1.0 / s as f64;
        if blk == s {
            w.iter_mut().for_each(|x| *x *= scale);
        } else {
            w.par_chunks_mut(blk)
                .for_each(|c| c.iter_mut().for_each(|x| *x *= scale));
        }
    }
}

/// Block length of the local phase of [`SpecialFft`]'s transforms: the whole input when it is
/// small, else the input split into one block per thread (a power of two, at least
/// `PAR_CHUNK` elements).
fn local_block(s: usize) -> usize {
    if s < 4 * PAR_CHUNK {
        return s;
    }
    let threads = rayon::current_num_threads().next_power_of_two();
    (s / threads).max(PAR_CHUNK).min(s)
}

/// One stage on one thread: `f(a, b, tw[j])` on every butterfly `(block[j], block[j + len/2])`
/// of every block of `len` elements of `w`.
fn stage_seq<F>(w: &mut [Complex64], len: usize, tw: &[Complex64], f: F)
where
    F: Fn(&mut Complex64, &mut Complex64, Complex64),
{
    let lenh = len / 2;
    for block in w.chunks_exact_mut(len) {
        let (lo, hi) = block.split_at_mut(lenh);
        for ((a, b), &t) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
            f(a, b, t);
        }
    }
}

/// One stage split across rayon threads (blocks of `len >= 2·blk`): each block's butterflies
/// in chunks of `PAR_CHUNK`, computed exactly as [`stage_seq`] would.
fn stage_par<F>(w: &mut [Complex64], len: usize, tw: &[Complex64], f: F)
where
    F: Fn(&mut Complex64, &mut Complex64, Complex64) + Sync,
{
    let lenh = len / 2;
    for block in w.chunks_exact_mut(len) {
        let (lo, hi) = block.split_at_mut(lenh);
        lo.par_chunks_mut(PAR_CHUNK)
            .zip(hi.par_chunks_mut(PAR_CHUNK))
            .zip(tw.par_chunks(PAR_CHUNK))
            .for_each(|((lo, hi), tw)| {
                for ((a, b), &t) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    f(a, b, t);
                }
            });
    }
}

/// In-place bit-reversal permutation of a power-of-two-length slice.
fn bit_reverse(w: &mut [Complex64]) {
    let len = w.len();
    let mut j = 0usize;
    for i in 1..len {
        let mut bit = len >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            w.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parallel phases give the same bits as one thread (large enough for both phases).
    #[test]
    fn parallel_transforms_match_one_thread() {
        let n = 1 << 16;
        let fft = SpecialFft::new(n).unwrap();
        let vals: Vec<Complex64> = (0..n / 2)
            .map(|i| Complex64::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()))
            .collect();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut coeffs = vec![0.0; n];
                fft.encode(&vals, n / 2, &mut coeffs).unwrap();
                let back = fft.decode(&coeffs, n / 2).unwrap();
                (coeffs, back)
            })
        };
        let (c1, d1) = run(1);
        for threads in [2, 3, 8] {
            let (c, d) = run(threads);
            assert!(c.iter().zip(&c1).all(|(a, b)| a.to_bits() == b.to_bits()));
            assert!(d.iter().zip(&d1).all(|(a, b)| {
                a.re.to_bits() == b.re.to_bits() && a.im.to_bits() == b.im.to_bits()
            }));
        }
    }

    /// Small deterministic generator (splitmix64) for test data.
    struct TestRng(u64);

    impl TestRng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// Uniform in [-1, 1).
        fn unit(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }

        /// Random complex number of modulus <= 1.
        fn complex(&mut self) -> Complex64 {
            loop {
                let z = Complex64::new(self.unit(), self.unit());
                if z.norm() <= 1.0 {
                    return z;
                }
            }
        }
    }

    fn random_values(rng: &mut TestRng, len: usize) -> Vec<Complex64> {
        (0..len).map(|_| rng.complex()).collect()
    }

    fn max_err(a: &[Complex64], b: &[Complex64]) -> f64 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max)
    }

    /// σ_g: X -> X^g on R[X]/(X^n + 1); coefficient i moves to i·g mod 2n, negated when >= n.
    fn automorphism(m: &[f64], g: usize) -> Vec<f64> {
        let n = m.len();
        let mut out = vec![0.0; n];
        for (i, &c) in m.iter().enumerate() {
            let e = (i * g) % (2 * n);
            if e >= n {
                out[e - n] = -c;
            } else {
                out[e] = c;
            }
        }
        out
    }

    /// Naive O(n·s) evaluation of m at ζ^{5^j mod 2n}, j < slots.
    fn naive_decode(m: &[f64], slots: usize) -> Vec<Complex64> {
        let n = m.len();
        let two_n = 2 * n;
        let mut g = 1usize;
        let mut out = Vec::with_capacity(slots);
        for _ in 0..slots {
            let mut acc = Complex64::new(0.0, 0.0);
            for (i, &c) in m.iter().enumerate() {
                let e = (i * g) % two_n;
                let angle = std::f64::consts::PI * e as f64 / n as f64;
                acc += Complex64::new(angle.cos(), angle.sin()) * c;
            }
            out.push(acc);
            g = (g * 5) % two_n;
        }
        out
    }

    fn round_trip_err(n: usize, slots: usize, seed: u64) -> f64 {
        let fft = SpecialFft::new(n).unwrap();
        let mut rng = TestRng(seed);
        let values = random_values(&mut rng, slots);
        let mut m = vec![0.0; n];
        fft.encode(&values, slots, &mut m).unwrap();
        let back = fft.decode(&m, slots).unwrap();
        max_err(&values, &back)
    }

    #[test]
    fn send_sync_clone() {
        fn assert_traits<T: Send + Sync + Clone + std::fmt::Debug>() {}
        assert_traits::<SpecialFft>();
    }

    #[test]
    fn rejects_bad_degree() {
        for n in [0, 1, 2, 3, 6, 100, 1 << 18] {
            assert!(matches!(
                SpecialFft::new(n),
                Err(Error::InvalidDegree {
                    min_log: 2,
                    max_log: 17,
                    ..
                })
            ));
        }
        assert!(SpecialFft::new(4).is_ok());
        assert!(SpecialFft::new(1 << 17).is_ok());
    }

    #[test]
    fn roots_are_accurate() {
        let n = 1 << 12;
        let fft = SpecialFft::new(n).unwrap();
        for (k, r) in fft.roots.iter().enumerate() {
            let angle = std::f64::consts::PI * k as f64 / n as f64;
            let exact = Complex64::new(angle.cos(), angle.sin());
            assert!((r - exact).norm() < 1e-15, "k = {k}");
        }
        for k in 1..2 * n {
            assert_eq!(fft.roots[2 * n - k], fft.roots[k].conj());
        }
    }

    #[test]
    fn round_trip_full_and_sparse() {
        for (n, seed) in [(4, 1), (16, 2), (1024, 3), (1 << 15, 4)] {
            let mut slots = n / 2;
            while slots >= 1 {
                let err = round_trip_err(n, slots, seed + slots as u64);
                assert!(err < 1e-9, "n = {n}, slots = {slots}: {err:e}");
                slots /= 2;
            }
        }
    }

    #[test]
    fn short_values_are_zero_padded() {
        let n = 64;
        let fft = SpecialFft::new(n).unwrap();
        let mut rng = TestRng(7);
        let values = random_values(&mut rng, 5);
        let mut m = vec![0.0; n];
        fft.encode(&values, 16, &mut m).unwrap();
        let back = fft.decode(&m, 16).unwrap();
        let mut padded = values.clone();
        padded.resize(16, Complex64::new(0.0, 0.0));
        assert!(max_err(&padded, &back) < 1e-12);
    }

    #[test]
    fn matches_naive_evaluation() {
        for n in [4, 8, 16, 64, 256] {
            let fft = SpecialFft::new(n).unwrap();
            let mut rng = TestRng(n as u64);
            let mut slots = n / 2;
            while slots >= 1 {
                // encode, then evaluate naively.
                let values = random_values(&mut rng, slots);
                let mut m = vec![0.0; n];
                fft.encode(&values, slots, &mut m).unwrap();
                let gap = n / (2 * slots);
                for (i, c) in m.iter().enumerate() {
                    if i % gap != 0 {
                        assert_eq!(*c, 0.0);
                    }
                }
                let naive = naive_decode(&m, slots);
                assert!(max_err(&values, &naive) < 1e-12, "n = {n}, slots = {slots}");
                // decode of a random sparse polynomial against naive evaluation.
                let mut m = vec![0.0; n];
                for k in 0..2 * slots {
                    m[k * gap] = rng.unit();
                }
                let fast = fft.decode(&m, slots).unwrap();
                let naive = naive_decode(&m, slots);
                assert!(max_err(&fast, &naive) < 1e-12, "n = {n}, slots = {slots}");
                slots /= 2;
            }
        }
    }

    #[test]
    fn decode_ignores_off_gap_coefficients() {
        let n = 64;
        let slots = 8;
        let gap = n / (2 * slots);
        let fft = SpecialFft::new(n).unwrap();
        let mut rng = TestRng(11);
        let m: Vec<f64> = (0..n).map(|_| rng.unit()).collect();
        let folded: Vec<f64> = m
            .iter()
            .enumerate()
            .map(|(i, &c)| if i % gap == 0 { c } else { 0.0 })
            .collect();
        assert_eq!(
            fft.decode(&m, slots).unwrap(),
            fft.decode(&folded, slots).unwrap()
        );
    }

    #[test]
    fn rotation_rotates_slots_left() {
        for n in [8, 64, 1024] {
            let fft = SpecialFft::new(n).unwrap();
            let mut rng = TestRng(100 + n as u64);
            let mut slots = n / 2;
            while slots >= 1 {
                let values = random_values(&mut rng, slots);
                let mut m = vec![0.0; n];
                fft.encode(&values, slots, &mut m).unwrap();
                for k in [0, 1, 2, 3, slots / 2 + 1, slots - 1] {
                    let g = fft.rot_group[k % (n / 2)];
                    let rotated = fft.decode(&automorphism(&m, g), slots).unwrap();
                    let expected: Vec<Complex64> =
                        (0..slots).map(|j| values[(j + k) % slots]).collect();
                    let err = max_err(&rotated, &expected);
                    assert!(err < 1e-10, "n = {n}, slots = {slots}, k = {k}: {err:e}");
                }
                slots /= 2;
            }
        }
    }

    #[test]
    fn conjugation_conjugates_slots() {
        for n in [4, 64, 1024] {
            let fft = SpecialFft::new(n).unwrap();
            let mut rng = TestRng(200 + n as u64);
            let mut slots = n / 2;
            while slots >= 1 {
                let values = random_values(&mut rng, slots);
                let mut m = vec![0.0; n];
                fft.encode(&values, slots, &mut m).unwrap();
                let conj = fft.decode(&automorphism(&m, 2 * n - 1), slots).unwrap();
                let expected: Vec<Complex64> = values.iter().map(|z| z.conj()).collect();
                let err = max_err(&conj, &expected);
                assert!(err < 1e-10, "n = {n}, slots = {slots}: {err:e}");
                slots /= 2;
            }
        }
    }

    #[test]
    fn real_values_decode_real() {
        let n = 1024;
        let fft = SpecialFft::new(n).unwrap();
        let mut rng = TestRng(300);
        for slots in [n / 2, 64, 1] {
            let values: Vec<Complex64> = (0..slots)
                .map(|_| Complex64::new(rng.unit(), 0.0))
                .collect();
            let mut m = vec![0.0; n];
            fft.encode(&values, slots, &mut m).unwrap();
            let back = fft.decode(&m, slots).unwrap();
            for (b, v) in back.iter().zip(&values) {
                assert!(b.im.abs() < 1e-12);
                assert!((b.re - v.re).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn rejects_bad_shapes() {
        let n = 32;
        let fft = SpecialFft::new(n).unwrap();
        let mut m = vec![0.0; n];
        let vals = vec![Complex64::new(1.0, 0.0); 4];
        for slots in [0, 3, 6, 32, 64] {
            assert!(matches!(
                fft.encode(&vals[..1], slots, &mut m),
                Err(Error::ShapeMismatch { .. })
            ));
            assert!(matches!(
                fft.decode(&m, slots),
                Err(Error::ShapeMismatch { .. })
            ));
        }
        // Too many values for the slot count.
        assert!(matches!(
            fft.encode(&vals, 2, &mut m),
            Err(Error::ShapeMismatch { .. })
        ));
        // Wrong output / input length.
        let mut short = vec![0.0; n - 1];
        assert!(matches!(
            fft.encode(&vals, 4, &mut short),
            Err(Error::ShapeMismatch { .. })
        ));
        assert!(matches!(
            fft.decode(&short, 4),
            Err(Error::ShapeMismatch { .. })
        ));
        assert!(fft.encode(&vals, 16, &mut m).is_ok());
        assert!(fft.decode(&m, 16).is_ok());
    }

    /// The round trip stays accurate at n = 2^15 and 2^16 (full slots, parallel phases).
    /// Timings are in the `ckks_parts` bench (`special_fft_*`), not here.
    #[test]
    fn large_degree_round_trip_error() {
        for log_n in [15u32, 16] {
            let n = 1usize << log_n;
            let slots = n / 2;
            let fft = SpecialFft::new(n).unwrap();
            let mut rng = TestRng(400 + log_n as u64);
            let values = random_values(&mut rng, slots);
            let mut m = vec![0.0; n];
            fft.encode(&values, slots, &mut m).unwrap();
            let back = fft.decode(&m, slots).unwrap();
            let err = max_err(&values, &back);
            assert!(err < 1e-9, "n = 2^{log_n}: round-trip error {err:e}");
        }
    }
}
