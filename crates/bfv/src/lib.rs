//! The BFV scheme: exact arithmetic on encrypted integers modulo `t` (SIMD slots when `t` is a
//! prime `≡ 1 mod 2N`), generic over the backend, reusing `bgv`'s parameters, encodings,
//! plaintexts, ciphertext container (with its serialization) and noise terms.
//!
//! BFV invariant at level `l`: `[c_0 + c_1·s]_{Q_l} = Δ_l·m + e` with `Q_l = q_0···q_l`,
//! `Δ_l = ⌊Q_l/t⌋` and `m` the **centred** message (coefficients in `(-t/2, t/2]`).
//! Ciphertexts start at their plaintext's level (usually the top level `L`) and go down with
//! [`Evaluator::mod_switch`] (SEAL's `mod_switch_to_next`: rounding division by the top prime,
//! [`fhe_math::Backend::rescale`]); every operator works at any level, binary operators need
//! both operands at one level ([`Evaluator::align`] brings them there).
//!
//! - Encryption: the plaintext (centred `m` lifted mod `q_0..q_l`, as `bgv` encodes it) is
//!   multiplied by the scalars `[Δ_l]_{q_i}`, keys and errors have factor 1.
//! - Multiplication: [`fhe_math::Backend::tensor_scale_round_coeff`], the tensor over
//!   `Q_l ∪ B` followed by an integer-only HPS-style scale-and-round (see
//!   [`fhe_math::scale_round`]) with the tables of level `l` (built on first use, cached in the
//!   [`Context`]): every backend gives the same bits. The unrelinearized product stays in
//!   coefficient form, where the scale-and-round ends; every other ciphertext is in NTT form,
//!   and every operator takes either ([`evaluator`], "Forms").
//! - Relinearization and rotations: plain [`rlwe::keyswitch`] at the ciphertext's level (no
//!   mod-`t` correction).
//! - Modulus switching: `c'_i = (c_i - [c_i]_{q_l})·q_l^{-1}`; exactly
//!   `ν' = [(ν - t·δ(s))/q_l]_{Q_{l-1}}` with `δ_i = [c_i]_{q_l}`, so the noise numerator
//!   shrinks by `q_l` plus a rounding term ([`noise`]); the message is unchanged (no factor).
//! - Noise ([`noise`]): the tracked quantity is the SEAL-style invariant noise numerator
//!   `ν = [t·(c_0 + c_1·s)]_{Q_l} = t·e - (Q_l mod t)·m`; decryption is correct while
//!   `‖ν‖_∞ < Q_l/2`, so `bgv`'s capacity `log2(Q_l/2)` applies unchanged.
//!
//! [`Ciphertext`] and [`Plaintext`] are `bgv`'s types (the factor of a BFV ciphertext is
//! always 1); the parameter fingerprint carries the tag [`BFV_TAG`], so BFV and BGV objects
//! never mix.

pub mod context;
pub mod decryptor;
pub mod evaluator;
pub mod noise;

pub use bgv::encoding::{PlainModulus, PrimeFieldSlots, SlotStructure};
pub use bgv::params::{ParametersLiteral, Security};
pub use bgv::{Ciphertext, Encoder, Error, Parameters, Plaintext, Result, RowRotations};
pub use context::Context;
pub use decryptor::Decryptor;
pub use evaluator::Evaluator;

/// The fingerprint tag of BFV objects.
pub const BFV_TAG: [u8; 4] = *b"bfv\0";

/// BFV presets: the same chains as `bgv`'s (see `bgv::params` for primes, digits, log2 QP and
/// security margins), `t = 65537` except `CAT_COMPAT` (`t = 786433`, as CAT's benchmark).
pub mod params {
    pub use bgv::params::{CAT, CAT_COMPAT, N13, PHANTOM_INT, TEST_N11_INSECURE};
    use std::sync::Arc;

    /// Validates a literal into BFV parameters (fingerprint tagged [`crate::BFV_TAG`]).
    pub fn new(literal: &crate::ParametersLiteral) -> crate::Result<Arc<crate::Parameters>> {
        crate::Parameters::with_scheme_tag(literal, crate::BFV_TAG)
    }
}
