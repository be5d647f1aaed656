//! The backend traits: the operations a device must provide, at the granularity a GPU fuses.
//!
//! Scheme code (rlwe, ckks, ...) is written once, generic over a backend, and never sees a
//! device pointer. Every buffer crossing the traits holds canonical residues in `[0, q)`.
//! Operations are over whole buffers (all components, all active limbs) at once.
//!
//! The operations are split by concern, each trait in its own module:
//! - [`RingBackend`] (`ring.rs`): the buffer type, uploads and downloads, the ring's
//!   arithmetic (element-wise operations, NTTs, tensor, automorphisms, rescale, the fused
//!   [`RingBackend::linear_combination`]) and the samplers;
//! - [`KeySwitchBackend`] (`key_switch.rs`): `mod_up`, `key_product`, `mod_down_into` and the
//!   composites built from them (key switch, relinearization, multiply-and-relinearize,
//!   hoisted rotations);
//! - [`IntegerBackend`] (`integer.rs`): BGV's and BFV's extras, the plaintext modulus `t`
//!   (decoding into `Z_t`, `t`-preserving rescale and key switches, the scale-and-round
//!   tensor).
//!
//! [`Backend`] is the umbrella: every type implementing the three traits is a [`Backend`]
//! (blanket impl), so `B: Backend` code keeps working; code that needs less may bound less.
//! Composite operations have default bodies built from the parts; a backend may override them
//! with fused kernels but must keep the results bit-identical.
//!
//! Operations over other algebraic objects are their own traits declared beside these, not
//! more RLWE methods: batched blind rotation (LWE ciphertexts, RGSW keys, several rings and
//! moduli such as `2N`) is [`BlindRotateBackend`], with its own buffer types; the CPU backend
//! implements it, and so does the CUDA backend. Blind rotation over an RNS ring at a full
//! modulus (CKKS bootstrapping by blind rotation) is [`RnsBlindRotateBackend`], over the
//! ring's own buffers; its default body is the reference, which the CPU backend uses.

mod integer;
mod key_switch;
mod ring;

pub use integer::{
    IntegerBackend, check_decoder, check_plain_ntt, check_residues_mod_t, decode_mod_t_host,
    noise_max_log2, scalars_for, t_constants,
};
pub mod blind_rotate;
pub use blind_rotate::BlindRotateBackend;
pub mod rns_blind_rotate;
pub use key_switch::KeySwitchBackend;
pub use ring::{
    RingBackend, active_slot_count, centered_q0_host, check_lift_args, check_linear_combination,
    combine_leading_default, linear_combination_default,
};
pub use rns_blind_rotate::RnsBlindRotateBackend;

/// The backend traits at once, for code that calls their methods on a concrete backend type
/// (`use fhe_math::backend::prelude::*;`): a trait's methods are in scope only where the trait
/// is, and generic code bounded by [`Backend`] needs no import.
pub mod prelude {
    pub use super::{Backend, IntegerBackend, KeySwitchBackend, RingBackend};
}

/// A complete backend: ring arithmetic, key switching and the integer schemes' extras.
///
/// Implemented for every type implementing the three traits; implement those, not this.
pub trait Backend: RingBackend + KeySwitchBackend + IntegerBackend {}

impl<B: RingBackend + KeySwitchBackend + IntegerBackend> Backend for B {}
