//! The CKKS scheme: approximate arithmetic on encrypted complex vectors, generic over the
//! backend.

pub mod error;
pub mod params;

pub use error::{Error, Result};
pub use params::{Parameters, ParametersLiteral, Security};
