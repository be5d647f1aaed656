//! Keys: [`SecretKey`] (ternary, zeroized), [`PublicKey`], [`SwitchingKey`] (hybrid key
//! switching with `dnum` digits and `K` special primes), [`RelinKey`], [`GaloisKeys`] indexed by
//! Galois element, and the [`KeyGenerator`].
//!
//! A switching key from `s'` to `s` holds, for every digit `j`, the pair over `Q·P` (NTT form)
//! `(b_j, a_j)` with `b_j = -a_j·s + e_j + P·g_j·s'`, where `g_j ≡ 1 mod` the primes of digit `j`
//! and `≡ 0 mod` the other ciphertext primes. The `a_j` are expanded from a stored seed.
//!
//! **Error factor.** BGV needs every error term scaled by the plaintext modulus `t` (so that
//! `c_0 + c_1·s = m + t·e` keeps `m` in the residue mod `t`). [`KeyGenerator::with_error_factor`]
//! multiplies each sampled Gaussian `e` by `t` (one `mul_scalar_assign`) before it is added; the
//! default factor 1 leaves keys bit-identical to the unscaled ones (CKKS).

use crate::error::{Error, Result};
use fhe_math::backend::RingBackend;
use fhe_math::poly::Shape;
use fhe_math::sampler::{Domain, Seed};
use std::collections::BTreeMap;

/// The secret key `s`, ternary, expanded from a 32-byte seed. Its device copy is zeroed and its
/// seed zeroized when it is dropped.
pub struct SecretKey<B: RingBackend> {
    backend: B,
    seed: Seed,
    /// `s` over `Q_L·P`, NTT form, one component.
    poly: B::Poly,
    fingerprint: u64,
    /// `Some(h)` for a sparse key of Hamming weight `h`
    /// ([`KeyGenerator::sparse_secret_key_from_seed`]), `None` for the uniform ternary key.
    weight: Option<usize>,
}

impl<B: RingBackend> SecretKey<B> {
    /// The secret polynomial (NTT form, extended basis).
    pub fn poly(&self) -> &B::Poly {
        &self.poly
    }

    /// The seed the key was expanded from (its serialized form; keep it secret).
    pub fn seed(&self) -> &Seed {
        &self.seed
    }

    /// Fingerprint of the parameters.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The Hamming weight of a sparse key, `None` for a uniform ternary key.
    pub fn sparse_weight(&self) -> Option<usize> {
        self.weight
    }
}

impl<B: RingBackend> Drop for SecretKey<B> {
    fn drop(&mut self) {
        self.backend.zeroize(&mut self.poly);
    }
}

/// The public key `(b, a) = (-a·s + e, a)` over `Q_L` in NTT form; `a` comes from a seed.
pub struct PublicKey<B: RingBackend> {
    /// Two components `(b, a)`, NTT form, top level.
    pub poly: B::Poly,
    /// Seed of `a`.
    pub seed: Seed,
    /// Fingerprint of the parameters.
    pub fingerprint: u64,
}

/// A hybrid key-switching key (see the module documentation).
pub struct SwitchingKey<B: RingBackend> {
    /// `2·dnum` components `(b_0, a_0, b_1, a_1, ...)` over `Q_L·P`, NTT form.
    pub poly: B::Poly,
    /// Seed of the `a_j`.
    pub seed: Seed,
    /// Fingerprint of the parameters.
    pub fingerprint: u64,
}

/// The relinearization key: switches `s²` to `s`.
pub struct RelinKey<B: RingBackend>(pub SwitchingKey<B>);

/// Galois keys indexed by Galois element `g`: each switches `σ_g(s)` to `s`.
pub struct GaloisKeys<B: RingBackend> {
    /// The keys by Galois element.
    pub keys: BTreeMap<u64, SwitchingKey<B>>,
    /// Fingerprint of the parameters.
    pub fingerprint: u64,
}

impl<B: RingBackend> GaloisKeys<B> {
    /// The key for `g`, or an error naming the missing element.
    pub fn get(&self, g: u64, op: &'static str) -> Result<&SwitchingKey<B>> {
        self.keys
            .get(&g)
            .ok_or(Error::MissingGaloisKey { op, galois: g })
    }

    /// The Galois elements present.
    pub fn elements(&self) -> impl Iterator<Item = u64> + '_ {
        self.keys.keys().copied()
    }
}

/// Generates keys on a backend for parameters with the given fingerprint.
pub struct KeyGenerator<'a, B: RingBackend> {
    backend: &'a B,
    fingerprint: u64,
    error_factor: u64,
}

/// Multiplies an error polynomial (any shape) by `factor` reduced modulo each active prime; a
/// no-op for `factor == 1`. Used for BGV's `t·e`.
pub fn scale_error<B: RingBackend>(backend: &B, e: &mut B::Poly, factor: u64) -> Result<()> {
    if factor == 1 {
        return Ok(());
    }
    let shape = backend.shape(e);
    let ring = backend.ring();
    let q_slots = 0..=shape.level;
    let p_slots = if shape.extended {
        ring.q_count()..ring.q_count() + ring.p_count()
    } else {
        0..0
    };
    let scalars: Vec<u64> = q_slots
        .chain(p_slots)
        .map(|s| ring.modulus(s).reduce(factor))
        .collect();
    backend.mul_scalar_assign(e, &scalars)?;
    Ok(())
}

impl<'a, B: RingBackend> KeyGenerator<'a, B> {
    /// A key generator for the backend's ring; `fingerprint` identifies the parameters.
    pub fn new(backend: &'a B, fingerprint: u64) -> Self {
        KeyGenerator {
            backend,
            fingerprint,
            error_factor: 1,
        }
    }

    /// Scales every sampled error by `factor` (`e -> factor·e`): BGV passes its plaintext
    /// modulus `t`. The default 1 gives the unscaled keys of CKKS.
    pub fn with_error_factor(mut self, factor: u64) -> Self {
        self.error_factor = factor;
        self
    }

    /// The error factor (1 unless set with [`KeyGenerator::with_error_factor`]).
    pub fn error_factor(&self) -> u64 {
        self.error_factor
    }

    fn top(&self, components: usize, extended: bool) -> Shape {
        Shape {
            components,
            level: self.backend.ring().max_level(),
            extended,
        }
    }

    /// A fresh secret key from the OS CSPRNG.
    pub fn secret_key(&self) -> Result<SecretKey<B>> {
        self.secret_key_from_seed(Seed::random())
    }

    /// The secret key expanded from `seed` (ternary, the same integers in every limb).
    pub fn secret_key_from_seed(&self, seed: Seed) -> Result<SecretKey<B>> {
        let mut poly = self
            .backend
            .sample_ternary(&seed, Domain::Secret, 0, self.top(1, true))?;
        self.backend.ntt(&mut poly)?;
        Ok(SecretKey {
            backend: self.backend.clone(),
            seed,
            poly,
            fingerprint: self.fingerprint,
            weight: None,
        })
    }

    /// A **sparse** ternary secret key expanded from `seed`: exactly `weight` coefficients are
    /// `±1`, the others 0 (positions by a partial Fisher–Yates shuffle, signs from one bit each,
    /// all from the ChaCha20 stream `(Domain::Secret, 1, 0)` of `seed`). Sparse secrets keep
    /// the bootstrapping overflow `I` of `c_0 + c_1·s = m + q_0·I` small
    /// (`|I_k| ≲ √(weight/12)` standard deviations); their security must be assessed
    /// separately (parameter sets using them say which analysis applies).
    ///
    /// Errors: `weight` of 0 or above `N` ([`Error::InvalidOperand`]).
    pub fn sparse_secret_key_from_seed(&self, seed: Seed, weight: usize) -> Result<SecretKey<B>> {
        use rand_chacha::ChaCha20Rng;
        use rand_core::{Rng, SeedableRng};
        let ring = self.backend.ring();
        let n = ring.n();
        if weight == 0 || weight > n {
            return Err(Error::InvalidOperand {
                op: "generate a sparse secret key",
                reason: format!("weight {weight} is not in 1..={n}"),
            });
        }
        let mut rng = ChaCha20Rng::from_seed(seed.0);
        rng.set_stream(fhe_math::sampler::stream_id(Domain::Secret, 1, 0));
        let mut positions: Vec<usize> = (0..n).collect();
        let mut values = zeroize::Zeroizing::new(vec![0i64; n]);
        for i in 0..weight {
            // Bias of the reduction: at most n / 2^64.
            let j = i + (rng.next_u64() % (n - i) as u64) as usize;
            positions.swap(i, j);
            values[positions[i]] = if rng.next_u32() & 1 == 0 { 1 } else { -1 };
        }
        let mut host = ring.zeros(self.top(1, true))?;
        for s in host.active_slots() {
            fhe_math::sampler::signed_to_limb(&values, ring.modulus(s), host.limb_mut(0, s));
        }
        let mut poly = self.backend.upload(&host)?;
        host.raw_mut().iter_mut().for_each(|w| *w = 0);
        self.backend.ntt(&mut poly)?;
        Ok(SecretKey {
            backend: self.backend.clone(),
            seed,
            poly,
            fingerprint: self.fingerprint,
            weight: Some(weight),
        })
    }

    /// `(b, a)` with `b = -a·s + f·e` (`f` the error factor) for `a` from `seed_a` and `e` Gaussian from `seed_e`, over
    /// the given shape (one component each), NTT form.
    fn rlwe_sample(
        &self,
        sk: &SecretKey<B>,
        a: (&Seed, Domain, u32),
        seed_e: &Seed,
        e_index: u32,
        shape: Shape,
    ) -> Result<(B::Poly, B::Poly)> {
        let be = self.backend;
        let a = be.sample_uniform(a.0, a.1, a.2, shape)?;
        let mut b = be.duplicate(&a)?;
        be.mul_plain_assign(&mut b, &sk.poly)?;
        be.neg_assign(&mut b)?;
        let mut e = be.sample_gaussian(seed_e, Domain::Error, e_index, shape)?;
        scale_error(be, &mut e, self.error_factor)?;
        be.ntt(&mut e)?;
        be.add_assign(&mut b, &e)?;
        Ok((b, a))
    }

    /// The public key, with `a` from a fresh seed.
    pub fn public_key(&self, sk: &SecretKey<B>) -> Result<PublicKey<B>> {
        self.public_key_with_seeds(sk, Seed::random(), &Seed::random())
    }

    /// The public key with explicit seeds (`a` from `seed_a`, error from `seed_e`): for tests
    /// that compare backends.
    pub fn public_key_with_seeds(
        &self,
        sk: &SecretKey<B>,
        seed_a: Seed,
        seed_e: &Seed,
    ) -> Result<PublicKey<B>> {
        crate::error::check_same("generate a public key", self.fingerprint, sk.fingerprint)?;
        let shape = self.top(1, false);
        let (b, a) = self.rlwe_sample(sk, (&seed_a, Domain::PublicA, 0), seed_e, 0, shape)?;
        let mut poly = self.backend.zeros(self.top(2, false))?;
        self.backend.copy_component(&b, 0, &mut poly, 0)?;
        self.backend.copy_component(&a, 0, &mut poly, 1)?;
        Ok(PublicKey {
            poly,
            seed: seed_a,
            fingerprint: self.fingerprint,
        })
    }

    /// A key switching from `s_from` (NTT form over `Q_L·P`, one component) to `sk`.
    pub fn switching_key(
        &self,
        sk: &SecretKey<B>,
        s_from: &B::Poly,
        seed_a: Seed,
        seed_e: &Seed,
    ) -> Result<SwitchingKey<B>> {
        let be = self.backend;
        let ring = be.ring().clone();
        let digits = ring.digits().to_vec();
        let shape = self.top(1, true);
        let mut poly = be.zeros(self.top(2 * digits.len(), true))?;
        // P mod q_i for the gadget.
        let q_count = ring.q_count();
        let p_mod_q: Vec<u64> = (0..q_count)
            .map(|i| {
                let qi = ring.modulus(i);
                (q_count..q_count + ring.p_count()).fold(1u64, |acc, s| {
                    qi.mul(acc, qi.reduce(ring.modulus(s).value()))
                })
            })
            .collect();
        for (j, digit) in digits.iter().enumerate() {
            let (mut b, a) = self.rlwe_sample(
                sk,
                (&seed_a, Domain::KeySwitchA, j as u32),
                seed_e,
                j as u32,
                shape,
            )?;
            let scalars: Vec<u64> = (0..q_count)
                .map(|i| if digit.contains(&i) { p_mod_q[i] } else { 0 })
                .chain(std::iter::repeat_n(0, ring.p_count()))
                .collect();
            let mut gadget = be.duplicate(s_from)?;
            be.mul_scalar_assign(&mut gadget, &scalars)?;
            be.add_assign(&mut b, &gadget)?;
            be.zeroize(&mut gadget);
            be.copy_component(&b, 0, &mut poly, 2 * j)?;
            be.copy_component(&a, 0, &mut poly, 2 * j + 1)?;
        }
        Ok(SwitchingKey {
            poly,
            seed: seed_a,
            fingerprint: self.fingerprint,
        })
    }

    /// The relinearization key (switches `s²` to `s`).
    pub fn relin_key(&self, sk: &SecretKey<B>) -> Result<RelinKey<B>> {
        self.relin_key_with_seeds(sk, Seed::random(), &Seed::random())
    }

    /// The relinearization key with explicit seeds.
    pub fn relin_key_with_seeds(
        &self,
        sk: &SecretKey<B>,
        seed_a: Seed,
        seed_e: &Seed,
    ) -> Result<RelinKey<B>> {
        crate::error::check_same(
            "generate a relinearization key",
            self.fingerprint,
            sk.fingerprint,
        )?;
        let mut s2 = self.backend.duplicate(&sk.poly)?;
        self.backend.mul_plain_assign(&mut s2, &sk.poly)?;
        let key = self.switching_key(sk, &s2, seed_a, seed_e);
        self.backend.zeroize(&mut s2);
        Ok(RelinKey(key?))
    }

    /// The Galois key for `X -> X^g` (switches `σ_g(s)` to `s`).
    pub fn galois_key_with_seeds(
        &self,
        sk: &SecretKey<B>,
        g: u64,
        seed_a: Seed,
        seed_e: &Seed,
    ) -> Result<SwitchingKey<B>> {
        crate::error::check_same("generate a Galois key", self.fingerprint, sk.fingerprint)?;
        let two_n = 2 * self.backend.ring().n() as u64;
        if g.is_multiple_of(2) || g >= two_n {
            return Err(Error::InvalidOperand {
                op: "generate a Galois key",
                reason: format!("Galois element {g} must be odd and below 2N = {two_n}"),
            });
        }
        let mut s_g = self.backend.zeros(self.top(1, true))?;
        self.backend.automorphism_into(&sk.poly, g, &mut s_g, 1)?;
        let key = self.switching_key(sk, &s_g, seed_a, seed_e);
        self.backend.zeroize(&mut s_g);
        key
    }

    /// Galois keys for each element of `elements`, from fresh seeds.
    pub fn galois_keys(&self, sk: &SecretKey<B>, elements: &[u64]) -> Result<GaloisKeys<B>> {
        let mut keys = BTreeMap::new();
        for &g in elements {
            if let std::collections::btree_map::Entry::Vacant(e) = keys.entry(g) {
                e.insert(self.galois_key_with_seeds(sk, g, Seed::random(), &Seed::random())?);
            }
        }
        Ok(GaloisKeys {
            keys,
            fingerprint: self.fingerprint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_math::cpu::CpuBackend;
    use fhe_math::primes::ntt_primes;
    use fhe_math::ring::RingContext;

    fn backend() -> CpuBackend {
        let n = 1 << 10;
        let qs = ntt_primes(50, 2 * n as u64, 2, &[]).unwrap();
        let ps = ntt_primes(55, 2 * n as u64, 1, &qs).unwrap();
        CpuBackend::new(RingContext::new(n, &qs, &ps, vec![0..1, 1..2]).unwrap())
    }

    /// The coefficients of `s` (the same small integer in every limb, read centred).
    fn coefficients(be: &CpuBackend, sk: &SecretKey<CpuBackend>) -> Vec<i64> {
        let mut p = be.duplicate(sk.poly()).unwrap();
        be.intt(&mut p).unwrap();
        let host = be.download(&p).unwrap();
        let ring = be.ring();
        let q0 = ring.modulus(0).value();
        let centred: Vec<i64> = host
            .limb(0, 0)
            .iter()
            .map(|&v| {
                if v > q0 / 2 {
                    v as i64 - q0 as i64
                } else {
                    v as i64
                }
            })
            .collect();
        for s in host.active_slots() {
            let q = ring.modulus(s).value() as i64;
            for (k, &v) in host.limb(0, s).iter().enumerate() {
                assert_eq!(
                    v as i64,
                    centred[k].rem_euclid(q),
                    "slot {s} coefficient {k}"
                );
            }
        }
        centred
    }

    #[test]
    fn sparse_secret_has_its_weight() {
        let be = backend();
        let kg = KeyGenerator::new(&be, 1);
        for weight in [1, 32, 1024] {
            let sk = kg
                .sparse_secret_key_from_seed(Seed([9; 32]), weight)
                .unwrap();
            assert_eq!(sk.sparse_weight(), Some(weight));
            let c = coefficients(&be, &sk);
            assert_eq!(c.iter().filter(|&&v| v != 0).count(), weight);
            assert!(c.iter().all(|v| v.abs() <= 1));
            // Both signs appear for a non-trivial weight; deterministic per seed.
            if weight >= 32 {
                assert!(c.contains(&1) && c.contains(&-1));
            }
            let again = kg
                .sparse_secret_key_from_seed(Seed([9; 32]), weight)
                .unwrap();
            assert_eq!(coefficients(&be, &again), c);
        }
        let other = kg.sparse_secret_key_from_seed(Seed([8; 32]), 32).unwrap();
        let first = kg.sparse_secret_key_from_seed(Seed([9; 32]), 32).unwrap();
        assert_ne!(coefficients(&be, &other), coefficients(&be, &first));
        assert_eq!(
            kg.secret_key_from_seed(Seed([9; 32]))
                .unwrap()
                .sparse_weight(),
            None
        );
        for weight in [0, 1025] {
            assert!(matches!(
                kg.sparse_secret_key_from_seed(Seed([9; 32]), weight),
                Err(Error::InvalidOperand { .. })
            ));
        }
        assert!(matches!(
            crate::serialize::secret_key_to_bytes(&first),
            Err(Error::InvalidOperand { .. })
        ));
    }
}
