//! [`SchemeSwitch`]: CKKS → LWE, PBS, LWE → CKKS and the composites, over one backend.

use ckks::linear_transform::LinearTransform;
use ckks::{Context, Evaluator, Polynomial};
use fhe_math::Modulus;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::backend::blind_rotate::{BlindRotateBackend, LweBatchHost};
use fhe_math::fft::Complex64;
use fhe_math::poly::Shape;
use rayon::prelude::*;
use rlwe::Ciphertext;
use std::collections::BTreeMap;

use super::encoding::LweEncoding;
use super::error::{Error, Result};
use super::keys::{BackLayout, SwitchKeys};
use super::params::SwitchParameters;
use super::ring::{extract_into, switch_centred};
use super::sine;
use crate::lut::LookupTable;
use crate::lwe::{LweCiphertext, encode};
use crate::pbs::Bootstrapper;

/// Smallest integer factor of the level-0 scaling (relative error `≤ 1/(2·256)` otherwise).
const MIN_INTEGER_FACTOR: f64 = 256.0;

/// Scheme switching for one CKKS context and one key bundle: the SlotToCoeff matrices
/// encoded, the PBS keys uploaded, the sine polynomial built.
pub struct SchemeSwitch<'a, B: KeySwitchBackend + BlindRotateBackend> {
    ctx: &'a Context<B>,
    keys: &'a SwitchKeys<B>,
    eval: Evaluator<B>,
    boot: Bootstrapper<'a, B>,
    stc: Vec<LinearTransform<B>>,
    cosine: Polynomial,
}

/// The error of a ciphertext of dimension `dim` mod `q` where `n` mod `q_t` is expected.
fn mismatch(dim: usize, q: Modulus, n: usize, q_t: Modulus) -> Error {
    Error::Mismatch {
        what: format!(
            "an LWE ciphertext of dimension {dim} mod {}, expected {n} mod {}",
            q.value(),
            q_t.value()
        ),
    }
}

fn bitrev(j: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        j.reverse_bits() >> (usize::BITS - bits)
    }
}

impl<'a, B: KeySwitchBackend + BlindRotateBackend> SchemeSwitch<'a, B> {
    /// Builds the switch: checks the keys against `ctx`, encodes SlotToCoeff at levels
    /// `stc_levels … 1`, uploads the PBS keys to the backend.
    pub fn new(ctx: &'a Context<B>, keys: &'a SwitchKeys<B>) -> Result<Self> {
        if keys.ckks_fingerprint != ctx.params().fingerprint() {
            return Err(Error::Mismatch {
                what: "the switching keys were made for another CKKS context".into(),
            });
        }
        let p = &keys.params;
        let eval = Evaluator::new(ctx)?;
        let diagonals =
            ckks::bootstrap::dft::slot_to_coeff_diagonals(keys.slots, p.stc_levels, 1.0);
        let stc = diagonals
            .iter()
            .enumerate()
            .map(|(i, d)| LinearTransform::new(&eval, d, keys.slots, p.stc_levels - i))
            .collect::<ckks::Result<Vec<_>>>()?;
        Ok(SchemeSwitch {
            ctx,
            keys,
            boot: Bootstrapper::new(ctx.backend(), &keys.server)?,
            eval,
            stc,
            cosine: sine::cosine_polynomial(p)?,
        })
    }

    /// The switching parameters.
    pub fn params(&self) -> &SwitchParameters {
        &self.keys.params
    }

    /// The slot count `S`.
    pub fn slots(&self) -> usize {
        self.keys.slots
    }

    /// The evaluator (for the CKKS side of a program).
    pub fn evaluator(&self) -> &Evaluator<B> {
        &self.eval
    }

    /// The PBS.
    pub fn bootstrapper(&self) -> &Bootstrapper<'a, B> {
        &self.boot
    }

    fn check_ct(&self, op: &'static str, ct: &Ciphertext<B>, needed: usize) -> Result<()> {
        if ct.fingerprint() != self.ctx.params().fingerprint() {
            return Err(Error::Mismatch {
                what: format!("cannot {op}: the ciphertext is of another CKKS context"),
            });
        }
        if ct.components(self.ctx.backend()) != 2 {
            return Err(Error::Mismatch {
                what: format!("cannot {op}: the ciphertext needs 2 components (relinearize it)"),
            });
        }
        if ct.level() < needed {
            return Err(Error::LevelTooLow {
                op,
                level: ct.level(),
                needed,
            });
        }
        Ok(())
    }

    /// CKKS → LWE: the `S` real slots `x_j` (`|x_j| ≤ enc.bound()`) of `ct` (encoded in `S`
    /// slots: `ckks::Encoder::encode_with(values, level, scale, S)`, at level
    /// `≥ stc_levels`) become `S` LWE ciphertexts (dimension `n`, modulus `q_t`, the PBS's
    /// input key) of the real messages `enc.message(x_j)`, phase `μ_j · q_t/(2p)` + noise.
    ///
    /// Steps: SlotToCoeff (`stc_levels` levels; slot `j` lands in coefficient
    /// `bitrev(j) · N/(2S)` with value `Δ_0 · x_j`), then on the host the level-0 residues
    /// times the integer `c = round(scale · q_0/(2p·Δ_0))` mod `q_0`, the switch to `q_sw`,
    /// the ring key switch to `s_m(X^r)`, the switch to `q_t`, the extraction with the offset
    /// added to the body ([`super::ring`]), and the PBS's key switch `N_t → n` on the backend.
    ///
    /// Errors: a ciphertext of another context, not of 2 components, or below `stc_levels`;
    /// an encoding whose factor `c` is below 256 (`q_0/Δ_0` too small for it).
    pub fn switch_to_lwe(
        &self,
        ct: &Ciphertext<B>,
        enc: &LweEncoding,
    ) -> Result<Vec<LweCiphertext>> {
        let batch = self.switch_to_lwe_batch(ct, enc)?;
        Ok(self.boot.download(&batch)?)
    }

    /// [`Self::switch_to_lwe`] with the `S` ciphertexts left in the backend's memory (one
    /// batch, slot order), for [`Self::apply_lut_batch`].
    pub fn switch_to_lwe_batch(
        &self,
        ct: &Ciphertext<B>,
        enc: &LweEncoding,
    ) -> Result<B::LweBatch> {
        let p = &self.keys.params;
        self.check_ct("switch to LWE", ct, p.stc_levels)?;
        let be = self.ctx.backend();
        let mut x = self.eval.drop_to_level(ct, p.stc_levels)?;
        for lt in &self.stc {
            x = self.eval.linear_transform(&x, lt, &self.keys.galois)?;
        }
        x.set_form(be, false)?;
        let q0 = *be.ring().modulus(0);
        let p_msg = p.tfhe.message_space();
        let factor = enc.scale() * q0.value() as f64 / (2.0 * p_msg as f64 * x.scale());
        if !(factor >= MIN_INTEGER_FACTOR && factor < q0.value() as f64) {
            return Err(Error::Range {
                reason: format!(
                    "the level-0 factor scale·q_0/(2p·Δ_0) = {factor} is below {MIN_INTEGER_FACTOR}"
                ),
            });
        }
        let c_int = q0.reduce(factor.round() as u64);
        let q_sw = self.keys.ring.modulus();
        let mut single = be.zeros(Shape {
            components: 1,
            level: 0,
            extended: false,
        })?;
        let mut comps = Vec::with_capacity(2);
        for c in 0..2 {
            be.copy_component(x.poly(), c, &mut single, 0)?;
            let v: Vec<u64> = be
                .download_centered_q0(&single)?
                .into_par_iter()
                .map(|v| {
                    let r = q0.mul(q0.reduce_i64(v.unwrap_or(0)), c_int);
                    switch_centred(q0.center(r), q0.value(), q_sw.value())
                })
                .collect();
            comps.push(v);
        }
        let (d0, d1) = self.keys.ring.switch(&comps[0], &comps[1])?;
        let q_t: Modulus = p.tfhe.q()?;
        let down = |v: Vec<u64>| -> Vec<u64> {
            v.into_par_iter()
                .map(|x| switch_centred(q_sw.center(x), q_sw.value(), q_t.value()))
                .collect()
        };
        let (d0, d1) = (down(d0), down(d1));
        let n = d0.len();
        let s = self.keys.slots;
        let gap = n / (2 * s);
        let bits = s.trailing_zeros();
        let off = q_t
            .reduce_i64((enc.offset() * q_t.value() as f64 / (2.0 * p_msg as f64)).round() as i64);
        let ratio = self.keys.ring.ratio();
        let width = n / ratio + 1;
        // Every ciphertext written in place into one batch (mask, then body + offset).
        let mut data = vec![0u64; s * width];
        data.par_chunks_mut(width).enumerate().for_each(|(j, lwe)| {
            extract_into(&d0, &d1, bitrev(j, bits) * gap, ratio, &q_t, lwe);
            lwe[width - 1] = q_t.add(lwe[width - 1], off);
        });
        let wide = LweBatchHost {
            dimension: width - 1,
            modulus: q_t,
            data,
        };
        Ok(self.boot.key_switch_batch(&wide)?)
    }

    /// PBS of every ciphertext with `lut` (tfhe-switch's [`Bootstrapper::bootstrap`]).
    pub fn apply_lut(
        &self,
        lwes: &[LweCiphertext],
        lut: &LookupTable,
    ) -> Result<Vec<LweCiphertext>> {
        Ok(self.boot.bootstrap(lut, lwes)?)
    }

    /// [`Self::apply_lut`] of a batch in the backend's memory, the result left there.
    pub fn apply_lut_batch(&self, batch: &B::LweBatch, lut: &LookupTable) -> Result<B::LweBatch> {
        Ok(self.boot.bootstrap_batch(lut, batch)?)
    }

    /// The table of a step: `m ↦ p/2` for `m ≥ p/2`, else 0 (a bit, at phase `q/4` or 0,
    /// as [`Self::switch_to_ckks`] reads it).
    pub fn step_table(&self) -> Result<LookupTable> {
        let p = self.keys.params.tfhe.message_space();
        Ok(LookupTable::from_fn(&self.keys.params.tfhe, |m| {
            if m >= p / 2 { p / 2 } else { 0 }
        })?)
    }

    /// LWE → CKKS by homomorphic decryption: up to `S` ciphertexts (dimension `n`, modulus
    /// `q_t`) become one CKKS ciphertext whose slot `j` is `sin(2π φ_j/q_t)`, `φ_j` the
    /// phase of ciphertext `j` (0 for missing ones): `1` for a bit encoded at `q/4`
    /// (message `p/2`), `0` for one at `0`, up to the sine's error and the noise.
    ///
    /// `z_j = b_j/q − Σ_i a_{j,i}·s_i/q` (centred residues) is one BSGS linear transform
    /// of the encrypted LWE secret, laid out so that the `n' = 2^⌈log2 n⌉` columns are spread
    /// over `groups = min(n', N/(2S))` copies of the `S` rows (`n'/groups` plaintext diagonals
    /// holding `−a/(q·K)`, built per call), a rotation sum over the groups (`log2 groups` key
    /// switches), plus a plaintext `b/(q·K)`; then [`super::sine`]. Output at level
    /// `output_level`, `groups · S` slots (period `S`).
    ///
    /// Errors: no ciphertext or more than `S`; a ciphertext of another dimension or modulus.
    pub fn switch_to_ckks(&self, lwes: &[LweCiphertext]) -> Result<Ciphertext<B>> {
        let p = &self.keys.params;
        let q_t = p.tfhe.q()?;
        let n = p.tfhe.lwe_dimension;
        let mut data = Vec::with_capacity(lwes.len() * (n + 1));
        for c in lwes {
            if c.dimension() != n || c.modulus() != q_t {
                return Err(mismatch(c.dimension(), c.modulus(), n, q_t));
            }
            data.extend_from_slice(c.as_residues());
        }
        self.switch_to_ckks_host(&LweBatchHost {
            dimension: n,
            modulus: q_t,
            data,
        })
    }

    /// [`Self::switch_to_ckks`] of a batch in the backend's memory (downloaded once: the
    /// masks become plaintext diagonals).
    pub fn switch_to_ckks_batch(&self, batch: &B::LweBatch) -> Result<Ciphertext<B>> {
        self.switch_to_ckks_host(&self.boot.download_batch(batch)?)
    }

    /// [`Self::switch_to_ckks`] of a host batch.
    fn switch_to_ckks_host(&self, batch: &LweBatchHost) -> Result<Ciphertext<B>> {
        let p = &self.keys.params;
        let s = self.keys.slots;
        let count = batch.len();
        if count == 0 || count > s {
            return Err(Error::SlotCount {
                op: "switch to CKKS",
                given: count,
                expected: s,
            });
        }
        let q_t = p.tfhe.q()?;
        let n = p.tfhe.lwe_dimension;
        if batch.dimension != n || batch.modulus != q_t {
            return Err(mismatch(batch.dimension, batch.modulus, n, q_t));
        }
        let lay = BackLayout::new(p, s, self.ctx.params().n());
        let denom = q_t.value() as f64 * p.sine_k;
        let zero = Complex64::new(0.0, 0.0);
        // d_k[g·S + row] = −a_row[col]/(qK), col = g'·cols + (row + k) mod cols with
        // g' = g + [row + k ≥ S] mod groups: the rotated key holds s[col] there, and over
        // (g, k) every column of every row is met once.
        let diagonals: BTreeMap<i64, Vec<Complex64>> = (0..lay.cols)
            .into_par_iter()
            .map(|k| {
                let d: Vec<Complex64> = (0..lay.slots)
                    .map(|j| {
                        let (g, row) = (j / s, j % s);
                        let g2 = (g + usize::from(row + k >= s)) % lay.groups;
                        let col = g2 * lay.cols + (row + k) % lay.cols;
                        match batch.get(row) {
                            Some(ct) if col < n => {
                                Complex64::new(-(q_t.center(ct[col]) as f64) / denom, 0.0)
                            }
                            _ => zero,
                        }
                    })
                    .collect();
                (k as i64, d)
            })
            .collect::<Vec<_>>()
            .into_iter()
            .collect();
        let key = &self.keys.lwe_key;
        let lt = LinearTransform::new(&self.eval, &diagonals, lay.slots, key.level())?;
        let mut y = self.eval.linear_transform(key, &lt, &self.keys.galois)?;
        for step in lay.sum_steps(s) {
            let r = self.eval.rotate(&y, step, &self.keys.galois)?;
            self.eval.add_assign(&mut y, &r)?;
        }
        let b: Vec<Complex64> = (0..lay.slots)
            .map(|j| {
                let v = batch
                    .get(j % s)
                    .map_or(0.0, |ct| q_t.center(ct[n]) as f64 / denom);
                Complex64::new(v, 0.0)
            })
            .collect();
        let scale = self.ctx.params().scale(y.level())?;
        let pt = self
            .eval
            .encoder()
            .encode_with(&b, y.level(), scale, lay.slots)?;
        let y = self.eval.add_plain(&y, &pt)?;
        sine::sine(&self.eval, p, &self.cosine, &y, &self.keys.relin)
    }

    /// `[x > 0]` slot-wise (1 or 0): [`Self::switch_to_lwe`] with
    /// [`LweEncoding::sign`]`(p, bound)`, the step table, [`Self::switch_to_ckks`]. Exact (up
    /// to the sine's error) for `gap ≤ |x| ≤ bound`, `gap = bound/(p − 2)`.
    pub fn ckks_step(&self, ct: &Ciphertext<B>, bound: f64) -> Result<Ciphertext<B>> {
        let enc = LweEncoding::sign(self.keys.params.tfhe.message_space(), bound)?;
        let lwes = self.switch_to_lwe_batch(ct, &enc)?;
        let bits = self.apply_lut_batch(&lwes, &self.step_table()?)?;
        self.switch_to_ckks_batch(&bits)
    }

    /// Any table on CKKS slots: each `x_j` (`|x_j| ≤ enc.bound()`) is switched to the LWE
    /// message `m_j = round(enc.message(x_j))`, and the slot comes back as the integer
    /// `f(m_j) mod p`. The result's bits `k < log2 p` are each a PBS (table
    /// `m ↦ p/2 · bit_k(f(m))`) and a way back ([`Self::switch_to_ckks`], `0`/`1`), summed as
    /// `Σ 2^k·u_k`: `log2 p` PBS batches and ways back (one switch to LWE). The error is
    /// `Σ 2^k` times a bit's (`≈ 15 · 3·10^-3` at the classic set).
    pub fn ckks_apply(
        &self,
        ct: &Ciphertext<B>,
        enc: &LweEncoding,
        f: impl Fn(u64) -> u64,
    ) -> Result<Ciphertext<B>> {
        let t = &self.keys.params.tfhe;
        let p = t.message_space();
        let lwes = self.switch_to_lwe_batch(ct, enc)?;
        let values: Vec<u64> = (0..p).map(|m| f(m) % p).collect();
        let mut acc: Option<Ciphertext<B>> = None;
        for k in 0..t.message_bits {
            let lut = LookupTable::from_fn(t, |m| ((values[m as usize] >> k) & 1) * (p / 2))?;
            let bits = self.apply_lut_batch(&lwes, &lut)?;
            let u = self.switch_to_ckks_batch(&bits)?;
            let term = self.eval.mul_int(&u, 1i64 << k)?;
            acc = Some(match acc {
                None => term,
                Some(a) => self.eval.add(&a, &term)?,
            });
        }
        acc.ok_or_else(|| Error::Range {
            reason: "the message space has no bits".into(),
        })
    }

    /// `sign(x)` slot-wise (`±1`) for `gap ≤ |x| ≤ bound` ([`Self::ckks_step`], then
    /// `2u − 1`).
    pub fn ckks_sign(&self, ct: &Ciphertext<B>, bound: f64) -> Result<Ciphertext<B>> {
        let u = self.ckks_step(ct, bound)?;
        let two = self.eval.mul_int(&u, 2)?;
        Ok(self.eval.sub_const(&two, Complex64::new(1.0, 0.0))?)
    }

    /// `[a > b]` slot-wise (1 or 0) for `|a|, |b| ≤ bound` and `|a − b| ≥ 2·bound/(p − 2)`:
    /// the step of `a − b` (both brought to the lower level).
    pub fn ckks_compare(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        bound: f64,
    ) -> Result<Ciphertext<B>> {
        self.check_ct("compare", a, 0)?;
        self.check_ct("compare", b, 0)?;
        let (a, b) = self.eval.align(a, b)?;
        let d = self.eval.sub(&a, &b)?;
        self.ckks_step(&d, 2.0 * bound)
    }

    /// The LWE message of a phase as the PBS rounds it (for tests and checks): `m` of
    /// [`crate::lwe::decode`] without the padding bit.
    pub fn encode_message(&self, m: u64) -> u64 {
        let t = &self.keys.params.tfhe;
        encode(m, t.message_space(), t.modulus)
    }
}
