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
//! [`masks`] has what a caller needs for that: `and`/`or`/`not` of results,
//! [`Comparator::broadcast`] (the lead slot copied over its block, to multiply the digits of
//! words, e.g. to select), [`Comparator::mul_leads_plain`] / [`Comparator::mul_leads`] (a
//! result times one value per lead slot) and [`Comparator::sum_bits`] (the sum of all slots in
//! every slot: `Σ_j bit_j·v_j` over the words).
//!
//! # Example
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use bgv::{Context, Decryptor, Parameters};
//! use compare::{CompareKeys, Comparator, DigitLayout, WordType};
//! let ctx = Context::cpu(Parameters::new(&bgv::params::CAT)?)?;
//! let kg = ctx.key_generator();
//! let sk = kg.secret_key()?;
//! let pk = kg.public_key(&sk)?;
//! let layout = DigitLayout::new(WordType::U64, 4, ctx.params().n())?;
//! let cmp = Comparator::new(&ctx, layout, CompareKeys::generate(&ctx, &sk, &layout)?)?;
//! let a = cmp.encrypt_u64(&pk, &[3, 10, u64::MAX])?;
//! let b = cmp.encrypt_u64(&pk, &[5, 10, 0])?;
//! let lt = cmp.lt(&a, &b)?; // 1, 0, 0 in the lead slots
//! assert_eq!(cmp.decrypt_bits(&Decryptor::new(&ctx, &sk), &lt)?, [1, 0, 0]);
//! # Ok(()) }
//! ```
//!
//! # Cost per ciphertext (checked by `tests/words.rs`; levels measured)
//!
//! Products are ciphertext multiplications with relinearization, rotations row rotations:
//! each one key switch. `words/ct` at `N = 2^15`.
//!
//! | word | digit base | block `B` | words/ct | LT levels | LT products + rotations | EQ levels | EQ products + rotations |
//! |---|---|---|---|---|---|---|---|
//! | 8 | 2^4 | 2 | 16384 | 7 | 12 + 1 | 6 | 9 + 1 |
//! | 8 | 2^8 | 1 | 32768 | 11 | 49 + 0 | 10 | 34 + 0 |
//! | 32 | 2^4 | 8 | 4096 | 9 | 16 + 5 | 8 | 11 + 3 |
//! | 32 | 2^8 | 4 | 8192 | 12 | 52 + 3 | 11 | 36 + 2 |
//! | 64 | 2^2 | 32 | 1024 | 8 | 13 + 9 | 8 | 8 + 5 |
//! | 64 | 2^4 | 16 | 2048 | 10 | 18 + 7 | 9 | 12 + 4 |
//! | 64 | 2^8 | 8 | 4096 | 13 | 54 + 5 | 12 | 37 + 3 |
//!
//! Base 2^4 is the best amortized choice for 64-bit words (25 key switches per 2048 words
//! against 59 per 4096 at base 2^8, and 3 levels fewer); base 2^2 has the fewest key switches
//! and levels for one pair.
//!
//! Encrypted inputs whose digits are not in `[0, s)` (not produced by [`Comparator::encrypt`]
//! or an operation of this crate) give unspecified results; plaintext values outside the word
//! range are refused with [`Error::ValueOutOfRange`].

pub mod comparator;
pub mod digit_poly;
pub mod error;
pub mod keys;
pub mod layout;
pub mod masks;
pub mod vectors;

pub use comparator::{CircuitCost, Comparator, Predicate};
pub use digit_poly::DigitPolynomials;
pub use error::{Error, Result};
pub use keys::CompareKeys;
pub use layout::{DigitLayout, WordType};
pub use vectors::{EncryptedBits, EncryptedWords};
