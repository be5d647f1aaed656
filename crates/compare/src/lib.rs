//! Word-wise comparisons of encrypted integers in BGV.
//!
//! Words of 8, 16, 32 or 64 bits (unsigned or signed) are split into small digits (base
//! `s = 2^d`, `d ≤ 8`) held in the slots of a batched BGV ciphertext ([`layout`]); the
//! comparison of two words is `EQ` and `LT` of their digits, polynomials over `F_t`
//! interpolated only on the possible differences ([`digit_poly`]), combined
//! lexicographically by a log-depth tree of rotations inside each word's block
//! ([`comparator`]).
//!
//! # Result layout
//!
//! A comparison of two vectors of words returns an [`EncryptedBits`]: the 0/1 result of word
//! `j` of a ciphertext is in slot `j·B` (the **lead slot** of its block), every other slot is
//! 0. To use it as a mask, multiply it with a ciphertext or plaintext holding one value per
//! lead slot ([`DigitLayout::encode_leads`]) and sum the slots.
//!
//! Encrypted inputs whose digits are not in `[0, s)` (not produced by [`Comparator::encrypt`]
//! or an operation of this crate) give unspecified results; plaintext values outside the word
//! range are refused with [`Error::ValueOutOfRange`].

pub mod comparator;
pub mod digit_poly;
pub mod error;
pub mod keys;
pub mod layout;
pub mod vectors;

pub use comparator::{Comparator, Predicate};
pub use digit_poly::DigitPolynomials;
pub use error::{Error, Result};
pub use keys::CompareKeys;
pub use layout::{DigitLayout, WordType};
pub use vectors::{EncryptedBits, EncryptedWords};
