//! The comparisons, delegated to the `compare` crate (interim: until it lands, no words are
//! encrypted and every comparison is refused).

use crate::error::{Error, Result};
use crate::keys::ServerKeys;
use crate::query::CmpOp;
use bgv::{Ciphertext, Context, Evaluator};
use fhe_math::backend::IntegerBackend;
use rlwe::SecretKey;

/// A column (or a replicated constant) in the comparison layout.
pub struct Words<B: IntegerBackend>(Vec<Ciphertext<B>>);

impl<B: IntegerBackend> Words<B> {
    /// The ciphertexts.
    pub fn ciphertexts(&self) -> &[Ciphertext<B>] {
        &self.0
    }

    /// Rebuilds from ciphertexts, checking their number.
    pub fn from_ciphertexts(_ctx: &Context<B>, cts: Vec<Ciphertext<B>>) -> Result<Self> {
        Ok(Words(cts))
    }
}

/// Levels one comparison consumes.
pub fn depth<B: IntegerBackend>(_ctx: &Context<B>) -> usize {
    0
}

/// Galois elements the comparisons need.
pub fn galois_elements<B: IntegerBackend>(_eval: &Evaluator<B>) -> Result<Vec<u64>> {
    Ok(Vec::new())
}

/// Encrypts `values` (row `r` → its slots) as words.
pub fn encrypt_words<B: IntegerBackend>(
    _ctx: &Context<B>,
    _sk: &SecretKey<B>,
    _values: &[u64],
) -> Result<Words<B>> {
    Ok(Words(Vec::new()))
}

/// The 0/1 mask of `a op b`, row `r` in slot `r`.
pub fn compare<B: IntegerBackend>(
    _eval: &Evaluator<B>,
    _keys: &ServerKeys<B>,
    op: CmpOp,
    _a: &Words<B>,
    _b: &Words<B>,
) -> Result<Ciphertext<B>> {
    Err(Error::Unsupported(format!(
        "comparison `{}`: the compare crate is not merged yet",
        op.sql()
    )))
}
