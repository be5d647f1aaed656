//! The BFV scheme: exact arithmetic on encrypted integers modulo `t` (SIMD slots when `t` is a
//! prime `≡ 1 mod 2N`), generic over the backend, reusing `bgv`'s parameters, encodings,
//! plaintexts, ciphertext container (with its serialization) and noise terms.
//!
//! BFV invariant: `[c_0 + c_1·s]_Q = Δ·m + e` with `Δ = ⌊Q/t⌋` and `m` the **centred** message
//! (coefficients in `(-t/2, t/2]`). Ciphertexts stay at the top level `L` (all of `Q`).
//!
//! - Encryption: the plaintext (centred `m` lifted mod every `q_i`, as `bgv` encodes it) is
//!   multiplied by the scalars `[Δ]_{q_i}`, keys and errors have factor 1.
//! - Multiplication: [`fhe_math::Backend::tensor_scale_round`], the tensor over `Q ∪ B`
//!   followed by an integer-only HPS-style scale-and-round (see [`fhe_math::scale_round`]):
//!   every backend gives the same bits.
//! - Relinearization and rotations: plain [`rlwe::keyswitch`] (no mod-`t` correction).
//! - Noise ([`noise`]): the tracked quantity is the SEAL-style invariant noise numerator
//!   `ν = [t·(c_0 + c_1·s)]_Q = t·e - (Q mod t)·m`; decryption is correct while
//!   `‖ν‖_∞ < Q/2`, so `bgv`'s capacity `log2(Q/2)` applies unchanged.
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
pub use bgv::testing;
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
