//! The CKKS scheme: approximate arithmetic on encrypted complex vectors, generic over the
//! backend.
//!
//! Besides the evaluator's operators: polynomial evaluation ([`poly_eval`]), sums over slots
//! ([`slots`]), linear transforms given by diagonals ([`linear_transform`], BSGS with hoisted
//! baby steps) and bootstrapping ([`bootstrap`]: ModRaise, CoeffToSlot, EvalMod, SlotToCoeff,
//! full and sparse slots, sparse-secret encapsulation), all written once over the backend.

pub mod bootstrap;
pub mod context;
pub mod encoder;
pub mod error;
pub mod evaluator;
pub mod linear_transform;
pub mod params;
pub mod poly_eval;
pub mod precision;
pub mod serialize;
pub mod slots;

pub use bootstrap::{BootstrapConfig, Bootstrapper};
pub use context::Context;
pub use encoder::Encoder;
pub use error::{Error, Result};
pub use evaluator::Evaluator;
pub use linear_transform::LinearTransform;
pub use params::{ApplicationPrimes, Parameters, ParametersLiteral, Security};
pub use poly_eval::{Basis, PolyPlan, Polynomial};
