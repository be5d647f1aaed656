//! [`Ciphertext`] and [`Plaintext`]: backend buffers with the metadata every operation checks.

use fhe_math::backend::Backend;
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
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Meta {
    /// Level `l`: the buffer uses `q_0..q_l`.
    pub level: usize,
    /// Scale (CKKS `Δ`; 1.0 for integer schemes).
    pub scale: f64,
    /// Whether the buffer is in NTT (evaluation) form.
    pub ntt: bool,
    /// Fingerprint of the parameters it was made under.
    pub fingerprint: u64,
}

/// An RLWE ciphertext `(c_0, c_1[, c_2])` with `c_0 + c_1·s (+ c_2·s²) ≈ m`.
pub struct Ciphertext<B: Backend> {
    /// The components on the backend.
    pub poly: B::Poly,
    /// Metadata.
    pub meta: Meta,
    /// For a fresh secret-key ciphertext: the seed `c_1` was expanded from (serialized instead of
    /// `c_1`). Cleared by any operation.
    pub seed: Option<Seed>,
}

impl<B: Backend> Ciphertext<B> {
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

/// A plaintext polynomial (one component) on the backend.
pub struct Plaintext<B: Backend> {
    /// The polynomial.
    pub poly: B::Poly,
    /// Metadata.
    pub meta: Meta,
}

impl<B: Backend> Plaintext<B> {
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
pub fn combine_components<B: Backend>(
    backend: &B,
    a: &mut B::Poly,
    b: &B::Poly,
    subtract: bool,
) -> fhe_math::Result<()> {
    let (sa, sb) = (backend.shape(a), backend.shape(b));
    let one = fhe_math::poly::Shape {
        components: 1,
        level: sa.level,
        extended: false,
    };
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
    for c in 0..sb.components {
        let mut t = backend.zeros(one)?;
        backend.copy_component(b, c, &mut t, 0)?;
        if subtract {
            backend.neg_assign(&mut t)?;
        }
        backend.add_component_assign(a, c, &t)?;
    }
    Ok(())
}

/// `a ± b` as a new buffer ([`combine_components`] on a copy of `a`): one pass through
/// [`Backend::add_new`] when both have the same number of components.
pub fn combined_components<B: Backend>(
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
pub fn check_two_components<B: Backend>(
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
