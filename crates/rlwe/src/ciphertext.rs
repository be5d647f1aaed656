//! [`Ciphertext`] and [`Plaintext`]: backend buffers with the metadata every operation checks.

use fhe_math::backend::RingBackend;
use fhe_math::ring::RingContext;
use fhe_math::sampler::Seed;

use crate::error::ScaleError;

/// Relative tolerance on scale comparisons: only f64 round-off (2^-40).
pub const SCALE_TOLERANCE: f64 = 1.0 / (1u64 << 40) as f64;

/// `log2 Q_l`, the bits of the modulus `q_0·…·q_level` of `ring` (`level` clamped to the top).
pub fn log2_modulus(ring: &RingContext, level: usize) -> f64 {
    (0..=level.min(ring.max_level()))
        .map(|s| (ring.modulus(s).value() as f64).log2())
        .sum()
}

/// Checks that `scale` can be carried at `level` of `ring`: finite, at least 1 (up to
/// [`SCALE_TOLERANCE`]) and below `Q_level`. Integer schemes carry 1.0, which always passes.
pub fn check_scale(
    ring: &RingContext,
    level: usize,
    scale: f64,
) -> std::result::Result<(), ScaleError> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(ScaleError::NotFinite { scale });
    }
    if scale < 1.0 - SCALE_TOLERANCE {
        return Err(ScaleError::BelowOne { scale });
    }
    let log2_scale = scale.log2();
    // Cheap lower bound of log2 Q_l first (each q_s >= 2^floor(log2 q_s)).
    let floor_bits: u32 = (0..=level.min(ring.max_level()))
        .map(|s| 63 - ring.modulus(s).value().leading_zeros())
        .sum();
    if log2_scale < f64::from(floor_bits) {
        return Ok(());
    }
    let log2_modulus = log2_modulus(ring, level);
    if log2_scale >= log2_modulus {
        return Err(ScaleError::ExceedsModulus {
            log2_scale,
            level,
            log2_modulus,
        });
    }
    Ok(())
}

/// Metadata carried by every ciphertext and plaintext.
///
/// A plain value: building one checks nothing. [`Ciphertext`] and [`Plaintext`] check it
/// against their buffer whenever one is built or changed, so the metadata of an object always
/// agrees with its data.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Meta {
    // Field order is the serialized layout (level u64, scale f64, ntt u8, fingerprint u64).
    pub(crate) level: usize,
    pub(crate) scale: f64,
    pub(crate) ntt: bool,
    pub(crate) fingerprint: u64,
}

impl Meta {
    /// Metadata of a buffer at `level` with `scale` (CKKS `Δ`; 1.0 for the integer schemes),
    /// in NTT form when `ntt`, made under the parameters with `fingerprint`.
    pub const fn new(level: usize, scale: f64, ntt: bool, fingerprint: u64) -> Self {
        Meta {
            level,
            scale,
            ntt,
            fingerprint,
        }
    }

    /// Level `l`: the buffer uses `q_0..q_l`.
    pub const fn level(&self) -> usize {
        self.level
    }

    /// Scale (CKKS `Δ`; 1.0 for integer schemes).
    pub const fn scale(&self) -> f64 {
        self.scale
    }

    /// Whether the buffer is in NTT (evaluation) form.
    pub const fn is_ntt(&self) -> bool {
        self.ntt
    }

    /// Fingerprint of the parameters it was made under.
    pub const fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The same metadata at another level.
    pub const fn with_level(self, level: usize) -> Self {
        Meta { level, ..self }
    }

    /// The same metadata with another scale.
    pub const fn with_scale(self, scale: f64) -> Self {
        Meta { scale, ..self }
    }

    /// The same metadata in the other form flag.
    pub const fn with_ntt(self, ntt: bool) -> Self {
        Meta { ntt, ..self }
    }
}

/// Checks `meta` against a buffer of `shape` (`components` allowed) in `ring`: level within
/// the chain and equal to the buffer's, not extended, the component count, and the scale
/// ([`check_scale`]). `op` names the operation in the error.
fn check_buffer(
    ring: &RingContext,
    op: &'static str,
    shape: fhe_math::poly::Shape,
    meta: &Meta,
    components: std::ops::RangeInclusive<usize>,
) -> crate::Result<()> {
    let invalid = |reason: String| crate::Error::InvalidOperand { op, reason };
    if meta.level > ring.max_level() {
        return Err(invalid(format!(
            "level {} is above the maximum level {}",
            meta.level,
            ring.max_level()
        )));
    }
    if shape.extended || shape.level != meta.level {
        return Err(invalid(format!(
            "the buffer (level {}, extended {}) disagrees with the metadata level {}",
            shape.level, shape.extended, meta.level
        )));
    }
    if !components.contains(&shape.components) {
        return Err(invalid(format!(
            "{} components, expected {components:?}",
            shape.components
        )));
    }
    check_scale(ring, meta.level, meta.scale).map_err(|e| invalid(e.to_string()))
}

/// Runs `f` on `poly` and checks the result against `new`; when the buffer does not agree
/// with `new` (whatever `f` returned), `meta` stays, the buffer is replaced by zeros of its
/// former shape if it no longer agrees with `meta` either, and the error is returned. Shared by
/// [`Ciphertext::modify`] and [`Plaintext::modify`].
#[allow(clippy::too_many_arguments)]
fn modify_checked<B: RingBackend, E: Into<crate::Error>>(
    backend: &B,
    op: &'static str,
    poly: &mut B::Poly,
    meta: &mut Meta,
    new: Meta,
    components: std::ops::RangeInclusive<usize>,
    f: impl FnOnce(&mut B::Poly) -> std::result::Result<(), E>,
) -> crate::Result<()> {
    crate::error::check_same(op, new.fingerprint, meta.fingerprint)?;
    if new.ntt != meta.ntt {
        return Err(crate::Error::InvalidOperand {
            op,
            reason: "the NTT flag changes only with set_form".into(),
        });
    }
    let ring = backend.ring();
    // Metadata errors first: nothing has changed yet.
    check_scale(ring, new.level, new.scale).map_err(|e| crate::Error::InvalidOperand {
        op,
        reason: e.to_string(),
    })?;
    let before = backend.shape(poly);
    let result = f(poly);
    let after = backend.shape(poly);
    match check_buffer(ring, op, after, &new, components.clone()) {
        Ok(()) => {
            *meta = new;
            result.map_err(Into::into)
        }
        Err(e) => {
            // The old metadata stays; a buffer that no longer fits it either is reset.
            if check_buffer(ring, op, after, meta, components).is_err() {
                *poly = backend.zeros(before)?;
            }
            Err(result.err().map_or(e, Into::into))
        }
    }
}

/// The accessors and checked changes shared by [`Ciphertext`] and [`Plaintext`] (fields `poly`
/// and `meta`): `$what` names the buffer's content in the docs, `$op` the change in errors,
/// `$components` the component counts allowed, and `$on_change` runs before any change (a
/// ciphertext drops its seed there).
macro_rules! buffer_methods {
    ($what:literal, $op:literal, $components:expr, $on_change:expr) => {
        #[doc = concat!("The ", $what, " on the backend.")]
        pub fn poly(&self) -> &B::Poly {
            &self.poly
        }

        /// The metadata.
        pub fn meta(&self) -> Meta {
            self.meta
        }

        /// The level `l` (limbs `q_0..q_l`).
        pub fn level(&self) -> usize {
            self.meta.level
        }

        /// The scale (CKKS `Δ`; 1.0 for integer schemes).
        pub fn scale(&self) -> f64 {
            self.meta.scale
        }

        #[doc = concat!("Whether the ", $what, " are in NTT form.")]
        pub fn is_ntt(&self) -> bool {
            self.meta.ntt
        }

        /// The fingerprint of the parameters it was made under.
        pub fn fingerprint(&self) -> u64 {
            self.meta.fingerprint
        }

        /// The buffer and the metadata.
        pub fn into_parts(self) -> (B::Poly, Meta) {
            (self.poly, self.meta)
        }

        /// Changes the buffer with `f` and the metadata to `meta` (same fingerprint and form),
        /// then checks them as `new` does. When they disagree, the metadata is kept (and a
        /// buffer that no longer fits it is reset to zeros of its former shape), so the object
        /// stays consistent. A ciphertext's seed is cleared.
        pub fn modify<E: Into<crate::Error>>(
            &mut self,
            backend: &B,
            meta: Meta,
            f: impl FnOnce(&mut B::Poly) -> std::result::Result<(), E>,
        ) -> crate::Result<()> {
            ($on_change)(&mut *self);
            let (poly, old) = (&mut self.poly, &mut self.meta);
            modify_checked(backend, $op, poly, old, meta, $components, f)
        }

        #[doc = concat!("Brings the ", $what, " to NTT form (`ntt`) or coefficient form, ")]
        /// transforming the data and the flag together (nothing to do when already there).
        pub fn set_form(&mut self, backend: &B, ntt: bool) -> crate::Result<()> {
            if self.meta.ntt != ntt {
                ($on_change)(&mut *self);
                set_form(backend, &mut self.poly, &mut self.meta, ntt)?;
            }
            Ok(())
        }
    };
}

/// An RLWE ciphertext `(c_0, c_1[, c_2])` with `c_0 + c_1·s (+ c_2·s²) ≈ m`.
///
/// Its fields are private: [`Ciphertext::new`] checks the metadata against the buffer, and the
/// only ways to change either ([`Ciphertext::modify`], [`Ciphertext::set_form`]) check again,
/// so the level, form and scale always describe the data.
pub struct Ciphertext<B: RingBackend> {
    pub(crate) poly: B::Poly,
    pub(crate) meta: Meta,
    /// For a fresh secret-key ciphertext: the seed `c_1` was expanded from (serialized instead
    /// of `c_1`). Cleared by any change.
    pub(crate) seed: Option<Seed>,
}

impl<B: RingBackend> Ciphertext<B> {
    /// A ciphertext of the buffer `poly` (2 or 3 components) described by `meta`: an error
    /// unless the buffer is at `meta`'s level (not extended) and the scale can be carried there
    /// ([`check_scale`]). `meta.is_ntt()` must tell the form the data is in.
    pub fn new(backend: &B, poly: B::Poly, meta: Meta) -> crate::Result<Self> {
        check_buffer(
            backend.ring(),
            "build a ciphertext",
            backend.shape(&poly),
            &meta,
            2..=3,
        )?;
        Ok(Ciphertext {
            poly,
            meta,
            seed: None,
        })
    }

    /// A fresh secret-key ciphertext of 2 components whose `c_1` is expanded from `seed`
    /// ([`crate::encrypt::expand_seeded_c1`], overwriting component 1 of `poly`), so that the
    /// seed always describes `c_1`; checked as [`Ciphertext::new`] (NTT form required).
    pub fn with_seeded_c1(
        backend: &B,
        mut poly: B::Poly,
        meta: Meta,
        seed: Seed,
    ) -> crate::Result<Self> {
        check_buffer(
            backend.ring(),
            "build a seeded ciphertext",
            backend.shape(&poly),
            &meta,
            2..=2,
        )?;
        if !meta.ntt {
            return Err(crate::Error::InvalidOperand {
                op: "build a seeded ciphertext",
                reason: "a seeded ciphertext is in NTT form".into(),
            });
        }
        let c1 = crate::encrypt::expand_seeded_c1(backend, &seed, meta.level)?;
        backend.copy_component(&c1, 0, &mut poly, 1)?;
        Ok(Ciphertext {
            poly,
            meta,
            seed: Some(seed),
        })
    }

    buffer_methods!(
        "components",
        "change a ciphertext",
        2..=3,
        |c: &mut Self| { c.seed = None }
    );

    /// For a fresh secret-key ciphertext, the seed `c_1` was expanded from.
    pub fn seed(&self) -> Option<&Seed> {
        self.seed.as_ref()
    }

    /// Number of components (2, or 3 before relinearization).
    pub fn components(&self, backend: &B) -> usize {
        backend.shape(&self.poly).components
    }

    /// A copy on the same backend.
    pub fn duplicate(&self, backend: &B) -> fhe_math::Result<Self> {
        Ok(Ciphertext {
            poly: backend.duplicate(&self.poly)?,
            meta: self.meta,
            seed: self.seed.clone(),
        })
    }
}

/// Transforms `poly` to the form `ntt` and records it in `meta`.
fn set_form<B: RingBackend>(
    backend: &B,
    poly: &mut B::Poly,
    meta: &mut Meta,
    ntt: bool,
) -> fhe_math::Result<()> {
    match ntt {
        true => backend.ntt(poly)?,
        false => backend.intt(poly)?,
    }
    meta.ntt = ntt;
    Ok(())
}

/// A plaintext polynomial (one component) on the backend.
///
/// Its fields are private, checked as [`Ciphertext`]'s are.
pub struct Plaintext<B: RingBackend> {
    pub(crate) poly: B::Poly,
    pub(crate) meta: Meta,
}

impl<B: RingBackend> Plaintext<B> {
    /// A plaintext of the one-component buffer `poly` described by `meta` (checked as
    /// [`Ciphertext::new`] checks).
    pub fn new(backend: &B, poly: B::Poly, meta: Meta) -> crate::Result<Self> {
        check_buffer(
            backend.ring(),
            "build a plaintext",
            backend.shape(&poly),
            &meta,
            1..=1,
        )?;
        Ok(Plaintext { poly, meta })
    }

    buffer_methods!(
        "coefficients",
        "change a plaintext",
        1..=1,
        |_: &mut Self| {}
    );

    /// A copy on the same backend.
    pub fn duplicate(&self, backend: &B) -> fhe_math::Result<Self> {
        Ok(Plaintext {
            poly: backend.duplicate(&self.poly)?,
            meta: self.meta,
        })
    }
}

/// `a ± b` in place for ciphertext buffers of 2 or 3 components at `a`'s level: when `b` has
/// more components, `a` grows (zero components added); when fewer, only `b`'s are combined.
/// Shared by every scheme's addition and subtraction.
pub fn combine_components<B: RingBackend>(
    backend: &B,
    a: &mut B::Poly,
    b: &B::Poly,
    subtract: bool,
) -> fhe_math::Result<()> {
    let (sa, sb) = (backend.shape(a), backend.shape(b));
    if sb.components > sa.components {
        let mut grown = backend.zeros(fhe_math::poly::Shape {
            components: sb.components,
            ..sa
        })?;
        for c in 0..sa.components {
            backend.copy_component(a, c, &mut grown, c)?;
        }
        *a = grown;
    }
    if sb.components == backend.shape(a).components {
        return if subtract {
            backend.sub_assign(a, b)
        } else {
            backend.add_assign(a, b)
        };
    }
    backend.combine_leading_assign(a, b, subtract)
}

/// `a ± b` as a new buffer ([`combine_components`] on a copy of `a`): one pass through
/// [`Backend::add_new`] when both have the same number of components.
pub fn combined_components<B: RingBackend>(
    backend: &B,
    a: &B::Poly,
    b: &B::Poly,
    subtract: bool,
) -> fhe_math::Result<B::Poly> {
    if backend.shape(a).components == backend.shape(b).components {
        return backend.add_new(a, b, subtract);
    }
    let mut out = backend.duplicate(a)?;
    combine_components(backend, &mut out, b, subtract)?;
    Ok(out)
}

/// Checks that both operands of a product have 2 components: [`crate::Error::InvalidOperand`]
/// for `op` otherwise (relinearize first). Shared by every scheme's multiplication.
pub fn check_two_components<B: RingBackend>(
    backend: &B,
    op: &'static str,
    a: &B::Poly,
    b: &B::Poly,
) -> crate::Result<()> {
    if backend.shape(a).components != 2 || backend.shape(b).components != 2 {
        return Err(crate::Error::InvalidOperand {
            op,
            reason: "operands must have 2 components (relinearize first)".into(),
        });
    }
    Ok(())
}

/// The integer `c` reduced modulo each of `q_0..q_level` of `ring`: the scalars that multiply
/// (or add to) a buffer at `level` by the constant `c`.
pub fn scalar_residues(ring: &RingContext, level: usize, c: i64) -> Vec<u64> {
    (0..=level).map(|s| ring.modulus(s).reduce_i64(c)).collect()
}
