//! The comparisons, by the `compare` crate: 32-bit unsigned words in base-`2^4` digits (a
//! signed column's value `v` as the word `v + 2^31`, which keeps the order)
//! (block `B = 8` slots per word; LT 9 levels, 16 products + 5 rotations per ciphertext;
//! EQ 8 levels), results 0/1 in the lead slot `r·B` of row `r`, every other slot 0. The limbs
//! of pdq's columns sit in the same lead slots, so a mask multiplies them directly; a table
//! of more than `N/B` rows spans several ciphertexts (chunks), row `r` in chunk `r / (N/B)`.

use crate::error::{Error, Result};
use crate::query::CmpOp;
use bgv::{Context, Encoder};
use compare::{Comparator, DigitLayout, EncryptedBits, EncryptedWords, Predicate, WordType};
use fhe_math::backend::IntegerBackend;
use rlwe::SecretKey;

/// Digit width of the comparison words.
pub const DIGIT_BITS: u32 = 4;

/// The word type of a column value.
pub const WORD: WordType = WordType::U32;

/// The digit layout at ring degree `n`.
pub fn layout(n: usize) -> Result<DigitLayout> {
    Ok(DigitLayout::new(WORD, DIGIT_BITS, n)?)
}

/// Rows per ciphertext (a table's chunk) at ring degree `n`: `N / B`, the blocks of both rows
/// of the slot matrix.
pub fn rows_per_chunk(n: usize) -> Result<usize> {
    Ok(layout(n)?.words_per_ciphertext())
}

/// Most rows of a table: a column sum of 1-bit limbs must stay below `t`.
pub fn max_rows(t: u64) -> usize {
    (t - 1) as usize
}

/// The predicate of an operator.
pub fn predicate(op: CmpOp) -> Predicate {
    match op {
        CmpOp::Lt => Predicate::Lt,
        CmpOp::Le => Predicate::Le,
        CmpOp::Eq => Predicate::Eq,
        CmpOp::Ne => Predicate::Ne,
        CmpOp::Gt => Predicate::Gt,
        CmpOp::Ge => Predicate::Ge,
    }
}

/// Levels of the deepest comparison (`<`, `≤`, `>`, `≥`).
pub fn depth<B: IntegerBackend>(cmp: &Comparator<B>) -> usize {
    CmpOp::ALL
        .iter()
        .map(|&op| cmp.levels(predicate(op)))
        .max()
        .unwrap_or(0)
}

/// `(products, rotations)` per ciphertext of the costliest comparison.
pub fn cost<B: IntegerBackend>(cmp: &Comparator<B>) -> (usize, usize) {
    CmpOp::ALL
        .iter()
        .map(|&op| {
            let c = cmp.cost(predicate(op));
            (c.products, c.rotations)
        })
        .max()
        .unwrap_or((0, 0))
}

/// A column (or a replicated constant) in the comparison layout.
pub struct Words<B: IntegerBackend>(pub EncryptedWords<B>);

impl<B: IntegerBackend> Words<B> {
    /// The ciphertexts.
    pub fn ciphertexts(&self) -> &[bgv::Ciphertext<B>] {
        self.0.ciphertexts()
    }

    /// Rebuilds `len` words from ciphertexts, checking their number (pdq's words are always
    /// *clean*: zero digits past the last word, as [`encrypt_words`] writes them).
    pub fn from_ciphertexts(
        ctx: &Context<B>,
        cts: Vec<bgv::Ciphertext<B>>,
        len: usize,
    ) -> Result<Self> {
        let per = layout(ctx.params().n())?.words_per_ciphertext();
        if cts.len() != len.div_ceil(per) {
            return Err(Error::Protocol(format!(
                "{} ciphertexts for {len} words ({per} per ciphertext)",
                cts.len()
            )));
        }
        Ok(Words(EncryptedWords::from_parts(cts, len, true)))
    }
}

/// Encrypts `values` (word `r` in block `r`) under the secret key, at the top level.
pub fn encrypt_words<B: IntegerBackend>(
    ctx: &Context<B>,
    sk: &SecretKey<B>,
    values: &[u64],
) -> Result<Words<B>> {
    let l = layout(ctx.params().n())?;
    let enc = Encoder::new(ctx);
    let top = ctx.params().max_level();
    let words: Vec<i128> = values.iter().map(|&v| v as i128).collect();
    let cts = words
        .chunks(l.words_per_ciphertext())
        .map(|chunk| {
            let pt = enc.encode(&l.encode(chunk)?, top)?;
            Ok(ctx.encrypt_sk(sk, &pt)?)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Words(EncryptedWords::from_parts(cts, values.len(), true)))
}

/// The 0/1 bits of `a op b`.
pub fn compare<B: IntegerBackend>(
    cmp: &Comparator<B>,
    op: CmpOp,
    a: &Words<B>,
    b: &Words<B>,
) -> Result<EncryptedBits<B>> {
    Ok(cmp.compare(&a.0, &b.0, predicate(op))?)
}
