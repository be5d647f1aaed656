//! Sums over slots: windowed inner sums, replication of a block across all slots, and sums of
//! rotations.
//!
//! Notation: a ciphertext encrypts the vector `x = (x_0, ..., x_{S-1})` of all `S = N/2` slots
//! (a vector encoded with fewer slots is repeated to fill them, so it is that repeated vector);
//! `rot(x, k)_i = x_{(i+k) mod S}` is the left rotation of [`Evaluator::rotate`]. Every index
//! below is taken modulo `S`.
//!
//! | operation | slot `i` of the result | key switches |
//! |---|---|---|
//! | [`Evaluator::inner_sum`]`(x, n)` | `Σ_{j<n} x_{i+j}` | `log2 n` |
//! | [`Evaluator::replicate`]`(x, n)` | `Σ_{t<S/n} x_{i+t·n}` | `log2(S/n)` |
//! | [`Evaluator::sum_rotations`]`(x, K)` | `Σ_{k∈K} x_{i+k}` | one per distinct non-zero `k`, hoisted |
//!
//! `inner_sum(x, S)` and `replicate(x, 1)` both put the total `Σ_j x_j` in every slot. The
//! rotations of `inner_sum` and `replicate` are sequential (each rotates the running sum), so
//! they are plain key switches; `sum_rotations` rotates one input by many steps and shares one
//! decomposition among them ([`Evaluator::rotate_hoisted`]). None of them consumes a level or
//! changes the scale; each addition adds the rotation's key-switching noise.
//!
//! The keys each one needs come from [`Evaluator::inner_sum_elements`],
//! [`Evaluator::replicate_elements`] and [`Evaluator::rotation_sum_elements`]; all the steps of
//! `inner_sum` and `replicate` are powers of two, so [`Evaluator::power_of_two_elements`] covers
//! both. Keys are looked up before any work; a missing one is [`rlwe::Error::MissingGaloisKey`]
//! (as [`Error::Rlwe`]) naming the operation and the Galois element.

use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use fhe_math::backend::KeySwitchBackend;
use rlwe::{Ciphertext, GaloisKeys, SwitchingKey, keyswitch};

impl<B: KeySwitchBackend> Evaluator<B> {
    /// The slot count `S = N/2` that rotations act on.
    fn slot_count(&self) -> usize {
        self.encoder().max_slots()
    }

    /// Checks that `span` is a power of two dividing the slot count (equivalently, one in
    /// `1, 2, 4, ..., S`).
    fn check_span(&self, op: &'static str, span: usize) -> Result<()> {
        let slots = self.slot_count();
        if span.is_power_of_two() && span <= slots {
            Ok(())
        } else {
            Err(Error::InvalidSlotSpan { op, span, slots })
        }
    }

    /// The rotation steps of [`Evaluator::inner_sum`]: `1, 2, 4, ..., span/2`.
    fn inner_sum_steps(&self, span: usize) -> Result<Vec<i64>> {
        self.check_span("inner sum", span)?;
        Ok(doubling_steps(1, span))
    }

    /// The rotation steps of [`Evaluator::replicate`]: `n, 2n, 4n, ..., S/2`.
    fn replicate_steps(&self, n: usize) -> Result<Vec<i64>> {
        self.check_span("replicate", n)?;
        Ok(doubling_steps(n, self.slot_count()))
    }

    /// The distinct non-zero steps of `steps`, reduced to `0..S`, in first-seen order.
    fn nonzero_steps(&self, steps: &[i64]) -> Vec<i64> {
        let slots = self.slot_count() as i64;
        let mut out: Vec<i64> = Vec::with_capacity(steps.len());
        for s in steps.iter().map(|s| s.rem_euclid(slots)) {
            if s != 0 && !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    /// The Galois element and exact key of each step, all looked up before any work.
    fn step_keys<'k>(
        &self,
        steps: &[i64],
        keys: &'k GaloisKeys<B>,
        op: &'static str,
    ) -> Result<Vec<(u64, &'k SwitchingKey<B>)>> {
        steps
            .iter()
            .map(|&s| {
                let g = self.rotation_element(s);
                Ok((g, keys.get(g, op)?))
            })
            .collect()
    }

    /// `acc <- acc + rot(acc, k)` for each step `k` in order (one key switch each).
    fn rotate_and_add(
        &self,
        a: &Ciphertext<B>,
        keys: &[(u64, &SwitchingKey<B>)],
    ) -> Result<Ciphertext<B>> {
        let be = self.encoder().context().backend();
        let mut acc = a.duplicate(be)?;
        for &(g, key) in keys {
            let r = keyswitch::apply_galois(be, &acc, g, key)?;
            self.add_assign(&mut acc, &r)?;
        }
        Ok(acc)
    }

    /// Windowed sum: slot `i` of the result is `Σ_{j<span} x_{(i+j) mod S}`.
    ///
    /// `span` must be a power of two dividing the slot count `S` (`1, 2, ..., S`); `span = 1`
    /// returns a copy, `span = S` the total in every slot. Slot `i·span` holds the sum of the
    /// `i`-th block of `span` slots. Computed as `log2(span)` steps `acc += rot(acc, 2^k)` for
    /// `k = 0, 1, ...` (after step `k`, slot `i` holds `Σ_{j<2^{k+1}} x_{i+j}`), with the keys
    /// of [`Evaluator::inner_sum_elements`]. Same level and scale as `a`.
    ///
    /// # Errors
    /// [`Error::InvalidSlotSpan`] for a bad `span`; [`Error::Rlwe`] with
    /// [`rlwe::Error::MissingGaloisKey`] when a key is missing.
    pub fn inner_sum(
        &self,
        a: &Ciphertext<B>,
        span: usize,
        keys: &GaloisKeys<B>,
    ) -> Result<Ciphertext<B>> {
        let steps = self.inner_sum_steps(span)?;
        let keys = self.step_keys(&steps, keys, "inner sum")?;
        self.rotate_and_add(a, &keys)
    }

    /// Replication of a block of `n` slots: slot `i` of the result is
    /// `Σ_{t<S/n} x_{(i + t·n) mod S}`, the sum of all slots congruent to `i` modulo `n`.
    ///
    /// When `x` is zero outside slots `0..n` (a masked block), slot `i` is `x_{i mod n}`: the
    /// block repeated `S/n` times. `n` must be a power of two dividing `S`; `n = S` returns a
    /// copy, `n = 1` the total in every slot. Computed as `log2(S/n)` steps
    /// `acc += rot(acc, n·2^k)`, with the keys of [`Evaluator::replicate_elements`]. Same level
    /// and scale as `a`.
    ///
    /// # Errors
    /// As [`Evaluator::inner_sum`].
    pub fn replicate(
        &self,
        a: &Ciphertext<B>,
        n: usize,
        keys: &GaloisKeys<B>,
    ) -> Result<Ciphertext<B>> {
        let steps = self.replicate_steps(n)?;
        let keys = self.step_keys(&steps, keys, "replicate")?;
        self.rotate_and_add(a, &keys)
    }

    /// Sum of rotations: slot `i` of the result is `Σ_{k ∈ steps} x_{(i+k) mod S}`.
    ///
    /// Steps are taken modulo `S` and may repeat (each occurrence counts); a step `≡ 0` adds
    /// `a` itself without a key. The distinct non-zero steps are computed by one hoisted key
    /// switch (the path of [`Evaluator::rotate_hoisted`]: one decomposition of `a` shared by
    /// all), with
    /// exact keys for each ([`Evaluator::rotation_sum_elements`]). Same level and scale as `a`.
    ///
    /// # Errors
    /// [`Error::NoRotationSteps`] when `steps` is empty; [`Error::Rlwe`] with
    /// [`rlwe::Error::MissingGaloisKey`] when a key is missing.
    pub fn sum_rotations(
        &self,
        a: &Ciphertext<B>,
        steps: &[i64],
        keys: &GaloisKeys<B>,
    ) -> Result<Ciphertext<B>> {
        if steps.is_empty() {
            return Err(Error::NoRotationSteps {
                op: "sum rotations",
            });
        }
        let slots = self.slot_count() as i64;
        let distinct = self.nonzero_steps(steps);
        let pairs = self.step_keys(&distinct, keys, "sum rotations")?;
        let be = self.encoder().context().backend();
        let rotated = if pairs.is_empty() {
            Vec::new()
        } else {
            keyswitch::apply_galois_hoisted(be, a, &pairs)?
        };
        let mut acc: Option<Ciphertext<B>> = None;
        for s in steps.iter().map(|s| s.rem_euclid(slots)) {
            let term = match distinct.iter().position(|&d| d == s) {
                Some(idx) => &rotated[idx],
                None => a,
            };
            match acc.as_mut() {
                Some(acc) => self.add_assign(acc, term)?,
                None => acc = Some(term.duplicate(be)?),
            }
        }
        Ok(acc.expect("steps is not empty"))
    }

    /// Galois elements [`Evaluator::inner_sum`] needs for `span` (rotations by
    /// `1, 2, ..., span/2`; none for `span = 1`), to pass to
    /// [`rlwe::KeyGenerator::galois_keys`].
    ///
    /// # Errors
    /// [`Error::InvalidSlotSpan`] for a bad `span`.
    pub fn inner_sum_elements(&self, span: usize) -> Result<Vec<u64>> {
        Ok(self.galois_elements(&self.inner_sum_steps(span)?, false))
    }

    /// Galois elements [`Evaluator::replicate`] needs for `n` (rotations by
    /// `n, 2n, ..., S/2`; none for `n = S`).
    ///
    /// # Errors
    /// [`Error::InvalidSlotSpan`] for a bad `n`.
    pub fn replicate_elements(&self, n: usize) -> Result<Vec<u64>> {
        Ok(self.galois_elements(&self.replicate_steps(n)?, false))
    }

    /// Galois elements [`Evaluator::sum_rotations`] needs for `steps` (one per distinct
    /// non-zero step modulo `S`).
    pub fn rotation_sum_elements(&self, steps: &[i64]) -> Vec<u64> {
        self.galois_elements(&self.nonzero_steps(steps), false)
    }
}

/// `first, 2·first, 4·first, ...` below `end` (all powers of two up to `end/2` times `first`).
fn doubling_steps(first: usize, end: usize) -> Vec<i64> {
    std::iter::successors(Some(first), |&s| Some(s * 2))
        .take_while(|&s| s < end)
        .map(|s| s as i64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::TEST_N11_INSECURE;
    use crate::precision::{InputGenerator, precision_bits};
    use crate::{Context, Parameters};
    use fhe_math::cpu::CpuBackend;
    use fhe_math::fft::Complex64;
    use rlwe::{PublicKey, SecretKey, encrypt};

    type Be = CpuBackend;

    /// Bits of absolute precision (`-log2` of the largest slot error) every result keeps at
    /// the test set. Fresh encryptions keep about 25; each rotate-and-add step adds
    /// key-switching noise and sums the errors of its two halves, so the 10 steps of a
    /// full-slot sum measured 21.4-22.5 bits (inputs of modulus 1).
    const MIN_BITS: f64 = 20.0;

    struct Setup {
        ctx: Context<Be>,
        eval: Evaluator<Be>,
        sk: SecretKey<Be>,
        pk: PublicKey<Be>,
        gk: GaloisKeys<Be>,
        x: Vec<Complex64>,
    }

    fn setup() -> Setup {
        let ctx = Context::cpu(Parameters::new(&TEST_N11_INSECURE).unwrap()).unwrap();
        let eval = Evaluator::new(&ctx).unwrap();
        let kg = ctx.key_generator();
        let sk = kg.secret_key().unwrap();
        let pk = kg.public_key(&sk).unwrap();
        let mut elements = eval.power_of_two_elements();
        elements.extend(eval.rotation_sum_elements(&[3, -5]));
        let gk = kg.galois_keys(&sk, &elements).unwrap();
        let x = InputGenerator::new(11).unit_complex(eval.slot_count());
        Setup {
            ctx,
            eval,
            sk,
            pk,
            gk,
            x,
        }
    }

    impl Setup {
        fn slots(&self) -> usize {
            self.x.len()
        }

        fn encrypt(&self, v: &[Complex64]) -> Ciphertext<Be> {
            let level = self.ctx.params().max_level();
            let pt = self.eval.encoder().encode(v, level).unwrap();
            encrypt::encrypt_pk(self.ctx.backend(), &self.pk, &pt).unwrap()
        }

        /// Decrypts `ct`, checks it against `want` and returns the bits of precision.
        fn check(&self, what: &str, ct: &Ciphertext<Be>, want: &[Complex64]) -> f64 {
            let pt = encrypt::decrypt(self.ctx.backend(), &self.sk, ct).unwrap();
            let got = self.eval.encoder().decode(&pt).unwrap();
            let bits = precision_bits(&got, want);
            println!("{what}: {bits:.2} bits");
            assert!(bits >= MIN_BITS, "{what}: {bits:.2} bits < {MIN_BITS}");
            bits
        }

        /// Slot `i` of the result is `Σ_{k ∈ offsets} v_{(i+k) mod S}` (plaintext reference).
        fn shifted_sum(&self, v: &[Complex64], offsets: impl Fn() -> Vec<usize>) -> Vec<Complex64> {
            let s = self.slots();
            (0..s)
                .map(|i| offsets().iter().map(|&k| v[(i + k) % s]).sum())
                .collect()
        }
    }

    #[test]
    fn inner_sum_matches_plaintext() {
        let f = setup();
        let s = f.slots();
        let cx = f.encrypt(&f.x);
        for span in [1, 2, 8, s] {
            let want = f.shifted_sum(&f.x, || (0..span).collect());
            let got = f.eval.inner_sum(&cx, span, &f.gk).unwrap();
            assert_eq!(got.level(), cx.level());
            assert_eq!(got.scale(), cx.scale());
            f.check(&format!("inner_sum span {span}"), &got, &want);
        }
        // Full span: the total in every slot.
        let total: Complex64 = f.x.iter().sum();
        let got = f.eval.inner_sum(&cx, s, &f.gk).unwrap();
        f.check("inner_sum total", &got, &vec![total; s]);
    }

    #[test]
    fn replicate_matches_plaintext() {
        let f = setup();
        let s = f.slots();
        // A masked block of 8 values repeats across all slots.
        let n = 8;
        let mut block = vec![Complex64::new(0.0, 0.0); s];
        block[..n].copy_from_slice(&f.x[..n]);
        let got = f.eval.replicate(&f.encrypt(&block), n, &f.gk).unwrap();
        let want: Vec<Complex64> = (0..s).map(|i| f.x[i % n]).collect();
        f.check("replicate block of 8", &got, &want);
        // Unmasked input: sums over the residue classes modulo n.
        let cx = f.encrypt(&f.x);
        for n in [1, 4, s] {
            let want = f.shifted_sum(&f.x, || (0..s / n).map(|t| t * n).collect());
            let got = f.eval.replicate(&cx, n, &f.gk).unwrap();
            f.check(&format!("replicate n {n}"), &got, &want);
        }
    }

    #[test]
    fn sum_rotations_matches_plaintext() {
        let f = setup();
        let s = f.slots();
        let cx = f.encrypt(&f.x);
        // Repeats, a zero step and a negative step: 2·x + 2·rot(x, 3) + rot(x, -5) + rot(x, 1).
        let steps = [0, 3, -5, 3, 1, s as i64];
        let want = f.shifted_sum(&f.x, || {
            steps
                .iter()
                .map(|&k| k.rem_euclid(s as i64) as usize)
                .collect()
        });
        let got = f.eval.sum_rotations(&cx, &steps, &f.gk).unwrap();
        f.check("sum_rotations", &got, &want);
        // Only zero steps need no key.
        let none = GaloisKeys::<Be> {
            keys: Default::default(),
            fingerprint: f.gk.fingerprint,
        };
        let got = f.eval.sum_rotations(&cx, &[0], &none).unwrap();
        f.check("sum_rotations of step 0", &got, &f.x);
    }

    #[test]
    fn element_helpers_list_exactly_the_needed_keys() {
        let f = setup();
        let s = f.slots();
        let rot = |steps: &[i64]| f.eval.galois_elements(steps, false);
        assert_eq!(f.eval.inner_sum_elements(1).unwrap(), Vec::<u64>::new());
        assert_eq!(f.eval.inner_sum_elements(8).unwrap(), rot(&[1, 2, 4]));
        assert_eq!(f.eval.replicate_elements(s).unwrap(), Vec::<u64>::new());
        assert_eq!(
            f.eval.replicate_elements(s / 4).unwrap(),
            rot(&[s as i64 / 4, s as i64 / 2])
        );
        assert_eq!(f.eval.rotation_sum_elements(&[0, 3, -5, 3]), rot(&[3, -5]));
        // Keys from the helper alone suffice.
        let kg = f.ctx.key_generator();
        let gk = kg
            .galois_keys(&f.sk, &f.eval.inner_sum_elements(8).unwrap())
            .unwrap();
        let cx = f.encrypt(&f.x);
        let want = f.shifted_sum(&f.x, || (0..8).collect());
        f.check(
            "inner_sum with its own keys",
            &f.eval.inner_sum(&cx, 8, &gk).unwrap(),
            &want,
        );
    }

    #[test]
    fn bad_spans_and_missing_keys_are_errors() {
        let f = setup();
        let s = f.slots();
        let cx = f.encrypt(&f.x);
        for span in [0, 3, 12, 2 * s] {
            assert!(matches!(
                f.eval.inner_sum(&cx, span, &f.gk),
                Err(Error::InvalidSlotSpan { span: got, slots, .. }) if got == span && slots == s
            ));
            assert!(matches!(
                f.eval.replicate(&cx, span, &f.gk),
                Err(Error::InvalidSlotSpan { .. })
            ));
            assert!(matches!(
                f.eval.inner_sum_elements(span),
                Err(Error::InvalidSlotSpan { .. })
            ));
            assert!(matches!(
                f.eval.replicate_elements(span),
                Err(Error::InvalidSlotSpan { .. })
            ));
        }
        let Err(err) = f.eval.inner_sum(&cx, 0, &f.gk) else {
            panic!("span 0 accepted");
        };
        assert_eq!(
            err.to_string(),
            format!("cannot inner sum: span 0 is not a power of two from 1 to the {s} slots")
        );
        assert!(matches!(
            f.eval.sum_rotations(&cx, &[], &f.gk),
            Err(Error::NoRotationSteps { .. })
        ));
        // Keys for rotation by 1 only: inner_sum(4) needs 2, replicate and sum_rotations miss too.
        let kg = f.ctx.key_generator();
        let gk1 = kg
            .galois_keys(&f.sk, &f.eval.galois_elements(&[1], false))
            .unwrap();
        let g2 = f.eval.rotation_element(2);
        assert!(matches!(
            f.eval.inner_sum(&cx, 4, &gk1),
            Err(Error::Rlwe(rlwe::Error::MissingGaloisKey { op: "inner sum", galois })) if galois == g2
        ));
        assert!(matches!(
            f.eval.replicate(&cx, 2, &gk1),
            Err(Error::Rlwe(rlwe::Error::MissingGaloisKey {
                op: "replicate",
                ..
            }))
        ));
        assert!(matches!(
            f.eval.sum_rotations(&cx, &[1, 7], &gk1),
            Err(Error::Rlwe(rlwe::Error::MissingGaloisKey {
                op: "sum rotations",
                ..
            }))
        ));
        // inner_sum(2) needs only the key present.
        assert!(f.eval.inner_sum(&cx, 2, &gk1).is_ok());
    }
}
