//! Using comparison results: logic on [`EncryptedBits`], a result broadcast over its block,
//! multiplied with values held in the lead slots, and summed over all words.
//!
//! Every [`EncryptedBits`] keeps the result layout (0/1 in the lead slots, 0 elsewhere), so a
//! sum over all slots is a sum over the words: `Σ_j bit_j·v_j` is
//! `sum_bits(mul_leads_plain(bits, v))`.

use crate::comparator::Comparator;
use crate::error::{Error, Result};
use crate::vectors::EncryptedBits;
use bgv::{Ciphertext, RowRotations};
use fhe_math::backend::IntegerBackend;
use rayon::prelude::*;

impl<B: IntegerBackend> Comparator<B> {
    fn same_len(&self, op: &'static str, a: &EncryptedBits<B>, b: &EncryptedBits<B>) -> Result<()> {
        if a.len != b.len {
            return Err(Error::Mismatch {
                op,
                reason: format!("{} and {} values", a.len, b.len),
            });
        }
        Ok(())
    }

    /// Words in ciphertext `i` of a vector of `len` values.
    pub(crate) fn count_in(&self, len: usize, i: usize) -> usize {
        let cap = self.layout().words_per_ciphertext();
        cap.min(len - i * cap)
    }

    /// `a ∧ b = a·b` (one level).
    pub fn and(&self, a: &EncryptedBits<B>, b: &EncryptedBits<B>) -> Result<EncryptedBits<B>> {
        self.same_len("and", a, b)?;
        let ev = self.evaluator();
        let cts = a
            .cts
            .par_iter()
            .zip(&b.cts)
            .map(|(x, y)| Ok(ev.mul_relin(x, y, &self.keys().relin)?))
            .collect::<Result<Vec<_>>>()?;
        Ok(EncryptedBits { cts, len: a.len })
    }

    /// `a ∨ b = a + b - a·b` (one level).
    pub fn or(&self, a: &EncryptedBits<B>, b: &EncryptedBits<B>) -> Result<EncryptedBits<B>> {
        let ab = self.and(a, b)?;
        let ev = self.evaluator();
        let cts = ab
            .cts
            .iter()
            .zip(a.cts.iter().zip(&b.cts))
            .map(|(p, (x, y))| Ok(ev.sub(&ev.add(x, y)?, p)?))
            .collect::<Result<Vec<_>>>()?;
        Ok(EncryptedBits { cts, len: a.len })
    }

    /// `¬a = μ - a` with `μ` 1 in the lead slots of the values present (no level).
    pub fn not(&self, a: &EncryptedBits<B>) -> Result<EncryptedBits<B>> {
        let ev = self.evaluator();
        let top = self.context().params().max_level();
        let cts = a
            .cts
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let mask = self.lead_mask(1, self.count_in(a.len, i), top)?;
                Ok(ev.add_plain(&ev.negate(x)?, &mask)?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(EncryptedBits { cts, len: a.len })
    }

    /// The lead slot of every block copied to the whole block (`log2 B` rotations right and
    /// additions, no level): the form a condition takes to multiply the digits of words.
    pub fn broadcast(&self, a: &EncryptedBits<B>) -> Result<Vec<Ciphertext<B>>> {
        let ev = self.evaluator();
        let gk = &self.keys().galois;
        a.cts
            .par_iter()
            .map(|x| {
                let mut acc = x.duplicate(self.context().backend())?;
                let mut s = 1usize;
                while s < self.layout().block() {
                    let r = ev.rotate_rows(&acc, -(s as i64), gk)?;
                    ev.add_assign(&mut acc, &r)?;
                    s *= 2;
                }
                Ok(acc)
            })
            .collect()
    }

    /// `a_j · v_j` for plaintext values `v` (one per value of `a`, reduced mod `t`), kept in the
    /// lead slots (no level; the product of a plaintext).
    pub fn mul_leads_plain(&self, a: &EncryptedBits<B>, v: &[u64]) -> Result<EncryptedBits<B>> {
        if v.len() != a.len {
            return Err(Error::Mismatch {
                op: "multiply the lead slots",
                reason: format!("{} values for {} bits", v.len(), a.len),
            });
        }
        let ev = self.evaluator();
        let t = self.context().params().t();
        let cap = self.layout().words_per_ciphertext();
        let cts = a
            .cts
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let chunk: Vec<u64> = v[i * cap..i * cap + self.count_in(a.len, i)]
                    .iter()
                    .map(|&y| y % t)
                    .collect();
                let slots = self.layout().encode_leads(&chunk)?;
                let p = ev.encoder().encode(&slots, x.level())?;
                Ok(ev.mul_plain(x, &p)?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(EncryptedBits { cts, len: a.len })
    }

    /// `a_j · v_j` for ciphertexts `v` holding one value per lead slot (one level).
    pub fn mul_leads(&self, a: &EncryptedBits<B>, v: &[Ciphertext<B>]) -> Result<EncryptedBits<B>> {
        if v.len() != a.cts.len() {
            return Err(Error::Mismatch {
                op: "multiply the lead slots",
                reason: format!("{} ciphertexts for {}", v.len(), a.cts.len()),
            });
        }
        let ev = self.evaluator();
        let cts = a
            .cts
            .par_iter()
            .zip(v)
            .map(|(x, y)| Ok(ev.mul_relin(x, y, &self.keys().relin)?))
            .collect::<Result<Vec<_>>>()?;
        Ok(EncryptedBits { cts, len: a.len })
    }

    /// Each word's offset `u = v - min` ([`crate::WordType::offset`]) **mod `t`** as one value
    /// in its lead slot, every other slot 0: the digits times `s^{n-1-i}` (a plaintext
    /// product), `log2 B` rotations summing each block into its lead, a plaintext mask (no
    /// level). Exact for words of up to 16 bits at `t = 65537` (`2^16 - 1 < t`); for signed
    /// words subtract `min` to get the value. E.g. `Σ_j [cond_j]·x_j` is
    /// `sum_bits(mul_leads(cond, lead_values(x)))`.
    pub fn lead_values(&self, w: &crate::EncryptedWords<B>) -> Result<EncryptedBits<B>> {
        let ev = self.evaluator();
        let l = self.layout();
        let t = self.context().params().t();
        let mut weights = vec![0u64; l.slot_count()];
        for j in 0..l.words_per_ciphertext() {
            let mut p = 1u64;
            for i in (0..l.digits()).rev() {
                weights[l.lead_slot(j) + i] = p;
                p = (p as u128 * l.base() as u128 % t as u128) as u64;
            }
        }
        let gk = &self.keys().galois;
        let cts = w
            .cts
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let mut acc = ev.mul_plain(x, &ev.encoder().encode(&weights, x.level())?)?;
                let mut s = 1usize;
                while s < l.block() {
                    acc = ev.add(&acc, &ev.rotate_rows(&acc, s as i64, gk)?)?;
                    s *= 2;
                }
                let keep = l.encode_leads(&vec![1; self.count_in(w.len, i)])?;
                Ok(ev.mul_plain(&acc, &ev.encoder().encode(&keep, acc.level())?)?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(EncryptedBits { cts, len: w.len })
    }

    /// The sum of all slots of all ciphertexts, in every slot (`log2(N/2)` rotations and a
    /// column swap, no level): with the result layout, `Σ_j a_j` over the words. Needs the
    /// keys of [`crate::CompareKeys::generate_with_sums`].
    pub fn sum_bits(&self, a: &EncryptedBits<B>) -> Result<Ciphertext<B>> {
        let ev = self.evaluator();
        let Some(first) = a.cts.first() else {
            return Err(Error::InvalidArgument {
                op: "sum the slots",
                reason: "no ciphertext".into(),
            });
        };
        let mut acc = first.duplicate(self.context().backend())?;
        for x in &a.cts[1..] {
            ev.add_assign(&mut acc, x)?;
        }
        let gk = &self.keys().galois;
        let mut s = 1usize;
        while s < self.layout().slot_count() / 2 {
            let r = ev.rotate_rows(&acc, s as i64, gk)?;
            ev.add_assign(&mut acc, &r)?;
            s *= 2;
        }
        let r = ev.rotate_columns(&acc, gk)?;
        ev.add_assign(&mut acc, &r)?;
        Ok(acc)
    }
}
