//! Key switching on ciphertexts: relinearization, Galois automorphisms (rotations, conjugation)
//! and hoisted automorphisms sharing one `mod_up`.
//!
//! # Key switching that preserves the message mod `t` (BGV)
//!
//! The `*_mod_t` functions take the plaintext modulus `t` (`t = 1` is the ordinary key
//! switching, bit-identical to the functions without the suffix). With keys whose errors are
//! scaled by `t` (`b_j = -a_j·s + t·e_j + P·g_j·s'`), the accumulator of `key_product` satisfies
//! `acc_0 + acc_1·s ≡ P·c·s' + t·E (mod Q·P)` with `E = Σ_j d_j·e_j`. The plain `mod_down`
//! rounds `acc / P`, which adds a rounding error that is not a multiple of `t`. Instead:
//!
//! 1. `acc' = t^{-1}·acc` and `out' = t^{-1}·out` (scalar multiplies mod every prime);
//! 2. `mod_down_into(acc', out')`: `out' += (acc' - r)/P` with `r ≡ acc' (mod P)`, `|r| ≲ P/2`;
//! 3. `out = t·out'`.
//!
//! Then `P·(out - out_in) ≡ acc - t·r (mod Q·P)` and `acc - t·r ≡ t·(acc' - r) ≡ 0 (mod P)`,
//! so the integer polynomial `W = E - r_0 - r_1·s` is divisible by `P` and
//! `Y_0 + Y_1·s ≡ c·s' + t·W/P (mod Q)` for `Y = out - out_in`: the switch adds
//! `t·(E - r_0 - r_1·s)/P`, a multiple of `t`, and **no** `P^{-1} mod t` factor appears (the
//! `t^{-1}` of step 1 cancels it). With `rescale` the fused division by the top prime `q_l`
//! acts on `t^{-1}·out`, and step 3 multiplies by `t` again: that is exactly BGV's modulus
//! switch (`t·⌊t^{-1}·c / q_l⌉`), which multiplies the message by `q_l^{-1} mod t`.
//!
//! The steps are the default bodies of `Backend::mod_down_into_mod_t` / `rescale_mod_t`, reached
//! through `Backend::relinearize_mod_t` and `rotate_hoisted_mod_t`; a backend may fold the
//! scalings into its own kernels (the CUDA backend does) as long as the residues are the same.

use crate::ciphertext::{Ciphertext, Meta};
use crate::error::{Error, Result, check_same};
use crate::keys::{RelinKey, SwitchingKey};
use fhe_math::backend::{IntegerBackend, KeySwitchBackend, RingBackend};

fn check_two<B: RingBackend>(backend: &B, ct: &Ciphertext<B>, op: &'static str) -> Result<()> {
    if backend.shape(&ct.poly).components != 2 {
        return Err(Error::InvalidOperand {
            op,
            reason: "the ciphertext must have 2 components (relinearize first)".into(),
        });
    }
    Ok(())
}

/// An error unless `ct` is in NTT form.
fn check_ntt<B: RingBackend>(ct: &Ciphertext<B>, op: &'static str) -> Result<()> {
    if !ct.meta.ntt {
        return Err(Error::InvalidOperand {
            op,
            reason: "the ciphertext must be in NTT form".into(),
        });
    }
    Ok(())
}

/// An error unless `ct` has 3 components.
fn check_three<B: RingBackend>(backend: &B, ct: &Ciphertext<B>) -> Result<()> {
    if backend.shape(&ct.poly).components != 3 {
        return Err(Error::InvalidOperand {
            op: "relinearize",
            reason: "the ciphertext must have 3 components".into(),
        });
    }
    Ok(())
}

/// Relinearizes a 3-component ciphertext in NTT form back to 2 components; `rescale` fuses the
/// rescale that usually follows (the caller updates the scale).
pub fn relinearize<B: KeySwitchBackend>(
    backend: &B,
    ct: Ciphertext<B>,
    rlk: &RelinKey<B>,
    rescale: bool,
) -> Result<Ciphertext<B>> {
    check_relinearize(backend, &ct, rlk, rescale)?;
    if !ct.meta.ntt {
        return Err(Error::InvalidOperand {
            op: "relinearize",
            reason: "the ciphertext must be in NTT form".into(),
        });
    }
    let mut meta = ct.meta;
    let poly = backend.relinearize(ct.poly, &rlk.0.poly, rescale)?;
    if rescale {
        meta.level -= 1;
    }
    Ok(Ciphertext {
        poly,
        meta,
        seed: None,
    })
}

/// [`relinearize`] without a rescale for a ciphertext in either form: a coefficient-form one
/// (BFV's unrelinearized product) goes through `IntegerBackend::relinearize_from_coeff`. The
/// result is in NTT form.
pub fn relinearize_any_form<B: IntegerBackend>(
    backend: &B,
    ct: Ciphertext<B>,
    rlk: &RelinKey<B>,
) -> Result<Ciphertext<B>> {
    if ct.meta.ntt {
        return relinearize(backend, ct, rlk, false);
    }
    check_relinearize(backend, &ct, rlk, false)?;
    let meta = Meta {
        ntt: true,
        ..ct.meta
    };
    let poly = backend.relinearize_from_coeff(ct.poly, &rlk.0.poly)?;
    Ok(Ciphertext {
        poly,
        meta,
        seed: None,
    })
}

/// The operands of a relinearization: the key's parameters, three components, a level to
/// rescale from.
fn check_relinearize<B: RingBackend>(
    backend: &B,
    ct: &Ciphertext<B>,
    rlk: &RelinKey<B>,
    rescale: bool,
) -> Result<()> {
    check_same("relinearize", ct.meta.fingerprint, rlk.0.fingerprint)?;
    check_three(backend, ct)?;
    if rescale && ct.meta.level == 0 {
        return Err(Error::InvalidOperand {
            op: "rescale",
            reason: "the ciphertext is at level 0".into(),
        });
    }
    Ok(())
}

/// `a·b` relinearized (`relinearize(a ⊗ b)`) in one backend call, which may fuse the product
/// into the key switch; `rescale` fuses the rescale (the caller updates the scale). `a` and `b`
/// have 2 components at one level.
pub fn mul_relinearize<B: KeySwitchBackend>(
    backend: &B,
    a: &Ciphertext<B>,
    b: &Ciphertext<B>,
    rlk: &RelinKey<B>,
    rescale: bool,
) -> Result<Ciphertext<B>> {
    let switch = rescale.then_some("rescale");
    check_mul(backend, a, b, rlk, switch)?;
    let poly = backend.mul_relin(&a.poly, &b.poly, &rlk.0.poly, rescale)?;
    Ok(product(a, poly, rescale))
}

/// [`mul_relinearize`] preserving the message mod `t` ([`relinearize_mod_t`] of the product);
/// with `mod_switch` the modulus switch is fused (the caller updates the level-dependent
/// metadata other than `level`).
pub fn mul_relinearize_mod_t<B: IntegerBackend>(
    backend: &B,
    a: &Ciphertext<B>,
    b: &Ciphertext<B>,
    rlk: &RelinKey<B>,
    t: u64,
    mod_switch: bool,
) -> Result<Ciphertext<B>> {
    check_t(backend, t)?;
    check_mul(backend, a, b, rlk, mod_switch.then_some("switch modulus"))?;
    let poly = backend.mul_relin_mod_t(&a.poly, &b.poly, &rlk.0.poly, mod_switch, t)?;
    Ok(product(a, poly, mod_switch))
}

/// The operands of a product with relinearization: one parameter set, two components each in
/// NTT form at one level; `switch` names the fused rescale or modulus switch (for its error),
/// if any.
fn check_mul<B: RingBackend>(
    backend: &B,
    a: &Ciphertext<B>,
    b: &Ciphertext<B>,
    rlk: &RelinKey<B>,
    switch: Option<&'static str>,
) -> Result<()> {
    let op = "multiply";
    check_same(op, a.meta.fingerprint, b.meta.fingerprint)?;
    check_same("relinearize", a.meta.fingerprint, rlk.0.fingerprint)?;
    crate::ciphertext::check_two_components(backend, op, &a.poly, &b.poly)?;
    check_ntt(a, op)?;
    check_ntt(b, op)?;
    if a.meta.level != b.meta.level {
        return Err(Error::InvalidOperand {
            op,
            reason: format!(
                "the operands are at levels {} and {}",
                a.meta.level, b.meta.level
            ),
        });
    }
    if let Some(op) = switch
        && a.meta.level == 0
    {
        return Err(Error::InvalidOperand {
            op,
            reason: "the ciphertext is at level 0".into(),
        });
    }
    Ok(())
}

/// The ciphertext of a product's buffer: `a`'s metadata, one level lower after a fused switch.
fn product<B: RingBackend>(a: &Ciphertext<B>, poly: B::Poly, switched: bool) -> Ciphertext<B> {
    let mut meta = a.meta;
    if switched {
        meta.level -= 1;
    }
    Ciphertext {
        poly,
        meta,
        seed: None,
    }
}

/// `σ_g(ct)` re-encrypted under `s` with the Galois key of `g`.
pub fn apply_galois<B: KeySwitchBackend>(
    backend: &B,
    ct: &Ciphertext<B>,
    g: u64,
    key: &SwitchingKey<B>,
) -> Result<Ciphertext<B>> {
    Ok(apply_galois_hoisted(backend, ct, &[(g, key)])?
        .pop()
        .expect("one key gives one result"))
}

/// `σ_g(ct)` for several `g` sharing one `mod_up` of `c_1` (hoisting).
pub fn apply_galois_hoisted<B: KeySwitchBackend>(
    backend: &B,
    ct: &Ciphertext<B>,
    keys: &[(u64, &SwitchingKey<B>)],
) -> Result<Vec<Ciphertext<B>>> {
    check_hoisted(backend, ct, keys)?;
    let refs: Vec<(u64, &B::Poly)> = keys.iter().map(|(g, k)| (*g, &k.poly)).collect();
    let polys = backend.rotate_hoisted(&ct.poly, &refs)?;
    Ok(rotated(ct, polys))
}

/// The operands of hoisted rotations: two components in NTT form, keys of the same parameters.
fn check_hoisted<B: RingBackend>(
    backend: &B,
    ct: &Ciphertext<B>,
    keys: &[(u64, &SwitchingKey<B>)],
) -> Result<()> {
    check_two(backend, ct, "rotate")?;
    check_ntt(ct, "rotate")?;
    for (_, k) in keys {
        check_same("rotate", ct.meta.fingerprint, k.fingerprint)?;
    }
    Ok(())
}

/// The ciphertexts of rotated buffers, with `ct`'s metadata.
fn rotated<B: RingBackend>(ct: &Ciphertext<B>, polys: Vec<B::Poly>) -> Vec<Ciphertext<B>> {
    polys
        .into_iter()
        .map(|poly| Ciphertext {
            poly,
            meta: ct.meta,
            seed: None,
        })
        .collect()
}

/// An error unless `t` is invertible modulo every prime of the ring.
fn check_t<B: RingBackend>(backend: &B, t: u64) -> Result<()> {
    // Every ring modulus is prime (its NTT table checks it), so `t` is invertible modulo `q`
    // exactly when `q` does not divide it: no inverse to compute on the hot path (16 extended
    // Euclids took 1.4 µs of host time before a key switch's first launch).
    for m in backend.ring().moduli() {
        if m.reduce(t) == 0 {
            return Err(Error::InvalidOperand {
                op: "switch keys",
                reason: format!("t = {t} is not invertible modulo {}", m.value()),
            });
        }
    }
    Ok(())
}

/// BGV's modulus switch of a buffer (any number of components, NTT form, level `l >= 1`):
/// `c -> t·⌊t^{-1}·c / q_l⌉` over `q_0..q_{l-1}`. The result decrypts to `q_l^{-1}·m (mod t)`
/// with the noise divided by `q_l` (plus a rounding term `t·(δ_0 + δ_1·s)/q_l`, `|δ| ≤ q_l/2`).
pub fn mod_switch_mod_t<B: IntegerBackend>(backend: &B, poly: &mut B::Poly, t: u64) -> Result<()> {
    check_mod_switch(backend, poly, t)?;
    backend.rescale_mod_t(poly, t)?;
    Ok(())
}

/// [`mod_switch_mod_t`] into a new buffer, `poly` unchanged (`Backend::rescaled_mod_t`: no copy
/// of `poly` first where the backend reads it in the switch's own passes).
pub fn mod_switched_mod_t<B: IntegerBackend>(
    backend: &B,
    poly: &B::Poly,
    t: u64,
) -> Result<B::Poly> {
    check_mod_switch(backend, poly, t)?;
    Ok(backend.rescaled_mod_t(poly, t)?)
}

/// A buffer a modulus switch by `t` applies to: over `Q`, above level 0, `t` invertible.
fn check_mod_switch<B: RingBackend>(backend: &B, poly: &B::Poly, t: u64) -> Result<()> {
    let shape = backend.shape(poly);
    if shape.level == 0 || shape.extended {
        return Err(Error::InvalidOperand {
            op: "switch modulus",
            reason: "the ciphertext is at level 0".into(),
        });
    }
    check_t(backend, t)
}

/// Relinearizes a 3-component ciphertext preserving the message mod `t` (module
/// documentation); with `mod_switch` the modulus switch to the next level is fused into
/// `mod_down` (the caller updates the level-dependent metadata other than `level`).
pub fn relinearize_mod_t<B: IntegerBackend>(
    backend: &B,
    ct: Ciphertext<B>,
    rlk: &RelinKey<B>,
    t: u64,
    mod_switch: bool,
) -> Result<Ciphertext<B>> {
    check_same("relinearize", ct.meta.fingerprint, rlk.0.fingerprint)?;
    check_three(backend, &ct)?;
    check_ntt(&ct, "relinearize")?;
    if mod_switch && ct.meta.level == 0 {
        return Err(Error::InvalidOperand {
            op: "switch modulus",
            reason: "the ciphertext is at level 0".into(),
        });
    }
    check_t(backend, t)?;
    let mut meta = ct.meta;
    let poly = backend.relinearize_mod_t(ct.poly, &rlk.0.poly, mod_switch, t)?;
    if mod_switch {
        meta.level -= 1;
    }
    Ok(Ciphertext {
        poly,
        meta,
        seed: None,
    })
}

/// `σ_g(ct)` for several `g` sharing one `mod_up` of `c_1` (hoisting), preserving the message
/// mod `t` (module documentation).
pub fn apply_galois_hoisted_mod_t<B: IntegerBackend>(
    backend: &B,
    ct: &Ciphertext<B>,
    keys: &[(u64, &SwitchingKey<B>)],
    t: u64,
) -> Result<Vec<Ciphertext<B>>> {
    check_t(backend, t)?;
    check_hoisted(backend, ct, keys)?;
    let refs: Vec<(u64, &B::Poly)> = keys.iter().map(|(g, k)| (*g, &k.poly)).collect();
    let polys = backend.rotate_hoisted_mod_t(&ct.poly, &refs, t)?;
    Ok(rotated(ct, polys))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyGenerator;
    use fhe_math::cpu::CpuBackend;
    use fhe_math::poly::Shape;
    use fhe_math::primes::ntt_primes;
    use fhe_math::ring::RingContext;
    use fhe_math::sampler::{Domain, Seed};

    const FP: u64 = 0x5eed;

    /// n = 2^10, three 50-bit primes, two special primes, one prime per digit; a relinearization
    /// key and two uniform 2-component "ciphertexts" (the algebra does not need encryptions).
    fn setup() -> (
        CpuBackend,
        RelinKey<CpuBackend>,
        [Ciphertext<CpuBackend>; 2],
    ) {
        let n = 1 << 10;
        let qs = ntt_primes(50, 2 * n as u64, 3, &[]).unwrap();
        let ps = ntt_primes(55, 2 * n as u64, 2, &qs).unwrap();
        let be = CpuBackend::new(RingContext::new(n, &qs, &ps, vec![0..1, 1..2, 2..3]).unwrap());
        let kg = KeyGenerator::new(&be, FP);
        let sk = kg.secret_key_from_seed(Seed([1; 32])).unwrap();
        let rlk = kg
            .relin_key_with_seeds(&sk, Seed([2; 32]), &Seed([3; 32]))
            .unwrap();
        let shape = Shape {
            components: 2,
            level: 2,
            extended: false,
        };
        let ct = |i: u32| Ciphertext {
            poly: be
                .sample_uniform(&Seed([4; 32]), Domain::Other, 2 * i, shape)
                .unwrap(),
            meta: crate::encrypt::fresh_meta(2, 1.0, FP),
            seed: None,
        };
        let cts = [ct(0), ct(1)];
        (be, rlk, cts)
    }

    /// `mul_relinearize(_mod_t)` is `relinearize(_mod_t)` of the tensor, word for word, with the
    /// level lowered by the fused switch; wrong operands are errors.
    #[test]
    fn mul_relinearize_is_relinearize_of_the_product() {
        let (be, rlk, [a, b]) = setup();
        let product = || Ciphertext {
            poly: be.tensor(&a.poly, &b.poly).unwrap(),
            meta: a.meta,
            seed: None,
        };
        for switch in [false, true] {
            let two = relinearize(&be, product(), &rlk, switch).unwrap();
            let one = mul_relinearize(&be, &a, &b, &rlk, switch).unwrap();
            assert_eq!(
                be.download(&one.poly).unwrap(),
                be.download(&two.poly).unwrap()
            );
            assert_eq!(one.meta.level, 2 - usize::from(switch));
            let two = relinearize_mod_t(&be, product(), &rlk, 65537, switch).unwrap();
            let one = mul_relinearize_mod_t(&be, &a, &b, &rlk, 65537, switch).unwrap();
            assert_eq!(
                be.download(&one.poly).unwrap(),
                be.download(&two.poly).unwrap()
            );
        }
        // Operands at two levels, a rescale from level 0, a key of other parameters, a
        // 3-component operand: errors, not results.
        let mut low = Ciphertext {
            poly: be.duplicate(&b.poly).unwrap(),
            meta: b.meta,
            seed: None,
        };
        be.set_level(&mut low.poly, 1).unwrap();
        low.meta.level = 1;
        assert!(mul_relinearize(&be, &a, &low, &rlk, false).is_err());
        let mut zero = Ciphertext {
            poly: be.duplicate(&a.poly).unwrap(),
            meta: a.meta,
            seed: None,
        };
        be.set_level(&mut zero.poly, 0).unwrap();
        zero.meta.level = 0;
        assert!(mul_relinearize(&be, &zero, &zero, &rlk, true).is_err());
        assert!(mul_relinearize(&be, &zero, &zero, &rlk, false).is_ok());
        assert!(mul_relinearize(&be, &product(), &a, &rlk, false).is_err());
        let mut other = b;
        other.meta.fingerprint = FP + 1;
        assert!(mul_relinearize(&be, &a, &other, &rlk, false).is_err());
    }

    /// `relinearize` of a coefficient-form product is that of its NTT form, word for word (and
    /// in NTT form); the NTT-form-only key switches refuse coefficient-form ciphertexts.
    #[test]
    fn coefficient_form_relinearizes_and_is_refused_elsewhere() {
        let (be, rlk, [a, b]) = setup();
        let product = be.tensor(&a.poly, &b.poly).unwrap();
        let mut coeffs = be.duplicate(&product).unwrap();
        be.intt(&mut coeffs).unwrap();
        let ntt_ct = Ciphertext {
            poly: product,
            meta: a.meta,
            seed: None,
        };
        let coeff_ct = Ciphertext {
            poly: coeffs,
            meta: Meta {
                ntt: false,
                ..a.meta
            },
            seed: None,
        };
        let want = relinearize(&be, ntt_ct, &rlk, false).unwrap();
        let dup = |c: &Ciphertext<CpuBackend>| Ciphertext {
            poly: be.duplicate(&c.poly).unwrap(),
            meta: c.meta,
            seed: None,
        };
        assert!(relinearize(&be, dup(&coeff_ct), &rlk, true).is_err());
        assert!(relinearize_mod_t(&be, dup(&coeff_ct), &rlk, 65537, false).is_err());
        let got = relinearize_any_form(&be, coeff_ct, &rlk).unwrap();
        assert!(got.meta.ntt);
        assert_eq!(
            be.download(&got.poly).unwrap(),
            be.download(&want.poly).unwrap()
        );
        let mut a_coeff = dup(&a);
        be.intt(&mut a_coeff.poly).unwrap();
        a_coeff.meta.ntt = false;
        assert!(mul_relinearize(&be, &a_coeff, &b, &rlk, false).is_err());
        // Any switching key of the parameters serves the shape check (the relinearization key).
        assert!(apply_galois(&be, &a_coeff, 5, &rlk.0).is_err());
        assert!(apply_galois(&be, &a, 5, &rlk.0).is_ok());
    }

    /// A plaintext modulus that a ring prime divides (0, the prime, a multiple of it) has no
    /// inverse there: every operation taking `t` refuses it; a coprime `t` passes.
    #[test]
    fn t_sharing_a_factor_with_the_ring_is_an_error() {
        let (be, rlk, [a, b]) = setup();
        let q1 = be.ring().moduli()[1].value();
        for t in [0, q1, 3 * q1] {
            assert!(check_t(&be, t).is_err(), "t = {t}");
            assert!(mul_relinearize_mod_t(&be, &a, &b, &rlk, t, false).is_err());
            let mut p = be.duplicate(&a.poly).unwrap();
            assert!(mod_switch_mod_t(&be, &mut p, t).is_err());
        }
        for t in [2, 65537, q1 - 1, q1 + 1] {
            assert!(check_t(&be, t).is_ok(), "t = {t}");
        }
    }
}
