//! Sparse-secret encapsulation (Bossuat, Troncoso-Pastoriza, Hubaux, "Bootstrapping for
//! Approximate Homomorphic Encryption with Negligible Failure-Probability by Using
//! Sparse-Secret Encapsulation", ACNS 2022, eprint 2022/024).
//!
//! The main secret `s` is dense (uniform ternary, covered by the HE standard's bound for the
//! whole modulus `Q_L·P`); bootstrapping wants a sparse secret so that ModRaise's overflow `I`
//! stays small. The ciphertext is switched at level 0 to an **ephemeral sparse secret** `s'`
//! (weight about 32), raised, and switched back to `s` at the top level:
//!
//! - `to_sparse` switches `s → s'`; it is an RLWE encryption under the sparse `s'` and is kept
//!   **only over `q_0·P`** (every other limb zeroed), the small modulus at which the paper's
//!   security analysis (lattice estimator, Section 5) finds sparse secrets of this weight
//!   secure;
//! - `to_dense` switches `s' → s` over the whole `Q_L·P`; it is an encryption under the dense
//!   `s`, as every other evaluation key.
//!
//! Each costs one key switch per bootstrap (the first at level 0, nearly free).

use crate::context::Context;
use crate::error::Result;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::poly::Shape;
use fhe_math::sampler::Seed;
use rlwe::{Ciphertext, SecretKey, SwitchingKey};

/// The two switching keys of sparse-secret encapsulation (module documentation).
pub struct EncapsulationKeys<B: KeySwitchBackend> {
    to_sparse: SwitchingKey<B>,
    to_dense: SwitchingKey<B>,
}

impl<B: KeySwitchBackend> EncapsulationKeys<B> {
    /// The keys between the dense main secret `sk` and the sparse ephemeral `sparse`, with
    /// fresh randomness.
    pub fn generate(ctx: &Context<B>, sk: &SecretKey<B>, sparse: &SecretKey<B>) -> Result<Self> {
        let seeds = [(); 4].map(|_| Seed::random());
        Self::generate_with_seeds(ctx, sk, sparse, seeds)
    }

    /// [`EncapsulationKeys::generate`] with explicit seeds (`a` and error of each key), for
    /// tests comparing backends.
    pub fn generate_with_seeds(
        ctx: &Context<B>,
        sk: &SecretKey<B>,
        sparse: &SecretKey<B>,
        seeds: [Seed; 4],
    ) -> Result<Self> {
        let [a1, e1, a2, e2] = seeds;
        let kg = ctx.key_generator();
        let mut to_sparse = kg.switching_key(sparse, sk.poly(), a1, &e1)?;
        keep_level_zero(ctx.backend(), &mut to_sparse.poly)?;
        let to_dense = kg.switching_key(sk, sparse.poly(), a2, &e2)?;
        Ok(EncapsulationKeys {
            to_sparse,
            to_dense,
        })
    }

    /// Bytes of both keys in memory (the level-0 key's zeroed limbs included).
    pub fn bytes(&self, backend: &B) -> usize {
        [&self.to_sparse, &self.to_dense]
            .iter()
            .map(|k| {
                let s = backend.shape(&k.poly);
                let ring = backend.ring();
                s.components * (ring.q_count() + ring.p_count()) * ring.n() * 8
            })
            .sum()
    }

    /// `ct` (level 0, under `s`) switched to the sparse `s'`.
    pub(crate) fn to_sparse(&self, be: &B, ct: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        switch(be, ct, &self.to_sparse)
    }

    /// `ct` (under `s'`) switched back to `s`.
    pub(crate) fn to_dense(&self, be: &B, ct: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        switch(be, ct, &self.to_dense)
    }
}

/// Zeroes every limb of `poly` but `q_0` and the special primes.
fn keep_level_zero<B: KeySwitchBackend>(be: &B, poly: &mut B::Poly) -> Result<()> {
    let mut host = be.download(poly)?;
    let q_count = be.ring().q_count();
    for c in 0..host.components() {
        for s in 1..q_count {
            host.limb_mut(c, s).iter_mut().for_each(|w| *w = 0);
        }
    }
    *poly = be.upload(&host)?;
    Ok(())
}

/// `(c_0, 0) + KeySwitch(c_1)`: the same message under the key's target secret.
fn switch<B: KeySwitchBackend>(
    be: &B,
    ct: &Ciphertext<B>,
    key: &SwitchingKey<B>,
) -> Result<Ciphertext<B>> {
    let mut out = be.key_switch(ct.poly(), 1, &key.poly, None)?;
    let mut c0 = be.zeros(Shape {
        components: 1,
        level: ct.level(),
        extended: false,
    })?;
    be.copy_component(ct.poly(), 0, &mut c0, 0)?;
    be.add_component_assign(&mut out, 0, &c0)?;
    Ok(Ciphertext::new(be, out, ct.meta())?)
}
