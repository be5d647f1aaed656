//! The comparison circuit on one ciphertext of digit differences, ending in an affine
//! combination of the word results weighted per word: lead slot `j` of the output is
//! `c_j + l_j·LT_j + e_j·EQ_j` (`LT_j = [z_j < 0]`, `EQ_j = [z_j = 0]` for the word difference
//! `z_j`), every other slot 0. The six predicates are such combinations (`≥ = 1 - <`,
//! `≠ = 1 - =`); others (a comparison times a value, `>` from `<` and `=` of one circuit) cost
//! the same or one product more. See [`crate::comparator`] for the steps.

use crate::comparator::{Comparator, Predicate};
use crate::error::Result;
use bgv::{Ciphertext, RowRotations};
use fhe_math::backend::IntegerBackend;

/// Per-word weights `(c, l, e)` (mod `t`) of one ciphertext's output (module documentation).
#[derive(Clone, Debug)]
pub(crate) struct Affine {
    pub c: Vec<u64>,
    pub l: Vec<u64>,
    pub e: Vec<u64>,
}

impl Affine {
    /// The weights of `p` (after the swap of `>` and `≤`) for `count` words, each result times
    /// `weights[j]` (1 without weights).
    pub fn of(p: Predicate, count: usize, t: u64, weights: Option<&[u64]>) -> Affine {
        let w: Vec<u64> = match weights {
            Some(w) => w.iter().map(|&x| x % t).collect(),
            None => vec![1; count],
        };
        let neg: Vec<u64> = w.iter().map(|&x| (t - x) % t).collect();
        let zero = vec![0; count];
        let (c, l, e) = match p {
            Predicate::Lt | Predicate::Gt => (zero.clone(), w, zero),
            Predicate::Le | Predicate::Ge => (w, neg, zero),
            Predicate::Eq => (zero.clone(), zero, w),
            Predicate::Ne => (w, zero, neg),
        };
        Affine { c, l, e }
    }

    /// Whether the LT part is needed (else the cheaper EQ circuit runs).
    pub fn needs_lt(&self) -> bool {
        self.l.iter().any(|&x| x != 0)
    }
}

fn nonzero(v: &[u64]) -> bool {
    v.iter().any(|&x| x != 0)
}

impl<B: IntegerBackend> Comparator<B> {
    /// `Σ` of the present terms (at least one).
    fn sum_terms(&self, terms: Vec<Ciphertext<B>>) -> Result<Ciphertext<B>> {
        let ev = self.evaluator();
        let mut it = terms.into_iter();
        let mut acc = it.next().expect("at least one term");
        for t in it {
            acc = ev.add(&acc, &t)?;
        }
        Ok(acc)
    }

    /// `x ⊙ μ` for the plaintext `μ` with `values` (mod `t`) in the lead slots, at `x`'s level.
    fn times_leads(&self, x: &Ciphertext<B>, values: &[u64]) -> Result<Ciphertext<B>> {
        let slots = self.layout().encode_leads(values)?;
        let p = self.evaluator().encoder().encode(&slots, x.level())?;
        Ok(self.evaluator().mul_plain(x, &p)?)
    }

    /// The circuit on the differences `z` (module documentation of [`crate::comparator`]).
    pub(crate) fn circuit(&self, z: &Ciphertext<B>, a: &Affine) -> Result<Ciphertext<B>> {
        let ev = self.evaluator();
        let rlk = &self.keys().relin;
        let gk = &self.keys().galois;
        let t = self.context().params().t();
        let inv2 = crate::digit_poly::inv_mod(2, t);
        let half = |v: &[u64]| -> Vec<u64> {
            v.iter()
                .map(|&x| (x as u128 * inv2 as u128 % t as u128) as u64)
                .collect()
        };
        let w = ev.square_relin(z, rlk)?;
        // `l` carries `2·LT` (`1 - EQ - sign`), so its weights are halved.
        let (mut l, mut eq) = if a.needs_lt() {
            let polys = [self.polys().eq().clone(), self.polys().sign().clone()];
            let (mut out, _) =
                ev.evaluate_polynomials_with_plan(&w, &polys, self.plan_lt(), rlk)?;
            let h = out.pop().expect("two outputs");
            let eq = out.pop().expect("two outputs");
            let zh = ev.mul_relin(z, &h, rlk)?;
            let l = ev.add_scalar(&ev.negate(&ev.add(&eq, &zh)?)?, 1)?;
            (Some(l), eq)
        } else {
            let polys = [self.polys().eq().clone()];
            let (mut out, _) =
                ev.evaluate_polynomials_with_plan(&w, &polys, self.plan_eq(), rlk)?;
            (None, out.pop().expect("one output"))
        };
        let lw = half(&a.l);
        let (use_l, use_e, use_c) = (nonzero(&lw), nonzero(&a.e), nonzero(&a.c));
        let constant = |level: usize| -> Result<_> {
            let slots = self.layout().encode_leads(&a.c)?;
            Ok(ev.encoder().encode(&slots, level)?)
        };
        let top = self.context().params().max_level();
        let steps = self.layout().block().trailing_zeros();
        let mut terms = Vec::new();
        if steps == 0 {
            if let (true, Some(l)) = (use_l, &l) {
                terms.push(self.times_leads(l, &lw)?);
            }
            if use_e {
                terms.push(self.times_leads(&eq, &a.e)?);
            }
            let mut r = if terms.is_empty() {
                self.times_leads(&eq, &a.e)?
            } else {
                self.sum_terms(terms)?
            };
            if use_c {
                r = ev.add_plain(&r, &constant(top)?)?;
            }
            if r.level() > 0 {
                ev.mod_switch_assign(&mut r)?;
            }
            return Ok(r);
        }
        for step in 0..steps {
            let sigma = 1i64 << step;
            if step + 1 < steps {
                let eq_lo = ev.rotate_rows(&eq, sigma, gk)?;
                if let Some(lc) = l.as_mut() {
                    let l_lo = ev.rotate_rows(lc, sigma, gk)?;
                    *lc = ev.add(lc, &ev.mul_relin(&eq, &l_lo, rlk)?)?;
                }
                eq = ev.mul_relin(&eq, &eq_lo, rlk)?;
                continue;
            }
            // Last step: the lead weights folded into the plaintext factors.
            if let (true, Some(lc)) = (use_l, &l) {
                let l_lo = ev.rotate_rows(lc, sigma, gk)?;
                terms.push(self.times_leads(lc, &lw)?);
                terms.push(ev.mul_relin(&self.times_leads(&eq, &lw)?, &l_lo, rlk)?);
            }
            if use_e || terms.is_empty() {
                let eq_lo = ev.rotate_rows(&eq, sigma, gk)?;
                terms.push(ev.mul_relin(&self.times_leads(&eq, &a.e)?, &eq_lo, rlk)?);
            }
        }
        let mut r = self.sum_terms(terms)?;
        if use_c {
            r = ev.add_plain(&r, &constant(top)?)?;
        }
        Ok(r)
    }
}
