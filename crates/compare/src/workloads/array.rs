//! Sort and minimum of `k ≤ 16` encrypted words by the comparison matrix
//! ([`Comparator::sort`], [`Comparator::array_min`]) at a preset such as
//! [`crate::presets::U32_THROUGHPUT`].

use super::{PhaseClock, Phases};
use crate::array::{ArrayInput, ArrayOp};
use crate::comparator::Comparator;
use crate::error::{Error, Result};
use crate::keys::CompareKeys;
use crate::presets::Preset;
use crate::vectors::EncryptedWords;
use bgv::{Context, Decryptor};
use fhe_math::backend::IntegerBackend;
use rlwe::{PublicKey, SecretKey};

/// A sort or minimum of `k` words, keys generated.
pub struct ArrayWorkload<B: IntegerBackend> {
    cmp: Comparator<B>,
    sk: SecretKey<B>,
    pk: PublicKey<B>,
    k: usize,
    op: ArrayOp,
}

impl<B: IntegerBackend> ArrayWorkload<B> {
    /// Generates the keys of `op` on `k` words of `preset`'s layout over `ctx` (whose
    /// parameters must be `preset.params`).
    pub fn new(ctx: &Context<B>, preset: &Preset, k: usize, op: ArrayOp) -> Result<Self> {
        let layout = preset.layout()?;
        let kg = ctx.key_generator();
        let sk = kg.secret_key()?;
        let pk = kg.public_key(&sk)?;
        let keys = CompareKeys::generate_for_array(ctx, &sk, &layout, k, op == ArrayOp::Sort)?;
        let cmp = Comparator::new(ctx, layout, keys)?;
        Ok(ArrayWorkload { cmp, sk, pk, k, op })
    }

    /// The comparator (counters, digit parallelism, levels).
    pub fn comparator(&self) -> &Comparator<B> {
        &self.cmp
    }

    /// The number of words.
    pub fn len(&self) -> usize {
        self.k
    }

    /// Whether the workload has no words.
    pub fn is_empty(&self) -> bool {
        self.k == 0
    }

    /// Encrypts `values` (`k` words) in the layout of the operation.
    pub fn encrypt(&self, values: &[i128]) -> Result<ArrayInput<B>> {
        if values.len() != self.k {
            return Err(Error::Mismatch {
                op: "run the array workload",
                reason: format!("{} values for keys of {} words", values.len(), self.k),
            });
        }
        self.cmp.encrypt_array(&self.pk, values, self.op)
    }

    /// The sort or the minimum of encrypted words (the computation alone).
    pub fn compute(&self, input: &ArrayInput<B>) -> Result<EncryptedWords<B>> {
        match self.op {
            ArrayOp::Sort => self.cmp.sort(input),
            ArrayOp::Min => self.cmp.array_min(input),
        }
    }

    /// Encrypts `values` (`k` words), sorts them or takes their minimum, decrypts: the sorted
    /// words (`k`) or the minimum (one), with the phases' times.
    pub fn run(&self, values: &[i128]) -> Result<(Vec<i128>, Phases)> {
        let dec = Decryptor::new(self.cmp.context(), &self.sk);
        let mut clock = PhaseClock::start();
        let input = self.encrypt(values)?;
        clock.mark();
        let out = self.compute(&input)?;
        clock.mark();
        let got = self.cmp.decrypt(&dec, &out)?;
        clock.mark();
        Ok((got, clock.phases()))
    }
}
/// The same computation on plaintext: `values` sorted, or their minimum alone.
pub fn plain(values: &[i128], op: ArrayOp) -> Vec<i128> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    match op {
        ArrayOp::Sort => sorted,
        ArrayOp::Min => sorted.into_iter().take(1).collect(),
    }
}
