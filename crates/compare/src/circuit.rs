//! The comparison circuit on one ciphertext of digit differences, ending in an affine
//! combination of the word results weighted per word: lead slot `j` of the output is
//! `c_j + l_j·LT_j + e_j·EQ_j` (`LT_j = [z_j < 0]`, `EQ_j = [z_j = 0]` for the word difference
//! `z_j`), every other slot 0. The six predicates are such combinations (`≥ = 1 - <`,
//! `≠ = 1 - =`); others (a comparison times a value, `>` from `<` and `=` of one circuit) cost
//! the same or one product more. See [`crate::comparator`] for the steps.

use crate::comparator::{Comparator, Predicate};
use crate::digit_poly::inv_mod;
use crate::error::Result;
use crate::factors;
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

/// The common value of `v`, if all its entries are equal (and it is not empty).
fn uniform(v: &[u64]) -> Option<u64> {
    let first = *v.first()?;
    v.iter().all(|&x| x == first).then_some(first)
}

/// How the final plaintext factors weight a part (`LT` or `EQ`) of the output.
enum Weights<'a> {
    /// Not present.
    Absent,
    /// The same weight `λ` for every word: the 0/1 mask of all lead slots, `λ` by relabelling
    /// the factor (no noise).
    Uniform(u64),
    /// One weight per word in the mask itself (the mask's norm adds noise).
    PerWord(&'a [u64]),
}

impl<'a> Weights<'a> {
    /// The weights `v` of the words present; uniform ones use the mask of all lead slots only
    /// when the blocks past them are `clean`.
    fn of(v: &'a [u64], clean: bool) -> Self {
        match uniform(v) {
            _ if !nonzero(v) => Weights::Absent,
            Some(l) if clean => Weights::Uniform(l),
            _ => Weights::PerWord(v),
        }
    }
}

impl<B: IntegerBackend> Comparator<B> {
    /// `Σ` of the present terms (at least one), factors aligned by small multipliers.
    fn sum_terms(&self, terms: Vec<Ciphertext<B>>) -> Result<Ciphertext<B>> {
        let mut it = terms.into_iter();
        let mut acc = it.next().expect("at least one term");
        for t in it {
            acc = factors::add(self.evaluator(), &acc, &t)?;
        }
        Ok(acc)
    }

    /// `x ⊙ μ` for the plaintext `μ` with `values` (mod `t`) in the lead slots of the first
    /// `values.len()` blocks, at `x`'s level.
    fn times_leads(&self, x: &Ciphertext<B>, values: &[u64]) -> Result<Ciphertext<B>> {
        let slots = self.layout().encode_leads(values)?;
        let p = self.evaluator().encoder().encode(&slots, x.level())?;
        Ok(self.evaluator().mul_plain(x, &p)?)
    }

    /// `x·y` relinearized and switched down, counted.
    fn mul(&self, x: &Ciphertext<B>, y: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.count(1, 0);
        Ok(self.evaluator().mul_relin(x, y, &self.keys().relin)?)
    }

    /// `x` rotated left by `step` within the rows, counted.
    fn rot(&self, x: &Ciphertext<B>, step: i64) -> Result<Ciphertext<B>> {
        self.count(0, 1);
        Ok(self.evaluator().rotate_rows(x, step, &self.keys().galois)?)
    }

    /// `x` times the mask of `w` ([`Weights`]): `None` when absent.
    fn weighted(&self, x: &Ciphertext<B>, w: &Weights<'_>) -> Result<Option<Ciphertext<B>>> {
        Ok(match w {
            Weights::Absent => None,
            Weights::Uniform(l) => {
                let mask = self.all_leads_mask(x.level())?;
                let m = self.evaluator().mul_plain(x, &mask)?;
                Some(factors::scale(self.context(), m, *l)?)
            }
            Weights::PerWord(v) => Some(self.times_leads(x, v)?),
        })
    }

    /// The circuit on the differences `z` of `count` words (module documentation of
    /// [`crate::comparator`]). Blocks past `count` (zero digits on both sides) get the
    /// difference 1 in every slot first, so that their `LT` and `EQ` are 0 and the mask of all
    /// lead slots (cheap: a periodic pattern has a short polynomial) is enough.
    ///
    /// `wide`: the digit functions on `[-s, s]` (a shifted lowest digit); `clean`: the blocks
    /// past `count` hold zero differences (else the mask is restricted to the words present).
    pub(crate) fn circuit(
        &self,
        z: &Ciphertext<B>,
        a: &Affine,
        wide: bool,
        clean: bool,
    ) -> Result<Ciphertext<B>> {
        let ev = self.evaluator();
        let ctx = self.context();
        let rlk = &self.keys().relin;
        let t = ctx.params().t();
        let layout = self.layout();
        let count = a.c.len();
        let dc = self.digit_circuit(wide);
        let z = if clean && count < layout.words_per_ciphertext() {
            let mut slots = vec![0u64; layout.slot_count()];
            slots[layout.lead_slot(count)..].fill(1);
            ev.add_plain(z, &ev.encoder().encode(&slots, z.level())?)?
        } else {
            z.duplicate(ctx.backend())?
        };
        let inv2 = inv_mod(2, t);
        let lw: Vec<u64> =
            a.l.iter()
                .map(|&x| (x as u128 * inv2 as u128 % t as u128) as u64)
                .collect();
        let w = self.mul(&z, &z)?;
        // `l` carries `2·LT = 1 - EQ - sign` (its weights are halved).
        let (mut l, mut eq) = if a.needs_lt() {
            let polys = [dc.polys.eq().clone(), dc.polys.sign().clone()];
            let (mut out, made) =
                ev.evaluate_polynomials_with_plan(&w, &polys, &dc.plan_lt, rlk)?;
            self.count(made, 0);
            let h = out.pop().expect("two outputs");
            let eq = out.pop().expect("two outputs");
            let zh = self.mul(&z, &h)?;
            let l = ev.add_scalar(&ev.negate(&factors::add(ev, &eq, &zh)?)?, 1)?;
            (Some(l), eq)
        } else {
            let polys = [dc.polys.eq().clone()];
            let (mut out, made) =
                ev.evaluate_polynomials_with_plan(&w, &polys, &dc.plan_eq, rlk)?;
            self.count(made, 0);
            (None, out.pop().expect("one output"))
        };
        let (wl, we) = (Weights::of(&lw, clean), Weights::of(&a.e, clean));
        let steps = layout.block().trailing_zeros();
        let mut terms = Vec::new();
        if steps == 0 {
            if let Some(l) = &l {
                terms.extend(self.weighted(l, &wl)?);
            }
            terms.extend(self.weighted(&eq, &we)?);
        }
        for step in 0..steps {
            let sigma = 1i64 << step;
            if step + 1 < steps {
                // The two halves of a step are independent: digit-level parallelism.
                let (new_l, new_eq) = self.join(
                    || {
                        l.as_ref()
                            .map(|lc| {
                                let l_lo = self.rot(lc, sigma)?;
                                factors::add(ev, lc, &self.mul(&eq, &l_lo)?)
                            })
                            .transpose()
                    },
                    || self.mul(&eq, &self.rot(&eq, sigma)?),
                );
                l = new_l?;
                eq = new_eq?;
                continue;
            }
            // Last step: the weights folded into the plaintext factors of the high halves.
            let (l_terms, e_term) = self.join(
                || -> Result<Vec<Ciphertext<B>>> {
                    let mut out = Vec::new();
                    if let (Some(lc), Some(m_eq)) = (&l, self.weighted(&eq, &wl)?) {
                        let l_lo = self.rot(lc, sigma)?;
                        out.extend(self.weighted(lc, &wl)?);
                        out.push(self.mul(&m_eq, &l_lo)?);
                    }
                    Ok(out)
                },
                || -> Result<Option<Ciphertext<B>>> {
                    self.weighted(&eq, &we)?
                        .map(|m_eq| self.mul(&m_eq, &self.rot(&eq, sigma)?))
                        .transpose()
                },
            );
            terms.extend(l_terms?);
            terms.extend(e_term?);
        }
        if terms.is_empty() {
            // Only a constant: `0·EQ` keeps the level and the layout.
            let zero = vec![0; layout.words_per_ciphertext()];
            terms.push(self.times_leads(&eq, &zero)?);
        }
        let mut r = self.sum_terms(terms)?;
        if nonzero(&a.c) {
            let top = ctx.params().max_level();
            let slots = layout.encode_leads(&a.c)?;
            r = ev.add_plain(&r, &ev.encoder().encode(&slots, top)?)?;
        }
        if steps == 0 && r.level() > 0 {
            ev.mod_switch_assign(&mut r)?;
        }
        Ok(r)
    }
}
