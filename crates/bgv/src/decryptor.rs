//! [`Decryptor`]: decryption with the noise check, and the exact noise budget.
//!
//! **Decryption** computes the phase `v = [c_0 + c_1·s (+ c_2·s²)]_{Q_l}` at the ciphertext's
//! own level `l` (coefficient form, all limbs) and lifts it, centred, to `Z_t` with word
//! arithmetic only ([`CrtDecoder::centred_mod_t`]): with `y_i = [v_i·q̂_i^{-1}]_{q_i}`,
//! `v = Σ_i y_i·q̂_i - α·Q_l` and `α = round(Σ_i y_i/q_i)` (a fixed-point sum with error below
//! `L·2^-64`), so `v mod t = Σ_i y_i·[q̂_i]_t - α·[Q_l]_t`. The message is `f^{-1}·v mod t` with
//! `f` the ciphertext's correction factor (no switching factor: nothing is switched).
//!
//! **Exhaustion.** The lift is correct iff `‖v‖_∞ < Q_l/2`. Decryption requires the measured
//! budget at level `l`, `log2(Q_l/2) - log2 ‖v‖_∞`, to be at least [`MIN_BUDGET_BITS`] (1 bit),
//! i.e. `‖v‖_∞ ≤ Q_l/4`, a one-bit safety margin; the comparison with `Q_l/4` is exact
//! (mixed-radix conversion where the fixed point cannot decide), and within it `α` is exact.
//! Otherwise [`Error::NoiseBudgetExhausted`] is returned instead of garbage.
//!
//! **The noise budget** ([`Decryptor::noise_budget`], like SEAL's invariant noise budget) is
//! measured at the same level: `log2(Q_l/2) - log2 ‖v‖_∞` bits, `‖v‖_∞` exact (mixed-radix
//! conversion in words when the fixed-point fraction cannot resolve it).

use crate::ciphertext::Ciphertext;
use crate::context::Context;
use crate::error::{Error, Result};
use fhe_math::backend::{IntegerBackend, noise_max_log2};
use fhe_math::crt_decode::{CrtDecoder, DecodeMode, NoiseFraction};
use fhe_math::ntt::NttTable;
use fhe_math::{Modulus, RnsPoly};
use rlwe::SecretKey;
use std::sync::OnceLock;

/// Below this many bits of measured budget, decryption reports exhaustion.
pub const MIN_BUDGET_BITS: f64 = 1.0;

// The decoders test `‖v‖_∞ > Q/4` exactly: that is this threshold, `log2(Q/2) - log2 Q/4 = 1`.
const _: () = assert!(MIN_BUDGET_BITS == 1.0);

/// [`CrtDecoder`]s of the levels of a chain `q_0, …, q_L` for the plaintext modulus `t`,
/// built on first use and kept.
#[derive(Debug)]
pub struct DecoderCache {
    moduli: Vec<u64>,
    t: u64,
    levels: Vec<OnceLock<CrtDecoder>>,
}

impl DecoderCache {
    /// An empty cache for the chain `moduli` (`q_0` first) and the plaintext modulus `t`.
    pub fn new(moduli: &[u64], t: u64) -> Self {
        DecoderCache {
            moduli: moduli.to_vec(),
            t,
            levels: (0..moduli.len()).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Decrypts `ct` with `sk` and decodes the message as `mode` says (BFV's scale-and-round or
    /// BGV's centred lift), transformed by `ntt` when given ([`Backend::decode_mod_t_ntt`]):
    /// the phase stays on the backend and only the results cross. An error when the budget is
    /// exhausted.
    pub fn decrypt_decode<B: IntegerBackend>(
        &self,
        backend: &B,
        sk: &SecretKey<B>,
        ct: &rlwe::Ciphertext<B>,
        mode: DecodeMode,
        ntt: Option<&NttTable>,
    ) -> Result<Vec<u64>> {
        let v = phase_on_backend(backend, sk, ct)?;
        let dec = self.get(ct.level())?;
        let (out, f) = match ntt {
            Some(ntt) => backend.decode_mod_t_ntt(&v, dec, mode, ntt)?,
            None => backend.decode_mod_t(&v, dec, mode)?,
        };
        check_budget(&f)?;
        Ok(out)
    }

    /// The decoder of level `l` (basis `q_0..q_l`).
    pub fn get(&self, level: usize) -> Result<&CrtDecoder> {
        let cell = self
            .levels
            .get(level)
            .ok_or(Error::Math(fhe_math::Error::InvalidLevel {
                level,
                reason: "above the top of the chain",
            }))?;
        if let Some(d) = cell.get() {
            return Ok(d);
        }
        let moduli = self.moduli[..=level]
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<fhe_math::Result<Vec<_>>>()?;
        let d = CrtDecoder::new(&moduli, Modulus::new(self.t)?)?;
        Ok(cell.get_or_init(|| d))
    }
}

/// The limbs `q_0..q_l` of component 0 of a host polynomial.
pub fn phase_limbs(v: &RnsPoly) -> Vec<&[u64]> {
    (0..=v.level()).map(|s| v.limb(0, s)).collect()
}

/// The phase `c_0 + c_1·s (+ c_2·s²)` of `ct` at its level, coefficient form, left on the
/// backend.
pub fn phase_on_backend<B: IntegerBackend>(
    backend: &B,
    sk: &SecretKey<B>,
    ct: &rlwe::Ciphertext<B>,
) -> Result<B::Poly> {
    let mut pt = rlwe::encrypt::decrypt(backend, sk, ct)?;
    pt.set_form(backend, false)?;
    Ok(pt.into_parts().0)
}

/// [`Error::NoiseBudgetExhausted`] when a decoding found `max|ν| > Q/4` (budget below 1 bit).
pub fn check_budget(f: &NoiseFraction) -> Result<()> {
    if f.above_quarter {
        return Err(Error::NoiseBudgetExhausted {
            budget_bits: -1.0 - f.log2_ratio(),
        });
    }
    Ok(())
}

/// Decrypts ciphertexts of one context with one secret key.
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

    /// `c_0 + c_1·s (+ c_2·s²)` at the ciphertext's level, coefficient form, on the host.
    #[cfg(test)]
    fn phase(&self, ct: &rlwe::Ciphertext<B>) -> Result<RnsPoly> {
        Ok(rlwe::encrypt::decrypt_to_host(
            self.ctx.backend(),
            self.sk,
            ct,
        )?)
    }

    /// The message polynomial: `N` coefficients in `[0, t)` (the correction factor removed);
    /// [`Error::NoiseBudgetExhausted`] when `‖v‖_∞ > Q_l/4` (budget below 1 bit). The phase is
    /// decoded where it lives ([`Backend::decode_mod_t`]: on the GPU only `N` words cross).
    pub fn decrypt_coeffs(&self, ct: &Ciphertext<B>) -> Result<Vec<u64>> {
        self.decode(ct, None)
    }

    /// The message, transformed by `ntt` when given ([`Backend::decode_mod_t_ntt`]), with the
    /// exhaustion check.
    fn decode(&self, ct: &Ciphertext<B>, ntt: Option<&NttTable>) -> Result<Vec<u64>> {
        let t = self.ctx.plain().modulus();
        let mode = DecodeMode::Centred {
            scale: t.inv(ct.factor).map_err(Error::Math)?,
        };
        self.decoders
            .decrypt_decode(self.ctx.backend(), self.sk, &ct.inner, mode, ntt)
    }

    /// Decrypts and decodes the slots (unsigned, in `[0, t)`); with prime-field slots the
    /// slot transform runs where the ciphertext is (on the GPU only the `N` values cross).
    pub fn decrypt(&self, ct: &Ciphertext<B>) -> Result<Vec<u64>> {
        self.ctx
            .plain()
            .decode_slots_with(|ntt| self.decode(ct, ntt))
    }

    /// Decrypts and decodes the slots as signed integers in `(-t/2, t/2]`.
    pub fn decrypt_signed(&self, ct: &Ciphertext<B>) -> Result<Vec<i64>> {
        let v = self.decrypt(ct)?;
        Ok(v.into_iter().map(|x| self.ctx.plain().center(x)).collect())
    }

    /// Decrypts a coefficient-encoded ciphertext ([`crate::Encoder::encode_unbatch`]).
    pub fn decrypt_unbatch(&self, ct: &Ciphertext<B>) -> Result<Vec<u64>> {
        self.decrypt_coeffs(ct)
    }

    /// log2 of the largest `|v_i|` of `v = [c_0 + c_1·s]_{Q_l}` (centred, exact: see
    /// [`CrtDecoder::max_log2`]; `-inf` for `v = 0`).
    pub fn noise_bits(&self, ct: &Ciphertext<B>) -> Result<f64> {
        let be = self.ctx.backend();
        let v = phase_on_backend(be, self.sk, &ct.inner)?;
        let dec = self.decoders.get(ct.level())?;
        Ok(noise_max_log2(be, &v, dec, false)?)
    }

    /// The exact remaining noise budget in bits at the ciphertext's level:
    /// `log2(Q_l/2) - log2 ‖[c_0 + c_1·s]_{Q_l}‖_∞`; an error when it is below
    /// [`MIN_BUDGET_BITS`].
    pub fn noise_budget(&self, ct: &Ciphertext<B>) -> Result<f64> {
        let budget = self.ctx.noise().capacity(ct.level()) - self.noise_bits(ct)?;
        if budget < MIN_BUDGET_BITS {
            return Err(Error::NoiseBudgetExhausted {
                budget_bits: budget,
            });
        }
        Ok(budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{N13, Parameters, ParametersLiteral, TEST_N11_INSECURE};
    use crate::{Encoder, Evaluator};
    use fhe_math::cpu::CpuBackend;
    use fhe_math::rns::RnsBasis;
    use num_traits::Zero;
    use rlwe::{PublicKey, RelinKey};
    use test_support::{SeededKeys, mul_slots, random_values, seed};

    /// The previous decryption, kept as the reference: switch a copy down to level 0 one level
    /// at a time (the factor times `q_l^{-1} mod t` per switch), lift limb 0 centred, and check
    /// the budget at level 0.
    fn decrypt_by_switching(
        d: &Decryptor<CpuBackend>,
        ct: &Ciphertext<CpuBackend>,
    ) -> Result<Vec<u64>> {
        let be = d.ctx.backend();
        let params = d.ctx.params();
        let t = d.ctx.plain().modulus();
        let mut low = ct.inner.duplicate(be)?;
        let mut factor = ct.factor;
        while low.level() > 0 {
            factor = t.mul(factor, params.q_inv_mod_t(low.level())?);
            let meta = low.meta().with_level(low.level() - 1);
            low.modify(be, meta, |p| {
                rlwe::keyswitch::mod_switch_mod_t(be, p, t.value())
            })?;
        }
        let v = d.phase(&low)?;
        let q0 = Modulus::new(params.moduli_q()[0])?;
        let centred: Vec<i64> = v.limb(0, 0).iter().map(|&x| q0.center(x)).collect();
        let max = centred.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0);
        let budget = (q0.value() as f64).log2() - 1.0 - (max.max(1) as f64).log2();
        if budget < MIN_BUDGET_BITS {
            return Err(Error::NoiseBudgetExhausted {
                budget_bits: budget,
            });
        }
        let inv = t.inv(factor).map_err(Error::Math)?;
        Ok(centred
            .into_iter()
            .map(|x| t.mul(t.reduce_i64(x), inv))
            .collect())
    }

    /// The previous `noise_bits`: big-integer CRT reconstruction of every coefficient.
    fn noise_bits_by_crt(d: &Decryptor<CpuBackend>, ct: &Ciphertext<CpuBackend>) -> f64 {
        let level = ct.level();
        let basis = RnsBasis::new(
            d.ctx.params().moduli_q()[..=level]
                .iter()
                .map(|&q| Modulus::new(q).unwrap())
                .collect(),
        )
        .unwrap();
        let v = d.phase(&ct.inner).unwrap();
        let mut residues = vec![0u64; level + 1];
        let mut max = f64::NEG_INFINITY;
        for k in 0..v.n() {
            for (s, r) in residues.iter_mut().enumerate() {
                *r = v.limb(0, s)[k];
            }
            let x = basis.reconstruct_centered(&residues);
            if !x.is_zero() {
                let shift = x.bits().saturating_sub(64);
                let top = (x.magnitude() >> shift).iter_u64_digits().next().unwrap();
                max = max.max((top as f64).log2() + shift as f64);
            }
        }
        max
    }

    struct Setup {
        ctx: Context<CpuBackend>,
        sk: SecretKey<CpuBackend>,
        pk: PublicKey<CpuBackend>,
        rlk: RelinKey<CpuBackend>,
        enc: Encoder<CpuBackend>,
        eval: Evaluator<CpuBackend>,
    }

    impl Setup {
        fn new(lit: &ParametersLiteral) -> Self {
            let ctx = Context::cpu(Parameters::new(lit).unwrap()).unwrap();
            let kg = ctx.key_generator();
            let SeededKeys { sk, pk, rlk } = SeededKeys::new(&kg).unwrap();
            Setup {
                enc: Encoder::new(&ctx),
                eval: Evaluator::new(&ctx),
                ctx,
                sk,
                pk,
                rlk,
            }
        }

        fn encrypt(&self, v: &[u64], level: usize, s: u8) -> Ciphertext<CpuBackend> {
            let p = self.enc.encode(v, level).unwrap();
            self.ctx
                .encrypt_pk_with_seed(&self.pk, &p, &seed(s))
                .unwrap()
        }

        /// The fast path equals the reference and the plaintext computation; the noise
        /// measurement equals the big-integer one. Returns the measured budget.
        fn agree(&self, name: &str, ct: &Ciphertext<CpuBackend>, want: &[u64]) -> f64 {
            let d = Decryptor::new(&self.ctx, &self.sk);
            let fast = d
                .decrypt_coeffs(ct)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let slow = decrypt_by_switching(&d, ct).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                fast == slow,
                "{name}: fast and reference decryptions differ"
            );
            assert!(d.decrypt(ct).unwrap() == want, "{name}: wrong result");
            let (bits, exact) = (d.noise_bits(ct).unwrap(), noise_bits_by_crt(&d, ct));
            assert!(
                (bits - exact).abs() < 1e-9,
                "{name}: noise 2^{bits} vs 2^{exact}"
            );
            self.ctx.noise().capacity(ct.level()) - bits
        }
    }

    #[test]
    fn fast_decryption_equals_switching_at_every_level() {
        for lit in [TEST_N11_INSECURE, N13] {
            let s = Setup::new(&lit);
            let (n, t, top) = (
                s.ctx.params().n(),
                s.ctx.params().t(),
                s.ctx.params().max_level(),
            );
            let x = random_values(1, n, t);
            let y = random_values(2, n, t);
            let cx = s.encrypt(&x, top, 10);
            let cy = s.encrypt(&y, top, 11);
            for level in (0..=top).rev() {
                let c = s.eval.mod_switch_to(&cx, level).unwrap();
                s.agree(&format!("switched to {level}"), &c, &x);
                let c = s.encrypt(&y, level, 20 + level as u8);
                s.agree(&format!("fresh at {level}"), &c, &y);
            }
            // Three components, and a factor from a switch after the product.
            let xy = mul_slots(&x, &y, t);
            let prod = s.eval.mul(&cx, &cy).unwrap();
            s.agree("tensor (3 components)", &prod, &xy);
            let relin = s.eval.mul_relin(&cx, &cy, &s.rlk).unwrap();
            assert_ne!(relin.factor, 1);
            s.agree("mul_relin", &relin, &xy);
        }
    }

    /// To the depth limit (the evaluator refuses the next product), then beyond it with forged
    /// bounds: every decryption is exact or an exhaustion error, and the error fires within
    /// two forced products (the analytic bound is conservative: the first may still decrypt).
    #[test]
    fn depth_limit_and_beyond() {
        let s = Setup::new(&TEST_N11_INSECURE);
        let (n, t, top) = (
            s.ctx.params().n(),
            s.ctx.params().t(),
            s.ctx.params().max_level(),
        );
        let d = Decryptor::new(&s.ctx, &s.sk);
        let mut want = random_values(3, n, t);
        let mut acc = s.encrypt(&want, top, 30);
        let mut depth = 0;
        let mut forced = 0;
        loop {
            let v = random_values(40 + depth, n, t);
            let mut c = s.encrypt(&v, top, 40 + depth as u8);
            let next = match s.eval.mul_relin(&acc, &c, &s.rlk) {
                Ok(next) => next,
                Err(Error::NoiseBudgetExceeded { .. }) => {
                    // Beyond the limit: forge the bounds so that the evaluator goes on.
                    forced += 1;
                    (acc.noise_bits, c.noise_bits) = (1.0, 1.0);
                    s.eval.mul_relin(&acc, &c, &s.rlk).unwrap()
                }
                Err(e) => panic!("{e}"),
            };
            depth += 1;
            want = mul_slots(&want, &v, t);
            let name = format!("depth {depth} (level {}, forced {forced})", next.level());
            match d.decrypt(&next) {
                Ok(got) => {
                    let budget = s.agree(&name, &next, &want);
                    assert!(got == want && budget >= MIN_BUDGET_BITS, "{name}");
                    println!("{name}: exact, measured budget {budget:.1} bits");
                }
                Err(Error::NoiseBudgetExhausted { budget_bits }) => {
                    println!("{name}: exhausted ({budget_bits:.2} bits)");
                    assert!(forced > 0, "{name}: exhausted within the depth limit");
                    assert!(budget_bits < MIN_BUDGET_BITS + 1e-9);
                    assert!(matches!(
                        d.noise_budget(&next),
                        Err(Error::NoiseBudgetExhausted { .. })
                    ));
                    let slow = decrypt_by_switching(&d, &next);
                    assert!(
                        !matches!(slow, Ok(ref r) if *r == want),
                        "{name}: the reference still decrypts"
                    );
                    break;
                }
                Err(e) => panic!("{name}: {e}"),
            }
            acc = next;
            assert!(
                forced < 2,
                "the error must fire by the second forced product"
            );
        }
        assert!(depth as usize > top, "depth {depth}");
    }

    /// Products kept at a middle level (no switch), forged bounds: decryption stays exact
    /// until the error fires, at the level of the ciphertext.
    #[test]
    fn exhaustion_at_a_middle_level() {
        let s = Setup::new(&TEST_N11_INSECURE);
        let (n, t) = (s.ctx.params().n(), s.ctx.params().t());
        let d = Decryptor::new(&s.ctx, &s.sk);
        let level = 4;
        let mut want = random_values(5, n, t);
        let mut acc = s.encrypt(&want, level, 60);
        for step in 1..20 {
            let v = random_values(60 + step, n, t);
            let c = s.encrypt(&v, level, 60 + step as u8);
            acc.noise_bits = c.noise_bits;
            acc = s
                .eval
                .relinearize(s.eval.mul(&acc, &c).unwrap(), &s.rlk)
                .unwrap();
            want = mul_slots(&want, &v, t);
            match d.decrypt(&acc) {
                Ok(_) => {
                    let budget = s.agree(&format!("step {step}"), &acc, &want);
                    println!("level {level}, step {step}: budget {budget:.1}");
                }
                Err(Error::NoiseBudgetExhausted { budget_bits }) => {
                    println!("level {level}, step {step}: exhausted ({budget_bits:.2} bits)");
                    assert!(step > 1);
                    return;
                }
                Err(e) => panic!("{e}"),
            }
        }
        panic!("never exhausted");
    }
}
