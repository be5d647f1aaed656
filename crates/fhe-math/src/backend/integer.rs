//! [`IntegerBackend`]: what BGV and BFV add to the ring and key switching, the plaintext
//! modulus `t` of the integer schemes: decoding into `Z_t`, the `t`-preserving variants of
//! rescale and key switching, and BFV's integer scale-and-round product.
//!
//! The helpers the defaults run on the host ([`decode_mod_t_host`], [`t_constants`],
//! [`scalars_for`], the `check_*` functions) are public so that a device backend overriding a
//! method can refuse the same inputs and fall back to the same computation.

use super::key_switch::{relinearize_with, rotate_hoisted_with};
use super::{KeySwitchBackend, RingBackend, check_lift_args};
use crate::crt_decode::{CrtDecoder, DecodeMode, NoiseFraction};
use crate::error::Result;
use crate::ntt::NttTable;
use crate::poly::{RnsPoly, Shape};
use crate::ring::RingContext;
use crate::scale_round::ScaleRoundTables;

/// The integer schemes' (BGV, BFV) operations: a plaintext modulus `t` kept through rescales
/// and key switches, decoding into `Z_t`, and BFV's scale-and-round tensor.
pub trait IntegerBackend: KeySwitchBackend {
    /// Encoding's transform and lift: `m = NTT_t^{-1}(values)` (`values`: `N` canonical
    /// residues mod `t` in [`NttTable::forward`]'s order, `ntt` of degree `N` modulo `t`), then
    /// the buffer [`RingBackend::upload_lifted_i64`] gives for `m` read centred in `(-t/2, t/2]`.
    /// Returns the buffer (coefficient form, at `level`) and `m` (canonical, natural order).
    ///
    /// Errors: those of [`RingBackend::upload_lifted_i64`], a table of another degree, or a value
    /// `≥ t` ([`crate::Error::ShapeMismatch`]). The default body transforms on the host; an
    /// override must give the same bits.
    fn upload_lifted_intt_mod_t(
        &self,
        values: &[u64],
        ntt: &NttTable,
        level: usize,
    ) -> Result<(Self::Poly, Vec<u64>)> {
        check_lift_args(self.ring(), values.len(), level)?;
        check_residues_mod_t(self.ring(), values, ntt)?;
        let mut m = values.to_vec();
        ntt.inverse(&mut m);
        let t = ntt.modulus().value();
        let centred: Vec<i64> = m
            .iter()
            .map(|&c| {
                if c > t / 2 {
                    c as i64 - t as i64
                } else {
                    c as i64
                }
            })
            .collect();
        Ok((self.upload_lifted_i64(&centred, level)?, m))
    }

    /// Decryption's decoding into `Z_t` of component 0 of `p` (coefficient form; its limbs
    /// `q_0..q_l` must be `decoder`'s basis): `m_j = ⌊t·x_j/Q⌉ mod t` (BFV) or
    /// `m_j = scale·[x_j]_Q mod t` (BGV), as `mode` says, with the noise summary of
    /// [`CrtDecoder::decode`]. Only the `N` results need cross to the host.
    ///
    /// Errors: an extended buffer or a basis other than the buffer's limbs
    /// ([`crate::Error::ShapeMismatch`]). The default body downloads the buffer and runs
    /// [`decode_mod_t_host`]; an override must give the same values and summary.
    fn decode_mod_t(
        &self,
        p: &Self::Poly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        decode_mod_t_host(self.ring(), &self.download(p)?, decoder, mode)
    }

    /// [`IntegerBackend::decode_mod_t`] followed by the forward negacyclic NTT modulo `t` (`ntt`, of
    /// degree `N` and modulus the decoder's `t`): `out = NTT_t(m)`, canonical, in
    /// [`NttTable::forward`]'s order, the values a batched plaintext's slots are read from.
    ///
    /// Errors: those of [`IntegerBackend::decode_mod_t`], and a table of another degree or modulus
    /// ([`crate::Error::ShapeMismatch`]). The default body runs [`IntegerBackend::decode_mod_t`] and
    /// the transform on the host; an override must give the same values.
    fn decode_mod_t_ntt(
        &self,
        p: &Self::Poly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
        ntt: &NttTable,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        check_plain_ntt(self.ring(), decoder, ntt)?;
        let (mut m, f) = self.decode_mod_t(p, decoder, mode)?;
        ntt.forward(&mut m);
        Ok((m, f))
    }

    /// [`KeySwitchBackend::mod_down_into`] preserving a message modulo `t` (BGV key switching):
    /// `out <- t·(t^{-1}·out + ⌊t^{-1}·acc / P⌉)` over `Q_l`, with the same optional rescale
    /// inside the brackets, so `out` decrypts to the same message mod `t` (times `q_l^{-1}`
    /// with the rescale). `acc` may be overwritten. `t = 1` is plain `mod_down_into`.
    /// The default body scales by `t^{-1}` and `t` around `mod_down_into`; a backend may fold
    /// the scalings into its kernels (the residues are the same).
    fn mod_down_into_mod_t(
        &self,
        acc: &mut Self::Poly,
        out: &mut Self::Poly,
        rescale: bool,
        t: u64,
    ) -> Result<()> {
        scaled_mod_down_into_mod_t(self, acc, out, rescale, t)
    }

    /// [`IntegerBackend::rescale_mod_t`] of a copy: `a` rescaled into a new buffer (level `l - 1`), `a`
    /// unchanged. The default copies, then rescales the copy; a backend may instead read `a` in
    /// the rescale's own passes (with every word, inactive slots included, what its copy
    /// rescaled in place would hold).
    fn rescaled_mod_t(&self, a: &Self::Poly, t: u64) -> Result<Self::Poly> {
        let mut out = self.duplicate(a)?;
        self.rescale_mod_t(&mut out, t)?;
        Ok(out)
    }

    /// [`RingBackend::rescale`] preserving a message modulo `t` (BGV's modulus switch):
    /// `a <- t·⌊t^{-1}·a / q_l⌉` over `q_0..q_{l-1}`; the result decrypts to `q_l^{-1}·m mod t`.
    /// `t = 1` is plain `rescale`. The default body scales around `rescale`; a backend may fold
    /// the scalings into its kernels (the residues are the same).
    fn rescale_mod_t(&self, a: &mut Self::Poly, t: u64) -> Result<()> {
        if t == 1 {
            return self.rescale(a);
        }
        let (fwd, inv) = t_constants(self.ring(), t)?;
        let shape = self.shape(a);
        self.mul_scalar_assign(a, &scalars_for(self.ring(), shape, &inv))?;
        self.rescale(a)?;
        let shape = self.shape(a);
        self.mul_scalar_assign(a, &scalars_for(self.ring(), shape, &fwd))
    }

    /// The BFV ciphertext product: `⌊(t/Q_l)·(a ⊗ b)⌉ mod Q_l` for two 2-component buffers in
    /// NTT form at the tables' level `l`, returned as 3 components in NTT form. Integer-only
    /// (see [`crate::scale_round`]); a backend overriding it must give the same bits.
    ///
    /// The default body is [`IntegerBackend::tensor_scale_round_coeff`]'s, then a forward NTT.
    fn tensor_scale_round(
        &self,
        a: &Self::Poly,
        b: &Self::Poly,
        tables: &ScaleRoundTables,
    ) -> Result<Self::Poly> {
        let mut d = self.tensor_scale_round_coeff(a, b, tables)?;
        self.ntt(&mut d)?;
        Ok(d)
    }

    /// BFV's product relinearized: [`IntegerBackend::tensor_scale_round`], then
    /// [`KeySwitchBackend::relinearize`] without rescale. A backend may hand the product's third
    /// component to the key switch in coefficient form, before the product's own NTT (the
    /// result is the same).
    fn tensor_scale_round_relin(
        &self,
        a: &Self::Poly,
        b: &Self::Poly,
        tables: &ScaleRoundTables,
        relin_key: &Self::Poly,
    ) -> Result<Self::Poly> {
        let c = self.tensor_scale_round(a, b, tables)?;
        self.relinearize(c, relin_key, false)
    }

    /// [`KeySwitchBackend::mul_relin`] preserving a message modulo `t`: [`RingBackend::tensor`] then
    /// [`IntegerBackend::relinearize_mod_t`] (`rescale` is then BGV's modulus switch). The schemes'
    /// multiply-and-relinearize operators make this one call, so a backend may fuse the product
    /// into the key switch of its third component (with the same result).
    fn mul_relin_mod_t(
        &self,
        a: &Self::Poly,
        b: &Self::Poly,
        relin_key: &Self::Poly,
        rescale: bool,
        t: u64,
    ) -> Result<Self::Poly> {
        let c = self.tensor(a, b)?;
        self.relinearize_mod_t(c, relin_key, rescale, t)
    }

    /// [`KeySwitchBackend::relinearize`] preserving a message modulo `t` (BGV: the key switch ends with
    /// [`IntegerBackend::mod_down_into_mod_t`]; `rescale` is then BGV's modulus switch). `t = 1` is
    /// plain relinearization.
    fn relinearize_mod_t(
        &self,
        c: Self::Poly,
        relin_key: &Self::Poly,
        rescale: bool,
        t: u64,
    ) -> Result<Self::Poly> {
        relinearize_with(self, c, relin_key, |acc, out| {
            self.mod_down_into_mod_t(acc, out, rescale, t)
        })
    }

    /// [`KeySwitchBackend::rotate_hoisted`] preserving a message modulo `t` (each key switch ends with
    /// [`IntegerBackend::mod_down_into_mod_t`]). `t = 1` is plain hoisted rotation.
    fn rotate_hoisted_mod_t(
        &self,
        c: &Self::Poly,
        keys: &[(u64, &Self::Poly)],
        t: u64,
    ) -> Result<Vec<Self::Poly>> {
        rotate_hoisted_with(self, c, keys, |acc, out| {
            self.mod_down_into_mod_t(acc, out, false, t)
        })
    }

    /// [`IntegerBackend::tensor_scale_round`] with the 3 components returned in coefficient form,
    /// where the scale-and-round ends: BFV leaves its unrelinearized products so, and
    /// [`IntegerBackend::relinearize_from_coeff`] takes them from there.
    ///
    /// The default body runs the reference computation on the host: inverse NTT of copies of
    /// the operands on the device, download, [`ScaleRoundTables::tensor_scale_round_host`],
    /// upload.
    fn tensor_scale_round_coeff(
        &self,
        a: &Self::Poly,
        b: &Self::Poly,
        tables: &ScaleRoundTables,
    ) -> Result<Self::Poly> {
        let level = tables.level();
        for p in [a, b] {
            let s = self.shape(p);
            if s.components != 2 || s.level != level || s.extended {
                return Err(crate::Error::ShapeMismatch {
                    what: format!(
                        "tensor with scale-and-round needs 2-component buffers at level {level}, \
                         got {} components at level {}",
                        s.components, s.level
                    ),
                });
            }
        }
        let host = |p: &Self::Poly| -> Result<RnsPoly> {
            let mut c = self.duplicate(p)?;
            self.intt(&mut c)?;
            self.download(&c)
        };
        let (ha, hb) = (host(a)?, host(b)?);
        let ring = self.ring();
        let mut out = ring.zeros(Shape {
            components: 3,
            level,
            extended: false,
        })?;
        tables.tensor_scale_round_host(ring, &ha, &hb, &mut out)?;
        self.upload(&out)
    }

    /// [`KeySwitchBackend::relinearize`] (no rescale) of a 3-component buffer in coefficient form (the
    /// output of [`IntegerBackend::tensor_scale_round_coeff`]), the 2 components returned in NTT form.
    /// The default body transforms it, then relinearizes; a backend may start `mod_up` from
    /// the coefficient form and add `c_0`, `c_1` in `mod_down` (with the same result).
    fn relinearize_from_coeff(
        &self,
        mut c: Self::Poly,
        relin_key: &Self::Poly,
    ) -> Result<Self::Poly> {
        self.ntt(&mut c)?;
        self.relinearize(c, relin_key, false)
    }
}

/// The default body of [`IntegerBackend::mod_down_into_mod_t`]: `t^{-1}` on `acc` and `out`,
/// [`KeySwitchBackend::mod_down_into`], then `t`.
fn scaled_mod_down_into_mod_t<B: RingBackend + KeySwitchBackend>(
    be: &B,
    acc: &mut B::Poly,
    out: &mut B::Poly,
    rescale: bool,
    t: u64,
) -> Result<()> {
    if t == 1 {
        return be.mod_down_into(acc, out, rescale);
    }
    let (fwd, inv) = t_constants(be.ring(), t)?;
    let sa = be.shape(acc);
    be.mul_scalar_assign(acc, &scalars_for(be.ring(), sa, &inv))?;
    let so = be.shape(out);
    be.mul_scalar_assign(out, &scalars_for(be.ring(), so, &inv))?;
    be.mod_down_into(acc, out, rescale)?;
    let so = be.shape(out);
    be.mul_scalar_assign(out, &scalars_for(be.ring(), so, &fwd))
}

/// Per-slot constants `t mod p` and `t^{-1} mod p` for every prime of the ring; an error when
/// `t` is not invertible modulo some prime.
pub fn t_constants(ring: &RingContext, t: u64) -> Result<(Vec<u64>, Vec<u64>)> {
    let mut fwd = Vec::with_capacity(ring.moduli().len());
    let mut inv = Vec::with_capacity(ring.moduli().len());
    for m in ring.moduli() {
        let r = m.reduce(t);
        fwd.push(r);
        inv.push(m.inv(r)?);
    }
    Ok((fwd, inv))
}

/// The entries of the per-slot table `x` for the active limbs of `shape` (Q slots up to the
/// level, then the special slots when extended), in limb order.
pub fn scalars_for(ring: &RingContext, shape: Shape, x: &[u64]) -> Vec<u64> {
    let p = if shape.extended {
        ring.q_count()..ring.q_count() + ring.p_count()
    } else {
        0..0
    };
    (0..=shape.level).chain(p).map(|s| x[s]).collect()
}

/// Checks that `decoder` decodes component 0 of a buffer of `ring` with `shape`: not extended,
/// and its basis is the ring's first `level + 1` moduli.
pub fn check_decoder(ring: &RingContext, shape: Shape, decoder: &CrtDecoder) -> Result<()> {
    let basis = decoder.basis().moduli();
    let same = !shape.extended
        && basis.len() == shape.level + 1
        && basis
            .iter()
            .enumerate()
            .all(|(s, q)| q.value() == ring.modulus(s).value());
    if !same {
        return Err(crate::Error::ShapeMismatch {
            what: format!(
                "a decoder of {} moduli cannot decode a buffer at level {}{}",
                basis.len(),
                shape.level,
                if shape.extended { " (extended)" } else { "" }
            ),
        });
    }
    Ok(())
}

/// Checks that `values` are residues below `ntt`'s modulus and `ntt` has the ring's degree.
pub fn check_residues_mod_t(ring: &RingContext, values: &[u64], ntt: &NttTable) -> Result<()> {
    let t = ntt.modulus().value();
    if ntt.n() != ring.n() {
        return Err(crate::Error::ShapeMismatch {
            what: format!(
                "an NTT of degree {} for a ring of degree {}",
                ntt.n(),
                ring.n()
            ),
        });
    }
    if let Some(v) = values.iter().find(|&&v| v >= t) {
        return Err(crate::Error::ShapeMismatch {
            what: format!("value {v} is not a residue modulo {t}"),
        });
    }
    Ok(())
}

/// Checks that `ntt` is a transform of the ring's degree modulo the decoder's `t`.
pub fn check_plain_ntt(ring: &RingContext, decoder: &CrtDecoder, ntt: &NttTable) -> Result<()> {
    if ntt.n() != ring.n() || ntt.modulus().value() != decoder.t().value() {
        return Err(crate::Error::ShapeMismatch {
            what: format!(
                "an NTT of degree {} modulo {} cannot transform messages of degree {} modulo {}",
                ntt.n(),
                ntt.modulus().value(),
                ring.n(),
                decoder.t().value()
            ),
        });
    }
    Ok(())
}

/// The host side of [`IntegerBackend::decode_mod_t`] on a host buffer `p` of `ring`.
pub fn decode_mod_t_host(
    ring: &RingContext,
    p: &RnsPoly,
    decoder: &CrtDecoder,
    mode: DecodeMode,
) -> Result<(Vec<u64>, NoiseFraction)> {
    check_decoder(ring, p.shape(), decoder)?;
    let limbs: Vec<&[u64]> = (0..=p.level()).map(|s| p.limb(0, s)).collect();
    let mut out = vec![0u64; p.n()];
    let f = decoder.decode(&limbs, mode, &mut out);
    Ok((out, f))
}

/// `log2 max_j |ν_j|` of component 0 of `p` (coefficient form), as
/// [`CrtDecoder::max_log2`] computes it: from [`IntegerBackend::decode_mod_t`]'s summary when the
/// fraction resolves it, else exactly from the downloaded limbs. `scaled` selects BFV's
/// `ν = [t·x]_Q` (else BGV's `[x]_Q`).
pub fn noise_max_log2<B: IntegerBackend>(
    backend: &B,
    p: &B::Poly,
    decoder: &CrtDecoder,
    scaled: bool,
) -> Result<f64> {
    let mode = if scaled {
        DecodeMode::ScaleRound
    } else {
        DecodeMode::Centred { scale: 1 }
    };
    let (_, f) = backend.decode_mod_t(p, decoder, mode)?;
    if f.is_resolved() {
        return Ok(f.log2_ratio() + decoder.log2_q());
    }
    let host = backend.download(p)?;
    let limbs: Vec<&[u64]> = (0..=host.level()).map(|s| host.limb(0, s)).collect();
    Ok(decoder.exact_max_log2(&limbs, scaled))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuBackend;
    use crate::test_util::{backend_ring as ring, rand_poly};

    /// The plaintext-modulus entries: the lift after the inverse NTT is `upload_lifted_i64` of
    /// the centred message, the decode with the NTT is the NTT of the decode, the noise helper
    /// is the decoder's own `max_log2`, and wrong tables, bases or values are errors.
    #[test]
    fn plaintext_modulus_entries() {
        use crate::crt_decode::{CrtDecoder, DecodeMode};
        use crate::modulus::Modulus;
        let ring = ring();
        let be = CpuBackend::new(ring.clone());
        let n = ring.n();
        let t = Modulus::new(65537).unwrap();
        let ntt = NttTable::new(t, n).unwrap();
        let values: Vec<u64> = rand_poly(3, n, 65537);
        for level in [0, 2] {
            let (p, m) = be.upload_lifted_intt_mod_t(&values, &ntt, level).unwrap();
            let mut want_m = values.clone();
            ntt.inverse(&mut want_m);
            assert_eq!(m, want_m);
            let centred: Vec<i64> = m.iter().map(|&c| t.center(c)).collect();
            assert_eq!(p, be.upload_lifted_i64(&centred, level).unwrap());
        }
        let mut bad = values.clone();
        bad[5] = 65537;
        assert!(be.upload_lifted_intt_mod_t(&bad, &ntt, 0).is_err());

        let level = 2;
        let moduli: Vec<Modulus> = (0..=level).map(|s| *ring.modulus(s)).collect();
        let dec = CrtDecoder::new(&moduli, t).unwrap();
        let x = rand_poly(4, n, 1 << 20);
        let x: Vec<i64> = x.iter().map(|&v| v as i64 - (1 << 19)).collect();
        let p = be.upload_lifted_i64(&x, level).unwrap();
        for (mode, scaled) in [
            (DecodeMode::ScaleRound, true),
            (DecodeMode::Centred { scale: 3 }, false),
        ] {
            let (m, f) = be.decode_mod_t(&p, &dec, mode).unwrap();
            let (mt, ft) = be.decode_mod_t_ntt(&p, &dec, mode, &ntt).unwrap();
            let mut want = m.clone();
            ntt.forward(&mut want);
            assert_eq!((mt, ft), (want, f));
            let limbs: Vec<&[u64]> = (0..=level).map(|s| p.limb(0, s)).collect();
            assert_eq!(
                noise_max_log2(&be, &p, &dec, scaled).unwrap(),
                dec.max_log2(&limbs, scaled)
            );
        }
        // BGV's centred lift of small values is the values themselves, times the scale.
        let (m, _) = be
            .decode_mod_t(&p, &dec, DecodeMode::Centred { scale: 1 })
            .unwrap();
        assert!(m.iter().zip(&x).all(|(&a, &b)| a == t.reduce_i64(b)));
        // A decoder of another level, an NTT modulo another t: errors.
        let low = CrtDecoder::new(&moduli[..2], t).unwrap();
        assert!(be.decode_mod_t(&p, &low, DecodeMode::ScaleRound).is_err());
        let other = NttTable::new(Modulus::new(786433).unwrap(), n).unwrap();
        assert!(
            be.decode_mod_t_ntt(&p, &dec, DecodeMode::ScaleRound, &other)
                .is_err()
        );
    }
}
