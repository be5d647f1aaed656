//! `sort` and `min` of an array of at most 16 encrypted words by the comparison matrix, in
//! one comparison circuit (no tournament), for inputs the client encrypts in a replicated
//! layout ([`Comparator::encrypt_array`]).
//!
//! With `K = k` rounded up to a power of two, block `g(i, p, j) = i·K² + j·K + p` of the
//! input holds `a_j` (in `x`) and `a_i` (in `y`), and `a'` holds `a_i` in the blocks
//! `g(i, p, 0)` only (`p` is absent for `min`: `g(i, j) = i·K + j`). Then:
//!
//! 1. one `<` circuit on `x - y` gives, in the lead slot of `g(i, p, j)`,
//!    `c_ij = [a_j < a_i]` for `j > i` and `[a_j ≤ a_i] = [a_j < a_i + 1]` for `j < i` (0 for
//!    `j = i`): for `j < i` the lowest digit's difference is shifted by -1 (a plaintext
//!    addition), which stays in `[-s, s]` where the digit functions are interpolated for this
//!    purpose. The ties are broken by the index, so the ranks `r_i = Σ_j c_ij` are a
//!    permutation of `0..k`;
//! 2. `log2 K` rotations by multiples of `K` blocks sum over `j`: the lead of `g(i, p, 0)`
//!    holds `r_i` (other leads hold partial sums);
//! 3. `E = [r_i = p]` by a polynomial over the possible values: for `sort`, `EQ(r_i - p)` on
//!    `[-(K-1), K-1]` (`1 + ⌈log2(K-1)⌉` levels), for `min`, `[r = 0]` on `{-1, 0, …, K-1}`
//!    (`⌈log2 K⌉` levels); the non-lead slots get the difference 1 so that `E` is 0 there;
//! 4. `E` broadcast over each block times `a'` (one level; `a'` is zero in the blocks whose
//!    lead held a partial sum) and `log2 K` rotations by multiples of `K²` (`K`) blocks (and a
//!    row swap when the blocks span both rows) sum over `i`: block `p` holds the word of rank
//!    `p`; the other blocks hold partial sums (the output is not clean:
//!    [`crate::EncryptedWords`]).
//!
//! Levels: the `<` comparison, a modulus switch of the rank differences (their noise would
//! otherwise be raised to the polynomial's degree), then `EQ` and the product: 16 for 16
//! 32-bit words at base 2^4 ([`Comparator::sort_levels`]: 9 + 1 + 5 + 1), 15 for the minimum
//! ([`Comparator::min_levels`]: 9 + 1 + 4 + 1). Slots: `K³·B` (`sort`)
//! or `K²·B` (`min`) must fit `N`. The keys are those of
//! [`crate::CompareKeys::generate_with_sums`].

use crate::circuit::Affine;
use crate::comparator::Comparator;
use crate::digit_poly::DigitPolynomials;
use crate::error::{Error, Result};
use crate::vectors::{EncryptedBits, EncryptedWords};
use bgv::poly_eval::ceil_log2;
use bgv::{Ciphertext, Polynomial, RowRotations};
use fhe_math::backend::IntegerBackend;
use rlwe::PublicKey;

/// Which array operation an [`ArrayInput`] is laid out for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayOp {
    /// All `k` words in ascending order.
    Sort,
    /// The least word.
    Min,
}

/// `k ≤ 16` words encrypted in the replicated layout of the module documentation.
pub struct ArrayInput<B: IntegerBackend> {
    x: Ciphertext<B>,
    y: Ciphertext<B>,
    a: Ciphertext<B>,
    k: usize,
    op: ArrayOp,
}

impl<B: IntegerBackend> ArrayInput<B> {
    /// The number of words.
    pub fn len(&self) -> usize {
        self.k
    }

    /// Whether there is no word (never: at least 2 are required).
    pub fn is_empty(&self) -> bool {
        self.k == 0
    }

    /// The operation the layout is for.
    pub fn op(&self) -> ArrayOp {
        self.op
    }
}

/// The block strides `(i, p, j)` and the number of blocks of an operation on `K` words.
fn strides(op: ArrayOp, kk: usize) -> ((usize, usize, usize), usize) {
    match op {
        ArrayOp::Sort => ((kk * kk, 1, kk), kk * kk * kk),
        ArrayOp::Min => ((kk, 0, 1), kk * kk),
    }
}

impl<B: IntegerBackend> Comparator<B> {
    /// Levels of the comparison matrix: `<` with the digit functions on `[-s, s]` (as many as
    /// on `[-(s-1), s-1]` for `s ≥ 4`).
    fn matrix_levels(&self) -> usize {
        let p = &self.digit_circuit(true).polys;
        let eq = 1 + ceil_log2(p.eq().degree());
        let l = eq.max(2 + ceil_log2(p.sign().degree()));
        l + (self.layout().block().trailing_zeros() as usize).max(1)
    }

    /// Levels of [`Comparator::sort`] for `k` words: the matrix, a modulus switch of the rank
    /// differences, `EQ` on them, the product with the words.
    pub fn sort_levels(&self, k: usize) -> usize {
        let kk = k.next_power_of_two().max(2);
        self.matrix_levels() + 1 + 1 + ceil_log2(kk - 1) + 1
    }

    /// Levels of [`Comparator::array_min`] for `k` words.
    pub fn min_levels(&self, k: usize) -> usize {
        let kk = k.next_power_of_two().max(2);
        self.matrix_levels() + 1 + ceil_log2(kk) + 1
    }

    fn check_array(&self, op: ArrayOp, k: usize) -> Result<usize> {
        let kk = k.next_power_of_two();
        let (_, blocks) = strides(op, kk);
        let bad = |reason: String| {
            Err(Error::InvalidArgument {
                op: "lay out an array",
                reason,
            })
        };
        if !(2..=16).contains(&k) {
            return bad(format!("{k} words: between 2 and 16 are supported"));
        }
        if blocks > self.layout().words_per_ciphertext() {
            return bad(format!(
                "{blocks} blocks for {k} words exceed the {} of a ciphertext",
                self.layout().words_per_ciphertext()
            ));
        }
        Ok(kk)
    }

    /// `values` (2 to 16 words) encrypted for `op` in the replicated layout (three
    /// ciphertexts). Errors: a value out of range, a size outside 2..=16 or a layout that
    /// does not fit the slots ([`Error::InvalidArgument`]).
    pub fn encrypt_array(
        &self,
        pk: &PublicKey<B>,
        values: &[i128],
        op: ArrayOp,
    ) -> Result<ArrayInput<B>> {
        let k = values.len();
        let kk = self.check_array(op, k)?;
        let ((si, sp, sj), blocks) = strides(op, kk);
        let pk_count = if op == ArrayOp::Sort { kk } else { 1 };
        let min = self.layout().word().min();
        let (mut x, mut y) = (vec![min; blocks], vec![min; blocks]);
        let mut a = vec![None; blocks];
        for i in 0..k {
            for p in 0..pk_count {
                for j in 0..k {
                    let g = i * si + p * sp + j * sj;
                    x[g] = values[j];
                    y[g] = values[i];
                }
                a[i * si + p * sp] = Some(values[i]);
            }
        }
        let top = self.context().params().max_level();
        let enc = |v: &[i128]| -> Result<Ciphertext<B>> {
            let pt = self
                .evaluator()
                .encoder()
                .encode(&self.layout().encode(v)?, top)?;
            Ok(self.context().encrypt_pk(pk, &pt)?)
        };
        // `a'` is zero outside its blocks: encode digits there only.
        let mut slots = vec![0u64; self.layout().slot_count()];
        for (g, v) in a.iter().enumerate() {
            if let Some(v) = v {
                let base = self.layout().lead_slot(g);
                let d = self.layout().digits_of(*v)?;
                slots[base..base + d.len()].copy_from_slice(&d);
            }
        }
        let pa = self.evaluator().encoder().encode(&slots, top)?;
        Ok(ArrayInput {
            x: enc(&x)?,
            y: enc(&y)?,
            a: self.context().encrypt_pk(pk, &pa)?,
            k,
            op,
        })
    }

    /// The `k` words in ascending order (signed words by value): block `p` holds the word of
    /// rank `p` (module documentation; the output is not clean).
    pub fn sort(&self, input: &ArrayInput<B>) -> Result<EncryptedWords<B>> {
        self.array_op(input, ArrayOp::Sort)
    }

    /// The least of the `k` words, as a vector of one word.
    pub fn array_min(&self, input: &ArrayInput<B>) -> Result<EncryptedWords<B>> {
        self.array_op(input, ArrayOp::Min)
    }

    /// `Σ_m rot(x, m·stride)` for `m < count` (a power of two) as `log2 count` rotations left
    /// by `stride·2^e` slots and, when `stride·count` exceeds a row, the row swap: slot `s` gets
    /// the sum of slots `s, s + stride, …` (wrapping within rows; across rows by the swap).
    fn strided_sum(&self, x: &Ciphertext<B>, stride: usize, count: usize) -> Result<Ciphertext<B>> {
        let ev = self.evaluator();
        let gk = &self.keys().galois;
        let row = self.layout().slot_count() / 2;
        let mut acc = x.duplicate(self.context().backend())?;
        let mut s = stride;
        while s < stride * count && s < row {
            let r = ev.rotate_rows(&acc, s as i64, gk)?;
            ev.add_assign(&mut acc, &r)?;
            s *= 2;
        }
        if stride * count > row {
            let r = ev.rotate_columns(&acc, gk)?;
            ev.add_assign(&mut acc, &r)?;
        }
        Ok(acc)
    }

    fn array_op(&self, input: &ArrayInput<B>, op: ArrayOp) -> Result<EncryptedWords<B>> {
        if input.op != op {
            return Err(Error::Mismatch {
                op: "compute on an array",
                reason: format!("the input is laid out for {:?}, not {op:?}", input.op),
            });
        }
        let needed = match op {
            ArrayOp::Sort => self.sort_levels(input.k),
            ArrayOp::Min => self.min_levels(input.k),
        };
        let level = input.x.level().min(input.y.level()).min(input.a.level());
        if level < needed {
            return Err(Error::NotEnoughLevels {
                op: "compute on an array",
                needed,
                available: level,
            });
        }
        let ev = self.evaluator();
        let ctx = self.context();
        let layout = self.layout();
        let t = ctx.params().t();
        let (k, kk) = (input.k, input.k.next_power_of_two());
        let ((si, sp, sj), blocks) = strides(op, kk);
        let pk_count = if op == ArrayOp::Sort { kk } else { 1 };
        // 1. c_ij = [a_j < a_i] (j > i), [a_j < a_i + 1] = [a_j ≤ a_i] (j < i): the lowest
        //    digit's difference shifted by -1 where j < i.
        let mut shift = vec![0u64; layout.slot_count()];
        for i in 0..k {
            for p in 0..pk_count {
                for j in 0..i {
                    let g = i * si + p * sp + j * sj;
                    shift[layout.lead_slot(g) + layout.digits() - 1] = t - 1;
                }
            }
        }
        let z = ev.sub(&input.x, &input.y)?;
        let z = ev.add_plain(&z, &ev.encoder().encode(&shift, z.level())?)?;
        let weights = Affine {
            c: vec![0; blocks],
            l: vec![1; blocks],
            e: vec![0; blocks],
        };
        let cmp = self.circuit(&z, &weights, true, true)?;
        // 2. Ranks at the leads of g(i, p, 0).
        let b = layout.block();
        let ranks = self.strided_sum(&cmp, sj * b, kk)?;
        // 3. E = [r_i = p] (the non-lead slots get -1).
        let mut slots = vec![t - 1; layout.slot_count()];
        for g in 0..layout.words_per_ciphertext() {
            let p = if sp == 1 { (g % kk) as u64 } else { 0 };
            slots[layout.lead_slot(g)] = p;
        }
        let mut d = ev.sub_plain(&ranks, &ev.encoder().encode(&slots, ranks.level())?)?;
        // The ranks carry the mask's noise and that of the rotations; the polynomial would
        // raise it to its degree: one modulus switch brings it back to the floor first.
        ev.mod_switch_assign(&mut d)?;
        let rlk = &self.keys().relin;
        let e = match op {
            ArrayOp::Sort => {
                let eq = DigitPolynomials::new(kk as u64, t)?.eq().clone();
                let w = ev.square_relin(&d, rlk)?;
                ev.evaluate_polynomial(&w, &eq, rlk)?
            }
            ArrayOp::Min => {
                let points: Vec<(u64, u64)> = std::iter::once((t - 1, 0))
                    .chain((0..kk as u64).map(|r| (r, u64::from(r == 0))))
                    .collect();
                let q = Polynomial::interpolate(&points, t)?;
                ev.evaluate_polynomial(&d, &q, rlk)?
            }
        };
        // 4. Broadcast, times a', sum over i, mask the k (or 1) output blocks.
        let wide = self
            .broadcast(&EncryptedBits::from_parts(vec![e], 1))?
            .pop()
            .expect("one ciphertext");
        let prod = ev.mul_relin(&wide, &input.a, rlk)?;
        let out = self.strided_sum(&prod, si * b, kk)?;
        let len = if op == ArrayOp::Sort { k } else { 1 };
        Ok(EncryptedWords::from_parts(vec![out], len, false))
    }
}
