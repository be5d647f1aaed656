//! Row and column rotations of the batched slot matrix, shared by BGV and BFV: everything but
//! the key switch itself (which differs: BGV keeps `m mod t` with the `t^-1 / t` correction,
//! BFV uses plain RLWE key switching) is written once here.

use crate::ciphertext::Ciphertext;
use crate::error::Result;
use fhe_math::backend::IntegerBackend;
use rlwe::{GaloisKeys, SwitchingKey};

/// Rotations of the `2 × N/2` slot matrix. Implementors provide the slot structure and the
/// hoisted Galois key switch; rotating by any step, hoisting, column swaps and the key element
/// lists come from the default methods.
pub trait RowRotations<B: IntegerBackend> {
    /// The backend (for copies of unrotated ciphertexts).
    fn rotation_backend(&self) -> &B;

    /// The slot structure (an error when `t` gives no batching).
    fn slots(&self, op: &'static str) -> Result<&std::sync::Arc<dyn crate::SlotStructure>>;

    /// `σ_g(a)` for every `(g, key)`, sharing one `mod_up` (hoisting), with the scheme's
    /// noise checks.
    fn galois(
        &self,
        a: &Ciphertext<B>,
        keys: &[(u64, &SwitchingKey<B>)],
        op: &'static str,
    ) -> Result<Vec<Ciphertext<B>>>;

    /// The Galois element rotating both rows left by `step` (negative: right): `3^step mod 2N`.
    fn row_rotation_element(&self, step: i64) -> Result<u64> {
        Ok(self.slots("rotate rows")?.row_rotation_element(step))
    }

    /// The Galois element swapping the rows: `2N - 1`.
    fn column_rotation_element(&self) -> Result<u64> {
        Ok(self.slots("rotate columns")?.column_swap_element())
    }

    /// Rotates both rows left by `step` (negative: right): with the exact key when present,
    /// else composed from power-of-two rotations (keys for every set bit of `step mod N/2`).
    fn rotate_rows(
        &self,
        a: &Ciphertext<B>,
        step: i64,
        keys: &GaloisKeys<B>,
    ) -> Result<Ciphertext<B>> {
        let half = self.slots("rotate rows")?.row_size() as i64;
        let step = step.rem_euclid(half);
        if step == 0 {
            return a.duplicate(self.rotation_backend());
        }
        let g = self.row_rotation_element(step)?;
        if let Ok(key) = keys.get(g, "rotate rows") {
            return Ok(self.galois(a, &[(g, key)], "rotate rows")?.remove(0));
        }
        let mut out: Option<Ciphertext<B>> = None;
        for bit in 0..63 {
            if step >> bit & 1 == 1 {
                let g = self.row_rotation_element(1 << bit)?;
                let key = keys.get(g, "rotate rows (power-of-two decomposition)")?;
                let src = out.as_ref().unwrap_or(a);
                out = Some(self.galois(src, &[(g, key)], "rotate rows")?.remove(0));
            }
        }
        Ok(out.expect("a non-zero step has a set bit"))
    }

    /// Row rotations of one ciphertext by several steps sharing one `mod_up` (hoisting); the
    /// exact key of every non-zero step is needed.
    fn rotate_rows_hoisted(
        &self,
        a: &Ciphertext<B>,
        steps: &[i64],
        keys: &GaloisKeys<B>,
    ) -> Result<Vec<Ciphertext<B>>> {
        let half = self.slots("rotate rows")?.row_size() as i64;
        let mut pairs = Vec::new();
        for &s in steps {
            if s.rem_euclid(half) != 0 {
                let g = self.row_rotation_element(s)?;
                pairs.push((g, keys.get(g, "rotate rows (hoisted)")?));
            }
        }
        let mut rotated = if pairs.is_empty() {
            Vec::new()
        } else {
            self.galois(a, &pairs, "rotate rows (hoisted)")?
        }
        .into_iter();
        steps
            .iter()
            .map(|&s| {
                if s.rem_euclid(half) == 0 {
                    a.duplicate(self.rotation_backend())
                } else {
                    Ok(rotated.next().expect("one result per non-zero step"))
                }
            })
            .collect()
    }

    /// Swaps the two rows of the slot matrix (`X -> X^{-1}`).
    fn rotate_columns(&self, a: &Ciphertext<B>, keys: &GaloisKeys<B>) -> Result<Ciphertext<B>> {
        let g = self.column_rotation_element()?;
        let key = keys.get(g, "rotate columns")?;
        Ok(self.galois(a, &[(g, key)], "rotate columns")?.remove(0))
    }

    /// Galois elements of row rotations by `steps` (and the column swap when `columns`), to
    /// pass to [`rlwe::KeyGenerator::galois_keys`].
    fn galois_elements(&self, steps: &[i64], columns: bool) -> Result<Vec<u64>> {
        let mut out = steps
            .iter()
            .map(|&s| self.row_rotation_element(s))
            .collect::<Result<Vec<_>>>()?;
        if columns {
            out.push(self.column_rotation_element()?);
        }
        Ok(out)
    }

    /// Galois elements of the power-of-two row rotations `1, 2, …, N/4` (enough to compose any
    /// rotation) and the column swap.
    fn power_of_two_elements(&self) -> Result<Vec<u64>> {
        let half = self.slots("rotate rows")?.row_size();
        let steps: Vec<i64> = (0..)
            .map(|i| 1i64 << i)
            .take_while(|&s| (s as usize) < half)
            .collect();
        self.galois_elements(&steps, true)
    }
}
