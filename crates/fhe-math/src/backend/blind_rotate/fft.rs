//! The negacyclic f64 FFT of the external product: digit polynomial × key polynomial in
//! `Z[X]/(X^N + 1)`, computed in double precision, rounded to integers and reduced mod `q`.
//!
//! Every device implementation performs **these operations in this order** (IEEE-754 binary64,
//! round to nearest even, no fused multiply-add), so its words equal the CPU's:
//!
//! * **Roots.** `ψ = e^{iπ/N}` (a primitive `2N`-th root of unity); `ψ^x` is [`unit_root`]`(x, 2N)`:
//!   the angle reduced to an octant by exact symmetries and `cos`/`sin` of at most `π/4` by
//!   fixed Taylor polynomials (Horner, [`cos_sin_small`]), so the table is the same on every
//!   machine. The tables are computed once on the host and uploaded to a device.
//! * **Folding.** With `M = N/2`, a real polynomial `a` maps to `z_j = a_j + i·a_{j+M}`
//!   (`j < M`): `a mod (X^M − i)`, which determines `a` (the other half of the roots are
//!   conjugates). No multiplication: the twist is merged into the twiddles.
//! * **Forward transform** (Cooley–Tukey, natural order in, the roots' tree order out; the
//!   layout of [`crate::NttTable`]'s negacyclic NTT): for stages `s = 0 … log2 M − 1`, with
//!   `m = 2^s` blocks of `2h` points (`h = M / (2m)`), block `b` and `j < h`:
//!   `u = z[2hb + j]`, `v = z[2hb + j + h]`, `c = T[m + b]`, `t = v·c`,
//!   `z[2hb + j] = u + t`, `z[2hb + j + h] = u − t`. The twiddle `T[t]` of tree node `t`
//!   (node 1 is `X^M − i`, node `t`'s children `2t`, `2t + 1`) is `ψ^{e_t / 2}` with `e_1 = M`,
//!   `e_{2t} = e_t / 2`, `e_{2t+1} = e_t / 2 + N`.
//! * **Inverse transform** (Gentleman–Sande, tree order in, natural order out): for stages
//!   `s = log2 M − 1 … 0`, the same blocks: `A = z[2hb + j]`, `B = z[2hb + j + h]`,
//!   `z[2hb + j] = A + B`, `z[2hb + j + h] = (A − B)·conj(T[m + b])`. It returns `M` times
//!   the folded polynomial; the factor `1/M` (exact, a power of two) is in the key's spectrum.
//! * **Complex products**: `(a + ib)(c + id) = (a·c − b·d) + i(a·d + b·c)` and
//!   `(a + ib)·conj(c + id) = (a·c + b·d) + i(b·c − a·d)`, each product rounded, then the sum.
//! * **Key spectra** ([`NegacyclicFft::key_spectrum`]): a key polynomial's coefficients centered
//!   in `(−q/2, q/2]` (exact in f64 since `q < 2^53`), folded, forward transform, each value
//!   times `1/M`.
//! * **Multiply-accumulate**: for output component `c`, at each point, the sum over the keys
//!   `t = 0 … kpc − 1` and then the rows `r = 0 … (k + 1)·l − 1` of `D_{t,r} · K_{t,r,c}`, added
//!   in that order, starting from the first product.
//! * **Points**: output position `p` of the forward transform is the value at
//!   `ψ^{E_p}`, `E_p = 1 + 4 · bitrev(p)` (`log2 M` bits; [`NegacyclicFft::point_exponent`]),
//!   so the spectrum of `X^t` is `ψ^{t · E_p mod 2N}`, read from the table
//!   [`NegacyclicFft::roots`] (`ψ^x` for `x < 2N`, by [`unit_root`]).
//! * **Multi-bit key product** (group size `g ≥ 2`): at point `p`, with `m_j = ψ^{t_j · E_p mod 2N}
//!   − 1` (the real part minus 1.0, the imaginary part as read) for the group's patterns
//!   `j = 1 … 2^g − 1` and their exponents `t_j`, for each row `r` and output component `c`:
//!   `K = m_1 · K_{1,r,c}`, then `K = K + m_j · K_{j,r,c}` for `j = 2 …`; the product `D_r · K`
//!   is summed over the rows `r = 0 …` starting from the first.
//! * **Back to residues** ([`f64_to_residue`]): after the inverse transform, coefficient `j` is
//!   the real part of point `j` and coefficient `j + M` its imaginary part; each is rounded to
//!   the nearest integer, halves away from zero (`f64::round`, CUDA's `round`), and reduced mod
//!   `q` exactly from its sign, exponent and mantissa (values reach about `2^83` at the classic
//!   set, beyond `2^53`, so no cast through a 64-bit integer). Any exact reduction gives the same
//!   residue: the CUDA kernel takes `k = rint(r · fl(1/q))` and `r − k·q` by one fused
//!   multiply-add, exact because the parameter check bounds `|r|` by `2^50 · q`.
//!
//! The result is the exact integer product plus the rounding error of the transforms, a noise
//! term of the blind rotation (bounded and measured in the tests below; `tfhe-switch`'s
//! parameter module adds it to the failure probability).

use crate::error::{Error, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;

/// A complex number in binary64, laid out like CUDA's `double2` (real part first).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct C64 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl std::ops::Add for C64 {
    type Output = C64;
    /// `self + o`.
    #[inline]
    fn add(self, o: C64) -> C64 {
        C64 {
            re: self.re + o.re,
            im: self.im + o.im,
        }
    }
}

impl std::ops::Sub for C64 {
    type Output = C64;
    /// `self − o`.
    #[inline]
    fn sub(self, o: C64) -> C64 {
        C64 {
            re: self.re - o.re,
            im: self.im - o.im,
        }
    }
}

impl std::ops::Mul for C64 {
    type Output = C64;
    /// `self · o = (a·c − b·d) + i(a·d + b·c)`.
    #[inline]
    fn mul(self, o: C64) -> C64 {
        C64 {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
}

impl C64 {
    /// `self · conj(o) = (a·c + b·d) + i(b·c − a·d)`.
    #[inline]
    pub fn mul_conj(self, o: C64) -> C64 {
        C64 {
            re: self.re * o.re + self.im * o.im,
            im: self.im * o.re - self.re * o.im,
        }
    }
}

/// `(cos t, sin t)` for `0 <= t <= π/4` by Taylor polynomials of degrees 20 and 21 in Horner
/// form (truncation below `2^-60`): plain binary64 operations, the same on every machine.
pub fn cos_sin_small(t: f64) -> (f64, f64) {
    let t2 = t * t;
    // cos t = 1 − t²/2!(1 − t²/(3·4)(1 − …)), sin t = t(1 − t²/(2·3)(1 − t²/(4·5)(1 − …))).
    let mut c = 1.0f64;
    let mut s = 1.0f64;
    for k in (1..=10u32).rev() {
        let kc = f64::from((2 * k - 1) * (2 * k));
        let ks = f64::from((2 * k) * (2 * k + 1));
        c = 1.0 - t2 / kc * c;
        s = 1.0 - t2 / ks * s;
    }
    (c, t * s)
}

/// `e^{2πi·x/d}` for a power of two `d >= 1`: the octant found exactly, then
/// [`cos_sin_small`] of an angle of at most `π/4` and exact symmetries.
pub fn unit_root(x: u64, d: u64) -> C64 {
    let x = x % d;
    // angle = (π/4)·(8x/d) = (π/4)·(o + rem/d).
    let r = 8 * u128::from(x);
    let o = (r / u128::from(d)) as u64;
    let rem = (r % u128::from(d)) as u64;
    let (phi, j, sign) = if o.is_multiple_of(2) {
        (rem, o, 1.0)
    } else {
        (d - rem, o + 1, -1.0)
    };
    // angle = j·π/4 + sign·t with j even: i^(j/2) · (cos t + i·sign·sin t).
    let t = (phi as f64 / d as f64) * std::f64::consts::FRAC_PI_4;
    let (c, s) = cos_sin_small(t);
    let (re, im) = (c, sign * s);
    match (j / 2) % 4 {
        0 => C64 { re, im },
        1 => C64 { re: -im, im: re },
        2 => C64 { re: -re, im: -im },
        _ => C64 { re: im, im: -re },
    }
}

/// The negacyclic FFT of one ring degree `N`: `M = N/2` complex points and the twiddles `T`
/// (module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct NegacyclicFft {
    n: usize,
    twiddles: Vec<C64>,
    roots: Vec<C64>,
}

impl NegacyclicFft {
    /// The transform of degree `n` (a power of two, at least 2).
    pub fn new(n: usize) -> Result<Self> {
        if !n.is_power_of_two() || n < 2 {
            return Err(Error::InvalidDegree {
                n,
                min_log: 1,
                max_log: 17,
            });
        }
        let m = n / 2;
        let two_n = 2 * n as u64;
        // e[t] (exponents of ψ) over the tree's internal nodes 1..M.
        let mut e = vec![0u64; m.max(2)];
        e[1] = m as u64;
        let mut twiddles = vec![C64::default(); m.max(2)];
        for t in 1..m {
            if t > 1 {
                let parent = e[t / 2] / 2;
                e[t] = if t % 2 == 0 {
                    parent
                } else {
                    parent + n as u64
                };
            }
            twiddles[t] = unit_root(e[t] / 2, two_n);
        }
        twiddles.truncate(m);
        let roots = (0..two_n).map(|x| unit_root(x, two_n)).collect();
        Ok(NegacyclicFft { n, twiddles, roots })
    }

    /// The `2N` roots `ψ^x`, `x < 2N` ([`unit_root`]): the monomials' spectral values, the
    /// table a device uploads for the multi-bit key product.
    pub fn roots(&self) -> &[C64] {
        &self.roots
    }

    /// The exponent `E_p = 1 + 4 · bitrev(p) mod 2N` (`log2 M`-bit reversal) of the root
    /// `ψ^{E_p}` at which output position `p` of [`Self::forward`] evaluates the folded
    /// polynomial.
    pub fn point_exponent(&self, p: usize) -> u64 {
        let bits = (self.n / 2).trailing_zeros();
        let rev = if bits == 0 {
            0
        } else {
            (p as u64).reverse_bits() >> (64 - bits)
        };
        (1 + 4 * rev) % (2 * self.n as u64)
    }

    /// `ψ^{t · E_p} − 1`, the spectral value of `X^t − 1` at position `p` (the module's rule:
    /// the table's real part minus 1.0).
    #[inline]
    pub fn monomial_minus_one(&self, t: u64, p: usize) -> C64 {
        let two_n = 2 * self.n as u64;
        let r = self.roots[((t % two_n) * self.point_exponent(p) % two_n) as usize];
        C64 {
            re: r.re - 1.0,
            im: r.im,
        }
    }

    /// The ring degree `N`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The twiddles `T[0..M]` (`T[0]` unused, zero): the table a device uploads.
    pub fn twiddles(&self) -> &[C64] {
        &self.twiddles
    }

    /// The forward transform in place (`M` points, natural order in, tree order out).
    pub fn forward(&self, z: &mut [C64]) {
        let m_pts = self.n / 2;
        let mut m = 1;
        while m < m_pts {
            let h = m_pts / (2 * m);
            for b in 0..m {
                let c = self.twiddles[m + b];
                let base = 2 * h * b;
                for j in base..base + h {
                    let u = z[j];
                    let t = z[j + h] * c;
                    z[j] = u + t;
                    z[j + h] = u - t;
                }
            }
            m *= 2;
        }
    }

    /// The inverse transform in place without the factor `1/M` (tree order in, natural out).
    pub fn inverse(&self, z: &mut [C64]) {
        let m_pts = self.n / 2;
        let mut m = m_pts / 2;
        while m >= 1 {
            let h = m_pts / (2 * m);
            for b in 0..m {
                let c = self.twiddles[m + b];
                let base = 2 * h * b;
                for j in base..base + h {
                    let (a, bb) = (z[j], z[j + h]);
                    z[j] = a + bb;
                    z[j + h] = (a - bb).mul_conj(c);
                }
            }
            m /= 2;
        }
    }

    /// Folds signed integer coefficients (`N` of them, each exact in f64) into `z` (`M`
    /// points): `z_j = a_j + i·a_{j+M}`.
    pub fn fold(&self, a: &[i64], z: &mut [C64]) {
        let m = self.n / 2;
        for j in 0..m {
            z[j] = C64 {
                re: a[j] as f64,
                im: a[j + m] as f64,
            };
        }
    }

    /// The spectrum of one key polynomial given in NTT form mod `q` (`N` residues): inverse
    /// NTT, coefficients centered in `(−q/2, q/2]`, folded, forward transform, times `1/M`.
    /// Needs `q < 2^53` (exact coefficients).
    pub fn key_spectrum(&self, ntt: &NttTable, ntt_form: &[u64], out: &mut [C64]) {
        let q = ntt.modulus();
        let mut coeffs = ntt_form.to_vec();
        ntt.inverse(&mut coeffs);
        let centered: Vec<i64> = coeffs.iter().map(|&x| q.center(x)).collect();
        self.fold(&centered, out);
        self.forward(out);
        let scale = 1.0 / (self.n / 2) as f64;
        for z in out.iter_mut() {
            z.re *= scale;
            z.im *= scale;
        }
    }

    /// `M` times the folded product's coefficients back to residues: `out[j]` from the real
    /// part of point `j`, `out[j + M]` from its imaginary part ([`f64_to_residue`]).
    pub fn unfold_to_residues(&self, z: &[C64], q: &Modulus, out: &mut [u64]) {
        let m = self.n / 2;
        for j in 0..m {
            out[j] = f64_to_residue(z[j].re, q);
            out[j + m] = f64_to_residue(z[j].im, q);
        }
    }
}

/// `round(v) mod q`: `v` rounded to the nearest integer (halves away from zero), then reduced
/// exactly from its sign, exponent and mantissa. Needs `|v| < 2^127` (checked for the blind
/// rotation's products by [`super::BlindRotateParams::check`]).
#[inline]
pub fn f64_to_residue(v: f64, q: &Modulus) -> u64 {
    let bits = v.round().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // ±0 (a rounded value is never subnormal).
        return 0;
    }
    let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let shift = exp - 1075;
    let mag = if shift >= 0 {
        u128::from(mant) << shift
    } else {
        u128::from(mant >> (-shift))
    };
    let r = q.reduce_u128(mag);
    if bits >> 63 == 1 { q.neg(r) } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact negacyclic product of two integer polynomials.
    fn exact_product(a: &[i64], b: &[i64]) -> Vec<i128> {
        let n = a.len();
        let mut out = vec![0i128; n];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                let p = i128::from(x) * i128::from(y);
                if i + j < n {
                    out[i + j] += p;
                } else {
                    out[i + j - n] -= p;
                }
            }
        }
        out
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0
        }
        /// Uniform in `[-half, half)`, `half` a power of two up to 2^62.
        fn signed(&mut self, half: i64) -> i64 {
            (self.next() >> 1) as i64 % (2 * half) - half
        }
    }

    #[test]
    fn roots_are_accurate() {
        for d in [1u64, 2, 4, 8, 4096] {
            for x in 0..d {
                let w = unit_root(x, d);
                let a = 2.0 * std::f64::consts::PI * x as f64 / d as f64;
                assert!((w.re - a.cos()).abs() < 1e-15, "cos {x}/{d}");
                assert!((w.im - a.sin()).abs() < 1e-15, "sin {x}/{d}");
            }
        }
    }

    #[test]
    fn monomial_spectra_are_the_roots_at_the_point_exponents() {
        for n in [2usize, 4, 16, 2048] {
            let fft = NegacyclicFft::new(n).unwrap();
            for t in [0usize, 1, 3, n - 1, n, n + 5, 2 * n - 1] {
                let t = t % (2 * n);
                let mut a = vec![0i64; n];
                // X^t = ±X^(t mod N).
                a[t % n] = if t >= n { -1 } else { 1 };
                let mut z = vec![C64::default(); n / 2];
                fft.fold(&a, &mut z);
                fft.forward(&mut z);
                for (p, v) in z.iter().enumerate() {
                    let m = fft.monomial_minus_one(t as u64, p);
                    assert!(
                        (v.re - 1.0 - m.re).abs() < 1e-12 && (v.im - m.im).abs() < 1e-12,
                        "N = {n}, t = {t}, point {p}: {v:?} against {m:?} + 1"
                    );
                }
            }
        }
    }

    #[test]
    fn transform_round_trip_and_products_are_exact_when_small() {
        // Small coefficients: the product is far below 2^53 and must come back exactly.
        let q = Modulus::new(1_125_899_906_826_241).unwrap();
        for n in [2usize, 4, 16, 256] {
            let fft = NegacyclicFft::new(n).unwrap();
            let mut rng = Lcg(n as u64);
            let a: Vec<i64> = (0..n).map(|_| rng.signed(1 << 10)).collect();
            let b: Vec<i64> = (0..n).map(|_| rng.signed(1 << 20)).collect();
            let (mut za, mut zb) = (vec![C64::default(); n / 2], vec![C64::default(); n / 2]);
            fft.fold(&a, &mut za);
            fft.fold(&b, &mut zb);
            fft.forward(&mut za);
            fft.forward(&mut zb);
            let scale = 1.0 / (n / 2) as f64;
            let mut z: Vec<C64> = za
                .iter()
                .zip(&zb)
                .map(|(x, y)| {
                    let p = *x * *y;
                    C64 {
                        re: p.re * scale,
                        im: p.im * scale,
                    }
                })
                .collect();
            fft.inverse(&mut z);
            let mut got = vec![0u64; n];
            fft.unfold_to_residues(&z, &q, &mut got);
            let want: Vec<u64> = exact_product(&a, &b)
                .iter()
                .map(|&x| x.rem_euclid(i128::from(q.value())) as u64)
                .collect();
            assert_eq!(got, want, "N = {n}");
        }
    }

    #[test]
    fn residues_of_large_values_are_exact() {
        let q = Modulus::new(1_125_899_906_826_241).unwrap();
        let qv = i128::from(q.value());
        for v in [
            0.0f64,
            -0.0,
            0.4999,
            -0.5,
            2.5,
            -7.0,
            9_007_199_254_740_993.0, // 2^53 + 1 rounds to 2^53
            -(2f64.powi(83)) + 2f64.powi(31),
            2f64.powi(100) * 1.75,
            -1234567.0 * 2f64.powi(70),
        ] {
            let r = v.round();
            // The integer value of r, exactly (|r| < 2^127).
            let exact = if r.abs() < 2f64.powi(63) {
                i128::from(r as i64)
            } else {
                let bits = r.to_bits();
                let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
                let m = i128::from((bits & ((1 << 52) - 1)) | (1 << 52));
                let mag = m << e;
                if r < 0.0 { -mag } else { mag }
            };
            assert_eq!(
                f64_to_residue(v, &q),
                exact.rem_euclid(qv) as u64,
                "v = {v}"
            );
        }
    }

    /// The rounding error of the classic set's products: digits of 23 bits (|d| <= 2^22), key
    /// coefficients uniform mod a 50-bit prime, N = 2048, two rows summed; the error
    /// `rounded − exact` over many products. Model (module docs of `tfhe-switch`'s parameters):
    /// `Var ≤ S · 2^-106 · (4 log2 M + 8)` with `S` the mean square of the exact value.
    #[test]
    fn rounding_error_of_classic_products_is_bounded() {
        let n = 2048usize;
        let m = n / 2;
        let rows = 2;
        let q = Modulus::new(1_125_899_906_826_241).unwrap();
        let fft = NegacyclicFft::new(n).unwrap();
        let mut rng = Lcg(7);
        let mut max_err = 0f64;
        let mut sum_sq_err = 0f64;
        let mut sum_sq = 0f64;
        let mut count = 0usize;
        for _ in 0..3 {
            let mut acc = vec![C64::default(); m];
            let mut exact = vec![0i128; n];
            for r in 0..rows {
                let d: Vec<i64> = (0..n).map(|_| rng.signed(1 << 22)).collect();
                let k: Vec<i64> = (0..n).map(|_| q.center(rng.next() % q.value())).collect();
                for (e, p) in exact.iter_mut().zip(exact_product(&d, &k)) {
                    *e += p;
                }
                let (mut zd, mut zk) = (vec![C64::default(); m], vec![C64::default(); m]);
                fft.fold(&d, &mut zd);
                fft.forward(&mut zd);
                fft.fold(&k, &mut zk);
                fft.forward(&mut zk);
                let scale = 1.0 / m as f64;
                for ((a, x), y) in acc.iter_mut().zip(&zd).zip(&zk) {
                    let mut y = *y;
                    y.re *= scale;
                    y.im *= scale;
                    let p = *x * y;
                    *a = if r == 0 { p } else { *a + p };
                }
            }
            fft.inverse(&mut acc);
            for j in 0..m {
                for (v, e) in [(acc[j].re, exact[j]), (acc[j].im, exact[j + m])] {
                    let err = (v.round() - e as f64).abs();
                    max_err = max_err.max(err);
                    sum_sq_err += err * err;
                    sum_sq += (e as f64) * (e as f64);
                    count += 1;
                }
            }
        }
        let var = sum_sq_err / count as f64;
        let s = sum_sq / count as f64;
        let model = s * 2f64.powi(-106) * (4.0 * (m as f64).log2() + 8.0);
        println!(
            "FFT rounding error: max {max_err:.3e} (2^{:.1}), variance {var:.3e}, model {model:.3e}, \
             exact RMS 2^{:.1}",
            max_err.log2(),
            s.sqrt().log2()
        );
        assert!(
            var < model,
            "variance {var:.3e} above the model {model:.3e}"
        );
        assert!(max_err < 2f64.powi(32), "max error {max_err:.3e}");
    }
}
