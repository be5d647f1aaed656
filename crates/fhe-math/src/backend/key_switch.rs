//! [`KeySwitchBackend`]: key switching split so that it can be hoisted and fused.
//!
//! - [`KeySwitchBackend::mod_up`]: decompose one component into its digits and raise each to
//!   `Q_l·P`;
//! - [`KeySwitchBackend::key_product`]: `acc += Σ_j σ_g(ext_j) · key_j` (optional automorphism
//!   folded in);
//! - [`KeySwitchBackend::mod_down_into`]: `out += ⌊acc / P⌉` over `Q_l`, optionally followed by
//!   a rescale.
//!
//! The composites ([`KeySwitchBackend::key_switch`], [`KeySwitchBackend::relinearize`],
//! [`KeySwitchBackend::mul_relin`], [`KeySwitchBackend::rotate_hoisted`]) have default bodies
//! built from the parts; a backend may override them with fused kernels but must keep the
//! results bit-identical.

use super::RingBackend;
use crate::error::Result;
use crate::poly::Shape;

/// Key switching over the ring of a [`RingBackend`]: the parts and the composites built on them.
pub trait KeySwitchBackend: RingBackend {
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
    /// `out` by its top prime (the same bits as calling [`RingBackend::rescale`] afterwards).
    fn mod_down_into(&self, acc: &Self::Poly, out: &mut Self::Poly, rescale: bool) -> Result<()>;

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

    /// Multiply, relinearize and optionally rescale two 2-component ciphertexts in NTT form:
    /// [`RingBackend::tensor`], then [`KeySwitchBackend::relinearize`]. A backend may fuse the
    /// product into the key switch of its third component (with the same result).
    fn mul_relin(
        &self,
        a: &Self::Poly,
        b: &Self::Poly,
        relin_key: &Self::Poly,
        rescale: bool,
    ) -> Result<Self::Poly> {
        let c = self.tensor(a, b)?;
        self.relinearize(c, relin_key, rescale)
    }

    /// Relinearizes a 3-component ciphertext (NTT form), optionally rescaling: the key switch
    /// of `c_2` ([`KeySwitchBackend::mod_up`], [`KeySwitchBackend::key_product`],
    /// [`KeySwitchBackend::mod_down_into`]) added to `(c_0, c_1)`.
    fn relinearize(
        &self,
        c: Self::Poly,
        relin_key: &Self::Poly,
        rescale: bool,
    ) -> Result<Self::Poly> {
        relinearize_with(self, c, relin_key, |acc, out| {
            self.mod_down_into(acc, out, rescale)
        })
    }

    /// Rotations of one ciphertext by several Galois elements sharing one `mod_up` (hoisting):
    /// for each `(g, key_g)`, `(σ_g(c0), 0) + ⌊Σ_j σ_g(ext_j)·key_g,j / P⌉`.
    fn rotate_hoisted(
        &self,
        c: &Self::Poly,
        keys: &[(u64, &Self::Poly)],
    ) -> Result<Vec<Self::Poly>> {
        rotate_hoisted_with(self, c, keys, |acc, out| {
            self.mod_down_into(acc, out, false)
        })
    }
}

/// The relinearization of a 3-component `c` with the key switch of `c_2` finished by `finish`
/// (`finish(acc, out)` adds `⌊acc / P⌉` to `out`, however the caller's variant does it).
pub(super) fn relinearize_with<B: KeySwitchBackend>(
    be: &B,
    mut c: B::Poly,
    relin_key: &B::Poly,
    finish: impl FnOnce(&mut B::Poly, &mut B::Poly) -> Result<()>,
) -> Result<B::Poly> {
    let level = be.shape(&c).level;
    let ext = be.mod_up(&c, 2)?;
    let mut acc = be.zeros(Shape {
        components: 2,
        level,
        extended: true,
    })?;
    be.key_product(&ext, relin_key, None, &mut acc)?;
    be.truncate_components(&mut c, 2)?;
    finish(&mut acc, &mut c)?;
    Ok(c)
}

/// Hoisted rotations of `c` sharing one `mod_up`, each key switch finished by `finish` (as in
/// [`relinearize_with`]) onto `(σ_g(c_0), 0)`.
pub(super) fn rotate_hoisted_with<B: KeySwitchBackend>(
    be: &B,
    c: &B::Poly,
    keys: &[(u64, &B::Poly)],
    finish: impl Fn(&mut B::Poly, &mut B::Poly) -> Result<()>,
) -> Result<Vec<B::Poly>> {
    let level = be.shape(c).level;
    let ext = be.mod_up(c, 1)?;
    keys.iter()
        .map(|&(g, key)| {
            let mut acc = be.zeros(Shape {
                components: 2,
                level,
                extended: true,
            })?;
            be.key_product(&ext, key, Some(g), &mut acc)?;
            let mut out = be.zeros(Shape {
                components: 2,
                level,
                extended: false,
            })?;
            be.automorphism_into(c, g, &mut out, 1)?;
            finish(&mut acc, &mut out)?;
            Ok(out)
        })
        .collect()
}
