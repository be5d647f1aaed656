//! A private query (BoostCom's listing): the query type `q` is an encrypted 8-bit word
//! (base-2^4 digits), the server computes every branch on an encrypted column `x` and keeps
//! the one the type selects by `EQ`: `answer = Σ_k [q = k] · branch_k` in slot 0, with the
//! branches `Σ x_i` (type 0), `Σ x_i²` (type 1) and `Σ w_i·x_i` for plaintext weights `w`
//! (type 2). The comparisons can run on other threads ([`crate::Pending`]) while the
//! branches' arithmetic goes on (`overlap`).

use super::{PhaseClock, Phases};
use crate::comparator::{Comparator, Predicate};
use crate::error::{Error, Result};
use crate::keys::CompareKeys;
use crate::layout::{DigitLayout, WordType};
use bgv::{Ciphertext, Context, Decryptor, Encoder, RowRotations};
use fhe_math::backend::IntegerBackend;
use rlwe::{PublicKey, SecretKey};
use std::sync::Arc;

/// Slots of the column: its values sit in slots `0..SPAN` (the rest 0).
pub const SPAN: usize = 128;
/// The number of query types (branches).
pub const TYPES: usize = 3;

/// The private query, keys generated.
pub struct PrivateQuery<B: IntegerBackend> {
    cmp: Arc<Comparator<B>>,
    enc: Encoder<B>,
    sk: SecretKey<B>,
    pk: PublicKey<B>,
}

impl<B: IntegerBackend + 'static> PrivateQuery<B> {
    /// Generates the keys over `ctx` (relinearization, the comparison rotations of 8-bit words
    /// in base-2^4 digits, and the slot-sum rotations).
    pub fn new(ctx: &Context<B>) -> Result<Self> {
        let layout = DigitLayout::new(WordType::U8, 4, ctx.params().n())?;
        let kg = ctx.key_generator();
        let sk = kg.secret_key()?;
        let pk = kg.public_key(&sk)?;
        let keys = CompareKeys::generate_with_sums(ctx, &sk, &layout)?;
        Ok(PrivateQuery {
            cmp: Arc::new(Comparator::new(ctx, layout, keys)?),
            enc: Encoder::new(ctx),
            sk,
            pk,
        })
    }

    /// The sum of slots `0..SPAN` in slot 0 (`log2 SPAN` power-of-two rotations).
    fn sum_slots(&self, x: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        let ev = self.cmp.evaluator();
        let gk = &self.cmp.keys().galois;
        let mut acc = x.duplicate(self.cmp.context().backend())?;
        let mut s = 1;
        while s < SPAN {
            acc = ev.add(&acc, &ev.rotate_rows(&acc, s as i64, gk)?)?;
            s *= 2;
        }
        Ok(acc)
    }

    /// The three branches on the column `x` with plaintext weights `w`.
    fn branches(&self, x: &Ciphertext<B>, w: &[u64]) -> Result<Vec<Ciphertext<B>>> {
        let ev = self.cmp.evaluator();
        let sq = ev.mul_relin(x, x, &self.cmp.keys().relin)?;
        let wx = ev.mul_plain(x, &self.enc.encode(w, x.level())?)?;
        Ok(vec![
            self.sum_slots(x)?,
            self.sum_slots(&sq)?,
            self.sum_slots(&wx)?,
        ])
    }

    /// Encrypts the column `x` (at most [`SPAN`] values) and the query type `q < 3`, answers
    /// the query (comparisons non-blocking when `overlap`), decrypts: the answer (mod `t`),
    /// the level left, and the phases' times.
    pub fn run(&self, x: &[u64], w: &[u64], q: u8, overlap: bool) -> Result<(u64, usize, Phases)> {
        if x.len() > SPAN || w.len() != x.len() || usize::from(q) >= TYPES {
            return Err(Error::InvalidArgument {
                op: "run the private query",
                reason: format!(
                    "expected at most {SPAN} values with as many weights and a type below {TYPES}, got {} values, {} weights, type {q}",
                    x.len(),
                    w.len()
                ),
            });
        }
        let ctx = self.cmp.context();
        let ev = self.cmp.evaluator();
        let dec = Decryptor::new(ctx, &self.sk);
        let mut clock = PhaseClock::start();
        let cx = ctx.encrypt_pk(&self.pk, &self.enc.encode(x, ctx.params().max_level())?)?;
        let cq = Arc::new(self.cmp.encrypt(&self.pk, &[i128::from(q)])?);
        clock.mark();
        let (eqs, br) = if overlap {
            let pending: Vec<_> = (0..TYPES as i128)
                .map(|k| self.cmp.compare_scalar_async(cq.clone(), k, Predicate::Eq))
                .collect();
            let br = self.branches(&cx, w)?;
            let eqs = pending
                .into_iter()
                .map(|p| p.join())
                .collect::<Result<Vec<_>>>()?;
            (eqs, br)
        } else {
            let eqs = (0..TYPES as i128)
                .map(|k| self.cmp.compare_scalar(&cq, k, Predicate::Eq))
                .collect::<Result<Vec<_>>>()?;
            (eqs, self.branches(&cx, w)?)
        };
        // Σ_k [q = k]·branch_k: the bit sits in slot 0 (other slots 0), the branch sum in
        // slot 0.
        let mut answer: Option<Ciphertext<B>> = None;
        for (e, b) in eqs.iter().zip(&br) {
            let term = ev.mul_relin(&e.ciphertexts()[0], b, &self.cmp.keys().relin)?;
            answer = Some(match answer {
                Some(a) => ev.add(&a, &term)?,
                None => term,
            });
        }
        let answer = answer.ok_or_else(|| Error::InvalidArgument {
            op: "run the private query",
            reason: "no branch".into(),
        })?;
        clock.mark();
        let got = dec.decrypt(&answer)?[0];
        clock.mark();
        Ok((got, answer.level(), clock.phases()))
    }
}

/// The same query on plaintext: branch `q` of the column `x` with weights `w`, mod `t`.
pub fn plain(x: &[u64], w: &[u64], q: u8, t: u64) -> u64 {
    match q {
        0 => x.iter().sum::<u64>() % t,
        1 => x.iter().map(|v| v * v).sum::<u64>() % t,
        _ => x.iter().zip(w).map(|(a, b)| a * b).sum::<u64>() % t,
    }
}
