//! [`Decryptor`]: BFV decryption `m = ⌊t·[c_0 + c_1·s (+ c_2·s²)]_Q / Q⌉ mod t` and the exact
//! noise budget `log2(Q/2) - log2 ‖[t·(c_0 + c_1·s)]_Q‖_∞` (SEAL's invariant noise budget), both
//! with word arithmetic only ([`fhe_math::crt_decode::CrtDecoder`]). Below
//! [`bgv::decryptor::MIN_BUDGET_BITS`] decryption returns [`crate::Error::NoiseBudgetExhausted`].
//!
//! **Decryption** ([`fhe_math::crt_decode::CrtDecoder::scale_round`]): with `y_i = [x_i·(Q/q_i)^{-1}]_{q_i}`,
//! `t·x/Q ≡ Σ_i y_i·t/q_i (mod t)`; each `t/q_i` is an integer plus a 128-bit fraction, the
//! 192-bit products are summed exactly, and the sum `F̃` underestimates the true `F` by less
//! than `E = Σ_i q_i·2^-128 ≤ L·2^-67` (at most `L·2^-64` for any word moduli). Then
//! `m = round(F̃) mod t` and `ν/Q = F̃ - round(F̃)` (centred) to within `E`.
//!
//! **Why rounding is exact at a budget of at least 1 bit.** A budget `≥ 1` bit means
//! `|ν| ≤ Q/4`, so `F` lies within `1/4` of an integer; `round(F̃)` differs from `round(F)` only
//! when a half-integer lies in `(F̃, F]`, i.e. `|ν|/Q > 1/2 - E > 1/4`. The test `|ν| > Q/4`
//! itself is exact: coefficients with `||ν|/Q - 1/4| < E` are decided by mixed-radix
//! conversion. So a decryption either is exact or returns the exhaustion error.
//!
//! **The noise budget** ([`Decryptor::noise_budget`]) takes `max|ν|/Q` from the fraction when
//! it is at least `2^24·E` (≈ `2^-39` at 60-bit primes; log2 error below `1e-7` bits), and
//! otherwise computes `max|ν|` exactly by mixed-radix conversion in words.

use crate::{Ciphertext, Context, Result};
use bgv::decryptor::{DecoderCache, phase_on_backend};
#[cfg(test)]
use fhe_math::RnsPoly;
use fhe_math::backend::{IntegerBackend, noise_max_log2};
use fhe_math::crt_decode::DecodeMode;
use fhe_math::ntt::NttTable;
use rlwe::SecretKey;

/// Decrypts BFV ciphertexts of one context with one secret key.
pub struct Decryptor<'a, B: IntegerBackend> {
    ctx: Context<B>,
    sk: &'a SecretKey<B>,
    decoders: DecoderCache,
}

impl<'a, B: IntegerBackend> Decryptor<'a, B> {
    /// A decryptor for `sk` in the context.
    pub fn new(ctx: &Context<B>, sk: &'a SecretKey<B>) -> Self {
        let params = ctx.params();
        Decryptor {
            decoders: DecoderCache::new(params.moduli_q(), params.t()),
            ctx: ctx.clone(),
            sk,
        }
    }

    /// `c_0 + c_1·s (+ c_2·s²)` in coefficient form, on the host.
    #[cfg(test)]
    fn phase(&self, ct: &Ciphertext<B>) -> Result<RnsPoly> {
        Ok(rlwe::encrypt::decrypt_to_host(
            self.ctx.backend(),
            self.sk,
            ct.inner(),
        )?)
    }

    /// The remaining noise budget in bits (exact measurement; `+inf` for a zero noise).
    pub fn noise_budget(&self, ct: &Ciphertext<B>) -> Result<f64> {
        let be = self.ctx.backend();
        let x = phase_on_backend(be, self.sk, ct.inner())?;
        let dec = self.decoders.get(ct.level())?;
        Ok(dec.log2_q() - 1.0 - noise_max_log2(be, &x, dec, true)?)
    }

    /// The message polynomial: `N` coefficients in `[0, t)`; an error when the budget is
    /// exhausted (`max|ν| > Q/4`, i.e. below 1 bit). The phase is decoded where it lives
    /// ([`Backend::decode_mod_t`]: on the GPU only `N` words cross).
    pub fn decrypt_coeffs(&self, ct: &Ciphertext<B>) -> Result<Vec<u64>> {
        self.decode(ct, None)
    }

    /// The message, transformed by `ntt` when given ([`Backend::decode_mod_t_ntt`]), with the
    /// exhaustion check.
    fn decode(&self, ct: &Ciphertext<B>, ntt: Option<&NttTable>) -> Result<Vec<u64>> {
        let be = self.ctx.backend();
        self.decoders
            .decrypt_decode(be, self.sk, ct.inner(), DecodeMode::ScaleRound, ntt)
    }

    /// The slot values (batched encoding); with prime-field slots the slot transform runs
    /// where the ciphertext is (on the GPU only the `N` values cross).
    pub fn decrypt(&self, ct: &Ciphertext<B>) -> Result<Vec<u64>> {
        self.ctx
            .plain()
            .decode_slots_with(|ntt| self.decode(ct, ntt))
    }

    /// The slot values as signed integers in `(-t/2, t/2]`.
    pub fn decrypt_signed(&self, ct: &Ciphertext<B>) -> Result<Vec<i64>> {
        let v = self.decrypt(ct)?;
        Ok(v.into_iter().map(|x| self.ctx.plain().center(x)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::params::{self, N13, TEST_N11_INSECURE};
    use crate::{Evaluator, ParametersLiteral};
    use bgv::decryptor::MIN_BUDGET_BITS;
    use fhe_math::backend::RingBackend;
    use fhe_math::cpu::CpuBackend;
    use fhe_math::rns::RnsBasis;
    use num_bigint::BigUint;
    use num_traits::{ToPrimitive, Zero};
    use rlwe::{PublicKey, RelinKey};
    use test_support::{SeededKeys, mul_slots, random_values, seed};

    fn log2_big(x: &BigUint) -> f64 {
        if x.is_zero() {
            return f64::NEG_INFINITY;
        }
        let shift = x.bits().saturating_sub(64);
        ((x >> shift).to_u64().unwrap_or(u64::MAX) as f64).log2() + shift as f64
    }

    /// The previous decryption, kept as the reference: big-integer CRT reconstruction of every
    /// coefficient, `(t·x + Q/2)/Q mod t` and `[t·x]_Q`. Returns the coefficients and the
    /// budget `log2(Q/2) - log2 max|ν|`.
    fn decrypt_by_bigint(
        d: &Decryptor<CpuBackend>,
        ct: &Ciphertext<CpuBackend>,
    ) -> (Vec<u64>, f64) {
        let host = d.phase(ct).unwrap();
        let level = host.level();
        let ring = d.ctx.backend().ring();
        let basis = RnsBasis::new((0..=level).map(|s| *ring.modulus(s)).collect()).unwrap();
        let q = basis.product().clone();
        let half_q: BigUint = &q >> 1u32;
        let t = d.ctx.params().t();
        let mut coeffs = Vec::with_capacity(host.n());
        let mut max_nu = BigUint::zero();
        let mut residues = vec![0u64; level + 1];
        for j in 0..host.n() {
            for (s, r) in residues.iter_mut().enumerate() {
                *r = host.limb(0, s)[j];
            }
            let tx = basis.reconstruct(&residues) * t;
            coeffs.push((((&tx + &half_q) / &q) % t).to_u64().unwrap());
            let nu = &tx % &q;
            let nu = if nu > half_q { &q - nu } else { nu };
            max_nu = max_nu.max(nu);
        }
        (coeffs, log2_big(&half_q) - log2_big(&max_nu))
    }

    struct Setup {
        ctx: Context<CpuBackend>,
        sk: SecretKey<CpuBackend>,
        pk: PublicKey<CpuBackend>,
        rlk: RelinKey<CpuBackend>,
        eval: Evaluator<CpuBackend>,
    }

    impl Setup {
        fn new(lit: &ParametersLiteral) -> Self {
            let ctx = Context::cpu(params::new(lit).unwrap()).unwrap();
            let kg = ctx.key_generator();
            let SeededKeys { sk, pk, rlk } = SeededKeys::new(&kg).unwrap();
            Setup {
                eval: Evaluator::new(&ctx),
                ctx,
                sk,
                pk,
                rlk,
            }
        }

        fn encrypt(&self, v: &[u64], s: u8) -> Ciphertext<CpuBackend> {
            let p = self.ctx.encoder().encode(v, self.ctx.level()).unwrap();
            self.ctx
                .encrypt_pk_with_seed(&self.pk, &p, &seed(s))
                .unwrap()
        }

        /// Fast and big-integer decryptions and budgets agree; the error fires exactly when
        /// the reference budget is below 1 bit. Returns the fast decryption (slots).
        fn agree(&self, name: &str, ct: &Ciphertext<CpuBackend>) -> Result<Vec<u64>> {
            let d = Decryptor::new(&self.ctx, &self.sk);
            let (want, budget) = decrypt_by_bigint(&d, ct);
            let got = d.noise_budget(ct).unwrap();
            assert!(
                (got - budget).abs() < 1e-6,
                "{name}: budget {got} vs reference {budget}"
            );
            let fast = d.decrypt_coeffs(ct);
            match &fast {
                Ok(c) => {
                    assert!(budget >= MIN_BUDGET_BITS, "{name}: decrypts at {budget}");
                    assert!(*c == want, "{name}: fast and reference decryptions differ");
                }
                Err(Error::NoiseBudgetExhausted { budget_bits }) => {
                    assert!(budget < MIN_BUDGET_BITS, "{name}: refused at {budget}");
                    assert!((budget_bits - budget).abs() < 1e-6, "{name}");
                }
                Err(e) => panic!("{name}: {e}"),
            }
            println!("{name}: budget {budget:.2} bits, fast {got:.2}");
            d.decrypt(ct)
        }
    }

    /// Fresh, tensor (3 components) and relinearized products to the depth limit, then with
    /// forged bounds beyond it until decryption refuses: fast equals the reference throughout.
    #[test]
    fn fast_decryption_equals_bigint_to_the_limit_and_beyond() {
        for lit in [TEST_N11_INSECURE, N13] {
            let s = Setup::new(&lit);
            let (n, t) = (s.ctx.params().n(), s.ctx.params().t());
            let a = random_values(1, n, t);
            let b = random_values(2, n, t);
            let ca = s.encrypt(&a, 10);
            let mut cb = s.encrypt(&b, 11);
            assert!(s.agree("fresh", &ca).unwrap() == a);
            let ab = mul_slots(&a, &b, t);
            assert!(s.agree("tensor", &s.eval.mul(&ca, &cb).unwrap()).unwrap() == ab);
            let mut acc = ca;
            let mut want = a;
            let mut forced = 0;
            for depth in 1..40 {
                let next = match s.eval.mul_relin(&acc, &cb, &s.rlk) {
                    Ok(next) => next,
                    Err(Error::NoiseBudgetExceeded { .. }) => {
                        forced += 1;
                        for ct in [&mut acc, &mut cb] {
                            let meta = ct.inner().meta();
                            ct.modify(s.ctx.backend(), meta, 1.0, |_| Ok::<_, rlwe::Error>(()))
                                .unwrap();
                        }
                        s.eval.mul_relin(&acc, &cb, &s.rlk).unwrap()
                    }
                    Err(e) => panic!("{e}"),
                };
                want = mul_slots(&want, &b, t);
                let name = format!("N=2^{} depth {depth} forced {forced}", lit.log_n);
                match s.agree(&name, &next) {
                    Ok(got) => assert!(got == want, "{name}: wrong result"),
                    Err(_) => {
                        assert!(forced > 0, "{name}: refused within the depth limit");
                        break;
                    }
                }
                assert!(forced < 3, "{name}: no refusal");
                acc = next;
            }
            assert!(forced > 0);
        }
    }
}
