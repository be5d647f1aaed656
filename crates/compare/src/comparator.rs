//! [`Comparator`]: encryption helpers and the six comparisons of encrypted words.
//!
//! # The circuit (per ciphertext)
//!
//! 1. `z = a - b` digit-wise (slot-wise; `b - a` for `>` and `≤`), each slot in `[-(s-1), s-1]`;
//! 2. `w = z²` (1 level), then `e(w)` and `h(w)` by one Paterson–Stockmeyer with shared baby
//!    steps ([`crate::digit_poly`]): `EQ_i = e(w)` after `⌈log2(s-1)⌉` more levels, and
//!    `L_i = 1 - EQ_i - z·h(w) = 2·LT_i` one level later;
//! 3. the lexicographic combination by a tree over the block: for `σ = 1, 2, …, B/2`,
//!    `L ← L + EQ·rot(L, σ)`, `EQ ← EQ·rot(EQ, σ)` (`rot` rotates the rows left, so slot `i`
//!    reads slot `i + σ`). After the step of `σ`, slot `j·B + 2σ·m` holds the comparison of the
//!    digits `2σ·m .. 2σ(m+1)` of word `j` (its more significant half decides unless equal),
//!    so after `log2 B` steps the lead slot holds `2·LT` of the whole word; slots read only
//!    offsets inside their own block, so no mask is needed on the way;
//! 4. the last step multiplies the high halves by the plaintext **mask** `μ` (1 in every lead
//!    slot, 0 elsewhere): `μ·L_hi + (μ·EQ_hi)·rot(L, σ)`, so the mask costs no level of its own
//!    (with `B = 1` it is one plaintext product and a switch); the factor `1/2` is free
//!    (declared in the BGV correction factor, relabelling of the factor). Blocks
//!    past the words present get the difference 1 in step 1 (their `LT` and `EQ` are then 0),
//!    so the periodic mask of all lead slots (a short polynomial: about 20 bits of `ℓ1` norm
//!    at `N = 2^15`, against 28 for a mask of some blocks only) is enough.
//!
//! The output is an affine form `c + l·LT + e·EQ` with weights per word:
//! `EQ` alone (`=`, `≠`) skips `h` and `L`; the complements (`≥ = 1 - <`, `≤ = 1 - >`,
//! `≠ = 1 - =`) are a negative weight and a plaintext constant in the lead slots;
//! [`Comparator::compare_weighted`] folds any per-word weights into the mask.
//!
//! Factor alignment: adding ciphertexts whose BGV correction factors differ multiplies one by
//! a constant up to `t/2` (16 bits of noise); the circuit aligns by the cheapest of that and a
//! pair of small multipliers (`≤ √t` each), and its Paterson–Stockmeyer plans end every
//! polynomial in a product (whose switch brings the noise back down) rather than in a linear
//! combination with coefficients up to `t/2`.
//!
//! Levels consumed ([`Comparator::levels`], checked by measurement in the tests):
//! `d_EQ = 1 + ⌈log2(s-1)⌉`, `d_L = max(d_EQ, 2 + ⌈log2(s-2)⌉)`, then `log2 B` combination
//! steps of one level each (one level for the mask when `B = 1`): `LT` takes
//! `d_L + max(log2 B, 1)`, `EQ` `d_EQ + max(log2 B, 1)`.

use crate::circuit::Affine;
use crate::digit_poly::DigitPolynomials;
use crate::error::{Error, Result};
use crate::keys::CompareKeys;
use crate::layout::DigitLayout;
use crate::vectors::{EncryptedBits, EncryptedWords};
use bgv::{Ciphertext, Context, Decryptor, Encoder, Evaluator, Plaintext, PsPlan};
use fhe_math::backend::IntegerBackend;
use rayon::prelude::*;
use rlwe::PublicKey;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The six comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Predicate {
    /// `a < b`.
    Lt,
    /// `a ≤ b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a ≥ b`.
    Ge,
    /// `a = b`.
    Eq,
    /// `a ≠ b`.
    Ne,
}

impl Predicate {
    /// The predicate on plaintext values.
    pub fn eval(self, a: i128, b: i128) -> bool {
        match self {
            Predicate::Lt => a < b,
            Predicate::Le => a <= b,
            Predicate::Gt => a > b,
            Predicate::Ge => a >= b,
            Predicate::Eq => a == b,
            Predicate::Ne => a != b,
        }
    }

    /// `(swap, uses LT, complement)`: `z = b - a` when `swap`, the LT circuit or the EQ one,
    /// and whether the result is `1 - …`.
    pub(crate) fn shape(self) -> (bool, bool, bool) {
        match self {
            Predicate::Lt => (false, true, false),
            Predicate::Gt => (true, true, false),
            Predicate::Le => (true, true, true),
            Predicate::Ge => (false, true, true),
            Predicate::Eq => (false, false, false),
            Predicate::Ne => (false, false, true),
        }
    }
}

/// The cost of one comparison circuit (per ciphertext, whatever its number of words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CircuitCost {
    /// Levels consumed.
    pub levels: usize,
    /// Ciphertext products (each relinearized: one key switch).
    pub products: usize,
    /// Row rotations (one key switch each).
    pub rotations: usize,
}

impl CircuitCost {
    /// Key switches: products and rotations.
    pub fn key_switches(&self) -> usize {
        self.products + self.rotations
    }
}

/// The right operand of a comparison: encrypted words or plaintext constants (one per word).
enum Rhs<'a, B: IntegerBackend> {
    Cipher(&'a EncryptedWords<B>),
    Plain(&'a [i128]),
}

/// The Paterson–Stockmeyer plan of least depth whose baby step is below every degree ≥ 2 (so
/// that every polynomial ends in a product, whose modulus switch leaves the noise at the
/// floor, rather than in a linear combination with coefficients up to `t/2`), with the
/// fewest products among those; [`PsPlan::new`] when no such step reaches the least depth.
fn split_plan(degrees: &[usize]) -> PsPlan {
    let best = PsPlan::new(degrees);
    let low = degrees.iter().copied().min().unwrap_or(0);
    (1..low)
        .filter_map(|k| PsPlan::with_baby_step(degrees, k).ok())
        .filter(|p| p.depth() == best.depth())
        .min_by_key(|p| p.multiplications())
        .unwrap_or(best)
}

/// The error of a lock whose holder panicked.
fn poisoned() -> Error {
    Error::Worker {
        reason: "a thread panicked while holding the mask cache".into(),
    }
}

/// The digit polynomials on `[-(r-1), r-1]` with their plans.
pub(crate) struct DigitCircuit {
    pub polys: DigitPolynomials,
    pub plan_lt: PsPlan,
    pub plan_eq: PsPlan,
}

impl DigitCircuit {
    fn new(r: u64, t: u64) -> Result<Self> {
        let polys = DigitPolynomials::new(r, t)?;
        Ok(DigitCircuit {
            plan_lt: split_plan(&[polys.eq().degree(), polys.sign().degree()]),
            plan_eq: split_plan(&[polys.eq().degree()]),
            polys,
        })
    }
}

/// Compares encrypted words of one [`DigitLayout`] (module documentation).
pub struct Comparator<B: IntegerBackend> {
    ctx: Context<B>,
    eval: Evaluator<B>,
    layout: DigitLayout,
    keys: CompareKeys<B>,
    digits: DigitCircuit,
    /// The digit functions on `[-s, s]`: for a lowest-digit difference shifted by -1
    /// (`a ≤ b` as `a < b + 1` in [`crate::array`]).
    wide: DigitCircuit,
    /// Products and rotations made by the comparison circuits so far.
    counters: [AtomicUsize; 2],
    /// Whether independent parts of a circuit run on two rayon tasks.
    parallel: AtomicBool,
    /// The plaintext with 1 in every lead slot, per level (encoded once).
    lead_masks: Mutex<HashMap<usize, Arc<Plaintext<B>>>>,
}

impl<B: IntegerBackend> Comparator<B> {
    /// A comparator for `layout` with `keys` (from [`CompareKeys::generate`]).
    ///
    /// Errors: a layout for another slot count, a plaintext modulus without batching or too
    /// small for the digit differences ([`Error::InvalidLayout`]).
    pub fn new(ctx: &Context<B>, layout: DigitLayout, keys: CompareKeys<B>) -> Result<Self> {
        let enc = Encoder::new(ctx);
        let slots = enc.slot_count();
        if slots != layout.slot_count() {
            return Err(Error::InvalidLayout {
                reason: format!(
                    "the layout is for {} slots, the parameters have {slots}",
                    layout.slot_count()
                ),
            });
        }
        let t = ctx.params().t();
        let too_small = |_| Error::InvalidLayout {
            reason: format!(
                "t = {t} is too small for base {} digits (needs t > 2s)",
                layout.base()
            ),
        };
        let digits = DigitCircuit::new(layout.base(), t).map_err(too_small)?;
        let wide = DigitCircuit::new(layout.base() + 1, t).map_err(too_small)?;
        Ok(Comparator {
            ctx: ctx.clone(),
            eval: Evaluator::new(ctx),
            layout,
            keys,
            digits,
            wide,
            counters: Default::default(),
            parallel: AtomicBool::new(true),
            lead_masks: Mutex::new(HashMap::new()),
        })
    }

    /// The layout.
    pub fn layout(&self) -> &DigitLayout {
        &self.layout
    }

    /// The context.
    pub fn context(&self) -> &Context<B> {
        &self.ctx
    }

    /// The evaluator.
    pub fn evaluator(&self) -> &Evaluator<B> {
        &self.eval
    }

    /// The keys.
    pub fn keys(&self) -> &CompareKeys<B> {
        &self.keys
    }

    /// The Paterson–Stockmeyer plan of the LT circuit (`e` and `h` together).
    pub fn plan_lt(&self) -> &PsPlan {
        &self.digits.plan_lt
    }

    /// The Paterson–Stockmeyer plan of the EQ circuit (`e` alone).
    pub fn plan_eq(&self) -> &PsPlan {
        &self.digits.plan_eq
    }

    /// The ciphertext products and row rotations the comparison circuits have made so far
    /// (all threads; a measurement of [`Comparator::cost`]).
    pub fn counters(&self) -> (usize, usize) {
        (
            self.counters[0].load(Ordering::Relaxed),
            self.counters[1].load(Ordering::Relaxed),
        )
    }

    /// Turns digit-level parallelism on (the default) or off: the independent halves of each
    /// combination step (the `LT` and the `EQ` chain: a rotation and a product each) run as two
    /// rayon tasks (`rayon::join`), as do the ciphertexts of a vector. The results are the same
    /// bits either way.
    pub fn set_digit_parallelism(&self, on: bool) {
        self.parallel.store(on, Ordering::Relaxed);
    }

    /// Whether digit-level parallelism is on.
    pub fn digit_parallelism(&self) -> bool {
        self.parallel.load(Ordering::Relaxed)
    }

    /// `(a(), b())`, as two rayon tasks when digit-level parallelism is on.
    pub(crate) fn join<RA: Send, RB: Send>(
        &self,
        a: impl FnOnce() -> RA + Send,
        b: impl FnOnce() -> RB + Send,
    ) -> (RA, RB) {
        if self.digit_parallelism() {
            rayon::join(a, b)
        } else {
            (a(), b())
        }
    }

    pub(crate) fn count(&self, products: usize, rotations: usize) {
        self.counters[0].fetch_add(products, Ordering::Relaxed);
        self.counters[1].fetch_add(rotations, Ordering::Relaxed);
    }

    /// The digit polynomials.
    pub fn polys(&self) -> &DigitPolynomials {
        &self.digits.polys
    }

    /// The digit circuit on `[-(s-1), s-1]`, or on `[-s, s]` when `wide`.
    pub(crate) fn digit_circuit(&self, wide: bool) -> &DigitCircuit {
        if wide { &self.wide } else { &self.digits }
    }

    // ----- encoding, encryption, decryption -----------------------------------------------

    /// The plaintexts (one per ciphertext, at `level`) of `values` in the digit layout.
    /// Errors: a value out of the word's range ([`Error::ValueOutOfRange`]).
    pub fn encode(&self, values: &[i128], level: usize) -> Result<Vec<Plaintext<B>>> {
        let enc = Encoder::new(&self.ctx);
        values
            .chunks(self.layout.words_per_ciphertext())
            .map(|c| Ok(enc.encode(&self.layout.encode(c)?, level)?))
            .collect()
    }

    /// `values` encrypted under `pk` at the top level.
    pub fn encrypt(&self, pk: &PublicKey<B>, values: &[i128]) -> Result<EncryptedWords<B>> {
        let top = self.ctx.params().max_level();
        let cts = self
            .encode(values, top)?
            .iter()
            .map(|p| Ok(self.ctx.encrypt_pk(pk, p)?))
            .collect::<Result<Vec<_>>>()?;
        Ok(EncryptedWords {
            cts,
            len: values.len(),
            clean: true,
        })
    }

    /// [`Comparator::encrypt`] of unsigned values.
    pub fn encrypt_u64(&self, pk: &PublicKey<B>, values: &[u64]) -> Result<EncryptedWords<B>> {
        let v: Vec<i128> = values.iter().map(|&x| x as i128).collect();
        self.encrypt(pk, &v)
    }

    /// [`Comparator::encrypt`] of signed values.
    pub fn encrypt_i64(&self, pk: &PublicKey<B>, values: &[i64]) -> Result<EncryptedWords<B>> {
        let v: Vec<i128> = values.iter().map(|&x| x as i128).collect();
        self.encrypt(pk, &v)
    }

    /// The words of an encrypted vector.
    pub fn decrypt(&self, dec: &Decryptor<'_, B>, w: &EncryptedWords<B>) -> Result<Vec<i128>> {
        let cap = self.layout.words_per_ciphertext();
        let mut out = Vec::with_capacity(w.len);
        for (i, ct) in w.cts.iter().enumerate() {
            let count = cap.min(w.len - i * cap);
            out.extend(self.layout.decode(&dec.decrypt(ct)?, count));
        }
        Ok(out)
    }

    /// The values in the lead slots of an encrypted bit vector (0/1 for comparison results).
    pub fn decrypt_bits(&self, dec: &Decryptor<'_, B>, b: &EncryptedBits<B>) -> Result<Vec<u64>> {
        let cap = self.layout.words_per_ciphertext();
        let mut out = Vec::with_capacity(b.len);
        for (i, ct) in b.cts.iter().enumerate() {
            let count = cap.min(b.len - i * cap);
            out.extend(self.layout.decode_leads(&dec.decrypt(ct)?, count));
        }
        Ok(out)
    }

    // ----- comparisons ----------------------------------------------------------------------

    /// The levels a comparison consumes ([`DigitLayout::levels`]): the input must be at least
    /// at this level.
    pub fn levels(&self, p: Predicate) -> usize {
        self.layout.levels(p)
    }

    /// Levels, products and rotations of the circuit of `p` (per ciphertext).
    pub fn cost(&self, p: Predicate) -> CircuitCost {
        let (_, lt, _) = p.shape();
        let steps = self.layout.block().trailing_zeros() as usize;
        let (ps, own) = if lt {
            (self.digits.plan_lt.multiplications(), 2)
        } else {
            (self.digits.plan_eq.multiplications(), 1)
        };
        let tree = if lt && steps > 0 {
            2 * steps - 1
        } else {
            steps
        };
        CircuitCost {
            levels: self.levels(p),
            products: own + ps + tree,
            rotations: tree,
        }
    }

    /// `p(a_i, b_i)` for every word: 0/1 in the lead slots (module documentation).
    ///
    /// Errors: vectors of different lengths ([`Error::Mismatch`]), an input below
    /// [`Comparator::levels`] ([`Error::NotEnoughLevels`]), and the BGV errors (keys, noise).
    /// Encrypted digits outside `[0, s)` give unspecified results.
    pub fn compare(
        &self,
        a: &EncryptedWords<B>,
        b: &EncryptedWords<B>,
        p: Predicate,
    ) -> Result<EncryptedBits<B>> {
        if a.len != b.len {
            return Err(Error::Mismatch {
                op: "compare",
                reason: format!("vectors of {} and {} words", a.len, b.len),
            });
        }
        self.compare_impl(a, Rhs::Cipher(b), p, None)
    }

    /// `weights_j·p(a_j, b_j)` (weights mod `t`) in the lead slots at the cost of `p` alone
    /// (the weights enter the final plaintext mask): e.g. the values to sum where a
    /// predicate holds. Errors as [`Comparator::compare`].
    pub fn compare_weighted(
        &self,
        a: &EncryptedWords<B>,
        b: &EncryptedWords<B>,
        p: Predicate,
        weights: &[u64],
    ) -> Result<EncryptedBits<B>> {
        if a.len != b.len || a.len != weights.len() {
            return Err(Error::Mismatch {
                op: "compare with weights",
                reason: format!(
                    "vectors of {} and {} words, {} weights",
                    a.len,
                    b.len,
                    weights.len()
                ),
            });
        }
        self.compare_impl(a, Rhs::Cipher(b), p, Some(weights))
    }

    /// `p(a_i, c_i)` for plaintext constants `c` (one per word). Errors as
    /// [`Comparator::compare`], and a constant outside the word range
    /// ([`Error::ValueOutOfRange`]).
    pub fn compare_plain(
        &self,
        a: &EncryptedWords<B>,
        c: &[i128],
        p: Predicate,
    ) -> Result<EncryptedBits<B>> {
        if a.len != c.len() {
            return Err(Error::Mismatch {
                op: "compare with constants",
                reason: format!("{} words and {} constants", a.len, c.len()),
            });
        }
        for &v in c {
            self.layout.word().offset(v)?;
        }
        self.compare_impl(a, Rhs::Plain(c), p, None)
    }

    /// `p(a_i, c)` for one constant `c` and every word.
    pub fn compare_scalar(
        &self,
        a: &EncryptedWords<B>,
        c: i128,
        p: Predicate,
    ) -> Result<EncryptedBits<B>> {
        self.compare_plain(a, &vec![c; a.len], p)
    }

    fn compare_impl(
        &self,
        a: &EncryptedWords<B>,
        b: Rhs<'_, B>,
        p: Predicate,
        weights: Option<&[u64]>,
    ) -> Result<EncryptedBits<B>> {
        let op = "compare";
        let needed = self.levels(p);
        let level = match &b {
            Rhs::Cipher(b) => a.level().min(b.level()),
            Rhs::Plain(_) => a.level(),
        };
        if level < needed && a.len > 0 {
            return Err(Error::NotEnoughLevels {
                op,
                needed,
                available: level,
            });
        }
        let cap = self.layout.words_per_ciphertext();
        let t = self.ctx.params().t();
        let clean = a.clean
            && match &b {
                Rhs::Cipher(b) => b.clean,
                Rhs::Plain(_) => true,
            };
        let one = |i: usize| -> Result<Ciphertext<B>> {
            let count = cap.min(a.len - i * cap);
            let z = match &b {
                Rhs::Cipher(b) => self.diff(&a.cts[i], &b.cts[i], p)?,
                Rhs::Plain(c) => {
                    let chunk = &c[i * cap..i * cap + count];
                    self.diff_plain(&a.cts[i], chunk, p)?
                }
            };
            let w = weights.map(|w| &w[i * cap..i * cap + count]);
            self.circuit(&z, &Affine::of(p, count, t, w), false, clean)
        };
        let cts = if self.digit_parallelism() {
            (0..a.cts.len())
                .into_par_iter()
                .map(one)
                .collect::<Result<Vec<_>>>()?
        } else {
            (0..a.cts.len()).map(one).collect::<Result<Vec<_>>>()?
        };
        Ok(EncryptedBits { cts, len: a.len })
    }

    /// `a - b`, or `b - a` when the predicate swaps.
    fn diff(&self, a: &Ciphertext<B>, b: &Ciphertext<B>, p: Predicate) -> Result<Ciphertext<B>> {
        let (swap, _, _) = p.shape();
        Ok(if swap {
            self.eval.sub(b, a)?
        } else {
            self.eval.sub(a, b)?
        })
    }

    fn diff_plain(&self, a: &Ciphertext<B>, c: &[i128], p: Predicate) -> Result<Ciphertext<B>> {
        let (swap, _, _) = p.shape();
        let enc = self.eval.encoder();
        let pt = enc.encode(&self.layout.encode(c)?, a.level())?;
        let z = self.eval.sub_plain(a, &pt)?;
        Ok(if swap { self.eval.negate(&z)? } else { z })
    }

    /// The plaintext with 1 in every lead slot at `level`, encoded on first use and kept.
    pub(crate) fn all_leads_mask(&self, level: usize) -> Result<Arc<Plaintext<B>>> {
        if let Some(p) = self.lead_masks.lock().map_err(|_| poisoned())?.get(&level) {
            return Ok(p.clone());
        }
        let slots = self
            .layout
            .encode_leads(&vec![1; self.layout.words_per_ciphertext()])?;
        let p = Arc::new(self.eval.encoder().encode(&slots, level)?);
        self.lead_masks
            .lock()
            .map_err(|_| poisoned())?
            .insert(level, p.clone());
        Ok(p)
    }

    /// The mask plaintext: `value` in the lead slots of the first `count` blocks, at `level`.
    pub(crate) fn lead_mask(&self, value: u64, count: usize, level: usize) -> Result<Plaintext<B>> {
        let slots = self.layout.encode_leads(&vec![value; count])?;
        Ok(self.eval.encoder().encode(&slots, level)?)
    }
}

macro_rules! predicates {
    ($($name:ident, $plain:ident, $scalar:ident, $p:ident, $doc:literal;)*) => {
        impl<B: IntegerBackend> Comparator<B> {
            $(
                #[doc = concat!("`", $doc, "` word by word ([`Comparator::compare`]).")]
                pub fn $name(
                    &self,
                    a: &EncryptedWords<B>,
                    b: &EncryptedWords<B>,
                ) -> Result<EncryptedBits<B>> {
                    self.compare(a, b, Predicate::$p)
                }

                #[doc = concat!("`", $doc, "` against plaintext constants ([`Comparator::compare_plain`]).")]
                pub fn $plain(&self, a: &EncryptedWords<B>, c: &[i128]) -> Result<EncryptedBits<B>> {
                    self.compare_plain(a, c, Predicate::$p)
                }

                #[doc = concat!("`", $doc, "` against one constant ([`Comparator::compare_scalar`]).")]
                pub fn $scalar(&self, a: &EncryptedWords<B>, c: i128) -> Result<EncryptedBits<B>> {
                    self.compare_scalar(a, c, Predicate::$p)
                }
            )*
        }
    };
}

predicates! {
    lt, lt_plain, lt_scalar, Lt, "a < b";
    le, le_plain, le_scalar, Le, "a ≤ b";
    gt, gt_plain, gt_scalar, Gt, "a > b";
    ge, ge_plain, ge_scalar, Ge, "a ≥ b";
    eq, eq_plain, eq_scalar, Eq, "a = b";
    ne, ne_plain, ne_scalar, Ne, "a ≠ b";
}
