//! Shared setup of the comparison tests: fixed-seed keys at a small insecure ring, one body
//! per backend.

#![allow(dead_code)]

use bgv::params::ParametersLiteral;
use bgv::{Context, Decryptor, Parameters, Security};
use compare::{Comparator, CompareKeys, DigitLayout, EncryptedBits, Predicate, WordType};
use fhe_math::backend::IntegerBackend;
use rlwe::{PublicKey, SecretKey};
use test_support::{SeededKeys, seed, seeded_galois_keys};

/// **Insecure** `N = 2^11` ring with 16 levels of 40-bit primes (`t = 65537`): deep enough for
/// base-2^8 digits of 64-bit words, fast on the CPU.
pub const TEST_N11_DEEP: ParametersLiteral = ParametersLiteral {
    log_n: 11,
    levels: 16,
    first_prime_bits: 60,
    prime_bits: 40,
    special_primes: 2,
    special_prime_bits: 60,
    dnum: 17,
    plaintext_modulus: 65537,
    security: Security::InsecureForTestingOnly,
};

/// A comparator with fixed-seed keys, and the secret and public keys.
pub struct Setup<B: IntegerBackend> {
    pub cmp: Comparator<B>,
    pub sk: SecretKey<B>,
    pub pk: PublicKey<B>,
}

impl<B: IntegerBackend> Setup<B> {
    pub fn new(ctx: Context<B>, word: WordType, digit_bits: u32) -> Self {
        let layout = DigitLayout::new(word, digit_bits, ctx.params().n()).unwrap();
        let kg = ctx.key_generator();
        let SeededKeys { sk, pk, rlk } = SeededKeys::new(&kg).unwrap();
        let elements = CompareKeys::<B>::galois_elements(&ctx, &layout, true).unwrap();
        let galois = seeded_galois_keys(&kg, &sk, &elements, 10, 100).unwrap();
        let keys = CompareKeys { relin: rlk, galois };
        Setup {
            cmp: Comparator::new(&ctx, layout, keys).unwrap(),
            sk,
            pk,
        }
    }

    pub fn dec(&self) -> Decryptor<'_, B> {
        Decryptor::new(self.cmp.context(), &self.sk)
    }

    /// The products and rotations made since `before` (one ciphertext compared) are the
    /// documented cost of `p`.
    pub fn check_counted(&self, before: (usize, usize), p: Predicate) {
        let (m, r) = self.cmp.counters();
        let c = self.cmp.cost(p);
        assert_eq!(
            (m - before.0, r - before.1),
            (c.products, c.rotations),
            "{p:?}"
        );
    }

    /// Decrypts every slot of a result: the lead slots must be `p(a, b)`, all others 0.
    pub fn check_bits(&self, r: &EncryptedBits<B>, a: &[i128], b: &[i128], p: Predicate) {
        let dec = self.dec();
        let l = self.cmp.layout();
        let cap = l.words_per_ciphertext();
        for (i, ct) in r.ciphertexts().iter().enumerate() {
            let slots = dec.decrypt(ct).unwrap();
            for (k, &v) in slots.iter().enumerate() {
                let j = i * cap + k / l.block();
                let want = if k % l.block() == 0 && j < a.len() {
                    u64::from(p.eval(a[j], b[j]))
                } else {
                    0
                };
                assert_eq!(
                    v,
                    want,
                    "{p:?} slot {k} of ct {i}: a = {:?} b = {:?}",
                    a.get(j),
                    b.get(j)
                );
            }
        }
    }
}

pub fn cpu_ctx(lit: &ParametersLiteral) -> Context<fhe_math::cpu::CpuBackend> {
    Context::cpu(Parameters::new(lit).unwrap()).unwrap()
}

pub fn fixed_seed(b: u8) -> fhe_math::sampler::Seed {
    seed(b)
}
