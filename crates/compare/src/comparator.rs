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
//! 4. the last step multiplies by the plaintext **mask** `μ` (`μ = 2^{-1} mod t` in the lead
//!    slots of the words present, 0 elsewhere): `μ·L_hi + (μ·EQ_hi)·rot(L, σ)`, so the mask
//!    costs no level of its own (with `B = 1` it is one plaintext product and a switch).
//!
//! `EQ` alone (`=`, `≠`) skips `h` and `L`. The complements (`≥ = 1 - <`, `≤ = 1 - >`,
//! `≠ = 1 - =`) are taken inside the mask: `μ·(2 - L_hi) - (μ·EQ_hi)·rot(L, σ)`.
//!
//! Levels consumed ([`Comparator::levels`], checked by measurement in the tests):
//! `d_EQ = 1 + ⌈log2(s-1)⌉`, `d_L = max(d_EQ, 2 + ⌈log2(s-2)⌉)`, then `log2 B` combination
//! steps of one level each (one level for the mask when `B = 1`): `LT` takes
//! `d_L + max(log2 B, 1)`, `EQ` `d_EQ + max(log2 B, 1)`.

use crate::digit_poly::{DigitPolynomials, inv_mod};
use crate::error::{Error, Result};
use crate::keys::CompareKeys;
use crate::layout::DigitLayout;
use crate::vectors::{EncryptedBits, EncryptedWords};
use bgv::poly_eval::ceil_log2;
use bgv::{Ciphertext, Context, Decryptor, Encoder, Evaluator, Plaintext, PsPlan, RowRotations};
use fhe_math::backend::IntegerBackend;
use rayon::prelude::*;
use rlwe::PublicKey;

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
    fn shape(self) -> (bool, bool, bool) {
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

/// Compares encrypted words of one [`DigitLayout`] (module documentation).
pub struct Comparator<B: IntegerBackend> {
    ctx: Context<B>,
    eval: Evaluator<B>,
    layout: DigitLayout,
    keys: CompareKeys<B>,
    polys: DigitPolynomials,
    plan_lt: PsPlan,
    plan_eq: PsPlan,
    inv2: u64,
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
        let polys = DigitPolynomials::new(layout.base(), t).map_err(|_| Error::InvalidLayout {
            reason: format!(
                "t = {t} is too small for base {} digits (needs t > 2(s-1))",
                layout.base()
            ),
        })?;
        let plan_lt = PsPlan::new(&[polys.eq().degree(), polys.sign().degree()]);
        let plan_eq = PsPlan::new(&[polys.eq().degree()]);
        Ok(Comparator {
            ctx: ctx.clone(),
            eval: Evaluator::new(ctx),
            layout,
            keys,
            polys,
            plan_lt,
            plan_eq,
            inv2: inv_mod(2, t),
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
        &self.plan_lt
    }

    /// The Paterson–Stockmeyer plan of the EQ circuit (`e` alone).
    pub fn plan_eq(&self) -> &PsPlan {
        &self.plan_eq
    }

    fn rlk(&self) -> &rlwe::RelinKey<B> {
        &self.keys.relin
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

    /// The levels a comparison consumes (module documentation): the input must be at least at
    /// this level.
    pub fn levels(&self, p: Predicate) -> usize {
        let (_, lt, _) = p.shape();
        let s = self.layout.base() as usize;
        let steps = self.layout.block().trailing_zeros() as usize;
        // `w`, then `e(w)`; `z·h(w)` one level after `h` (never before `e`).
        let eq = 1 + ceil_log2(s - 1);
        let l = if lt {
            (2 + ceil_log2(s - 2)).max(eq)
        } else {
            eq
        };
        // One level per combination step (`EQ` stays at or above `L`); with `B = 1` the mask's
        // product and switch take the level instead.
        l + steps.max(1)
    }

    /// Levels, products and rotations of the circuit of `p` (per ciphertext).
    pub fn cost(&self, p: Predicate) -> CircuitCost {
        let (_, lt, _) = p.shape();
        let steps = self.layout.block().trailing_zeros() as usize;
        let (ps, own) = if lt {
            (self.plan_lt.multiplications(), 2)
        } else {
            (self.plan_eq.multiplications(), 1)
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
        self.compare_impl(a, Rhs::Cipher(b), p)
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
        self.compare_impl(a, Rhs::Plain(c), p)
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
        let cts = (0..a.cts.len())
            .into_par_iter()
            .map(|i| {
                let count = cap.min(a.len - i * cap);
                let z = match &b {
                    Rhs::Cipher(b) => self.diff(&a.cts[i], &b.cts[i], p)?,
                    Rhs::Plain(c) => {
                        let chunk = &c[i * cap..i * cap + count];
                        self.diff_plain(&a.cts[i], chunk, p)?
                    }
                };
                self.compare_ciphertext(&z, p, count)
            })
            .collect::<Result<Vec<_>>>()?;
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

    /// The mask plaintext: `value` in the lead slots of the first `count` blocks, at `level`.
    pub(crate) fn lead_mask(&self, value: u64, count: usize, level: usize) -> Result<Plaintext<B>> {
        let slots = self.layout.encode_leads(&vec![value; count])?;
        Ok(self.eval.encoder().encode(&slots, level)?)
    }

    /// The comparison circuit on one ciphertext of differences `z` (module documentation).
    fn compare_ciphertext(
        &self,
        z: &Ciphertext<B>,
        p: Predicate,
        count: usize,
    ) -> Result<Ciphertext<B>> {
        let (_, lt, complement) = p.shape();
        let ev = &self.eval;
        let w = ev.square_relin(z, self.rlk())?;
        let (mut l, mut eq, scale) = if lt {
            let polys = [self.polys.eq().clone(), self.polys.sign().clone()];
            let (mut out, _) =
                ev.evaluate_polynomials_with_plan(&w, &polys, &self.plan_lt, self.rlk())?;
            let h = out.pop().expect("two outputs");
            let eq = out.pop().expect("two outputs");
            let zh = ev.mul_relin(z, &h, self.rlk())?;
            let l = ev.add_scalar(&ev.negate(&ev.add(&eq, &zh)?)?, 1)?;
            (l, eq, self.inv2)
        } else {
            let polys = [self.polys.eq().clone()];
            let (mut out, _) =
                ev.evaluate_polynomials_with_plan(&w, &polys, &self.plan_eq, self.rlk())?;
            let eq = out.pop().expect("one output");
            (eq.duplicate(self.ctx.backend())?, eq, 1)
        };
        // `k - x` is the complement of `x` carried at scale `1/scale`.
        let k = if lt { 2 } else { 1 };
        let steps = self.layout.block().trailing_zeros();
        let gk = &self.keys.galois;
        if steps == 0 {
            let x = if complement {
                ev.add_scalar(&ev.negate(&l)?, k)?
            } else {
                l
            };
            let mask = self.lead_mask(scale, count, x.level())?;
            let mut r = ev.mul_plain(&x, &mask)?;
            if r.level() > 0 {
                ev.mod_switch_assign(&mut r)?;
            }
            return Ok(r);
        }
        for step in 0..steps {
            let sigma = 1i64 << step;
            let l_lo = ev.rotate_rows(&l, sigma, gk)?;
            if step + 1 < steps {
                if lt {
                    let eq_lo = ev.rotate_rows(&eq, sigma, gk)?;
                    let prod = ev.mul_relin(&eq, &l_lo, self.rlk())?;
                    l = ev.add(&l, &prod)?;
                    eq = ev.mul_relin(&eq, &eq_lo, self.rlk())?;
                } else {
                    l = ev.mul_relin(&l, &l_lo, self.rlk())?;
                }
                continue;
            }
            // Last step, the mask folded in.
            let mask_eq = self.lead_mask(scale, count, eq.level())?;
            let m_eq = ev.mul_plain(if lt { &eq } else { &l }, &mask_eq)?;
            let prod = ev.mul_relin(&m_eq, &l_lo, self.rlk())?;
            let hi = if lt {
                let x = if complement {
                    ev.add_scalar(&ev.negate(&l)?, k)?
                } else {
                    l.duplicate(self.ctx.backend())?
                };
                let mask_l = self.lead_mask(scale, count, x.level())?;
                Some(ev.mul_plain(&x, &mask_l)?)
            } else if complement {
                None
            } else {
                return Ok(prod);
            };
            return Ok(match (hi, complement) {
                (Some(hi), false) => ev.add(&hi, &prod)?,
                (Some(hi), true) => ev.sub(&hi, &prod)?,
                (None, _) => {
                    let top = self.ctx.params().max_level();
                    let mask = self.lead_mask(1, count, top)?;
                    ev.add_plain(&ev.negate(&prod)?, &mask)?
                }
            });
        }
        unreachable!("the loop returns at its last step")
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
