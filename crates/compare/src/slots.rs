//! The slot manager: compaction of sparse vectors into few ciphertexts before comparing, and
//! the way back.
//!
//! A comparison costs the same whether a ciphertext holds one word or `N/B`. Vectors that use
//! few blocks (each a single ciphertext, clean: [`crate::EncryptedWords`]) are placed first-fit
//! into the rows of as few ciphertexts as possible: a vector stays inside one row (rotations
//! cycle within rows), is moved by a row rotation right by its offset (composed from the
//! power-of-two keys of [`crate::CompareKeys::generate_with_sums`]) and, for the second row,
//! the row swap; the moved vectors are added (no level, the noise of the rotations). The
//! [`Packing`] records where each vector went: comparison results of the packed vector are
//! split back homomorphically ([`Comparator::unpack_bits`]: rotation and a plaintext mask) or
//! after decryption ([`Packing::split`]). The blocks between packed vectors compare as 0 with
//! 0 (meaningless values the packing skips).

use crate::comparator::Comparator;
use crate::error::{Error, Result};
use crate::vectors::{EncryptedBits, EncryptedWords};
use bgv::{Ciphertext, RowRotations};
use fhe_math::backend::IntegerBackend;

/// Where each input vector of [`Comparator::compact`] sits in the packed vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packing {
    /// `(ciphertext, first word index within it, length)` per input vector.
    places: Vec<(usize, usize, usize)>,
    /// Words per ciphertext.
    cap: usize,
}

impl Packing {
    /// Per input vector: the range of its words in the packed vector.
    pub fn ranges(&self) -> Vec<std::ops::Range<usize>> {
        self.places
            .iter()
            .map(|&(c, o, l)| c * self.cap + o..c * self.cap + o + l)
            .collect()
    }

    /// The values of a decrypted packed result split per input vector.
    pub fn split<T: Clone>(&self, values: &[T]) -> Vec<Vec<T>> {
        self.ranges()
            .into_iter()
            .map(|r| values[r].to_vec())
            .collect()
    }

    /// The number of ciphertexts of the packed vector.
    pub fn ciphertexts(&self) -> usize {
        self.places.iter().map(|p| p.0 + 1).max().unwrap_or(0)
    }
}

impl<B: IntegerBackend> Comparator<B> {
    /// `x` moved from word offset 0 of row 0 to word offset `o` (`o < N/B`): a row rotation
    /// right by `(o mod R)·B` slots, then the row swap when `o ≥ R` (`R = N/(2B)` words per
    /// row); `back` undoes it.
    fn move_words(&self, x: &Ciphertext<B>, o: usize, back: bool) -> Result<Ciphertext<B>> {
        let ev = self.evaluator();
        let gk = &self.keys().galois;
        let per_row = self.layout().words_per_ciphertext() / 2;
        let step = ((o % per_row) * self.layout().block()) as i64;
        let swap = o >= per_row;
        let mut y = x.duplicate(self.context().backend())?;
        if back && swap {
            y = ev.rotate_columns(&y, gk)?;
        }
        if step != 0 {
            y = ev.rotate_rows(&y, if back { step } else { -step }, gk)?;
        }
        if !back && swap {
            y = ev.rotate_columns(&y, gk)?;
        }
        Ok(y)
    }

    /// Packs vectors (each one clean ciphertext of at most `N/(2B)` words, one row) first-fit
    /// into the rows of as few ciphertexts as possible (module documentation).
    ///
    /// Errors: an empty list, a vector of several ciphertexts, longer than a row or not clean
    /// ([`Error::InvalidArgument`]).
    pub fn compact(&self, vectors: &[&EncryptedWords<B>]) -> Result<(EncryptedWords<B>, Packing)> {
        let op = "compact vectors";
        let cap = self.layout().words_per_ciphertext();
        let per_row = cap / 2;
        if vectors.is_empty() {
            return Err(Error::InvalidArgument {
                op,
                reason: "no vector".into(),
            });
        }
        if let Some(v) = vectors
            .iter()
            .find(|v| v.cts.len() != 1 || v.len > per_row || !v.clean)
        {
            return Err(Error::InvalidArgument {
                op,
                reason: format!(
                    "a vector of {} words in {} ciphertexts (clean: {}) is not one clean row of at most {per_row} words",
                    v.len,
                    v.cts.len(),
                    v.clean
                ),
            });
        }
        // First fit over the rows (row r of ciphertext r / 2), filled up to `used[r]`.
        let mut used: Vec<usize> = Vec::new();
        let mut places = Vec::with_capacity(vectors.len());
        for v in vectors {
            let r = match used.iter().position(|&u| u + v.len <= per_row) {
                Some(r) => r,
                None => {
                    used.push(0);
                    used.len() - 1
                }
            };
            places.push((r / 2, (r % 2) * per_row + used[r], v.len));
            used[r] += v.len;
        }
        let count = used.len().div_ceil(2);
        let ev = self.evaluator();
        let mut cts: Vec<Option<Ciphertext<B>>> = (0..count).map(|_| None).collect();
        for (v, &(c, o, _)) in vectors.iter().zip(&places) {
            let moved = self.move_words(&v.cts[0], o, false)?;
            cts[c] = Some(match cts[c].take() {
                Some(acc) => ev.add(&acc, &moved)?,
                None => moved,
            });
        }
        let last = places
            .iter()
            .filter(|p| p.0 == count - 1)
            .map(|p| p.1 + p.2)
            .max();
        let len = (count - 1) * cap + last.unwrap_or(0);
        let cts = cts
            .into_iter()
            .map(|c| c.expect("every ciphertext holds a vector"))
            .collect();
        Ok((
            EncryptedWords {
                cts,
                len,
                clean: true,
            },
            Packing { places, cap },
        ))
    }

    /// The results of each packed vector as its own [`EncryptedBits`]: moved back to offset 0
    /// and masked to its words (a plaintext product, no level).
    pub fn unpack_bits(
        &self,
        r: &EncryptedBits<B>,
        packing: &Packing,
    ) -> Result<Vec<EncryptedBits<B>>> {
        let ev = self.evaluator();
        packing
            .places
            .iter()
            .map(|&(c, o, len)| {
                let ct = r.cts.get(c).ok_or_else(|| Error::Mismatch {
                    op: "unpack results",
                    reason: format!(
                        "the packing needs ciphertext {c}, the results have {}",
                        r.cts.len()
                    ),
                })?;
                let back = self.move_words(ct, o, true)?;
                let slots = self.layout().encode_leads(&vec![1; len])?;
                let mask = ev.encoder().encode(&slots, back.level())?;
                Ok(EncryptedBits {
                    cts: vec![ev.mul_plain(&back, &mask)?],
                    len,
                })
            })
            .collect()
    }
}
