//! The [`Backend`] trait: the operations a device must provide, at the granularity a GPU fuses.
//!
//! Scheme code (rlwe, ckks, ...) is written once, generic over `B: Backend`, and never sees a
//! device pointer. Every buffer crossing the trait holds canonical residues in `[0, q)`.
//! Operations are over whole buffers (all components, all active limbs) at once.
//!
//! Key switching is split so that it can be hoisted and fused:
//! - [`Backend::mod_up`]: decompose one component into its digits and raise each to `Q_l·P`;
//! - [`Backend::key_product`]: `acc += Σ_j σ_g(ext_j) · key_j` (optional automorphism folded in);
//! - [`Backend::mod_down_into`]: `out += ⌊acc / P⌉` over `Q_l`, optionally followed by a rescale.
//!
//! Composite operations ([`Backend::key_switch`], [`Backend::mul_relin`],
//! [`Backend::rotate_hoisted`]) have default bodies built from the parts; a backend may override
//! them with fused kernels but must keep the results bit-identical.

use crate::crt_decode::{CrtDecoder, DecodeMode, NoiseFraction};
use crate::error::Result;
use crate::ntt::NttTable;
use crate::poly::{RnsPoly, Shape};
use crate::ring::RingContext;
use crate::sampler::{Domain, Seed};
use crate::scale_round::ScaleRoundTables;
use rayon::prelude::*;
use std::sync::Arc;

/// A compute backend bound to one [`RingContext`].
pub trait Backend: Clone + Send + Sync + 'static {
    /// A device buffer of RNS polynomials, `[component][slot][coeff]` (see [`RnsPoly`]).
    type Poly: Send + Sync;

    /// The ring this backend computes in.
    fn ring(&self) -> &Arc<RingContext>;

    /// Human-readable device name (e.g. "cpu" or the GPU's name).
    fn device_name(&self) -> String;

    /// Shape of a buffer.
    fn shape(&self, p: &Self::Poly) -> Shape;

    /// A zero buffer.
    fn zeros(&self, shape: Shape) -> Result<Self::Poly>;

    /// Copies a host buffer to the device.
    fn upload(&self, host: &RnsPoly) -> Result<Self::Poly>;

    /// Copies a device buffer to the host.
    fn download(&self, p: &Self::Poly) -> Result<RnsPoly>;

    /// The RNS lift of an integer polynomial: a one-component buffer at `level`, coefficient
    /// form, whose limb `s` (for `s <= level`) holds `coeffs[k] mod q_s` canonically in
    /// `[0, q_s)` (a negative `v` gives `q_s - (|v| mod q_s)`, or 0). This is how encoders put a
    /// message on the device: `16·N` bytes cross instead of `8·N·(L+1)`.
    ///
    /// Errors: `coeffs.len() != N` ([`crate::Error::ShapeMismatch`]), `level > L`
    /// ([`crate::Error::InvalidLevel`]). The default body reduces on the host and calls
    /// [`Backend::upload`]; an override must give the same bits.
    fn upload_lifted(&self, coeffs: &[i128], level: usize) -> Result<Self::Poly> {
        let host = lift_host(self.ring(), coeffs, level, |v| (v < 0, v.unsigned_abs()))?;
        self.upload(&host)
    }

    /// [`Backend::upload_lifted`] for 64-bit coefficients (`8·N` bytes cross): limb `s` holds
    /// `coeffs[k] mod q_s`, the same values as the 128-bit method for the same integers.
    fn upload_lifted_i64(&self, coeffs: &[i64], level: usize) -> Result<Self::Poly> {
        let host = lift_host(self.ring(), coeffs, level, |v| {
            (v < 0, v.unsigned_abs() as u128)
        })?;
        self.upload(&host)
    }

    /// Encoding's transform and lift: `m = NTT_t^{-1}(values)` (`values`: `N` canonical
    /// residues mod `t` in [`NttTable::forward`]'s order, `ntt` of degree `N` modulo `t`), then
    /// the buffer [`Backend::upload_lifted_i64`] gives for `m` read centred in `(-t/2, t/2]`.
    /// Returns the buffer (coefficient form, at `level`) and `m` (canonical, natural order).
    ///
    /// Errors: those of [`Backend::upload_lifted_i64`], a table of another degree, or a value
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

    /// The small coefficients of component 0 of `p` (read as coefficient form, level `l`):
    /// for each coefficient `k`, with `x_k = [p_{0,k}]_{q_0}` the centred residue modulo `q_0`
    /// (in `[-(q_0-1)/2, (q_0-1)/2]`), `Some(x_k)` when `x_k ≡ p_{s,k} (mod q_s)` for every
    /// other active slot `s = 1..=l`, else `None`. `Some(x)` means `x` is the coefficient's
    /// centred value modulo `Q_l = q_0···q_l` (it is congruent to every residue and lies in
    /// `(-Q_l/2, Q_l/2]`, so the CRT makes it unique); for `None` the caller needs the full
    /// limbs ([`Backend::download`]) and a CRT lift. At level 0 every entry is `Some`.
    ///
    /// Only `8·N` bytes need cross instead of `8·N·(L+1)`. Errors: an extended buffer
    /// ([`crate::Error::ShapeMismatch`]). The default body downloads the buffer and runs
    /// [`centered_q0_host`]; an override must give the same values.
    fn download_centered_q0(&self, p: &Self::Poly) -> Result<Vec<Option<i64>>> {
        let host = self.download(p)?;
        centered_q0_host(self.ring(), &host)
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

    /// [`Backend::decode_mod_t`] followed by the forward negacyclic NTT modulo `t` (`ntt`, of
    /// degree `N` and modulus the decoder's `t`): `out = NTT_t(m)`, canonical, in
    /// [`NttTable::forward`]'s order, the values a batched plaintext's slots are read from.
    ///
    /// Errors: those of [`Backend::decode_mod_t`], and a table of another degree or modulus
    /// ([`crate::Error::ShapeMismatch`]). The default body runs [`Backend::decode_mod_t`] and
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

    /// A copy of a buffer on the device.
    fn duplicate(&self, p: &Self::Poly) -> Result<Self::Poly>;

    /// Lowers the level of a buffer (drops top `Q` limbs) without copying.
    fn set_level(&self, p: &mut Self::Poly, level: usize) -> Result<()>;

    /// Keeps the first `components` components (no copy).
    fn truncate_components(&self, p: &mut Self::Poly, components: usize) -> Result<()>;

    /// Overwrites the buffer with zeros (used to erase secret material before freeing it).
    fn zeroize(&self, p: &mut Self::Poly);

    /// `a += b` over `a`'s components and active limbs (`b` must have at least as many).
    fn add_assign(&self, a: &mut Self::Poly, b: &Self::Poly) -> Result<()>;

    /// `a -= b` over `a`'s components and active limbs.
    fn sub_assign(&self, a: &mut Self::Poly, b: &Self::Poly) -> Result<()>;

    /// `a + b`, or `a - b` when `subtract`, as a new buffer of `a`'s shape (`b` as for
    /// [`Backend::add_assign`]). The default body duplicates `a` and combines in place; a
    /// backend may write the result in one pass (the same residues).
    fn add_new(&self, a: &Self::Poly, b: &Self::Poly, subtract: bool) -> Result<Self::Poly> {
        let mut out = self.duplicate(a)?;
        if subtract {
            self.sub_assign(&mut out, b)?;
        } else {
            self.add_assign(&mut out, b)?;
        }
        Ok(out)
    }

    /// `a_component += b_0`: adds a one-component buffer (a plaintext) to one component.
    fn add_component_assign(
        &self,
        a: &mut Self::Poly,
        component: usize,
        b: &Self::Poly,
    ) -> Result<()>;

    /// `dst_{dst_component} = src_{src_component}` over `dst`'s active limbs.
    fn copy_component(
        &self,
        src: &Self::Poly,
        src_component: usize,
        dst: &mut Self::Poly,
        dst_component: usize,
    ) -> Result<()>;

    /// `a = -a`.
    fn neg_assign(&self, a: &mut Self::Poly) -> Result<()>;

    /// `a_c ⊙= b` for every component `c` of `a`, with `b` a one-component buffer (NTT form:
    /// multiplication by a plaintext).
    fn mul_plain_assign(&self, a: &mut Self::Poly, b: &Self::Poly) -> Result<()>;

    /// `acc_c += a_c ⊙ b` for every component `c` (plaintext multiply-accumulate).
    fn mul_plain_acc(&self, acc: &mut Self::Poly, a: &Self::Poly, b: &Self::Poly) -> Result<()>;

    /// `a_c *= s_i` on every component `c`, with one constant per active slot (`s[i]` for the
    /// `i`-th active slot, canonical modulo that slot's prime).
    fn mul_scalar_assign(&self, a: &mut Self::Poly, scalars: &[u64]) -> Result<()>;

    /// Adds the constant polynomial `s` to component `component` (in NTT form a constant adds to
    /// every evaluation; in coefficient form call it on the coefficient-form buffer and only the
    /// NTT-form meaning applies, so callers use it in NTT form). One constant per active slot.
    fn add_scalar_assign(
        &self,
        a: &mut Self::Poly,
        component: usize,
        scalars: &[u64],
    ) -> Result<()>;

    /// Forward negacyclic NTT of every component and active limb (fhe-math's contract).
    fn ntt(&self, a: &mut Self::Poly) -> Result<()>;

    /// Inverse NTT of every component and active limb.
    fn intt(&self, a: &mut Self::Poly) -> Result<()>;

    /// Tensor product of two 2-component buffers in NTT form:
    /// `(a0 b0, a0 b1 + a1 b0, a1 b1)`, at the lower of the two levels.
    fn tensor(&self, a: &Self::Poly, b: &Self::Poly) -> Result<Self::Poly>;

    /// `out_c = σ_g(a_c)` for components `c < mapped` in NTT form, `σ_g: X -> X^g`;
    /// the other components of `out` are left untouched.
    fn automorphism_into(
        &self,
        a: &Self::Poly,
        galois: u64,
        out: &mut Self::Poly,
        mapped: usize,
    ) -> Result<()>;

    /// Divides by the top prime with rounding, in NTT form: `a <- ⌊a / q_l⌉` over
    /// `q_0..q_{l-1}`; the level drops by one.
    fn rescale(&self, a: &mut Self::Poly) -> Result<()>;

    /// Decomposes component `component` of `c` (NTT form, level `l`) into its digits and raises
    /// each to `Q_l·P`: returns an extended buffer with one component per digit, NTT form.
    fn mod_up(&self, c: &Self::Poly, component: usize) -> Result<Self::Poly>;

    /// `acc_c += Σ_j σ_g(ext_j) ⊙ key_{2j+c}` for `c` in `{0, 1}`, over `Q_l·P` (NTT form), where
    /// `key` holds `2·dnum` components at the top level and `σ_g` is applied when `galois` is
    /// given (the automorphism of a hoisted rotation).
    fn key_product(
        &self,
        ext: &Self::Poly,
        key: &Self::Poly,
        galois: Option<u64>,
        acc: &mut Self::Poly,
    ) -> Result<()>;

    /// `out += ⌊acc / P⌉` over `Q_l` (2 components, NTT form; per coefficient
    /// `(x + h - [x + h]_P - α·P) / P` with `h = (P-1)/2` and the fast-conversion overflow
    /// `0 <= α < K`), then, when `rescale`, divides
    /// `out` by its top prime (the same bits as calling [`Backend::rescale`] afterwards).
    fn mod_down_into(&self, acc: &Self::Poly, out: &mut Self::Poly, rescale: bool) -> Result<()>;

    /// [`Backend::mod_down_into`] preserving a message modulo `t` (BGV key switching):
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

    /// [`Backend::rescale_mod_t`] of a copy: `a` rescaled into a new buffer (level `l - 1`), `a`
    /// unchanged. The default copies, then rescales the copy; a backend may instead read `a` in
    /// the rescale's own passes (with every word, inactive slots included, what its copy
    /// rescaled in place would hold).
    fn rescaled_mod_t(&self, a: &Self::Poly, t: u64) -> Result<Self::Poly> {
        let mut out = self.duplicate(a)?;
        self.rescale_mod_t(&mut out, t)?;
        Ok(out)
    }

    /// [`Backend::rescale`] preserving a message modulo `t` (BGV's modulus switch):
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

    /// Uniform polynomial(s) in NTT form from a seed: slot `s` of component `c` uses the stream
    /// `(domain, poly_index + c, s)` of the randomness layout.
    fn sample_uniform(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<Self::Poly>;

    /// A ternary polynomial (one component, coefficient form) from a seed, the same integer in
    /// every slot.
    fn sample_ternary(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<Self::Poly>;

    /// A discrete Gaussian polynomial (sigma 3.2, one component, coefficient form) from a seed.
    fn sample_gaussian(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<Self::Poly>;

    /// Waits for all queued work (a no-op on the CPU); surfaces asynchronous device errors.
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    /// Key switching of one component: `(ks0, ks1)` with `ks0 + ks1·s ≈ c_component · s'`,
    /// where `key` switches from `s'` to `s` (`σ_g` folded in when `galois` is given).
    fn key_switch(
        &self,
        c: &Self::Poly,
        component: usize,
        key: &Self::Poly,
        galois: Option<u64>,
    ) -> Result<Self::Poly> {
        let level = self.shape(c).level;
        let ext = self.mod_up(c, component)?;
        let mut acc = self.zeros(Shape {
            components: 2,
            level,
            extended: true,
        })?;
        self.key_product(&ext, key, galois, &mut acc)?;
        let mut out = self.zeros(Shape {
            components: 2,
            level,
            extended: false,
        })?;
        self.mod_down_into(&acc, &mut out, false)?;
        Ok(out)
    }

    /// The BFV ciphertext product: `⌊(t/Q_l)·(a ⊗ b)⌉ mod Q_l` for two 2-component buffers in
    /// NTT form at the tables' level `l`, returned as 3 components in NTT form. Integer-only
    /// (see [`crate::scale_round`]); a backend overriding it must give the same bits.
    ///
    /// The default body is [`Backend::tensor_scale_round_coeff`]'s, then a forward NTT.
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

    /// BFV's product relinearized: [`Backend::tensor_scale_round`], then
    /// [`Backend::relinearize`] without rescale. A backend may hand the product's third
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

    /// Multiply, relinearize and optionally rescale two 2-component ciphertexts in NTT form.
    fn mul_relin(
        &self,
        a: &Self::Poly,
        b: &Self::Poly,
        relin_key: &Self::Poly,
        rescale: bool,
    ) -> Result<Self::Poly> {
        self.mul_relin_mod_t(a, b, relin_key, rescale, 1)
    }

    /// [`Backend::mul_relin`] preserving a message modulo `t`: [`Backend::tensor`] then
    /// [`Backend::relinearize_mod_t`] (`rescale` is then BGV's modulus switch). The schemes'
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

    /// Relinearizes a 3-component ciphertext (NTT form), optionally rescaling.
    fn relinearize(
        &self,
        c: Self::Poly,
        relin_key: &Self::Poly,
        rescale: bool,
    ) -> Result<Self::Poly> {
        self.relinearize_mod_t(c, relin_key, rescale, 1)
    }

    /// [`Backend::relinearize`] preserving a message modulo `t` (BGV: the key switch ends with
    /// [`Backend::mod_down_into_mod_t`]; `rescale` is then BGV's modulus switch). `t = 1` is
    /// plain relinearization.
    fn relinearize_mod_t(
        &self,
        mut c: Self::Poly,
        relin_key: &Self::Poly,
        rescale: bool,
        t: u64,
    ) -> Result<Self::Poly> {
        let level = self.shape(&c).level;
        let ext = self.mod_up(&c, 2)?;
        let mut acc = self.zeros(Shape {
            components: 2,
            level,
            extended: true,
        })?;
        self.key_product(&ext, relin_key, None, &mut acc)?;
        self.truncate_components(&mut c, 2)?;
        self.mod_down_into_mod_t(&mut acc, &mut c, rescale, t)?;
        Ok(c)
    }

    /// Rotations of one ciphertext by several Galois elements sharing one `mod_up` (hoisting):
    /// for each `(g, key_g)`, `(σ_g(c0), 0) + ⌊Σ_j σ_g(ext_j)·key_g,j / P⌉`.
    fn rotate_hoisted(
        &self,
        c: &Self::Poly,
        keys: &[(u64, &Self::Poly)],
    ) -> Result<Vec<Self::Poly>> {
        self.rotate_hoisted_mod_t(c, keys, 1)
    }

    /// [`Backend::rotate_hoisted`] preserving a message modulo `t` (each key switch ends with
    /// [`Backend::mod_down_into_mod_t`]). `t = 1` is plain hoisted rotation.
    fn rotate_hoisted_mod_t(
        &self,
        c: &Self::Poly,
        keys: &[(u64, &Self::Poly)],
        t: u64,
    ) -> Result<Vec<Self::Poly>> {
        let level = self.shape(c).level;
        let ext = self.mod_up(c, 1)?;
        keys.iter()
            .map(|&(g, key)| {
                let mut acc = self.zeros(Shape {
                    components: 2,
                    level,
                    extended: true,
                })?;
                self.key_product(&ext, key, Some(g), &mut acc)?;
                let mut out = self.zeros(Shape {
                    components: 2,
                    level,
                    extended: false,
                })?;
                self.automorphism_into(c, g, &mut out, 1)?;
                self.mod_down_into_mod_t(&mut acc, &mut out, false, t)?;
                Ok(out)
            })
            .collect()
    }

    /// [`Backend::tensor_scale_round`] with the 3 components returned in coefficient form,
    /// where the scale-and-round ends: BFV leaves its unrelinearized products so, and
    /// [`Backend::relinearize_from_coeff`] takes them from there.
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

    /// [`Backend::relinearize`] (no rescale) of a 3-component buffer in coefficient form (the
    /// output of [`Backend::tensor_scale_round_coeff`]), the 2 components returned in NTT form.
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

/// The default body of [`Backend::mod_down_into_mod_t`]: `t^{-1}` on `acc` and `out`,
/// [`Backend::mod_down_into`], then `t`.
fn scaled_mod_down_into_mod_t<B: Backend>(
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

/// Checks the arguments of [`Backend::upload_lifted`] (`N` coefficients, `level <= L`).
pub fn check_lift_args(ring: &RingContext, len: usize, level: usize) -> Result<()> {
    if len != ring.n() {
        return Err(crate::Error::ShapeMismatch {
            what: format!(
                "cannot lift a polynomial: {len} coefficients given, the ring has N = {}",
                ring.n()
            ),
        });
    }
    if level > ring.max_level() {
        return Err(crate::Error::InvalidLevel {
            level,
            reason: "above the top level",
        });
    }
    Ok(())
}

/// The host side of [`Backend::upload_lifted`]: `coeffs` (split by `sign_mag` into sign and
/// magnitude) reduced into every active slot of a one-component buffer at `level`.
fn lift_host<T: Copy + Sync>(
    ring: &RingContext,
    coeffs: &[T],
    level: usize,
    sign_mag: impl Fn(T) -> (bool, u128) + Sync,
) -> Result<RnsPoly> {
    check_lift_args(ring, coeffs.len(), level)?;
    let mut host = ring.zeros(Shape {
        components: 1,
        level,
        extended: false,
    })?;
    let n = ring.n();
    host.raw_mut()
        .par_chunks_mut(n)
        .take(level + 1)
        .enumerate()
        .for_each(|(s, limb)| {
            let m = ring.modulus(s);
            for (dst, &v) in limb.iter_mut().zip(coeffs) {
                let (neg, mag) = sign_mag(v);
                let r = m.reduce_u128(mag);
                *dst = if neg { m.neg(r) } else { r };
            }
        });
    Ok(host)
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

/// The host side of [`Backend::decode_mod_t`] on a host buffer `p` of `ring`.
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
/// [`CrtDecoder::max_log2`] computes it: from [`Backend::decode_mod_t`]'s summary when the
/// fraction resolves it, else exactly from the downloaded limbs. `scaled` selects BFV's
/// `ν = [t·x]_Q` (else BGV's `[x]_Q`).
pub fn noise_max_log2<B: Backend>(
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

/// The host side of [`Backend::download_centered_q0`] on a host buffer `p` of `ring`
/// (component 0, coefficient form): `Some(x)` with `x = [p_{0,k}]_{q_0}` centred when
/// `x mod q_s = p_{s,k}` for every other active slot `s`, else `None`.
pub fn centered_q0_host(ring: &RingContext, p: &RnsPoly) -> Result<Vec<Option<i64>>> {
    ring.check(p)?;
    if p.shape().extended {
        return Err(crate::Error::ShapeMismatch {
            what: "cannot take centred residues of an extended buffer (basis Q·P)".into(),
        });
    }
    let level = p.level();
    let q0 = ring.modulus(0);
    let limb0 = p.limb(0, 0);
    let mut out = vec![None; p.n()];
    out.par_chunks_mut(1024)
        .enumerate()
        .for_each(|(chunk, out)| {
            for (i, o) in out.iter_mut().enumerate() {
                let k = chunk * 1024 + i;
                let x = q0.center(limb0[k]);
                let small = (1..=level).all(|s| ring.modulus(s).reduce_i64(x) == p.limb(0, s)[k]);
                *o = small.then_some(x);
            }
        });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuBackend;
    use crate::primes::ntt_primes;
    use crate::rns::RnsBasis;
    use crate::test_util::rand_poly;

    /// N = 2^10, q_0 of 60 bits and four 40-bit primes, one special prime, two digits.
    fn ring() -> Arc<RingContext> {
        let n = 1 << 10;
        let mut qs = ntt_primes(60, 2 * n as u64, 1, &[]).unwrap();
        qs.extend(ntt_primes(40, 2 * n as u64, 4, &qs).unwrap());
        let ps = ntt_primes(60, 2 * n as u64, 1, &qs).unwrap();
        RingContext::new(n, &qs, &ps, vec![0..3, 3..5]).unwrap()
    }

    /// Random i128 coefficients of every size, with the extremes.
    fn ints(n: usize) -> Vec<i128> {
        let r = rand_poly(7, 4 * n, u64::MAX);
        let mut v: Vec<i128> = (0..n)
            .map(|k| {
                let w = ((r[4 * k] as u128) << 64 | r[4 * k + 1] as u128) as i128;
                // A random bit length in 0..=127, either sign.
                let v = w >> (r[4 * k + 2] % 128);
                if r[4 * k + 3] & 1 == 1 { -v } else { v }
            })
            .collect();
        v[..6].copy_from_slice(&[0, 1, -1, i128::MAX, i128::MIN, i128::MIN + 1]);
        v
    }

    // The default bodies (CpuBackend keeps them) against `rem_euclid`, at every level.
    #[test]
    fn upload_lifted_default_matches_rem_euclid() {
        let ring = ring();
        let be = CpuBackend::new(ring.clone());
        let v = ints(ring.n());
        let v64: Vec<i64> = v.iter().map(|&x| x as i64).collect();
        for level in 0..=ring.max_level() {
            let p = be.upload_lifted(&v, level).unwrap();
            let p64 = be.upload_lifted_i64(&v64, level).unwrap();
            assert_eq!(
                p.shape(),
                Shape {
                    components: 1,
                    level,
                    extended: false
                }
            );
            for s in 0..ring.q_count() {
                let q = ring.modulus(s).value();
                if s > level {
                    assert!(p.limb(0, s).iter().all(|&x| x == 0), "inactive slot {s}");
                    continue;
                }
                for (k, (&x, &y)) in p.limb(0, s).iter().zip(p64.limb(0, s)).enumerate() {
                    assert_eq!(x, v[k].rem_euclid(q as i128) as u64, "slot {s} coeff {k}");
                    assert_eq!(y, (v64[k] as i128).rem_euclid(q as i128) as u64);
                }
            }
        }
    }

    #[test]
    fn upload_lifted_rejects_bad_arguments() {
        let ring = ring();
        let be = CpuBackend::new(ring.clone());
        let n = ring.n();
        assert!(matches!(
            be.upload_lifted(&vec![0; n - 1], 0),
            Err(crate::Error::ShapeMismatch { .. })
        ));
        assert!(matches!(
            be.upload_lifted_i64(&vec![0; n + 1], 0),
            Err(crate::Error::ShapeMismatch { .. })
        ));
        assert!(matches!(
            be.upload_lifted(&vec![0; n], ring.max_level() + 1),
            Err(crate::Error::InvalidLevel { .. })
        ));
        let ext = ring
            .zeros(Shape {
                components: 1,
                level: 0,
                extended: true,
            })
            .unwrap();
        assert!(matches!(
            be.download_centered_q0(&ext),
            Err(crate::Error::ShapeMismatch { .. })
        ));
    }

    // The default body against the big-integer CRT: `Some(x)` exactly when the centred value
    // `V` modulo `Q_l` lies in q_0's centred range, and then `x = V`.
    #[test]
    fn download_centered_q0_default_matches_crt() {
        let ring = ring();
        let be = CpuBackend::new(ring.clone());
        let n = ring.n();
        let half_q0 = (ring.modulus(0).value() - 1) / 2;
        // Lifted small values (some at q_0's bounds), large lifted values, uniform residues.
        let mut v: Vec<i128> = rand_poly(3, n, 1 << 50)
            .iter()
            .map(|&x| x as i128 - (1 << 49))
            .collect();
        v[..4].copy_from_slice(&[
            half_q0 as i128,
            -(half_q0 as i128),
            half_q0 as i128 + 1,
            -(half_q0 as i128) - 1,
        ]);
        for x in v[n / 2..].iter_mut() {
            *x <<= 40;
        }
        for level in 0..=ring.max_level() {
            let basis = RnsBasis::new(ring.moduli()[..=level].to_vec()).unwrap();
            let lifted = be.upload_lifted(&v, level).unwrap();
            let uniform = be
                .sample_uniform(
                    &Seed([9; 32]),
                    Domain::Other,
                    0,
                    Shape {
                        components: 2,
                        level,
                        extended: false,
                    },
                )
                .unwrap();
            for p in [&lifted, &uniform] {
                let got = be.download_centered_q0(p).unwrap();
                let mut somes = 0;
                for (k, g) in got.iter().enumerate() {
                    let res: Vec<u64> = (0..=level).map(|s| p.limb(0, s)[k]).collect();
                    let value = basis.reconstruct_centered(&res);
                    let want = i64::try_from(&value)
                        .ok()
                        .filter(|x| x.unsigned_abs() <= half_q0);
                    assert_eq!(*g, want, "level {level} coeff {k}: value {value}");
                    assert!(level > 0 || g.is_some(), "level 0: every value is small");
                    somes += g.is_some() as usize;
                }
                if std::ptr::eq(p, &lifted) && level > 0 {
                    // The first half is small (except the two just outside q_0's range), the
                    // second half (shifted by 2^40) is not.
                    assert_eq!(somes, n / 2 - 2, "level {level}: small values");
                }
            }
        }
    }

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
