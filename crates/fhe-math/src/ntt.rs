//! Negacyclic number-theoretic transform over `Z_q[X]/(X^n + 1)`.
//!
//! # Contract (reproduced bit for bit by the GPU kernels)
//!
//! Let `log n = log2(n)` and `brv(k)` be the reversal of the low `log n` bits of `k`.
//!
//! * **ψ.** With `g = primitive_root(q)` and `w = g^((q-1)/2n) mod q`, the primitive `2n`-th
//!   roots of unity are `w^k` for odd `k < 2n`; ψ is the **smallest of them as an integer**.
//!   It is therefore independent of the choice of `g`. `ψ^n ≡ -1 (mod q)`.
//! * **Forward** ([`NttTable::forward`]): input canonical coefficients `a_0..a_{n-1}` in natural
//!   order; output canonical values in bit-reversed order: `out[i] = a(ψ^(2·brv(i)+1)) mod q`.
//!   Pointwise products of forward outputs are products in `Z_q[X]/(X^n + 1)`.
//! * **Inverse** ([`NttTable::inverse`]): the exact inverse of `forward`, `n^-1` scaling
//!   included: input bit-reversed values, output canonical coefficients in natural order.
//!
//! Since inputs and outputs are canonical (in `[0, q)`), any correct implementation yields the
//! same bits; the internal lazy ranges below are a description of the scalar implementation only.
//! For `n >= 16` the transforms run `tfhe-ntt`'s vectorized NTT with a permutation onto this
//! order (module `ntt_simd`; 2–3.6× faster on an AVX-512 CPU), the same bits.
//!
//! # Twiddle tables (uploaded to the GPU)
//!
//! All tables have length `n`, and the Shoup companion of `w` is `floor(w · 2^64 / q)`.
//!
//! * `forward_twiddles()[k] = ψ^brv(k) mod q` for `k in 0..n` (entry 0 is 1, unused).
//! * `inverse_twiddles()[k] = ψ^(-brv(k)) mod q` for `k in 0..n` (entry 0 is 1, unused).
//! * `n_inv() = n^-1 mod q`; `inverse_final_twiddle() = n^-1 · ψ^(-brv(1)) = n^-1 · ψ^(-n/2)`.
//!
//! # Algorithms
//!
//! Forward, Cooley-Tukey, stages `m = 1, 2, 4, ..., n/2` (with `t = n / (2m)`): for each group
//! `i in 0..m` with `w = forward_twiddles()[m + i]` and each `j in 2it .. 2it + t`:
//! `(a[j], a[j+t]) <- (a[j] + w·a[j+t], a[j] - w·a[j+t])`.
//! Harvey's lazy butterflies keep values in `[0, 4q)` between stages (`q < 2^61`, so `4q < 2^64`);
//! the last stage returns canonical values.
//!
//! Inverse, Gentleman-Sande, stages `h = n/2, n/4, ..., 1` (with `t = n / (2h)`): for each group
//! `i in 0..h` with `s = inverse_twiddles()[h + i]` and each `j in 2it .. 2it + t`:
//! `(a[j], a[j+t]) <- (a[j] + a[j+t], (a[j] - a[j+t])·s)`, values lazily in `[0, 2q)`. The last
//! stage (`h = 1`) folds in the scaling: `(a[j], a[j+t]) <- ((a[j] + a[j+t])·n^-1,
//! (a[j] - a[j+t])·inverse_final_twiddle())`, and returns canonical values.

use crate::error::{Error, Result};
use crate::modulus::Modulus;
use crate::ntt_simd::SimdNtt;
use crate::primes::{is_prime, primitive_root};

/// Smallest supported `log2 n`.
const MIN_LOG_N: u32 = 1;
/// Largest supported `log2 n`.
const MAX_LOG_N: u32 = 17;

/// Precomputed tables for the negacyclic NTT of degree `n` modulo a prime `q ≡ 1 (mod 2n)`.
///
/// See the [module documentation](self) for the exact transform and table layout.
#[derive(Clone, Debug)]
pub struct NttTable {
    q: Modulus,
    n: usize,
    psi: u64,
    /// `ψ^brv(k)`.
    fwd: Vec<u64>,
    fwd_shoup: Vec<u64>,
    /// `ψ^-brv(k)`.
    inv: Vec<u64>,
    inv_shoup: Vec<u64>,
    n_inv: u64,
    n_inv_shoup: u64,
    /// `n^-1 · ψ^-brv(1)`.
    final_tw: u64,
    final_tw_shoup: u64,
    /// The vectorized transform with the same results, where `tfhe-ntt` has a plan; built at
    /// the first transform, so tables only uploaded to a GPU never hold it.
    simd: std::sync::OnceLock<Option<SimdNtt>>,
}

/// Reverses the low `bits` bits of `k` (`bits = 0` gives 0).
#[inline]
pub(crate) fn bit_reverse(k: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        k.reverse_bits() >> (usize::BITS - bits)
    }
}

/// Lazy Shoup product: `a·w mod q` in `[0, 2q)` for any `a < 2^64`, canonical `w`.
#[inline(always)]
fn mul_shoup_lazy(a: u64, w: u64, w_shoup: u64, q: u64) -> u64 {
    let quot = ((a as u128 * w_shoup as u128) >> 64) as u64;
    a.wrapping_mul(w).wrapping_sub(quot.wrapping_mul(q))
}

/// `x - m` if `x >= m`, else `x`, branch-free (for `x < 2^63`: the wrapped difference is
/// then larger than `x`, so `min` picks the right one and compiles to a conditional move).
#[inline(always)]
fn csub(x: u64, m: u64) -> u64 {
    x.min(x.wrapping_sub(m))
}

impl NttTable {
    /// Builds the tables for degree `n` (a power of two, `2 <= n <= 2^17`) and prime
    /// `q ≡ 1 (mod 2n)`.
    pub fn new(q: Modulus, n: usize) -> Result<NttTable> {
        if !n.is_power_of_two() || !(1 << MIN_LOG_N..=1 << MAX_LOG_N).contains(&n) {
            return Err(Error::InvalidDegree {
                n,
                min_log: MIN_LOG_N,
                max_log: MAX_LOG_N,
            });
        }
        let qv = q.value();
        if !is_prime(qv) {
            return Err(Error::InvalidModulus {
                modulus: qv,
                reason: "NTT modulus must be prime",
            });
        }
        let two_n = 2 * n as u64;
        if (qv - 1) & (two_n - 1) != 0 {
            return Err(Error::InvalidModulus {
                modulus: qv,
                reason: "NTT modulus must be 1 mod 2n",
            });
        }

        // Smallest primitive 2n-th root: min over odd powers of w.
        let w = q.pow(primitive_root(&q), (qv - 1) / two_n);
        let w2 = q.mul(w, w);
        let mut cur = w;
        let mut psi = w;
        for _ in 1..n {
            cur = q.mul(cur, w2);
            psi = psi.min(cur);
        }
        let psi_inv = q.inv(psi)?;

        let log_n = n.trailing_zeros();
        let mut pow_fwd = Vec::with_capacity(n);
        let mut pow_inv = Vec::with_capacity(n);
        let (mut pf, mut pi) = (1u64, 1u64);
        for _ in 0..n {
            pow_fwd.push(pf);
            pow_inv.push(pi);
            pf = q.mul(pf, psi);
            pi = q.mul(pi, psi_inv);
        }
        let fwd: Vec<u64> = (0..n).map(|k| pow_fwd[bit_reverse(k, log_n)]).collect();
        let inv: Vec<u64> = (0..n).map(|k| pow_inv[bit_reverse(k, log_n)]).collect();
        let fwd_shoup = fwd.iter().map(|&x| q.shoup(x)).collect();
        let inv_shoup = inv.iter().map(|&x| q.shoup(x)).collect();
        let n_inv = q.inv(n as u64)?;
        let final_tw = q.mul(n_inv, inv[1]);
        Ok(NttTable {
            q,
            n,
            psi,
            fwd,
            fwd_shoup,
            inv,
            inv_shoup,
            n_inv,
            n_inv_shoup: q.shoup(n_inv),
            final_tw,
            final_tw_shoup: q.shoup(final_tw),
            simd: std::sync::OnceLock::new(),
        })
    }

    /// The vectorized transform, built on first use (`None`: no `tfhe-ntt` plan, e.g. n < 16).
    fn simd(&self) -> Option<&SimdNtt> {
        self.simd
            .get_or_init(|| {
                let mut x_hat = vec![0u64; self.n];
                x_hat[1] = 1; // the polynomial X (n >= 2)
                forward_impl(self, &mut x_hat);
                SimdNtt::new(self.q.value(), &x_hat)
            })
            .as_ref()
    }

    /// The ring degree `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }

    /// The modulus `q`.
    #[inline]
    pub fn modulus(&self) -> &Modulus {
        &self.q
    }

    /// ψ: the smallest primitive `2n`-th root of unity mod `q` (`ψ^n ≡ -1`).
    #[inline]
    pub fn psi(&self) -> u64 {
        self.psi
    }

    /// Forward twiddles, length `n`: `[k] = ψ^brv(k) mod q`; stage `m` uses `[m..2m]`.
    #[inline]
    pub fn forward_twiddles(&self) -> &[u64] {
        &self.fwd
    }

    /// Shoup companions of [`NttTable::forward_twiddles`]: `[k] = floor(ψ^brv(k) · 2^64 / q)`.
    #[inline]
    pub fn forward_twiddles_shoup(&self) -> &[u64] {
        &self.fwd_shoup
    }

    /// Inverse twiddles, length `n`: `[k] = ψ^(-brv(k)) mod q`; stage `h` uses `[h..2h]`.
    #[inline]
    pub fn inverse_twiddles(&self) -> &[u64] {
        &self.inv
    }

    /// Shoup companions of [`NttTable::inverse_twiddles`]: `[k] = floor(ψ^-brv(k) · 2^64 / q)`.
    #[inline]
    pub fn inverse_twiddles_shoup(&self) -> &[u64] {
        &self.inv_shoup
    }

    /// `n^-1 mod q`.
    #[inline]
    pub fn n_inv(&self) -> u64 {
        self.n_inv
    }

    /// Shoup companion of [`NttTable::n_inv`]: `floor(n^-1 · 2^64 / q)`.
    #[inline]
    pub fn n_inv_shoup(&self) -> u64 {
        self.n_inv_shoup
    }

    /// Twiddle of the inverse's last stage with the scaling folded in: `n^-1 · ψ^(-n/2) mod q`.
    #[inline]
    pub fn inverse_final_twiddle(&self) -> u64 {
        self.final_tw
    }

    /// Shoup companion of [`NttTable::inverse_final_twiddle`].
    #[inline]
    pub fn inverse_final_twiddle_shoup(&self) -> u64 {
        self.final_tw_shoup
    }

    /// Forward negacyclic NTT in place: `a[i] <- a(ψ^(2·brv(i)+1))`.
    ///
    /// `a` must have length `n` and hold canonical coefficients in natural order; the output is
    /// canonical, in bit-reversed order.
    pub fn forward(&self, a: &mut [u64]) {
        match self.simd() {
            Some(simd) => simd.forward(a),
            None => forward_impl(self, a),
        }
    }

    /// [`NttTable::forward`] on the scalar code, whatever the CPU (the reference of the
    /// vectorized path's tests).
    #[cfg(test)]
    pub(crate) fn forward_scalar(&self, a: &mut [u64]) {
        forward_impl(self, a)
    }

    /// Inverse negacyclic NTT in place, the exact inverse of [`NttTable::forward`] including
    /// the `n^-1` scaling.
    ///
    /// `a` must have length `n` and hold canonical values in bit-reversed order; the output is
    /// canonical coefficients in natural order.
    pub fn inverse(&self, a: &mut [u64]) {
        match self.simd() {
            Some(simd) => simd.inverse(a),
            None => inverse_impl(self, a),
        }
    }

    /// [`NttTable::inverse`] on the scalar code, whatever the CPU.
    #[cfg(test)]
    pub(crate) fn inverse_scalar(&self, a: &mut [u64]) {
        inverse_impl(self, a)
    }

    /// Whether [`NttTable::forward`] and [`NttTable::inverse`] run the vectorized `tfhe-ntt`
    /// transform (n >= 16, where `tfhe-ntt` has a plan); the results are the same either way.
    pub fn is_vectorized(&self) -> bool {
        self.simd().is_some()
    }
}

/// Body of [`NttTable::forward`], compiled for AVX-512 and AVX2 as well as the baseline and
/// dispatched at run time (the integer results are identical on every path).
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq+avx512vl+avx2", "x86_64+avx2"))]
fn forward_impl(table: &NttTable, a: &mut [u64]) {
    let n = table.n;
    debug_assert_eq!(a.len(), n, "NTT input length must be n");
    let q = table.q.value();
    let two_q = 2 * q;

    let mut m = 1;
    let mut t = n >> 1;
    // All stages but the last: values in [0, 4q).
    while t > 1 {
        let tw = &table.fwd[m..2 * m];
        let tws = &table.fwd_shoup[m..2 * m];
        for ((block, &w), &ws) in a.chunks_exact_mut(2 * t).zip(tw).zip(tws) {
            let (x, y) = block.split_at_mut(t);
            for (x, y) in x.iter_mut().zip(y.iter_mut()) {
                let u = csub(*x, two_q);
                let v = mul_shoup_lazy(*y, w, ws, q);
                *x = u + v;
                *y = u + two_q - v;
            }
        }
        m <<= 1;
        t >>= 1;
    }
    // Last stage (t = 1): canonical outputs.
    let tw = &table.fwd[m..2 * m];
    let tws = &table.fwd_shoup[m..2 * m];
    for ((pair, &w), &ws) in a.chunks_exact_mut(2).zip(tw).zip(tws) {
        let u = csub(pair[0], two_q);
        let v = mul_shoup_lazy(pair[1], w, ws, q);
        pair[0] = csub(csub(u + v, two_q), q);
        pair[1] = csub(csub(u + two_q - v, two_q), q);
    }
}

/// Body of [`NttTable::inverse`], compiled for AVX-512 and AVX2 as well as the baseline and
/// dispatched at run time (the integer results are identical on every path).
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq+avx512vl+avx2", "x86_64+avx2"))]
fn inverse_impl(table: &NttTable, a: &mut [u64]) {
    let n = table.n;
    debug_assert_eq!(a.len(), n, "NTT input length must be n");
    let q = table.q.value();
    let two_q = 2 * q;

    let mut h = n >> 1;
    let mut t = 1;
    // All stages but the last: values in [0, 2q).
    while h > 1 {
        let tw = &table.inv[h..2 * h];
        let tws = &table.inv_shoup[h..2 * h];
        for ((block, &s), &ss) in a.chunks_exact_mut(2 * t).zip(tw).zip(tws) {
            let (x, y) = block.split_at_mut(t);
            for (x, y) in x.iter_mut().zip(y.iter_mut()) {
                let (u, v) = (*x, *y);
                *x = csub(u + v, two_q);
                *y = mul_shoup_lazy(u + two_q - v, s, ss, q);
            }
        }
        h >>= 1;
        t <<= 1;
    }
    // Last stage (h = 1, t = n/2) with the n^-1 scaling folded in: canonical outputs.
    let (ni, nis) = (table.n_inv, table.n_inv_shoup);
    let (f, fs) = (table.final_tw, table.final_tw_shoup);
    let (x, y) = a.split_at_mut(t);
    for (x, y) in x.iter_mut().zip(y.iter_mut()) {
        let (u, v) = (*x, *y);
        *x = csub(mul_shoup_lazy(u + v, ni, nis, q), q);
        *y = csub(mul_shoup_lazy(u + two_q - v, f, fs, q), q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use proptest::prelude::*;

    use crate::test_util::rand_poly;

    fn negacyclic_mul(a: &[u64], b: &[u64], q: &Modulus) -> Vec<u64> {
        let n = a.len();
        let mut c = vec![0u64; n];
        for (i, &ai) in a.iter().enumerate() {
            for (j, &bj) in b.iter().enumerate() {
                let p = q.mul(ai, bj);
                let k = i + j;
                if k < n {
                    c[k] = q.add(c[k], p);
                } else {
                    c[k - n] = q.sub(c[k - n], p);
                }
            }
        }
        c
    }

    fn table(bits: u32, n: usize) -> NttTable {
        let q = ntt_primes(bits, 2 * n as u64, 1, &[]).unwrap()[0];
        NttTable::new(Modulus::new(q).unwrap(), n).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn ring_isomorphism(
            seed in any::<u64>(),
            log_n in prop::sample::select(vec![4u32, 6, 8]),
            bits in prop::sample::select(vec![40u32, 60]),
        ) {
            let n = 1usize << log_n;
            let t = table(bits, n);
            let q = *t.modulus();
            let a = rand_poly(seed, n, q.value());
            let b = rand_poly(seed ^ 0x5555, n, q.value());
            let expected = negacyclic_mul(&a, &b, &q);
            let (mut fa, mut fb) = (a.clone(), b.clone());
            t.forward(&mut fa);
            t.forward(&mut fb);
            let mut c: Vec<u64> = fa.iter().zip(&fb).map(|(&x, &y)| q.mul(x, y)).collect();
            t.inverse(&mut c);
            prop_assert_eq!(c, expected);
            // forward ∘ inverse = identity on the NTT side.
            let mut back = fa.clone();
            t.inverse(&mut back);
            prop_assert_eq!(&back, &a);
            t.forward(&mut back);
            prop_assert_eq!(back, fa);
        }

        #[test]
        fn round_trip_4096(seed in any::<u64>(), bits in prop::sample::select(vec![40u32, 60])) {
            let t = table(bits, 4096);
            let a = rand_poly(seed, 4096, t.modulus().value());
            let mut b = a.clone();
            t.forward(&mut b);
            prop_assert!(b.iter().all(|&x| x < t.modulus().value()));
            t.inverse(&mut b);
            prop_assert_eq!(b, a);
        }
    }

    #[test]
    fn extreme_values_round_trip() {
        for n in [2usize, 4, 1024] {
            let t = table(60, n);
            let q = t.modulus().value();
            let a = vec![q - 1; n];
            let mut b = a.clone();
            t.forward(&mut b);
            assert!(b.iter().all(|&x| x < q));
            t.inverse(&mut b);
            assert_eq!(b, a);
        }
    }

    #[test]
    fn psi_is_smallest_primitive_root() {
        for log_n in 1..=6 {
            let n = 1usize << log_n;
            for bits in [40, 60] {
                let t = table(bits, n);
                let q = *t.modulus();
                let psi = t.psi();
                assert_eq!(q.pow(psi, n as u64), q.value() - 1);
                let w = q.pow(primitive_root(&q), (q.value() - 1) / (2 * n as u64));
                let min = (1..2 * n as u64)
                    .step_by(2)
                    .map(|k| q.pow(w, k))
                    .min()
                    .unwrap();
                assert_eq!(psi, min);
                // Brute force over all primitive 2n-th roots via their definition.
                for k in (1..2 * n as u64).step_by(2) {
                    let r = q.pow(w, k);
                    assert_eq!(q.pow(r, n as u64), q.value() - 1);
                    assert!(r >= psi);
                }
            }
        }
    }

    #[test]
    fn output_is_bit_reversed_evaluation() {
        for log_n in 1..=6u32 {
            let n = 1usize << log_n;
            let t = table(60, n);
            let q = *t.modulus();
            let a = rand_poly(u64::from(log_n), n, q.value());
            let mut f = a.clone();
            t.forward(&mut f);
            for (i, &fi) in f.iter().enumerate() {
                let x = q.pow(t.psi(), 2 * bit_reverse(i, log_n) as u64 + 1);
                let val = a.iter().rev().fold(0u64, |acc, &c| q.add(q.mul(acc, x), c));
                assert_eq!(fi, val, "n = {n}, i = {i}");
            }
        }
    }

    #[test]
    fn twiddle_layout() {
        let t = table(60, 64);
        let q = *t.modulus();
        for k in 0..64 {
            let e = bit_reverse(k, 6) as u64;
            assert_eq!(t.forward_twiddles()[k], q.pow(t.psi(), e));
            assert_eq!(q.mul(t.inverse_twiddles()[k], t.forward_twiddles()[k]), 1);
            assert_eq!(
                t.forward_twiddles_shoup()[k],
                q.shoup(t.forward_twiddles()[k])
            );
            assert_eq!(
                t.inverse_twiddles_shoup()[k],
                q.shoup(t.inverse_twiddles()[k])
            );
        }
        assert_eq!(q.mul(t.n_inv(), 64), 1);
        assert_eq!(t.n_inv_shoup(), q.shoup(t.n_inv()));
        assert_eq!(
            t.inverse_final_twiddle(),
            q.mul(t.n_inv(), q.inv(q.pow(t.psi(), 32)).unwrap())
        );
    }

    #[test]
    fn rejects_bad_parameters() {
        let q = Modulus::new(ntt_primes(60, 1 << 18, 1, &[]).unwrap()[0]).unwrap();
        for n in [0usize, 1, 3, 48, 1 << 18] {
            assert!(matches!(
                NttTable::new(q, n),
                Err(Error::InvalidDegree {
                    min_log: 1,
                    max_log: 17,
                    ..
                })
            ));
        }
        assert!(NttTable::new(q, 1 << 17).is_ok());
        // Prime but not 1 mod 2n.
        let p = Modulus::new(1_000_000_007).unwrap();
        assert!(matches!(
            NttTable::new(p, 1024),
            Err(Error::InvalidModulus { .. })
        ));
        // 1 mod 2n but composite: 97 * 257 = 24929 = 1 + 24928 = 1 + 2^5 * 779.
        let c = Modulus::new(97 * 257).unwrap();
        assert!(matches!(
            NttTable::new(c, 16),
            Err(Error::InvalidModulus { .. })
        ));
    }

    #[test]
    fn is_send_sync() {
        fn check<T: Send + Sync + Clone + std::fmt::Debug>() {}
        check::<NttTable>();
    }
}
