//! [`EncryptedWords`] and [`EncryptedBits`]: vectors of any length spread over ciphertexts of
//! `N / B` words each ([`crate::DigitLayout`]).

use bgv::Ciphertext;
use fhe_math::backend::IntegerBackend;

/// Encrypted words in the digit layout: word `i` is word `i mod (N/B)` of ciphertext
/// `i / (N/B)`. The blocks past the last word hold 0 digits when the vector is **clean**
/// (encryptions, and results of clean inputs); [`crate::Comparator::sort`] and
/// [`crate::Comparator::array_min`] leave partial sums there (not clean), which comparisons
/// handle with a mask of the words present (about 8 bits more noise).
pub struct EncryptedWords<B: IntegerBackend> {
    pub(crate) cts: Vec<Ciphertext<B>>,
    pub(crate) len: usize,
    pub(crate) clean: bool,
}

impl<B: IntegerBackend> EncryptedWords<B> {
    /// From ciphertexts in the layout holding `len` words; `clean` when the blocks past them
    /// hold 0 digits (not checked: the caller vouches for the layout).
    pub fn from_parts(cts: Vec<Ciphertext<B>>, len: usize, clean: bool) -> Self {
        EncryptedWords { cts, len, clean }
    }

    /// Whether the blocks past the last word hold 0 digits.
    pub fn is_clean(&self) -> bool {
        self.clean
    }
}

impl<B: IntegerBackend> EncryptedBits<B> {
    /// From ciphertexts in the result layout holding `len` values (not checked: the caller
    /// vouches for the layout, 0 in every slot but the leads of the first `len` blocks).
    pub fn from_parts(cts: Vec<Ciphertext<B>>, len: usize) -> Self {
        EncryptedBits { cts, len }
    }
}

/// Encrypted values, one per word (0/1 for comparison results): value `i` sits in the
/// **lead slot** of block
/// `i mod (N/B)` of ciphertext `i / (N/B)`; every other slot (the rest of each block, the
/// blocks past the last value) holds 0.
pub struct EncryptedBits<B: IntegerBackend> {
    pub(crate) cts: Vec<Ciphertext<B>>,
    pub(crate) len: usize,
}

macro_rules! vector_accessors {
    ($t:ident) => {
        impl<B: IntegerBackend> $t<B> {
            /// The number of values.
            pub fn len(&self) -> usize {
                self.len
            }

            /// Whether there is no value.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }

            /// The ciphertexts.
            pub fn ciphertexts(&self) -> &[Ciphertext<B>] {
                &self.cts
            }

            /// The ciphertexts, by value.
            pub fn into_ciphertexts(self) -> Vec<Ciphertext<B>> {
                self.cts
            }

            /// The lowest level among the ciphertexts (0 when empty).
            pub fn level(&self) -> usize {
                self.cts.iter().map(Ciphertext::level).min().unwrap_or(0)
            }
        }
    };
}

vector_accessors!(EncryptedWords);
vector_accessors!(EncryptedBits);
