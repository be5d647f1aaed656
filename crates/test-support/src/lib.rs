//! Test support for the workspace (not published; a dev-dependency only): deterministic inputs
//! (SplitMix64; not for secrets), the fixed-seed keys every BGV/BFV/CKKS comparison test
//! shares, and the plaintext references of the integer schemes' slot operations. It was
//! `bgv::testing`, which shipped test helpers inside the library.

/// A SplitMix64 stream.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A stream from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `[0, bound)` (`bound > 0`; negligible bias for small bounds).
    pub fn below(&mut self, bound: u64) -> u64 {
        ((self.next_u64() as u128 * bound as u128) >> 64) as u64
    }
}

/// `count` values in `[0, bound)` from `seed`.
pub fn random_values(seed: u64, count: usize, bound: u64) -> Vec<u64> {
    let mut r = SplitMix::new(seed);
    (0..count).map(|_| r.below(bound)).collect()
}

/// The seed of 32 bytes equal to `b` (fixed seeds make test keys and encryptions
/// reproducible, so two backends can be compared bit for bit).
pub fn seed(b: u8) -> fhe_math::sampler::Seed {
    fhe_math::sampler::Seed([b; 32])
}

/// Secret, public and relinearization keys from the fixed seeds 1 (secret), 2 and 3 (public
/// key), 4 and 5 (relinearization key): the keys every BGV/BFV test and benchmark shares.
pub struct SeededKeys<B: fhe_math::backend::Backend> {
    /// The secret key.
    pub sk: rlwe::SecretKey<B>,
    /// The public key.
    pub pk: rlwe::PublicKey<B>,
    /// The relinearization key.
    pub rlk: rlwe::RelinKey<B>,
}

impl<B: fhe_math::backend::Backend> SeededKeys<B> {
    /// The keys of `kg` (a context's key generator, so BGV's error factor applies).
    pub fn new(kg: &rlwe::KeyGenerator<'_, B>) -> rlwe::Result<Self> {
        let sk = kg.secret_key_from_seed(seed(1))?;
        let pk = kg.public_key_with_seeds(&sk, seed(2), &seed(3))?;
        let rlk = kg.relin_key_with_seeds(&sk, seed(4), &seed(5))?;
        Ok(SeededKeys { sk, pk, rlk })
    }
}

/// Galois keys for `elements` from fixed seeds: the key of the `i`-th element has `a` from
/// `seed(a_seed + i)` and its error from `seed(e_seed + i)`, under `sk`'s fingerprint.
pub fn seeded_galois_keys<B: fhe_math::backend::Backend>(
    kg: &rlwe::KeyGenerator<'_, B>,
    sk: &rlwe::SecretKey<B>,
    elements: &[u64],
    a_seed: u8,
    e_seed: u8,
) -> rlwe::Result<rlwe::GaloisKeys<B>> {
    let mut keys = std::collections::BTreeMap::new();
    for (i, &g) in elements.iter().enumerate() {
        let key =
            kg.galois_key_with_seeds(sk, g, seed(a_seed + i as u8), &seed(e_seed + i as u8))?;
        keys.insert(g, key);
    }
    Ok(rlwe::GaloisKeys {
        keys,
        fingerprint: sk.fingerprint(),
    })
}

/// The active limbs of a backend buffer (all components, limbs `0..=level`), downloaded; the
/// inactive capacity may hold stale data, so bit-for-bit comparisons use these.
pub fn active_limbs<B: fhe_math::backend::Backend>(
    backend: &B,
    poly: &B::Poly,
) -> fhe_math::Result<Vec<u64>> {
    let h = backend.download(poly)?;
    let mut out = Vec::new();
    for c in 0..h.components() {
        for s in 0..=h.level() {
            out.extend_from_slice(h.limb(c, s));
        }
    }
    Ok(out)
}

/// `f` applied slot by slot to `a` and `b` (the plaintext reference of a binary operation).
pub fn zip_with(a: &[u64], b: &[u64], f: impl Fn(u64, u64) -> u64) -> Vec<u64> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

/// `a·b mod t` without overflow.
pub fn mul_mod(a: u64, b: u64, t: u64) -> u64 {
    ((a as u128 * b as u128) % t as u128) as u64
}

/// `a ⊙ b mod t` slot by slot (the plaintext reference of a product).
pub fn mul_slots(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    zip_with(a, b, |x, y| mul_mod(x, y, t))
}

/// The plaintext reference of a row rotation: each row of the `2 × N/2` slot matrix `v`
/// rotated left by `step` (right for a negative step).
pub fn rotate_rows(v: &[u64], step: i64) -> Vec<u64> {
    let half = v.len() / 2;
    (0..v.len())
        .map(|i| {
            let (row, j) = (i / half, i % half);
            v[row * half + (j as i64 + step).rem_euclid(half as i64) as usize]
        })
        .collect()
}

/// The plaintext reference of the column rotation: the two rows of the slot matrix swapped.
pub fn swap_rows(v: &[u64]) -> Vec<u64> {
    let half = v.len() / 2;
    v[half..].iter().chain(&v[..half]).copied().collect()
}
