//! Sparse-secret encapsulation (Bossuat, Troncoso-Pastoriza, Hubaux, "Bootstrapping for
//! Approximate Homomorphic Encryption with Negligible Failure-Probability by Using
//! Sparse-Secret Encapsulation", ACNS 2022, eprint 2022/024).
//!
//! The main secret `s` is dense (uniform ternary, covered by the HE standard's bound for the
//! whole modulus `Q_L·P`); bootstrapping wants a sparse secret so that ModRaise's overflow `I`
//! stays small. The ciphertext is switched at level 0 to an **ephemeral sparse secret** `s'`
//! (weight about 32), raised, and switched back to `s` at the top level:
//!
//! - `to_sparse` switches `s → s'`; it is an RLWE sample under the sparse `s'`, kept **only
//!   over `q_0·P`** (every other limb zeroed), and its error is **spread**: besides the usual
//!   Gaussian it carries a term uniform in `[-2^(w-1), 2^(w-1))` with
//!   `w = ⌈log2(P/p_0)⌉ + 4` bits ([`spread_error_bits`]). What a lattice attack sees is the
//!   ratio of modulus to error: `q_0·P / (2^w/√12) ≤ q_0·p_0/4.6`, below that of a key over
//!   `q_0·p_0` with the usual σ = 3.2 (`q_0·p_0/3.2`). By modulus switching (Brakerski,
//!   Langlois, Peikert, Regev, Stehlé, STOC 2013) an attack on this key gives one on a key over
//!   `q_0·p_0` whose error is no larger than σ plus the rounding `√h/√12 ≈ 1.6` of the secret's
//!   `h = 32` terms, so the key is as hard as the `q_0·p_0` encapsulation key of the paper's
//!   own implementation (Lattigo's `bootstrapping` package generates its dense-to-sparse key
//!   over the first ciphertext prime and the first special prime only). A narrow error over
//!   the whole `q_0·P` (300 to 454 bits at the N = 2^16 presets) would leave a weight-32 secret
//!   with a far larger ratio, which no published analysis covers. The added key-switch noise
//!   is `√N·q_0·2^w/(12·P) ≈ 341·q_0/p_0` in standard deviation: below 2^9 at every preset,
//!   against a scale of at least 2^45;
//! - `to_dense` switches `s' → s` over the whole `Q_L·P`; it is an encryption under the dense
//!   `s`, as every other evaluation key.
//!
//! Each costs one key switch per bootstrap (the first at level 0, nearly free).

use crate::context::Context;
use crate::error::Result;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::poly::Shape;
use fhe_math::sampler::{self, Domain, Seed};
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
        add_spread_error(ctx.backend(), &mut to_sparse.poly, &e1)?;
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

/// Bits `w` of the spread error of the level-0 key: `⌈log2(P/p_0)⌉ + 4`, with `p_0` the first
/// special prime (module documentation).
pub fn spread_error_bits(ring: &fhe_math::ring::RingContext) -> u32 {
    let q_count = ring.q_count();
    let log2_rest: f64 = (1..ring.p_count())
        .map(|k| (ring.modulus(q_count + k).value() as f64).log2())
        .sum();
    log2_rest.ceil() as u32 + 4
}

/// Adds to the `b` half of digit 0 (component 0, which holds `q_0`) of the level-0 key a
/// term uniform in `[-2^(w-1), 2^(w-1))` over `q_0` and the special primes
/// ([`spread_error_bits`]), drawn from `seed` on the stream `(Domain::Other, 1)`.
fn add_spread_error<B: KeySwitchBackend>(be: &B, key: &mut B::Poly, seed: &Seed) -> Result<()> {
    let ring = be.ring().clone();
    let (q_count, p_count) = (ring.q_count(), ring.p_count());
    let mut host = ring.zeros(Shape {
        components: 1,
        level: q_count - 1,
        extended: true,
    })?;
    let slots: Vec<usize> = std::iter::once(0)
        .chain(q_count..q_count + p_count)
        .collect();
    let moduli: Vec<_> = slots.iter().map(|&s| *ring.modulus(s)).collect();
    let n = ring.n();
    let mut limbs: Vec<Vec<u64>> = vec![vec![0u64; n]; slots.len()];
    {
        let mut views: Vec<&mut [u64]> = limbs.iter_mut().map(|l| &mut l[..]).collect();
        sampler::wide_uniform(
            seed,
            Domain::Other,
            1,
            spread_error_bits(&ring),
            &moduli,
            &mut views,
        )?;
    }
    for (&s, l) in slots.iter().zip(&limbs) {
        host.limb_mut(0, s).copy_from_slice(l);
    }
    let mut err = be.upload(&host)?;
    be.ntt(&mut err)?;
    be.add_component_assign(key, 0, &err)?;
    be.zeroize(&mut err);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{BOOT_N12_INSECURE, BOOT_SECRET_WEIGHT, Parameters};
    use fhe_math::backend::RingBackend;
    use fhe_math::cpu::CpuBackend;

    /// The level-0 key's error is spread: `b + a·s' − P·s mod q_0` (its error mod `q_0`) is
    /// spread over the whole of `[−q_0/2, q_0/2)`, not a small Gaussian polynomial, while the
    /// other key's error stays small.
    #[test]
    fn level_zero_key_error_is_spread() {
        let params = Parameters::new(&BOOT_N12_INSECURE).unwrap();
        let ctx = Context::<CpuBackend>::cpu(params).unwrap();
        let be = ctx.backend();
        let ring = be.ring().clone();
        let kg = ctx.key_generator();
        let sk = kg.secret_key_from_seed(Seed([5; 32])).unwrap();
        let sparse = kg
            .sparse_secret_key_from_seed(Seed([6; 32]), BOOT_SECRET_WEIGHT)
            .unwrap();
        let keys = EncapsulationKeys::generate_with_seeds(
            &ctx,
            &sk,
            &sparse,
            [Seed([1; 32]), Seed([2; 32]), Seed([3; 32]), Seed([4; 32])],
        )
        .unwrap();
        assert!(
            spread_error_bits(&ring) > 200,
            "BOOT_N12_INSECURE has 5 special primes"
        );
        // The error mod q_0 of digit 0 of a key from `from` to `to`: b + a·s_to − P·s_from.
        let error_mod_q0 = |key: &SwitchingKey<CpuBackend>,
                            to: &SecretKey<CpuBackend>,
                            from: &SecretKey<CpuBackend>| {
            let k = be.download(&key.poly).unwrap();
            let st = be.download(to.poly()).unwrap();
            let sf = be.download(from.poly()).unwrap();
            let q0 = *ring.modulus(0);
            let p_mod_q0 = (0..ring.p_count()).fold(1u64, |acc, j| {
                q0.mul(acc, q0.reduce(ring.modulus(ring.q_count() + j).value()))
            });
            let mut e = ring
                .zeros(Shape {
                    components: 1,
                    level: 0,
                    extended: false,
                })
                .unwrap();
            for i in 0..ring.n() {
                let v = q0.add(k.limb(0, 0)[i], q0.mul(k.limb(1, 0)[i], st.limb(0, 0)[i]));
                e.limb_mut(0, 0)[i] = q0.sub(v, q0.mul(p_mod_q0, sf.limb(0, 0)[i]));
            }
            let mut d = be.upload(&e).unwrap();
            be.intt(&mut d).unwrap();
            let e = be.download(&d).unwrap();
            let q = q0.value();
            e.limb(0, 0)
                .iter()
                .map(|&x| if x > q / 2 { q - x } else { x })
                .max()
                .unwrap()
        };
        let q0 = ring.modulus(0).value();
        let spread = error_mod_q0(&keys.to_sparse, &sparse, &sk);
        assert!(
            spread > q0 / 8,
            "to_sparse error mod q_0 reaches {spread}, q_0 = {q0}"
        );
        let narrow = error_mod_q0(&keys.to_dense, &sk, &sparse);
        assert!(narrow < 64, "to_dense error mod q_0 reaches {narrow}");
    }
}
