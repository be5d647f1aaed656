//! [`Encoder`]: complex vectors to plaintext polynomials and back.
//!
//! `encode(z) = round(Δ_l · FFT^-1(z))` reduced modulo `q_0..q_l` and put in NTT form, where
//! the special FFT maps slot `j` to the evaluation at `ζ^(5^j)` (`ζ = e^(iπ/N)`). Rotating
//! slots left by `k` is the automorphism `X -> X^(5^k)`; conjugating them is `X -> X^(-1)`.
//! Fewer than `N/2` slots (a power of two) use sparse packing; missing values are zero.

use crate::context::Context;
use crate::error::{Error, Result};
use fhe_math::Modulus;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::fft::{Complex64, SpecialFft};
use fhe_math::rns::RnsBasis;
use rayon::prelude::*;
use rlwe::{Meta, Plaintext};
use std::sync::Arc;

/// `x.round()` (half away from zero) as an `i64`, or `None` unless `|x| < 2^63` (NaN included):
/// the same value as `x.round() as i64`, without libm's `round` (a call per value on baseline
/// x86-64). With `t` the truncation of `x` (exact), `d = x - t` is exact (`|d| < 1`; for
/// `|x| ≥ 2^52`, `x` is an integer and `d = 0`), and the rounding moves `t` by one when `|d| ≥ 1/2`.
#[inline]
fn round_to_i64(x: f64) -> Option<i64> {
    const LIMIT: f64 = (1u64 << 63) as f64;
    // NaN fails the comparison.
    (x.abs() < LIMIT).then(|| {
        let t = x as i64;
        let d = x - t as f64;
        t + i64::from(d >= 0.5) - i64::from(d <= -0.5)
    })
}

/// Vectors whose integers [`Encoder::encode_many`] holds at once before uploading them.
const ENCODE_CHUNK: usize = 128;

/// The rounded, scaled coefficients of an encoding, before their reduction into the limbs.
enum Integers {
    /// Every coefficient below `2^63` in magnitude.
    Small(Vec<i64>),
    /// Coefficients below `2^126` in magnitude.
    Wide(Vec<i128>),
}

/// Encodes and decodes CKKS plaintexts.
pub struct Encoder<B: KeySwitchBackend> {
    ctx: Context<B>,
    fft: SpecialFft,
    /// CRT bases `q_0..q_l` for each level, for decoding.
    bases: Vec<RnsBasis>,
}

impl<B: KeySwitchBackend> Encoder<B> {
    /// An encoder for the context.
    pub fn new(ctx: &Context<B>) -> Result<Self> {
        let params = ctx.params();
        let fft = SpecialFft::new(params.n())?;
        let moduli: Vec<Modulus> = params
            .moduli_q()
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<fhe_math::Result<_>>()?;
        let bases = (1..=moduli.len())
            .map(|k| RnsBasis::new(moduli[..k].to_vec()))
            .collect::<fhe_math::Result<_>>()?;
        Ok(Encoder {
            ctx: ctx.clone(),
            fft,
            bases,
        })
    }

    /// The number of slots of a full encoding, `N/2`.
    pub fn max_slots(&self) -> usize {
        self.ctx.params().n() / 2
    }

    /// Encodes `values` at `level` with the level's scale `Δ_l`, in `N/2` slots.
    pub fn encode(&self, values: &[Complex64], level: usize) -> Result<Plaintext<B>> {
        let scale = self.ctx.params().scale(level)?;
        self.encode_with(values, level, scale, self.max_slots())
    }

    /// Encodes real `values` at `level` with the level's scale, in `N/2` slots.
    pub fn encode_real(&self, values: &[f64], level: usize) -> Result<Plaintext<B>> {
        let z: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encode(&z, level)
    }

    /// Encodes with an explicit scale and slot count (a power of two up to `N/2`).
    pub fn encode_with(
        &self,
        values: &[Complex64],
        level: usize,
        scale: f64,
        slots: usize,
    ) -> Result<Plaintext<B>> {
        self.check_encoding(values.len(), level, scale, slots)?;
        let ints = self.scaled_integers(values, scale, slots)?;
        self.upload_integers(&ints, level, scale)
    }

    /// [`Encoder::encode_with`] of several vectors at one level, scale and slot count: the
    /// host part (special FFT, scaling and rounding) runs for all vectors in parallel, the
    /// uploads and NTTs follow in order. Same plaintexts as one `encode_with` per vector.
    pub fn encode_many(
        &self,
        values: &[&[Complex64]],
        level: usize,
        scale: f64,
        slots: usize,
    ) -> Result<Vec<Plaintext<B>>> {
        for v in values {
            self.check_encoding(v.len(), level, scale, slots)?;
        }
        let mut out = Vec::with_capacity(values.len());
        // Chunks bound the host memory of the integers waiting for their upload.
        for chunk in values.chunks(ENCODE_CHUNK) {
            let ints: Vec<Integers> = chunk
                .par_iter()
                .map(|v| self.scaled_integers(v, scale, slots))
                .collect::<Result<_>>()?;
            for i in &ints {
                out.push(self.upload_integers(i, level, scale)?);
            }
        }
        Ok(out)
    }

    /// The checks of [`Encoder::encode_with`] on its arguments.
    fn check_encoding(&self, len: usize, level: usize, scale: f64, slots: usize) -> Result<()> {
        let params = self.ctx.params();
        if level > params.max_level() {
            return Err(Error::InvalidLevel {
                level,
                max_level: params.max_level(),
            });
        }
        if len > slots || !slots.is_power_of_two() || slots > self.max_slots() {
            return Err(Error::TooManyValues {
                given: len,
                slots,
                max_slots: self.max_slots(),
            });
        }
        if !(scale.is_finite() && scale >= 1.0) {
            return Err(Error::InvalidScale { scale });
        }
        rlwe::ciphertext::check_scale(self.ctx.backend().ring(), level, scale).map_err(|problem| {
            Error::ScaleOutOfRange {
                op: "encode",
                subject: "the",
                problem,
            }
        })
    }

    /// The host part of an encoding: `round(Δ · FFT^-1(z))` as integers.
    fn scaled_integers(&self, values: &[Complex64], scale: f64, slots: usize) -> Result<Integers> {
        let n = self.ctx.params().n();
        let mut coeffs = vec![0f64; n];
        self.fft.encode(values, slots, &mut coeffs)?;
        // Scale and round once (`round(c·Δ)`, half away from zero). When every |c·Δ| < 2^63 the
        // integers cross as i64 (8 bytes per coefficient instead of 16), rounded in one
        // parallel pass; otherwise |round(c·Δ)| < 2^126 is required and they cross as i128.
        // The backend reduces the integers into every limb (on the GPU: 8 or 16 bytes per
        // coefficient cross instead of 8 per limb).
        let small: Option<Vec<i64>> = coeffs
            .par_iter()
            .with_min_len(4096)
            .map(|&c| round_to_i64(c * scale))
            .collect();
        if let Some(ints) = small {
            return Ok(Integers::Small(ints));
        }
        let rounded: Vec<f64> = coeffs.iter().map(|&c| (c * scale).round()).collect();
        let limit = 2f64.powi(126);
        if let Some(i) = rounded
            .iter()
            .position(|v| !v.is_finite() || v.abs() >= limit)
        {
            return Err(Error::ValueTooLarge {
                value: coeffs[i],
                scale,
            });
        }
        Ok(Integers::Wide(rounded.iter().map(|&v| v as i128).collect()))
    }

    /// The device part of an encoding: the integers reduced into the limbs `0..=level`, NTT.
    fn upload_integers(&self, ints: &Integers, level: usize, scale: f64) -> Result<Plaintext<B>> {
        let backend = self.ctx.backend();
        let mut poly = match ints {
            Integers::Small(v) => backend.upload_lifted_i64(v, level)?,
            Integers::Wide(v) => backend.upload_lifted(v, level)?,
        };
        backend.ntt(&mut poly)?;
        Ok(Plaintext::new(
            backend,
            poly,
            Meta::new(level, scale, true, self.ctx.params().fingerprint()),
        )?)
    }

    /// Decodes a plaintext into `N/2` complex values.
    pub fn decode(&self, pt: &Plaintext<B>) -> Result<Vec<Complex64>> {
        self.decode_slots(pt, self.max_slots())
    }

    /// Decodes a plaintext into `slots` complex values.
    pub fn decode_slots(&self, pt: &Plaintext<B>, slots: usize) -> Result<Vec<Complex64>> {
        let params = self.ctx.params();
        if pt.fingerprint() != params.fingerprint() {
            return Err(rlwe::Error::ParameterMismatch {
                op: "decode",
                left: pt.fingerprint(),
                right: params.fingerprint(),
            }
            .into());
        }
        let backend = self.ctx.backend();
        let coeff_form;
        let poly = if pt.is_ntt() {
            let mut p = backend.duplicate(pt.poly())?;
            backend.intt(&mut p)?;
            coeff_form = p;
            &coeff_form
        } else {
            pt.poly()
        };
        // Only the centred residues mod q_0 cross; the full limbs only when some coefficient is
        // not congruent to them (then it needs the CRT).
        let small = backend.download_centered_q0(poly)?;
        let host = if small.iter().all(Option::is_some) {
            None
        } else {
            Some(backend.download(poly)?)
        };
        let level = backend.shape(poly).level;
        self.finish_decode(&small, host.as_ref(), level, pt.scale(), slots)
    }

    /// Decodes a host polynomial (coefficient form) with the given scale.
    pub fn decode_host(
        &self,
        host: &fhe_math::poly::RnsPoly,
        scale: f64,
        slots: usize,
    ) -> Result<Vec<Complex64>> {
        let small = fhe_math::backend::centered_q0_host(self.ctx.backend().ring(), host)?;
        self.finish_decode(&small, Some(host), host.level(), scale, slots)
    }

    /// Decodes from the centred residues mod `q_0` ([`Backend::download_centered_q0`]):
    /// `Some(x)` is the coefficient's value; a `None` is lifted from `host`'s limbs with the
    /// CRT to a centred f64 (`host` is needed only when some entry is `None`).
    fn finish_decode(
        &self,
        small: &[Option<i64>],
        host: Option<&fhe_math::poly::RnsPoly>,
        level: usize,
        scale: f64,
        slots: usize,
    ) -> Result<Vec<Complex64>> {
        if host.is_none() && small.iter().any(Option::is_none) {
            return Err(fhe_math::Error::ShapeMismatch {
                what: "cannot decode: a large coefficient needs the full limbs".into(),
            }
            .into());
        }
        let basis = self.bases.get(level).ok_or(Error::InvalidLevel {
            level,
            max_level: self.bases.len() - 1,
        })?;
        let n = small.len();
        let mut coeffs = vec![0f64; n];
        coeffs
            .par_chunks_mut(1024)
            .zip(small.par_chunks(1024))
            .enumerate()
            .for_each(|(chunk, (out, small))| {
                let mut residues = vec![0u64; level + 1];
                for (i, (c, x)) in out.iter_mut().zip(small).enumerate() {
                    // The centred residue mod q_0 is the value itself when it is congruent to
                    // every other residue (it lies in (-q_0/2, q_0/2], so inside (-Q/2, Q/2],
                    // and the CRT makes it unique). Otherwise the full CRT lift.
                    let value = match x {
                        Some(x) => *x as f64,
                        // `host` is present (checked above).
                        None => host.map_or(f64::NAN, |host| {
                            let k = chunk * 1024 + i;
                            for (s, r) in residues.iter_mut().enumerate() {
                                *r = host.limb(0, s)[k];
                            }
                            basis.to_f64_centered(&residues)
                        }),
                    };
                    *c = value / scale;
                }
            });
        Ok(self.fft.decode(&coeffs, slots)?)
    }

    /// The context.
    pub fn context(&self) -> &Context<B> {
        &self.ctx
    }
}

/// Shared handle to an encoder.
pub type SharedEncoder<B> = Arc<Encoder<B>>;

#[cfg(test)]
mod round_tests {
    use super::round_to_i64;
    use proptest::prelude::*;

    #[test]
    fn edges_match_round() {
        let big = (1u64 << 63) as f64;
        for x in [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4503599627370495.5,
            -4503599627370495.5,
            4503599627370497.0,
            9007199254740993.0,
            big - 1024.0,
            -(big - 1024.0),
        ] {
            assert_eq!(round_to_i64(x), Some(x.round() as i64), "{x}");
        }
        // |x| = 2^63 takes the i128 path, as before (`-2^63` would fit, but the path is chosen
        // by |x| < 2^63).
        for x in [
            big,
            -big,
            -big * 2.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(round_to_i64(x), None, "{x}");
        }
    }

    proptest! {
        #[test]
        fn matches_round(x in -1e19f64..1e19, y in -1e6f64..1e6) {
            for v in [x, y] {
                let want = (v.abs() < (1u64 << 63) as f64).then(|| v.round() as i64);
                prop_assert_eq!(round_to_i64(v), want);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Parameters, TEST_N11_INSECURE};
    use fhe_math::CpuBackend;
    use fhe_math::backend::RingBackend;

    /// `encode_many` gives the plaintexts of one `encode_with` per vector (small and wide
    /// integers, more vectors than one chunk), and refuses a bad vector among good ones.
    #[test]
    fn encode_many_equals_encode_with() {
        let ctx = Context::<CpuBackend>::cpu(Parameters::new(&TEST_N11_INSECURE).unwrap()).unwrap();
        let enc = Encoder::new(&ctx).unwrap();
        let be = ctx.backend();
        let slots = 64;
        let vectors: Vec<Vec<Complex64>> = (0..ENCODE_CHUNK + 3)
            .map(|k| {
                (0..slots)
                    .map(|j| Complex64::new(((j * k) % 13) as f64 / 13.0 - 0.4, 0.1 * k as f64))
                    .collect()
            })
            .collect();
        let refs: Vec<&[Complex64]> = vectors.iter().map(Vec::as_slice).collect();
        let level = be.ring().max_level();
        for scale in [2f64.powi(40), 2f64.powi(100)] {
            let many = enc.encode_many(&refs, level, scale, slots).unwrap();
            assert_eq!(many.len(), vectors.len());
            for (v, pt) in vectors.iter().zip(&many) {
                let one = enc.encode_with(v, level, scale, slots).unwrap();
                assert_eq!(pt.poly(), one.poly());
                assert_eq!(pt.meta(), one.meta());
            }
        }
        let long = vec![Complex64::new(0.0, 0.0); slots + 1];
        let bad = [refs[0], long.as_slice()];
        assert!(matches!(
            enc.encode_many(&bad, level, 2f64.powi(40), slots),
            Err(Error::TooManyValues { .. })
        ));
    }

    /// Encoding against an independent host lift (`rem_euclid` per limb, then the NTT), and
    /// decoding (centred residues mod `q_0`, CRT fallback) against `decode_host` and the input:
    /// small coefficients (64-bit upload, fast path) and coefficients far beyond `q_0`
    /// (128-bit upload, CRT fallback).
    #[test]
    fn encode_decode_small_and_large_coefficients() {
        let ctx = Context::<CpuBackend>::cpu(Parameters::new(&TEST_N11_INSECURE).unwrap()).unwrap();
        let enc = Encoder::new(&ctx).unwrap();
        let be = ctx.backend();
        let ring = be.ring();
        let n = ctx.params().n();
        let slots = enc.max_slots();
        let v: Vec<Complex64> = (0..slots)
            .map(|j| {
                Complex64::new(
                    (j as f64 / slots as f64) - 0.5,
                    ((j * 7) % 11) as f64 / 11.0,
                )
            })
            .collect();
        for (level, scale) in [
            (ring.max_level(), 2f64.powi(40)),
            (ring.max_level(), 2f64.powi(100)),
            (3, 2f64.powi(90)),
            (0, 2f64.powi(40)),
        ] {
            let pt = enc.encode_with(&v, level, scale, slots).unwrap();
            let mut coeffs = vec![0f64; n];
            SpecialFft::new(n)
                .unwrap()
                .encode(&v, slots, &mut coeffs)
                .unwrap();
            for s in 0..=level {
                let q = ring.modulus(s).value() as i128;
                let mut want: Vec<u64> = coeffs
                    .iter()
                    .map(|&c| ((c * scale).round() as i128).rem_euclid(q) as u64)
                    .collect();
                ring.ntt(s).forward(&mut want);
                assert_eq!(pt.poly().limb(0, s), &want[..], "level {level} slot {s}");
            }
            let got = enc.decode(&pt).unwrap();
            let mut host = be.duplicate(pt.poly()).unwrap();
            be.intt(&mut host).unwrap();
            let small = be.download_centered_q0(&host).unwrap();
            let all_small = small.iter().all(Option::is_some);
            assert_eq!(
                all_small,
                level == 0 || scale < 2f64.powi(59),
                "level {level}"
            );
            let reference = enc.decode_host(&host, scale, slots).unwrap();
            for (j, ((g, r), w)) in got.iter().zip(&reference).zip(&v).enumerate() {
                assert_eq!(
                    (g.re.to_bits(), g.im.to_bits()),
                    (r.re.to_bits(), r.im.to_bits())
                );
                assert!((g - w).norm() < 1e-9, "level {level} slot {j}: {g} vs {w}");
            }
        }
    }
}
