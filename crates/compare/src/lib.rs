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
//! | 64 | 2^2 | 32 | 1024 | 8 | 14 + 9 | 8 | 8 + 5 |
//! | 64 | 2^4 | 16 | 2048 | 10 | 18 + 7 | 9 | 12 + 4 |
//! | 64 | 2^8 | 8 | 4096 | 13 | 54 + 5 | 12 | 37 + 3 |
//!
//! Base 2^4 is the best amortized choice for 64-bit words (25 key switches per 2048 words
//! against 59 per 4096 at base 2^8, and 3 levels fewer); base 2^2 has the fewest levels and
//! few key switches for one pair.
//!
//! # Modules
//!
//! | module | what |
//! |---|---|
//! | [`layout`] | word types, the digit layout, encode/decode |
//! | [`digit_poly`] | `EQ` and `sign` of digit differences as polynomials in `w = z²` |
//! | [`comparator`] | [`Comparator`]: encryption helpers, the six predicates (vectors, constants), weighted results, costs |
//! | [`masks`] | using results: `and`/`or`/`not`, broadcast, lead-slot products, slot sums |
//! | [`select`] | `select`, `min`, `max` of words |
//! | [`range`] | [`RangeFunctions`]: `sign`, `[x < 0]`, `x < y`, ReLU of single-slot values in `[-R, R]` |
//! | [`mod@array`] | `sort` and `min` of up to 16 words by the comparison matrix |
//! | [`slots`] | the slot manager: compaction of sparse vectors ([`Packing`]) |
//! | [`pending`] | the non-blocking API ([`Pending`]) |
//! | [`presets`] | 128-bit-secure presets (`U32_THROUGHPUT`, `U64_THROUGHPUT`, `U64_LATENCY`) |
//! | [`keys`] | [`CompareKeys`]: the relinearization and rotation keys each use needs |
//! | [`wire`] | serialized vectors (magic, version, layout and length checked on load) |
//! | [`workloads`] | BoostCom's five workloads (sort, min, MLP, recoloring, private query), end to end, shared by the examples and `gpu_bench` |
//!
//! # Levels and noise
//!
//! Every operation states the levels it consumes (`levels`, `sort_levels`, `min_levels`,
//! `RangeFunctions::*_levels`), checked against measured level drops in the tests; the
//! products and rotations of the comparison circuit are counted ([`Comparator::counters`]) and
//! checked against [`Comparator::cost`]. The analytic noise bound of BGV is conservative: with
//! the mask in the last product, that product does not fit the 99-bit modulus of level 1, so
//! the presets keep a level beyond their comparison (level 2 or above for the last product).
//!
//! # Measured on the CPU (2-core shared machine, 2026-11-29)
//!
//! `a < b` of 64-bit words: 2.16–2.43 s per ciphertext of 2048 pairs at `U64_THROUGHPUT`
//! (1.06–1.19 ms per comparison amortized, about 900 comparisons/s), 1.6 s for one pair at
//! `U64_LATENCY` (criterion, `benches/compare_cpu.rs`); 1.3–1.9 s per ciphertext of 1024 pairs
//! at `U64_LATENCY` (`examples/compare_basics.rs`). Sort and minimum of 16 32-bit words at
//! `U32_THROUGHPUT`: about 5 s each (`examples/compare_sort.rs`).
//! The workloads of [`workloads`] end to end (encrypt, compute, decrypt; the examples, one run
//! each, noisy): sort and minimum of 16 u32 3.4–5.1 s, the MLP 15.7–21.8 s per ciphertext of
//! 32 images, the recoloring of 128 × 128 pixels 7.5 s, the private query 7.9–19.6 s.
//!
//! Encrypted inputs whose digits are not in `[0, s)` (not produced by [`Comparator::encrypt`]
//! or an operation of this crate) give unspecified results; plaintext values outside the word
//! range are refused with [`Error::ValueOutOfRange`].

pub mod array;
mod circuit;
pub mod comparator;
pub mod digit_poly;
pub mod error;
mod factors;
pub mod keys;
pub mod layout;
pub mod masks;
pub mod pending;
pub mod presets;
pub mod range;
pub mod select;
pub mod slots;
pub mod vectors;
pub mod wire;
pub mod workloads;

pub use array::{ArrayInput, ArrayOp};
pub use comparator::{CircuitCost, Comparator, Predicate};
pub use digit_poly::DigitPolynomials;
pub use error::{Error, Result};
pub use keys::CompareKeys;
pub use layout::{DigitLayout, WordType};
pub use pending::Pending;
pub use range::RangeFunctions;
pub use slots::Packing;
pub use vectors::{EncryptedBits, EncryptedWords};
