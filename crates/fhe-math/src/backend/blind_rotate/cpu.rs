//! The CPU reference of [`BlindRotateBackend`]: exact modular arithmetic except the external
//! product's polynomial products, which use the specified f64 FFT of [`super::fft`]; rayon over
//! the batch.
//!
//! The free functions are the building blocks (monomial product, external product, CMux,
//! sample extraction, one blind rotation, one key switch); a device implementation must match
//! them word for word.

use super::fft::{C64, NegacyclicFft};
use super::{
    BlindRotateBackend, BlindRotateParams, BootstrapKeyHost, Decomposer, KeySwitchKeyHost,
    LweBatchHost, mod_switch,
};
use crate::cpu::CpuBackend;
use crate::error::{Error, Result};
use crate::modulus::Modulus;
use crate::ntt::NttTable;
use rayon::prelude::*;
use std::sync::Arc;

/// A bootstrapping key held by the CPU backend: its rows as FFT spectra
/// ([`NegacyclicFft::key_spectrum`]) and the ring's NTT tables and FFT.
#[derive(Debug)]
pub struct CpuBootstrapKey {
    params: BlindRotateParams,
    ntt: Arc<NttTable>,
    fft: Arc<NegacyclicFft>,
    spectra: Vec<C64>,
}

/// The spectra of a bootstrapping key in fhe-math's layout with every polynomial of `N`
/// residues (NTT form) replaced by its `N/2` points: point `p` of polynomial `c` of row `r` of
/// RGSW `t` of coefficient `i` at `((i · kpc + t) · (k + 1) · l + r) · (k + 1) · N/2 + c · N/2 + p`.
pub fn key_spectra(
    params: &BlindRotateParams,
    ntt: &NttTable,
    fft: &NegacyclicFft,
    data: &[u64],
) -> Vec<C64> {
    let n = params.ring_degree;
    let mut spectra = vec![C64::default(); data.len() / 2];
    spectra
        .par_chunks_mut(n / 2)
        .zip(data.par_chunks(n))
        .for_each(|(out, poly)| fft.key_spectrum(ntt, poly, out));
    spectra
}

impl CpuBootstrapKey {
    /// Checks `key` and computes its spectra.
    pub fn new(key: &BootstrapKeyHost) -> Result<Self> {
        key.check()?;
        let ntt = NttTable::new(key.params.modulus, key.params.ring_degree)?;
        let fft = NegacyclicFft::new(key.params.ring_degree)?;
        let spectra = key_spectra(&key.params, &ntt, &fft, &key.data);
        Ok(CpuBootstrapKey {
            params: key.params,
            ntt: Arc::new(ntt),
            fft: Arc::new(fft),
            spectra,
        })
    }

    /// The shape of the key.
    pub fn params(&self) -> &BlindRotateParams {
        &self.params
    }

    /// The NTT tables of the key's ring.
    pub fn ntt(&self) -> &NttTable {
        &self.ntt
    }

    /// The FFT of the key's ring.
    pub fn fft(&self) -> &NegacyclicFft {
        &self.fft
    }

    /// The spectra of RGSW ciphertext `t` of step `i` (binary: 0; ternary: 0 = `[s_i = 1]`,
    /// 1 = `[s_i = −1]`; multi-bit: pattern `t + 1`).
    pub fn rgsw_spectra(&self, i: usize, t: usize) -> &[C64] {
        let len = self.params.rgsw_len() / 2;
        let start = (i * self.params.rgsws_per_step() + t) * len;
        &self.spectra[start..start + len]
    }

    /// The spectra of every RGSW ciphertext of step `i`, one after the other.
    pub fn step_spectra(&self, i: usize) -> &[C64] {
        let len = self.params.rgsw_len() / 2 * self.params.rgsws_per_step();
        &self.spectra[i * len..(i + 1) * len]
    }
}

/// A key-switching key held by the CPU backend (the checked host key).
#[derive(Debug)]
pub struct CpuKeySwitchKey {
    host: KeySwitchKeyHost,
}

/// `dst = X^t · src` in `Z_q[X]/(X^N + 1)`, `t` taken mod `2N` (negacyclic rotation);
/// does nothing when `src` is empty or `dst` has another length.
pub fn monomial_mul(src: &[u64], t: usize, q: &Modulus, dst: &mut [u64]) {
    let n = src.len();
    if n == 0 || dst.len() != n {
        return;
    }
    let t = t % (2 * n);
    for (i, &c) in src.iter().enumerate() {
        let j = i + t;
        let (pos, negate) = if j < n {
            (j, false)
        } else if j < 2 * n {
            (j - n, true)
        } else {
            (j - 2 * n, false)
        };
        dst[pos] = if negate { q.neg(c) } else { c };
    }
}

/// `out = rgsw ⊡ glwe`, the external product of a GLWE ciphertext (`(k + 1) · N` residues in
/// coefficient form) with one RGSW ciphertext (rows in NTT form, as in a
/// [`BootstrapKeyHost`]), as the module's rules fix it (the rows' spectra computed here).
///
/// # Errors
///
/// [`Error::ShapeMismatch`] when a slice has the wrong length for `params`.
pub fn external_product(
    params: &BlindRotateParams,
    ntt: &NttTable,
    rgsw: &[u64],
    glwe: &[u64],
    out: &mut [u64],
) -> Result<()> {
    let n = params.ring_degree;
    let k1 = params.glwe_dimension + 1;
    if rgsw.len() != params.rgsw_len() || glwe.len() != k1 * n || out.len() != k1 * n {
        return Err(Error::ShapeMismatch {
            what: format!(
                "external product: RGSW {} / GLWE {} / output {} residues, expected {} / {} / {}",
                rgsw.len(),
                glwe.len(),
                out.len(),
                params.rgsw_len(),
                k1 * n,
                k1 * n
            ),
        });
    }
    params.check()?;
    let fft = NegacyclicFft::new(n)?;
    let spectra = key_spectra(params, ntt, &fft, rgsw);
    let mut scratch = Scratch::default();
    scratch.accumulate(params, &fft, &spectra, glwe, true)?;
    scratch.finish(params, &fft, out);
    Ok(())
}

/// Buffers of the external product, reused across steps.
#[derive(Default)]
struct Scratch {
    /// Signed digits of one GLWE component, `l` rows of `N`.
    digits: Vec<i64>,
    /// The digit rows' spectra, `(k + 1) · l` rows of `N/2` points.
    digit_spectra: Vec<C64>,
    /// The product's spectra, `k + 1` components of `N/2` points.
    sum: Vec<C64>,
    tmp: Vec<i64>,
}

impl Scratch {
    /// Decomposes `glwe`, transforms its digit rows and adds their products with the RGSW
    /// spectra `rgsw` into the sum (`first`: the sum starts with this product's first term).
    fn accumulate(
        &mut self,
        params: &BlindRotateParams,
        fft: &NegacyclicFft,
        rgsw: &[C64],
        glwe: &[u64],
        first: bool,
    ) -> Result<()> {
        self.transform_digits(params, fft, glwe)?;
        let m = params.ring_degree / 2;
        let k1 = params.glwe_dimension + 1;
        let rows = k1 * params.gadget.levels as usize;
        for (c2, sum_c) in self.sum.chunks_exact_mut(m).enumerate() {
            for (p, s) in sum_c.iter_mut().enumerate() {
                for r in 0..rows {
                    let prod = self.digit_spectra[r * m + p] * rgsw[(r * k1 + c2) * m + p];
                    *s = if first && r == 0 { prod } else { *s + prod };
                }
            }
        }
        Ok(())
    }

    /// The multi-bit product into the sum: `glwe`'s digit spectra times the combined key
    /// `Σ_j (X^{t_j} − 1) · BSK_j` of one group (`keys`: the group's `2^g − 1` RGSW spectra,
    /// `exponents`: `t_1 …`), in the order of the FFT module's "Multi-bit key product".
    fn accumulate_multi_bit(
        &mut self,
        params: &BlindRotateParams,
        fft: &NegacyclicFft,
        keys: &[C64],
        exponents: &[u64],
        glwe: &[u64],
    ) -> Result<()> {
        self.transform_digits(params, fft, glwe)?;
        let m = params.ring_degree / 2;
        let k1 = params.glwe_dimension + 1;
        let rows = k1 * params.gadget.levels as usize;
        let rgsw = rows * k1 * m;
        let mut factors = vec![C64::default(); exponents.len()];
        for p in 0..m {
            for (f, &t) in factors.iter_mut().zip(exponents) {
                *f = fft.monomial_minus_one(t, p);
            }
            for c2 in 0..k1 {
                let s = &mut self.sum[c2 * m + p];
                for r in 0..rows {
                    let at = (r * k1 + c2) * m + p;
                    let mut combined = factors[0] * keys[at];
                    for (j, &f) in factors.iter().enumerate().skip(1) {
                        combined = combined + f * keys[j * rgsw + at];
                    }
                    let prod = self.digit_spectra[r * m + p] * combined;
                    *s = if r == 0 { prod } else { *s + prod };
                }
            }
        }
        Ok(())
    }

    /// Decomposes `glwe` and transforms its digit rows into `digit_spectra`.
    fn transform_digits(
        &mut self,
        params: &BlindRotateParams,
        fft: &NegacyclicFft,
        glwe: &[u64],
    ) -> Result<()> {
        let n = params.ring_degree;
        let m = n / 2;
        let k1 = params.glwe_dimension + 1;
        let l = params.gadget.levels as usize;
        let rows = k1 * l;
        let decomposer = Decomposer::new(params.gadget, params.modulus)?;
        self.digits.resize(l * n, 0);
        self.digit_spectra.resize(rows * m, C64::default());
        self.sum.resize(k1 * m, C64::default());
        self.tmp.resize(l, 0);
        for c in 0..k1 {
            for i in 0..n {
                decomposer.decompose(glwe[c * n + i], &mut self.tmp);
                for (j, &d) in self.tmp.iter().enumerate() {
                    self.digits[j * n + i] = d;
                }
            }
            for j in 0..l {
                let z = &mut self.digit_spectra[(c * l + j) * m..(c * l + j + 1) * m];
                fft.fold(&self.digits[j * n..(j + 1) * n], z);
                fft.forward(z);
            }
        }
        Ok(())
    }

    /// The inverse transforms of the sum, rounded and reduced into `out` (`(k + 1) · N`).
    fn finish(&mut self, params: &BlindRotateParams, fft: &NegacyclicFft, out: &mut [u64]) {
        let n = params.ring_degree;
        for (sum_c, out_c) in self
            .sum
            .chunks_exact_mut(n / 2)
            .zip(out.chunks_exact_mut(n))
        {
            fft.inverse(sum_c);
            fft.unfold_to_residues(sum_c, &params.modulus, out_c);
        }
    }
}

/// `out = c0 + rgsw ⊡ (c1 − c0)`: selects `c1` when the RGSW encrypts 1 and `c0` when it
/// encrypts 0 (up to noise).
///
/// # Errors
///
/// [`Error::ShapeMismatch`] when a slice has the wrong length for `params`.
pub fn cmux(
    params: &BlindRotateParams,
    ntt: &NttTable,
    rgsw: &[u64],
    c0: &[u64],
    c1: &[u64],
    out: &mut [u64],
) -> Result<()> {
    if c0.len() != c1.len() {
        return Err(Error::ShapeMismatch {
            what: "CMux operands of different lengths".into(),
        });
    }
    let q = params.modulus;
    let diff: Vec<u64> = c1.iter().zip(c0).map(|(&a, &b)| q.sub(a, b)).collect();
    external_product(params, ntt, rgsw, &diff, out)?;
    for (o, &b) in out.iter_mut().zip(c0) {
        *o = q.add(*o, b);
    }
    Ok(())
}

/// Extracts coefficient 0 of a GLWE ciphertext (`(k + 1) · N` residues) as an LWE ciphertext
/// of dimension `k · N` into `out` (`k · N + 1` residues).
///
/// # Errors
///
/// [`Error::ShapeMismatch`] when `glwe` is not `(k + 1) · n` residues or `out` not `k · n + 1`.
pub fn sample_extract(
    glwe: &[u64],
    glwe_dimension: usize,
    n: usize,
    q: &Modulus,
    out: &mut [u64],
) -> Result<()> {
    let k = glwe_dimension;
    if glwe.len() != (k + 1) * n || out.len() != k * n + 1 {
        return Err(Error::ShapeMismatch {
            what: format!(
                "sample extraction: GLWE of {} and output of {} residues for k = {k}, N = {n}",
                glwe.len(),
                out.len()
            ),
        });
    }
    for c in 0..k {
        let a = &glwe[c * n..(c + 1) * n];
        let dst = &mut out[c * n..(c + 1) * n];
        dst[0] = a[0];
        for j in 1..n {
            dst[j] = q.neg(a[n - j]);
        }
    }
    out[k * n] = glwe[k * n];
    Ok(())
}

/// Blind rotation of one LWE ciphertext (`n + 1` residues) with the test polynomial, then
/// extraction of coefficient 0 into `out` (`k · N + 1` residues).
///
/// # Errors
///
/// [`Error::ShapeMismatch`] when a slice has the wrong length for the key.
pub fn blind_rotate_extract_one(
    key: &CpuBootstrapKey,
    test_poly: &[u64],
    lwe: &[u64],
    out: &mut [u64],
) -> Result<()> {
    let p = &key.params;
    let n = p.ring_degree;
    let k = p.glwe_dimension;
    let q = p.modulus;
    let two_n = p.two_n();
    if test_poly.len() != n || lwe.len() != p.lwe_dimension + 1 {
        return Err(Error::ShapeMismatch {
            what: format!(
                "blind rotation: test polynomial of {} and LWE of {} residues, expected {n} and {}",
                test_poly.len(),
                lwe.len(),
                p.lwe_dimension + 1
            ),
        });
    }
    if let Some(&bad) = test_poly.iter().chain(lwe).find(|&&x| x >= q.value()) {
        return Err(Error::ShapeMismatch {
            what: format!(
                "blind rotation: residue {bad} is not below q = {}",
                q.value()
            ),
        });
    }
    let mut acc = vec![0u64; (k + 1) * n];
    let b = mod_switch(lwe[p.lwe_dimension], q.value(), two_n) as usize;
    monomial_mul(test_poly, (2 * n - b) % (2 * n), &q, &mut acc[k * n..]);
    let mut update = vec![0u64; (k + 1) * n];
    let mut scratch = Scratch::default();
    if p.group_size > 1 {
        let g = p.group_size;
        let mut exponents = vec![0u64; p.rgsws_per_step()];
        for (i, group) in lwe[..p.lwe_dimension].chunks_exact(g).enumerate() {
            let a: Vec<u64> = group
                .iter()
                .map(|&x| mod_switch(x, q.value(), two_n))
                .collect();
            if a.iter().all(|&x| x == 0) {
                // Every factor X^0 − 1 is exactly zero: so is the update.
                continue;
            }
            for (j, t) in exponents.iter_mut().enumerate() {
                let pattern = j + 1;
                *t = (0..g)
                    .filter(|b| pattern >> b & 1 == 1)
                    .map(|b| a[b])
                    .sum::<u64>()
                    % two_n;
            }
            scratch.accumulate_multi_bit(p, &key.fft, key.step_spectra(i), &exponents, &acc)?;
            scratch.finish(p, &key.fft, &mut update);
            for (x, &u) in acc.iter_mut().zip(&update) {
                *x = q.add(*x, u);
            }
        }
        return sample_extract(&acc, k, n, &q, out);
    }
    let mut rotated = vec![0u64; (k + 1) * n];
    for (i, &ai) in lwe[..p.lwe_dimension].iter().enumerate() {
        let a = mod_switch(ai, q.value(), two_n) as usize;
        if a == 0 {
            // X^0 · ACC − ACC = 0: its digits, spectra and products are exactly 0.
            continue;
        }
        // Both keys of a ternary pair add into one spectral sum: one inverse transform a step.
        for t in 0..p.keys_per_coefficient {
            let exponent = if t == 0 { a } else { 2 * n - a };
            for c in 0..=k {
                let src = &acc[c * n..(c + 1) * n];
                let dst = &mut rotated[c * n..(c + 1) * n];
                monomial_mul(src, exponent, &q, dst);
                for (d, &s) in dst.iter_mut().zip(src) {
                    *d = q.sub(*d, s);
                }
            }
            scratch.accumulate(p, &key.fft, key.rgsw_spectra(i, t), &rotated, t == 0)?;
        }
        scratch.finish(p, &key.fft, &mut update);
        for (x, &u) in acc.iter_mut().zip(&update) {
            *x = q.add(*x, u);
        }
    }
    sample_extract(&acc, k, n, &q, out)
}

/// LWE key switching of one ciphertext (`input_dimension + 1` residues) into `out`
/// (`output_dimension + 1` residues), following the module's rules.
///
/// # Errors
///
/// [`Error::ShapeMismatch`] when a slice has the wrong length for the key.
pub fn key_switch_one(key: &KeySwitchKeyHost, input: &[u64], out: &mut [u64]) -> Result<()> {
    let p = &key.params;
    let q = p.modulus;
    let (n_in, n_out) = (p.input_dimension, p.output_dimension);
    let l = p.gadget.levels as usize;
    if input.len() != n_in + 1 || out.len() != n_out + 1 || key.data.len() != p.key_len() {
        return Err(Error::ShapeMismatch {
            what: format!(
                "key switch: input of {} and output of {} residues, expected {} and {} \
                 (or a key of {} residues, expected {})",
                input.len(),
                out.len(),
                n_in + 1,
                n_out + 1,
                key.data.len(),
                p.key_len()
            ),
        });
    }
    // Σ d · row split by the sign of d; |d| <= B/2, so each sum stays below
    // n_in · l · B/2 · q < 2^128 (checked by KeySwitchParams::check).
    let mut pos = vec![0u128; n_out + 1];
    let mut neg = vec![0u128; n_out + 1];
    let mut digits = vec![0i64; l];
    let decomposer = Decomposer::new(p.gadget, q)?;
    for (i, &a) in input[..n_in].iter().enumerate() {
        if a >= q.value() {
            return Err(Error::ShapeMismatch {
                what: format!("key switch: residue {a} is not below q = {}", q.value()),
            });
        }
        decomposer.decompose(a, &mut digits);
        for (j, &d) in digits.iter().enumerate() {
            if d == 0 {
                continue;
            }
            let start = (i * l + j) * (n_out + 1);
            let row = &key.data[start..start + n_out + 1];
            let (acc, m) = if d > 0 {
                (&mut pos, d as u128)
            } else {
                (&mut neg, u128::from(d.unsigned_abs()))
            };
            for (s, &r) in acc.iter_mut().zip(row) {
                *s += m * u128::from(r);
            }
        }
    }
    for ((o, &ng), &ps) in out.iter_mut().zip(&neg).zip(&pos) {
        *o = q.sub(q.reduce_u128(ng), q.reduce_u128(ps));
    }
    out[n_out] = q.add(out[n_out], q.reduce(input[n_in]));
    Ok(())
}

impl BlindRotateBackend for CpuBackend {
    type BootstrapKey = CpuBootstrapKey;
    type KeySwitchKey = CpuKeySwitchKey;
    type LweBatch = LweBatchHost;

    fn upload_bootstrap_key(&self, key: &BootstrapKeyHost) -> Result<CpuBootstrapKey> {
        CpuBootstrapKey::new(key)
    }

    fn upload_key_switch_key(&self, key: &KeySwitchKeyHost) -> Result<CpuKeySwitchKey> {
        key.check()?;
        Ok(CpuKeySwitchKey { host: key.clone() })
    }

    fn upload_lwe_batch(&self, batch: &LweBatchHost) -> Result<LweBatchHost> {
        batch.check()?;
        Ok(batch.clone())
    }

    fn download_lwe_batch(&self, batch: &LweBatchHost) -> Result<LweBatchHost> {
        Ok(batch.clone())
    }

    fn blind_rotate_extract(
        &self,
        key: &CpuBootstrapKey,
        test_poly: &[u64],
        input: &LweBatchHost,
    ) -> Result<LweBatchHost> {
        let p = &key.params;
        if input.dimension != p.lwe_dimension || input.modulus != p.modulus {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "blind rotation: batch of dimension {} mod {}, key for dimension {} mod {}",
                    input.dimension,
                    input.modulus.value(),
                    p.lwe_dimension,
                    p.modulus.value()
                ),
            });
        }
        let w_out = p.output_dimension() + 1;
        let mut data = vec![0u64; input.len() * w_out];
        data.par_chunks_mut(w_out)
            .zip(input.data.par_chunks(input.dimension + 1))
            .try_for_each(|(out, lwe)| blind_rotate_extract_one(key, test_poly, lwe, out))?;
        Ok(LweBatchHost {
            dimension: p.output_dimension(),
            modulus: p.modulus,
            data,
        })
    }

    fn key_switch(&self, key: &CpuKeySwitchKey, input: &LweBatchHost) -> Result<LweBatchHost> {
        let p = &key.host.params;
        if input.dimension != p.input_dimension || input.modulus != p.modulus {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "key switch: batch of dimension {} mod {}, key from dimension {} mod {}",
                    input.dimension,
                    input.modulus.value(),
                    p.input_dimension,
                    p.modulus.value()
                ),
            });
        }
        let w_out = p.output_dimension + 1;
        let mut data = vec![0u64; input.len() * w_out];
        data.par_chunks_mut(w_out)
            .zip(input.data.par_chunks(input.dimension + 1))
            .try_for_each(|(out, lwe)| key_switch_one(&key.host, lwe, out))?;
        Ok(LweBatchHost {
            dimension: p.output_dimension,
            modulus: p.modulus,
            data,
        })
    }
}
