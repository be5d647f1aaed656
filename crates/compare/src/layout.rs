//! The digit layout: how words of 8 to 64 bits become small digits in slot blocks.
//!
//! A word type ([`WordType`]) of `W` bits, unsigned or signed, is first mapped to its
//! **offset** `u = v - min ∈ [0, 2^W)` (the identity for unsigned words, `v + 2^{W-1}` for
//! signed ones: the map preserves the order, so signed words compare as their offsets). The
//! offset is cut into `n = ⌈W / d⌉` digits of `d` bits (base `s = 2^d`), most significant first:
//! `u = Σ_{i<n} u_i · s^{n-1-i}`.
//!
//! Word `j` of a ciphertext owns the **block** of slots `[j·B, (j+1)·B)`, `B = n` rounded up
//! to a power of two: digit `i` sits in slot `j·B + i`, the padding slots `j·B + n .. j·B + B`
//! hold 0. The slot vector is the `2 × N/2` matrix of the batched encoding (slot `k` is in row
//! `k / (N/2)`); as `B` divides `N/2` no block crosses a row, so row rotations by less than
//! `B` move digits within their block or into the next block, never into the other row. A
//! ciphertext holds `N / B` words.
//!
//! Comparison results ([`crate::EncryptedBits`]) are 0/1 in the **lead slot** `j·B` of each
//! word's block, every other slot 0.

use crate::comparator::Predicate;
use crate::error::{Error, Result};
use bgv::poly_eval::ceil_log2;

/// An integer word type: its width (8, 16, 32 or 64 bits) and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WordType {
    bits: u32,
    signed: bool,
}

impl WordType {
    /// Unsigned 8-bit words.
    pub const U8: WordType = WordType::of(8, false);
    /// Unsigned 16-bit words.
    pub const U16: WordType = WordType::of(16, false);
    /// Unsigned 32-bit words.
    pub const U32: WordType = WordType::of(32, false);
    /// Unsigned 64-bit words.
    pub const U64: WordType = WordType::of(64, false);
    /// Signed (two's complement range) 8-bit words.
    pub const I8: WordType = WordType::of(8, true);
    /// Signed 16-bit words.
    pub const I16: WordType = WordType::of(16, true);
    /// Signed 32-bit words.
    pub const I32: WordType = WordType::of(32, true);
    /// Signed 64-bit words.
    pub const I64: WordType = WordType::of(64, true);

    const fn of(bits: u32, signed: bool) -> WordType {
        WordType { bits, signed }
    }

    /// The word of `bits` bits (8, 16, 32 or 64), signed or not.
    pub fn new(bits: u32, signed: bool) -> Result<WordType> {
        if ![8, 16, 32, 64].contains(&bits) {
            return Err(Error::InvalidLayout {
                reason: format!("words have 8, 16, 32 or 64 bits, not {bits}"),
            });
        }
        Ok(WordType { bits, signed })
    }

    /// The width `W` in bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Whether the word is signed.
    pub fn is_signed(&self) -> bool {
        self.signed
    }

    /// The name (`u8` … `i64`).
    pub fn name(&self) -> &'static str {
        match (self.signed, self.bits) {
            (false, 8) => "u8",
            (false, 16) => "u16",
            (false, 32) => "u32",
            (false, _) => "u64",
            (true, 8) => "i8",
            (true, 16) => "i16",
            (true, 32) => "i32",
            (true, _) => "i64",
        }
    }

    /// The smallest value: `0` or `-2^{W-1}`.
    pub fn min(&self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }

    /// The largest value: `2^W - 1` or `2^{W-1} - 1`.
    pub fn max(&self) -> i128 {
        self.min() + (1i128 << self.bits) - 1
    }

    /// The order-preserving offset `v - min ∈ [0, 2^W)`; [`Error::ValueOutOfRange`] outside
    /// `[min, max]`.
    pub fn offset(&self, v: i128) -> Result<u64> {
        if v < self.min() || v > self.max() {
            return Err(Error::ValueOutOfRange {
                value: v,
                word: self.name(),
                min: self.min(),
                max: self.max(),
            });
        }
        Ok((v - self.min()) as u64)
    }

    /// The value of an offset (inverse of [`WordType::offset`]).
    pub fn from_offset(&self, u: u64) -> i128 {
        u as i128 + self.min()
    }
}

/// Where the digits of each word sit in the slots (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DigitLayout {
    word: WordType,
    digit_bits: u32,
    digits: usize,
    block: usize,
    slots: usize,
}

impl DigitLayout {
    /// The layout of `word` in digits of `digit_bits` bits (1 to 8: base `2^d`) over
    /// `slot_count` slots (`N`, a power of two).
    ///
    /// Errors ([`Error::InvalidLayout`]): a digit width outside 1..=8, a slot count that is
    /// not a power of two, or a block larger than a row (`N/2`).
    pub fn new(word: WordType, digit_bits: u32, slot_count: usize) -> Result<DigitLayout> {
        let bad = |reason: String| Err(Error::InvalidLayout { reason });
        if !(1..=8).contains(&digit_bits) {
            return bad(format!("digits have 1 to 8 bits, not {digit_bits}"));
        }
        if !slot_count.is_power_of_two() || slot_count < 2 {
            return bad(format!(
                "the slot count {slot_count} is not a power of two ≥ 2 (batching needed)"
            ));
        }
        let digits = word.bits.div_ceil(digit_bits) as usize;
        let block = digits.next_power_of_two();
        if block > slot_count / 2 {
            return bad(format!(
                "a block of {block} slots does not fit a row of {} slots",
                slot_count / 2
            ));
        }
        Ok(DigitLayout {
            word,
            digit_bits,
            digits,
            block,
            slots: slot_count,
        })
    }

    /// The word type.
    pub fn word(&self) -> WordType {
        self.word
    }

    /// The digit width `d` in bits.
    pub fn digit_bits(&self) -> u32 {
        self.digit_bits
    }

    /// The base `s = 2^d`.
    pub fn base(&self) -> u64 {
        1 << self.digit_bits
    }

    /// The digits per word `n = ⌈W / d⌉`.
    pub fn digits(&self) -> usize {
        self.digits
    }

    /// The block size `B` (slots per word, `n` rounded up to a power of two).
    pub fn block(&self) -> usize {
        self.block
    }

    /// The slot count `N`.
    pub fn slot_count(&self) -> usize {
        self.slots
    }

    /// Words per ciphertext: `N / B`.
    pub fn words_per_ciphertext(&self) -> usize {
        self.slots / self.block
    }

    /// The lead slot of word `j` of a ciphertext (`j·B`): where its comparison result lands.
    pub fn lead_slot(&self, j: usize) -> usize {
        j * self.block
    }

    /// The levels a comparison by `p` consumes ([`crate::comparator`]): `w = z²`, then
    /// `e(w)` (`d_EQ = 1 + ⌈log2(s-1)⌉`) and for `<`, `≤`, `>`, `≥` also `z·h(w)`
    /// (`d_L = max(d_EQ, 2 + ⌈log2(s-2)⌉)`), then one level per combination step (`log2 B`,
    /// at least 1: with `B = 1` the mask's product and switch take it).
    pub fn levels(&self, p: Predicate) -> usize {
        let lt = !matches!(p, Predicate::Eq | Predicate::Ne);
        let s = self.base() as usize;
        let steps = self.block.trailing_zeros() as usize;
        let eq = 1 + ceil_log2(s - 1);
        let l = if lt {
            (2 + ceil_log2(s - 2)).max(eq)
        } else {
            eq
        };
        l + steps.max(1)
    }

    /// The digits of one value, most significant first.
    pub fn digits_of(&self, v: i128) -> Result<Vec<u64>> {
        let u = self.word.offset(v)?;
        let d = self.digit_bits;
        let mask = self.base() - 1;
        Ok((0..self.digits)
            .map(|i| {
                let shift = d as usize * (self.digits - 1 - i);
                if shift >= 64 { 0 } else { (u >> shift) & mask }
            })
            .collect())
    }

    /// The slot vector (`N` values) of up to `N / B` words; unused blocks hold 0 digits.
    /// Errors: a value out of range, too many values.
    pub fn encode(&self, values: &[i128]) -> Result<Vec<u64>> {
        let cap = self.words_per_ciphertext();
        if values.len() > cap {
            return Err(Error::Mismatch {
                op: "encode words",
                reason: format!("{} words do not fit {cap} blocks", values.len()),
            });
        }
        let mut slots = vec![0u64; self.slots];
        for (j, &v) in values.iter().enumerate() {
            let base = self.lead_slot(j);
            slots[base..base + self.digits].copy_from_slice(&self.digits_of(v)?);
        }
        Ok(slots)
    }

    /// The first `count` words of a slot vector (digits reduced mod the base: decrypting a
    /// fresh or selected ciphertext gives digits below it).
    pub fn decode(&self, slots: &[u64], count: usize) -> Vec<i128> {
        (0..count)
            .map(|j| {
                let base = self.lead_slot(j);
                let u = slots[base..base + self.digits]
                    .iter()
                    .fold(0u128, |acc, &x| {
                        (acc << self.digit_bits) | (x as u128 % self.base() as u128)
                    });
                self.word.from_offset(u as u64)
            })
            .collect()
    }

    /// The slot vector with `values[j]` in the lead slot of block `j`, 0 elsewhere (e.g. a
    /// column to multiply with a comparison result). Errors: too many values.
    pub fn encode_leads(&self, values: &[u64]) -> Result<Vec<u64>> {
        let cap = self.words_per_ciphertext();
        if values.len() > cap {
            return Err(Error::Mismatch {
                op: "encode lead slots",
                reason: format!("{} values do not fit {cap} blocks", values.len()),
            });
        }
        let mut slots = vec![0u64; self.slots];
        for (j, &v) in values.iter().enumerate() {
            slots[self.lead_slot(j)] = v;
        }
        Ok(slots)
    }

    /// The lead slots of the first `count` blocks.
    pub fn decode_leads(&self, slots: &[u64], count: usize) -> Vec<u64> {
        (0..count).map(|j| slots[self.lead_slot(j)]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_offsets() {
        assert_eq!((WordType::U8.min(), WordType::U8.max()), (0, 255));
        assert_eq!((WordType::I8.min(), WordType::I8.max()), (-128, 127));
        assert_eq!(WordType::I64.max(), i64::MAX as i128);
        assert_eq!(WordType::U64.max(), u64::MAX as i128);
        assert_eq!(WordType::I64.offset(i64::MIN as i128).unwrap(), 0);
        assert_eq!(WordType::I64.offset(-1).unwrap(), (1 << 63) - 1);
        assert!(matches!(
            WordType::U8.offset(256),
            Err(Error::ValueOutOfRange { value: 256, .. })
        ));
        assert!(WordType::I16.offset(-32769).is_err());
        assert!(WordType::new(12, false).is_err());
    }

    #[test]
    fn encode_decode_round_trip() {
        for (w, d) in [
            (WordType::U64, 8),
            (WordType::I64, 4),
            (WordType::U32, 3),
            (WordType::I8, 2),
        ] {
            let l = DigitLayout::new(w, d, 256).unwrap();
            let vals = [w.min(), w.max(), 0, 1, w.max() / 3];
            let slots = l.encode(&vals).unwrap();
            assert_eq!(l.decode(&slots, vals.len()), vals);
            assert!(slots.iter().all(|&x| x < l.base()));
            // Padding slots hold 0.
            for j in 0..vals.len() {
                for p in l.digits()..l.block() {
                    assert_eq!(slots[l.lead_slot(j) + p], 0);
                }
            }
        }
        let l = DigitLayout::new(WordType::U64, 8, 64).unwrap();
        assert_eq!((l.digits(), l.block(), l.words_per_ciphertext()), (8, 8, 8));
        assert!(l.encode(&[0; 9]).is_err());
        assert!(DigitLayout::new(WordType::U64, 1, 64).is_err());
        assert!(DigitLayout::new(WordType::U64, 9, 1024).is_err());
    }
}
