//! [`HeapBootstrapper`]: the pipeline of HEAP.md §2.1 over a backend.

use crate::error::{Error, Result};
use crate::gadget::RnsGadget;
use crate::host::{add_assign, sub_assign};
use crate::keys::HeapKeys;
use crate::lwe::{SwitchedEntries, rotation_batch, staircase_entry};
use crate::params::HeapParams;
use ckks::Context;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::backend::blind_rotate::BlindRotateBackend;
use fhe_math::backend::rns_blind_rotate::{
    RnsBlindRotateBackend, RnsRotationBatch, automorphism_switch, pack_lwes_from, pack_rows,
    switch_component_one,
};
use fhe_math::poly::{RnsPoly, Shape};
use rayon::prelude::*;
use rlwe::{Ciphertext, Meta};
use std::time::{Duration, Instant};

/// What every blind rotation of one bootstrap reads: the centred level-0 ciphertext under
/// `s'` switched from `K'·q_0` (once, for every bootstrapper), the test polynomial and the
/// spacing of the packed coefficients.
struct RotationInput<'a> {
    entries: SwitchedEntries,
    test: &'a RnsPoly,
    stride: usize,
}

/// Wall time of each stage of one bootstrap
/// ([`HeapBootstrapper::heap_bootstrap_spread_timed`]). Every stage ends on the host (a
/// download or host arithmetic), so each time covers its device work.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Step 1: the key switch to the sparse secret, its download and centring.
    pub encapsulation: Duration,
    /// Steps 3, 5 and 6 for this bootstrapper's share of the coefficients: extraction and the
    /// LWE key switch in one backend call, the switch to `2N` (host threads). Step 4, the
    /// switch from `K'·q_0`, runs once on the `3N` entries before the shares (in no stage).
    pub lwe_side: Duration,
    /// Steps 7–8 for this bootstrapper's share: the batched blind rotation and the packing of
    /// the share in one backend call
    /// ([`RnsBlindRotateBackend::rns_blind_rotate_packed`]), download included.
    pub blind_rotation: Duration,
    /// Step 8 with helpers: the top levels of `PackLWEs` merging the shares' packs on `self`'s
    /// backend ([`pack_lwes_from`]; zero without helpers).
    pub packing: Duration,
    /// Steps 9–10: `c·ModRaise`, the switch back to the dense secret, the trace (sparse
    /// slots) and the rescales.
    pub finish: Duration,
}

/// CKKS bootstrapping by blind rotation for one parameter set and its keys.
pub struct HeapBootstrapper<B: KeySwitchBackend + RnsBlindRotateBackend + BlindRotateBackend> {
    ctx: Context<B>,
    params: HeapParams,
    keys: HeapKeys<B>,
    gadget: RnsGadget,
    slots: usize,
    parallel: bool,
}

impl<B: KeySwitchBackend + RnsBlindRotateBackend + BlindRotateBackend> HeapBootstrapper<B> {
    /// A bootstrapper for `ctx` (built from `params.ckks`) with `keys`, for full slots (`N/2`).
    ///
    /// Errors: invalid or insecure parameters, a context of another parameter set, keys of
    /// another parameter set or LWE dimension.
    pub fn new(ctx: &Context<B>, params: &HeapParams, keys: HeapKeys<B>) -> Result<Self> {
        params.check()?;
        let expected = ckks::Parameters::new(&params.ckks)?;
        let fp = ctx.params().fingerprint();
        if fp != expected.fingerprint() {
            return Err(Error::ParameterMismatch {
                op: "build a HEAP bootstrapper",
                what: "the CKKS context",
                got: fp,
                expected: expected.fingerprint(),
            });
        }
        params.check_security(ctx.params().moduli_q(), ctx.params().moduli_p())?;
        if keys.fingerprint != fp {
            return Err(Error::ParameterMismatch {
                op: "build a HEAP bootstrapper",
                what: "the HEAP keys",
                got: keys.fingerprint,
                expected: fp,
            });
        }
        if keys.lwe_dimension() != params.lwe_dimension {
            return Err(Error::InvalidOperand {
                op: "build a HEAP bootstrapper",
                reason: format!(
                    "the keys have LWE dimension {}, the parameters {}",
                    keys.lwe_dimension(),
                    params.lwe_dimension
                ),
            });
        }
        let ring = ctx.backend().ring().clone();
        let gadget = RnsGadget::new(&ring, ring.max_level(), params.digit_limbs)?;
        Ok(HeapBootstrapper {
            ctx: ctx.clone(),
            params: params.clone(),
            keys,
            gadget,
            slots: params.n() / 2,
            parallel: true,
        })
    }

    /// The same bootstrapper for `slots` sparse slots (a power of two in `1..=N/2`; messages
    /// `m(X) = m'(X^{N/2n})`): `2n` blind rotations instead of `N`, then the trace.
    pub fn with_slots(mut self, slots: usize) -> Result<Self> {
        if !slots.is_power_of_two() || slots > self.params.n() / 2 {
            return Err(Error::InvalidOperand {
                op: "set the slot count",
                reason: format!(
                    "{slots} is not a power of two in 1..={}",
                    self.params.n() / 2
                ),
            });
        }
        self.slots = slots;
        Ok(self)
    }

    /// Whether the host work of one bootstrap (the LWE side of the blind rotations, the
    /// packing's halves) runs on several host threads (rayon; the default) or in one. Both give
    /// the same words; the sequential order is for backends that gain nothing from concurrent
    /// callers. The blind rotations themselves are one batched backend call either way.
    pub fn with_parallel_rotations(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// The slot count.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The number of blind rotations per bootstrap, `2·slots`.
    pub fn blind_rotations(&self) -> usize {
        2 * self.slots
    }

    /// The parameters.
    pub fn params(&self) -> &HeapParams {
        &self.params
    }

    /// The keys.
    pub fn keys(&self) -> &HeapKeys<B> {
        &self.keys
    }

    /// The exact RNS gadget of the blind rotation (digits of `digit_limbs` limbs at the top
    /// level).
    pub fn gadget(&self) -> &RnsGadget {
        &self.gadget
    }

    /// Bootstraps a level-0 ciphertext (`|m_k| ≤ q_0·(½ − margin)`, e.g. slots `|z| ≤ 1` at the
    /// ladder scale): the result is at level `L − rescale_limbs` with scale `≈ Δ_out` (the
    /// exact value declared), encrypting the same slots.
    ///
    /// Errors: a ciphertext not at level 0 ([`Error::NotAtLevelZero`]), of another parameter
    /// set, not of 2 components, or with a scale above `q_0/(4·√2)`.
    pub fn heap_bootstrap(&self, ct: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.heap_bootstrap_spread(ct, &[])
    }

    /// [`HeapBootstrapper::heap_bootstrap`] with the blind rotations shared over `self` and
    /// `helpers` (e.g. one bootstrapper per GPU, each with its own copy of the same keys), run
    /// concurrently: with `g` bootstrappers, bootstrapper `w` takes the packed coefficients
    /// `w, w + g, w + 2g, …` and packs them itself (a subtree of `PackLWEs`); `self` merges the
    /// `g` packs ([`pack_lwes_from`]) and runs everything else. The result is the same words as
    /// without helpers.
    ///
    /// Errors: as [`HeapBootstrapper::heap_bootstrap`], a helper of another parameter set,
    /// slot count or key set, or a number of bootstrappers that is not a power of two up to
    /// `2·slots` ([`Error::InvalidOperand`]).
    pub fn heap_bootstrap_spread(
        &self,
        ct: &Ciphertext<B>,
        helpers: &[&HeapBootstrapper<B>],
    ) -> Result<Ciphertext<B>> {
        Ok(self.heap_bootstrap_spread_timed(ct, helpers)?.0)
    }

    /// [`HeapBootstrapper::heap_bootstrap_spread`] with the wall time of each stage (the same
    /// words). With helpers, the LWE side and the blind rotation are those of `self`'s share,
    /// which runs beside theirs.
    pub fn heap_bootstrap_spread_timed(
        &self,
        ct: &Ciphertext<B>,
        helpers: &[&HeapBootstrapper<B>],
    ) -> Result<(Ciphertext<B>, StageTimes)> {
        let op = "bootstrap by blind rotation";
        let n_c = 2 * self.slots;
        let parts = helpers.len() + 1;
        if !parts.is_power_of_two() || parts > n_c {
            return Err(Error::InvalidOperand {
                op,
                reason: format!(
                    "{parts} bootstrappers: the blind rotations are shared by a power of two of them, at most 2·slots = {n_c}"
                ),
            });
        }
        for h in helpers {
            if h.ctx.params().fingerprint() != self.ctx.params().fingerprint()
                || h.slots != self.slots
                || h.keys.key_id != self.keys.key_id
            {
                return Err(Error::InvalidOperand {
                    op,
                    reason: "a helper has another parameter set, slot count or key set".into(),
                });
            }
        }
        let be = self.ctx.backend();
        let fp = self.ctx.params().fingerprint();
        if ct.fingerprint() != fp {
            return Err(Error::ParameterMismatch {
                op,
                what: "the ciphertext",
                got: ct.fingerprint(),
                expected: fp,
            });
        }
        if ct.level() != 0 {
            return Err(Error::NotAtLevelZero { level: ct.level() });
        }
        if ct.components(be) != 2 {
            return Err(Error::InvalidOperand {
                op,
                reason: format!(
                    "the ciphertext has {} components, not 2 (relinearize first)",
                    ct.components(be)
                ),
            });
        }
        let ring = be.ring().clone();
        let n = ring.n();
        let top = ring.max_level();
        let q0 = ring.modulus(0).value();
        // Slots |z| <= 1 give coefficients |m_k| <= √2·Δ: they must stay below q0/4 for the
        // staircase's margin (HEAP.md §4.1).
        if !(ct.scale() >= 1.0 && 2f64.sqrt() * ct.scale() * 4.0 <= q0 as f64) {
            return Err(Error::InvalidOperand {
                op,
                reason: format!(
                    "the scale 2^{:.1} leaves no margin below q0 = 2^{:.1} (at most q0/(4·√2))",
                    ct.scale().log2(),
                    (q0 as f64).log2()
                ),
            });
        }

        let mut times = StageTimes::default();
        let t0 = Instant::now();
        // 1. Encapsulation: (c0, 0) + KeySwitch_{s -> s'}(c1) at level 0, centred.
        let mut p = be.duplicate(ct.poly())?;
        if !ct.is_ntt() {
            be.ntt(&mut p)?;
        }
        let mut sparse = KeySwitchBackend::key_switch(be, &p, 1, &self.keys.to_sparse.poly, None)?;
        let mut c0 = be.zeros(Shape {
            components: 1,
            level: 0,
            extended: false,
        })?;
        be.copy_component(&p, 0, &mut c0, 0)?;
        be.add_component_assign(&mut sparse, 0, &c0)?;
        be.intt(&mut sparse)?;
        let host = be.download(&sparse)?;
        let center = |c: usize| -> Vec<i64> {
            host.limb(c, 0)
                .iter()
                .map(|&w| ring.modulus(0).center(w))
                .collect()
        };
        let (c0, c1) = (center(0), center(1));
        times.encapsulation = t0.elapsed();

        // The factors: c = round(R·Δ_out / (Δ_in·N/n_c)), u = c·q0·n_c^{-1} mod Q_BR.
        let out_level = self.params.output_level();
        let r: f64 = (out_level + 1..=top)
            .map(|i| ring.modulus(i).value() as f64)
            .product();
        let delta_out = self.ctx.params().scale(out_level)?;
        let spread = (n / n_c) as f64;
        let c_f = (r * delta_out / (ct.scale() * spread)).round();
        if !(c_f >= 1.0 && c_f < 2f64.powi(120)) {
            return Err(Error::InvalidOperand {
                op,
                reason: format!(
                    "the input scale {} gives no usable correction factor",
                    ct.scale()
                ),
            });
        }
        let c_int = c_f as u128;
        let scale_out = ct.scale() * spread * c_f / r;
        let c_mod: Vec<u64> = (0..=top)
            .map(|i| (c_int % ring.modulus(i).value() as u128) as u64)
            .collect();
        let u_mod: Vec<u64> = (0..=top)
            .map(|i| {
                let q = ring.modulus(i);
                let inv = q.inv(q.reduce(n_c as u64))?;
                Ok(q.mul(q.mul(c_mod[i], q.reduce(q0)), inv))
            })
            .collect::<Result<_>>()?;
        let test = self.test_polynomial(&u_mod)?;

        // 2-8. Per coefficient: extraction, switches, LWE key switch, blind rotation; each
        // bootstrapper packs its strided share in the same backend call, `self` merges.
        let workers: Vec<&HeapBootstrapper<B>> = std::iter::once(self)
            .chain(helpers.iter().copied())
            .collect();
        let input = RotationInput {
            entries: SwitchedEntries::new(&self.params, q0, &c0, &c1)?,
            test: &test,
            stride: n / n_c,
        };
        let shares = workers
            .par_iter()
            .enumerate()
            .map(|(w, b)| b.packed_share(&input, (w..n_c).step_by(parts).collect()))
            .collect::<Result<Vec<_>>>()?;
        let mut packs = Vec::with_capacity(parts);
        for (w, (pack, lwe_side, blind_rotation)) in shares.into_iter().enumerate() {
            if w == 0 {
                (times.lwe_side, times.blind_rotation) = (lwe_side, blind_rotation);
            }
            packs.push(pack);
        }
        let t8 = Instant::now();
        let pack_keys = self.keys.pack_keys();
        let pack = pack_lwes_from(be, &self.gadget, packs, n_c / parts, &pack_keys)?;
        if parts > 1 {
            times.packing = t8.elapsed();
        }
        let t9 = Instant::now();

        // 9. A = KeySwitch_{s' -> s}(c·ModRaise(ct')).
        let mut raised = ring.zeros(Shape {
            components: 2,
            level: top,
            extended: false,
        })?;
        for (comp, v) in [(0, &c0), (1, &c1)] {
            for (s, &cm) in c_mod.iter().enumerate() {
                let q = ring.modulus(s);
                for (w, &x) in raised.limb_mut(comp, s).iter_mut().zip(v.iter()) {
                    *w = q.mul(q.reduce_i64(x), cm);
                }
            }
        }
        let mut d = switch_component_one(be, &self.gadget, &raised, &self.keys.to_dense.refs())?;

        // 10. D = A − Pack, the trace for sparse slots, the rescales by R.
        sub_assign(&ring, &mut d, &pack);
        let log_nc = n_c.trailing_zeros();
        for l in log_nc + 1..=n.trailing_zeros() {
            let g = (1usize << l) + 1;
            let t = automorphism_switch(be, &self.gadget, &d, g, pack_rows(&pack_keys, g)?)?;
            add_assign(&ring, &mut d, &t);
        }
        let mut out = be.upload(&d)?;
        be.ntt(&mut out)?;
        for _ in 0..self.params.rescale_limbs {
            be.rescale(&mut out)?;
        }
        be.synchronize()?;
        times.finish = t9.elapsed();
        let out = Ciphertext::new(be, out, Meta::new(out_level, scale_out, true, fp))?;
        Ok((out, times))
    }

    /// The LWE side of the coefficients `coeffs` (indices of packed coefficients): the
    /// extraction and LWE key switch of all the samples on the backend, the switch to `2N`
    /// ([`rotation_batch`]); as one blind-rotation batch, with its wall time.
    fn lwe_side(
        &self,
        input: &RotationInput<'_>,
        coeffs: &[usize],
    ) -> Result<(RnsRotationBatch, Duration)> {
        let t0 = Instant::now();
        let ks: Vec<usize> = coeffs.iter().map(|&t| t * input.stride).collect();
        let batch = rotation_batch(
            self.ctx.backend(),
            &self.keys.lwe_ksk_uploaded,
            &self.params,
            &input.entries,
            &ks,
            self.parallel,
        )?;
        Ok((batch, t0.elapsed()))
    }

    /// The pack of the coefficients `coeffs`: [`Self::lwe_side`], then their blind rotations and
    /// `PackLWEs` in one backend call
    /// ([`RnsBlindRotateBackend::rns_blind_rotate_packed`]); with the wall time of each.
    fn packed_share(
        &self,
        input: &RotationInput<'_>,
        coeffs: Vec<usize>,
    ) -> Result<(RnsPoly, Duration, Duration)> {
        let (batch, lwe_side) = self.lwe_side(input, &coeffs)?;
        let rows = self.keys.rgsw_rows();
        let pack_keys = self.keys.pack_keys();
        let t1 = Instant::now();
        let pack = self.ctx.backend().rns_blind_rotate_packed(
            &self.gadget,
            &rows,
            input.test,
            &batch,
            &pack_keys,
        )?;
        Ok((pack, lwe_side, t1.elapsed()))
    }

    /// The staircase test polynomial (component 0 of a trivial ciphertext, coefficient form):
    /// `v_y = f(y)` for `y < N/2`, `v_y = −f(y − N)` above, `f(x̄) = u·round(x̄·K'/2N)`.
    fn test_polynomial(&self, u_mod: &[u64]) -> Result<RnsPoly> {
        let ring = self.ctx.backend().ring();
        let n = ring.n() as i64;
        let top = ring.max_level();
        let kp = self.params.k_prime as i64;
        let mut v = ring.zeros(Shape {
            components: 2,
            level: top,
            extended: false,
        })?;
        for (s, &us) in u_mod.iter().enumerate() {
            let q = ring.modulus(s);
            for (y, w) in v.limb_mut(0, s).iter_mut().enumerate() {
                *w = q.mul(us, q.reduce_i64(staircase_entry(y as i64, n, kp)));
            }
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::HEAP_N10_INSECURE;
    use ckks::Parameters;
    use fhe_math::backend::RingBackend;
    use fhe_math::backend::rns_blind_rotate::pack_lwes;
    use fhe_math::sampler::Seed;
    use rlwe::{Plaintext, encrypt};

    /// Full-depth `PackLWEs` (N inputs, no trace): every coefficient `j` of the packed
    /// ciphertext decrypts to `N` times the constant coefficient of input `j`, whatever the
    /// inputs' other coefficients hold; checked after the rescales by `R` (messages scaled by
    /// `2^110` so that they survive the division).
    #[test]
    fn pack_lwes_gathers_every_constant_coefficient() {
        let hp = HEAP_N10_INSECURE;
        let ctx = Context::cpu(Parameters::new(&hp.ckks).unwrap()).unwrap();
        let be = ctx.backend();
        let ring = be.ring().clone();
        let (n, top) = (ring.n(), ring.max_level());
        let fp = ctx.params().fingerprint();
        let sk = ctx
            .key_generator()
            .secret_key_from_seed(Seed([1; 32]))
            .unwrap();
        let keys = HeapKeys::generate(&ctx, &hp, &sk, &Seed([2; 32])).unwrap();
        let boot = HeapBootstrapper::new(&ctx, &hp, keys).unwrap();
        let msg = |j: usize, i: usize| ((j * 7919 + i * 104_729) % 2001) as i64 - 1000;
        let inputs: Vec<RnsPoly> = (0..n)
            .map(|j| {
                let mut pt = ring
                    .zeros(Shape {
                        components: 1,
                        level: top,
                        extended: false,
                    })
                    .unwrap();
                for s in 0..=top {
                    let q = ring.modulus(s);
                    let scale = q.pow(2, 110);
                    for (i, w) in pt.limb_mut(0, s).iter_mut().enumerate() {
                        *w = q.mul(q.reduce_i64(msg(j, i)), scale);
                    }
                }
                let mut p = be.upload(&pt).unwrap();
                be.ntt(&mut p).unwrap();
                let pt = Plaintext::new(be, p, Meta::new(top, 1.0, true, fp)).unwrap();
                let mut ct = encrypt::encrypt_sk(be, &sk, &pt).unwrap().into_parts().0;
                be.intt(&mut ct).unwrap();
                be.download(&ct).unwrap()
            })
            .collect();
        let packed = pack_lwes(be, &boot.gadget, inputs, &boot.keys.pack_keys()).unwrap();
        let mut p = be.upload(&packed).unwrap();
        be.ntt(&mut p).unwrap();
        for _ in 0..hp.rescale_limbs {
            be.rescale(&mut p).unwrap();
        }
        let out = hp.output_level();
        let ct = Ciphertext::new(be, p, Meta::new(out, 1.0, true, fp)).unwrap();
        let mut dec = encrypt::decrypt(be, &sk, &ct).unwrap().into_parts().0;
        be.intt(&mut dec).unwrap();
        let got = be.download_centered_q0(&dec).unwrap();
        let r: f64 = (out + 1..=top)
            .map(|i| ring.modulus(i).value() as f64)
            .product();
        let unit = 2f64.powi(110) / r * n as f64;
        // The packing's noise over R and the rescales' rounding: the model's σ_out, 7σ.
        let q = ctx.params().moduli_q();
        let sigma = crate::budget::budget(&hp, q, 1.0, 1.0, n / 2).sigma_out;
        let mut worst = 0f64;
        for (j, v) in got.iter().enumerate() {
            let v = v.expect("small coefficient") as f64;
            let want = msg(j, 0) as f64 * unit;
            worst = worst.max((v - want).abs());
            assert!(
                (v - want).abs() < 7.0 * sigma,
                "coefficient {j}: {v} against {want}"
            );
        }
        assert!(worst > 0.0, "the noise should be visible");
    }
}
