//! `select`, `min` and `max` of encrypted words: a comparison result broadcast over each
//! block multiplies the digit differences, `select(c, a, b) = b + c·(a - b)` digit by digit
//! (one level after the condition; digits stay in `[0, s)`).

use crate::comparator::Comparator;
use crate::error::{Error, Result};
use crate::vectors::{EncryptedBits, EncryptedWords};
use fhe_math::backend::IntegerBackend;
use rayon::prelude::*;

impl<B: IntegerBackend> Comparator<B> {
    /// `c_j ? a_j : b_j` word by word, for a 0/1 condition in the result layout (a comparison
    /// result): one level below the lowest input. Errors: different lengths
    /// ([`Error::Mismatch`]), and the BGV errors.
    pub fn select(
        &self,
        c: &EncryptedBits<B>,
        a: &EncryptedWords<B>,
        b: &EncryptedWords<B>,
    ) -> Result<EncryptedWords<B>> {
        if c.len != a.len || a.len != b.len {
            return Err(Error::Mismatch {
                op: "select",
                reason: format!("{} conditions for {} and {} words", c.len, a.len, b.len),
            });
        }
        let ev = self.evaluator();
        let rlk = &self.keys().relin;
        let wide = self.broadcast(c)?;
        let cts = wide
            .par_iter()
            .zip(a.cts.par_iter().zip(&b.cts))
            .map(|(c, (x, y))| {
                let d = ev.sub(x, y)?;
                Ok(ev.add(y, &ev.mul_relin(c, &d, rlk)?)?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(EncryptedWords {
            cts,
            len: a.len,
            clean: b.clean,
        })
    }

    /// `min(a_j, b_j)`: `select(a < b, a, b)` ([`Comparator::levels`] of `<` plus one).
    pub fn min(&self, a: &EncryptedWords<B>, b: &EncryptedWords<B>) -> Result<EncryptedWords<B>> {
        self.select(&self.lt(a, b)?, a, b)
    }

    /// `max(a_j, b_j)`: `select(a < b, b, a)`.
    pub fn max(&self, a: &EncryptedWords<B>, b: &EncryptedWords<B>) -> Result<EncryptedWords<B>> {
        self.select(&self.lt(a, b)?, b, a)
    }
}
