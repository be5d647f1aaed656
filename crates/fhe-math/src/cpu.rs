//! [`CpuBackend`]: the reference implementation of the backend traits ([`crate::Backend`]),
//! parallel over limbs with rayon.
//!
//! It is the ground truth the CUDA backend is tested against bit for bit, and the fallback for
//! machines without a GPU.

use crate::backend::{IntegerBackend, KeySwitchBackend, RingBackend, check_linear_combination};
use crate::crt_decode::{CrtDecoder, DecodeMode, NoiseFraction};
use crate::error::{Error, Result};
use crate::poly::{RnsPoly, Shape};
use crate::ring::RingContext;
use crate::sampler::{self, Domain, Seed};
use rayon::prelude::*;
use std::sync::Arc;
use zeroize::Zeroize;

/// The CPU backend: host buffers ([`RnsPoly`]) and rayon over limbs.
#[derive(Clone, Debug)]
pub struct CpuBackend {
    ring: Arc<RingContext>,
}

impl CpuBackend {
    /// A CPU backend for `ring`.
    pub fn new(ring: Arc<RingContext>) -> Self {
        CpuBackend { ring }
    }
}

/// Position of `slot` among the active slots of a buffer at `level` (Q slots, then P slots).
fn active_index(slot: usize, level: usize, q_capacity: usize) -> usize {
    if slot <= level {
        slot
    } else {
        slot - q_capacity + level + 1
    }
}

/// Every active limb of `p` as `(component, slot, coefficients)`, in parallel.
fn par_limbs_mut(
    p: &mut RnsPoly,
) -> impl IndexedParallelIterator<Item = (usize, usize, &mut [u64])> {
    let n = p.n();
    let spc = p.slots_per_component();
    let shape = p.shape();
    let q_cap = p.q_capacity();
    p.raw_mut()
        .par_chunks_mut(n)
        .enumerate()
        .map(move |(idx, chunk)| (idx / spc, idx % spc, chunk))
        .map(move |(c, s, chunk)| {
            let active = c < shape.components && (s <= shape.level || s >= q_cap);
            // Inactive limbs are reported with an empty slice so callers skip them uniformly.
            if active {
                (c, s, chunk)
            } else {
                (c, s, &mut chunk[..0])
            }
        })
}

fn check_covers(a: &RnsPoly, b: &RnsPoly, what: &str) -> Result<()> {
    let (sa, sb) = (a.shape(), b.shape());
    if sb.level < sa.level || (sa.extended && !sb.extended) || a.n() != b.n() {
        return Err(Error::ShapeMismatch {
            what: format!("{what}: operand shape {sb:?} does not cover {sa:?}"),
        });
    }
    Ok(())
}

impl CpuBackend {
    fn check(&self, p: &RnsPoly) -> Result<()> {
        self.ring.check(p)
    }

    fn binary(
        &self,
        a: &mut RnsPoly,
        b: &RnsPoly,
        what: &str,
        f: impl Fn(&crate::Modulus, u64, u64) -> u64 + Sync,
    ) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, what)?;
        if b.components() < a.components() {
            return Err(Error::ShapeMismatch {
                what: format!("{what}: operand has fewer components"),
            });
        }
        let ring = &self.ring;
        par_limbs_mut(a).for_each(|(c, s, x)| {
            if x.is_empty() {
                return;
            }
            let m = ring.modulus(s);
            for (xi, &yi) in x.iter_mut().zip(b.limb(c, s)) {
                *xi = f(m, *xi, yi);
            }
        });
        Ok(())
    }

    /// Inverse NTT of a copy of one limb.
    fn intt_copy(&self, slot: usize, limb: &[u64]) -> Vec<u64> {
        let mut v = limb.to_vec();
        self.ring.ntt(slot).inverse(&mut v);
        v
    }

    /// Rescale of one component in place (NTT form), level `l` to `l - 1`.
    fn rescale_component(&self, p: &mut RnsPoly, c: usize, level: usize) {
        let ring = &self.ring;
        let q_l = *ring.modulus(level);
        let half = q_l.value() >> 1;
        let mut r = self.intt_copy(level, p.limb(c, level));
        r.iter_mut().for_each(|x| *x = q_l.add(*x, half));
        let consts = ring.rescale_constants(level);
        let spc = p.slots_per_component();
        let n = p.n();
        let base = c * spc * n;
        p.raw_mut()[base..base + level * n]
            .par_chunks_mut(n)
            .enumerate()
            .for_each(|(i, x)| {
                let qi = ring.modulus(i);
                let half_i = qi.reduce(half);
                let mut t: Vec<u64> = r.iter().map(|&v| qi.sub(qi.reduce(v), half_i)).collect();
                ring.ntt(i).forward(&mut t);
                let k = consts[i];
                for (xi, ti) in x.iter_mut().zip(&t) {
                    *xi = qi.mul_shoup(qi.sub(*xi, *ti), k.value, k.shoup);
                }
            });
    }
}

impl RingBackend for CpuBackend {
    type Poly = RnsPoly;

    fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }

    fn device_name(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }

    fn shape(&self, p: &RnsPoly) -> Shape {
        p.shape()
    }

    fn zeros(&self, shape: Shape) -> Result<RnsPoly> {
        self.ring.zeros(shape)
    }

    fn upload(&self, host: &RnsPoly) -> Result<RnsPoly> {
        self.check(host)?;
        Ok(host.clone())
    }

    fn download(&self, p: &RnsPoly) -> Result<RnsPoly> {
        Ok(p.clone())
    }

    fn duplicate(&self, p: &RnsPoly) -> Result<RnsPoly> {
        Ok(p.clone())
    }

    fn set_level(&self, p: &mut RnsPoly, level: usize) -> Result<()> {
        p.set_level(level)
    }

    fn truncate_components(&self, p: &mut RnsPoly, components: usize) -> Result<()> {
        p.truncate_components(components)
    }

    fn zeroize(&self, p: &mut RnsPoly) {
        p.zeroize();
    }

    fn add_assign(&self, a: &mut RnsPoly, b: &RnsPoly) -> Result<()> {
        self.binary(a, b, "add", |m, x, y| m.add(x, y))
    }

    fn sub_assign(&self, a: &mut RnsPoly, b: &RnsPoly) -> Result<()> {
        self.binary(a, b, "sub", |m, x, y| m.sub(x, y))
    }

    fn combine_leading_assign(&self, a: &mut RnsPoly, b: &RnsPoly, subtract: bool) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, "combine the leading components")?;
        if b.components() > a.components() {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "cannot combine the leading components: the operand has {} components, \
                     more than {}",
                    b.components(),
                    a.components()
                ),
            });
        }
        let ring = &self.ring;
        let k = b.components();
        par_limbs_mut(a).for_each(|(c, s, x)| {
            if c >= k || x.is_empty() {
                return;
            }
            let m = ring.modulus(s);
            for (xi, &yi) in x.iter_mut().zip(b.limb(c, s)) {
                *xi = if subtract {
                    m.sub(*xi, yi)
                } else {
                    m.add(*xi, yi)
                };
            }
        });
        Ok(())
    }

    fn add_component_assign(&self, a: &mut RnsPoly, component: usize, b: &RnsPoly) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, "add to component")?;
        if component >= a.components() {
            return Err(Error::ShapeMismatch {
                what: format!("no component {component} to add to"),
            });
        }
        let ring = &self.ring;
        par_limbs_mut(a).for_each(|(c, s, x)| {
            if c != component || x.is_empty() {
                return;
            }
            let m = ring.modulus(s);
            for (xi, &yi) in x.iter_mut().zip(b.limb(0, s)) {
                *xi = m.add(*xi, yi);
            }
        });
        Ok(())
    }

    fn copy_component(
        &self,
        src: &RnsPoly,
        src_component: usize,
        dst: &mut RnsPoly,
        dst_component: usize,
    ) -> Result<()> {
        self.check(src)?;
        self.check(dst)?;
        check_covers(dst, src, "copy component")?;
        if src_component >= src.components() || dst_component >= dst.components() {
            return Err(Error::ShapeMismatch {
                what: "copy component: no such component".into(),
            });
        }
        par_limbs_mut(dst).for_each(|(c, s, x)| {
            if c == dst_component && !x.is_empty() {
                x.copy_from_slice(src.limb(src_component, s));
            }
        });
        Ok(())
    }

    fn neg_assign(&self, a: &mut RnsPoly) -> Result<()> {
        self.check(a)?;
        let ring = &self.ring;
        par_limbs_mut(a).for_each(|(_, s, x)| {
            let m = ring.modulus(s);
            x.iter_mut().for_each(|v| *v = m.neg(*v));
        });
        Ok(())
    }

    fn mul_plain_assign(&self, a: &mut RnsPoly, b: &RnsPoly) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, "multiply by plaintext")?;
        let ring = &self.ring;
        par_limbs_mut(a).for_each(|(_, s, x)| {
            if x.is_empty() {
                return;
            }
            let m = ring.modulus(s);
            for (xi, &yi) in x.iter_mut().zip(b.limb(0, s)) {
                *xi = m.mul(*xi, yi);
            }
        });
        Ok(())
    }

    fn mul_plain_acc(&self, acc: &mut RnsPoly, a: &RnsPoly, b: &RnsPoly) -> Result<()> {
        self.check(acc)?;
        check_covers(acc, a, "multiply-accumulate")?;
        check_covers(acc, b, "multiply-accumulate")?;
        if a.components() < acc.components() {
            return Err(Error::ShapeMismatch {
                what: "multiply-accumulate: operand has fewer components".into(),
            });
        }
        let ring = &self.ring;
        par_limbs_mut(acc).for_each(|(c, s, x)| {
            if x.is_empty() {
                return;
            }
            let m = ring.modulus(s);
            for ((xi, &ai), &bi) in x.iter_mut().zip(a.limb(c, s)).zip(b.limb(0, s)) {
                *xi = m.add(*xi, m.mul(ai, bi));
            }
        });
        Ok(())
    }

    fn mul_scalar_assign(&self, a: &mut RnsPoly, scalars: &[u64]) -> Result<()> {
        self.check(a)?;
        let (level, q_cap) = (a.level(), a.q_capacity());
        if scalars.len() != a.active_slots().count() {
            return Err(Error::ShapeMismatch {
                what: "one scalar per active limb is needed".into(),
            });
        }
        let ring = &self.ring;
        par_limbs_mut(a).for_each(|(_, s, x)| {
            if x.is_empty() {
                return;
            }
            let m = ring.modulus(s);
            let w = m.reduce(scalars[active_index(s, level, q_cap)]);
            let ws = m.shoup(w);
            x.iter_mut().for_each(|v| *v = m.mul_shoup(*v, w, ws));
        });
        Ok(())
    }

    fn add_scalar_assign(&self, a: &mut RnsPoly, component: usize, scalars: &[u64]) -> Result<()> {
        self.check(a)?;
        let (level, q_cap) = (a.level(), a.q_capacity());
        if scalars.len() != a.active_slots().count() || component >= a.components() {
            return Err(Error::ShapeMismatch {
                what: "one scalar per active limb of an existing component is needed".into(),
            });
        }
        let ring = &self.ring;
        par_limbs_mut(a).for_each(|(c, s, x)| {
            if c != component || x.is_empty() {
                return;
            }
            let m = ring.modulus(s);
            let w = m.reduce(scalars[active_index(s, level, q_cap)]);
            x.iter_mut().for_each(|v| *v = m.add(*v, w));
        });
        Ok(())
    }

    fn ntt(&self, a: &mut RnsPoly) -> Result<()> {
        self.check(a)?;
        let ring = &self.ring;
        par_limbs_mut(a).for_each(|(_, s, x)| {
            if !x.is_empty() {
                ring.ntt(s).forward(x)
            }
        });
        Ok(())
    }

    fn intt(&self, a: &mut RnsPoly) -> Result<()> {
        self.check(a)?;
        let ring = &self.ring;
        par_limbs_mut(a).for_each(|(_, s, x)| {
            if !x.is_empty() {
                ring.ntt(s).inverse(x)
            }
        });
        Ok(())
    }

    fn tensor(&self, a: &RnsPoly, b: &RnsPoly) -> Result<RnsPoly> {
        self.check(a)?;
        self.check(b)?;
        if a.components() != 2 || b.components() != 2 || a.shape().extended || b.shape().extended {
            return Err(Error::ShapeMismatch {
                what: "tensor needs two 2-component ciphertexts over Q".into(),
            });
        }
        let level = a.level().min(b.level());
        let mut out = self.zeros(Shape {
            components: 3,
            level,
            extended: false,
        })?;
        let ring = &self.ring;
        par_limbs_mut(&mut out).for_each(|(c, s, x)| {
            if x.is_empty() {
                return;
            }
            let m = ring.modulus(s);
            let (a0, a1, b0, b1) = (a.limb(0, s), a.limb(1, s), b.limb(0, s), b.limb(1, s));
            for (k, xk) in x.iter_mut().enumerate() {
                *xk = match c {
                    0 => m.mul(a0[k], b0[k]),
                    1 => {
                        m.reduce_u128(a0[k] as u128 * b1[k] as u128 + a1[k] as u128 * b0[k] as u128)
                    }
                    _ => m.mul(a1[k], b1[k]),
                };
            }
        });
        Ok(out)
    }

    fn automorphism_into(
        &self,
        a: &RnsPoly,
        galois: u64,
        out: &mut RnsPoly,
        mapped: usize,
    ) -> Result<()> {
        self.check(a)?;
        self.check(out)?;
        check_covers(out, a, "automorphism")?;
        if galois.is_multiple_of(2) || mapped > a.components() || mapped > out.components() {
            return Err(Error::ShapeMismatch {
                what: format!("automorphism: bad Galois element {galois} or component count"),
            });
        }
        let map = self.ring.galois_map(galois % (2 * self.ring.n() as u64));
        par_limbs_mut(out).for_each(|(c, s, x)| {
            if c < mapped && !x.is_empty() {
                let src = a.limb(c, s);
                for (xk, &mk) in x.iter_mut().zip(map.iter()) {
                    *xk = src[mk as usize];
                }
            }
        });
        Ok(())
    }

    fn rescale(&self, a: &mut RnsPoly) -> Result<()> {
        self.check(a)?;
        let level = a.level();
        if level == 0 || a.shape().extended {
            return Err(Error::InvalidLevel {
                level,
                reason: "cannot rescale a buffer at level 0 or over Q·P",
            });
        }
        for c in 0..a.components() {
            self.rescale_component(a, c, level);
        }
        a.set_level(level - 1)
    }

    fn sample_uniform(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<RnsPoly> {
        let mut p = self.zeros(shape)?;
        let ring = &self.ring;
        par_limbs_mut(&mut p).for_each(|(c, s, x)| {
            if !x.is_empty() {
                sampler::uniform_limb(
                    seed,
                    domain,
                    poly_index + c as u32,
                    s as u16,
                    ring.modulus(s),
                    x,
                );
            }
        });
        Ok(p)
    }

    fn sample_ternary(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<RnsPoly> {
        self.sample_small(shape, |c, v| {
            sampler::ternary(seed, domain, poly_index + c as u32, v)
        })
    }

    fn sample_gaussian(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<RnsPoly> {
        self.sample_small(shape, |c, v| {
            sampler::gaussian(seed, domain, poly_index + c as u32, v)
        })
    }
    /// One pass over the output limbs (rayon), each summing its products with every input.
    fn linear_combination(
        &self,
        inputs: &[&RnsPoly],
        coeffs: &[u64],
        outputs: usize,
    ) -> Result<Vec<RnsPoly>> {
        for p in inputs {
            self.check(p)?;
        }
        let shapes: Vec<Shape> = inputs.iter().map(|p| p.shape()).collect();
        let shape = check_linear_combination(&self.ring, &shapes, coeffs, outputs)?;
        let active = crate::backend::active_slot_count(&self.ring, shape);
        let ring = &self.ring;
        (0..outputs)
            .map(|j| {
                let row = &coeffs[j * inputs.len() * active..(j + 1) * inputs.len() * active];
                let mut out = ring.zeros(shape)?;
                let q_cap = out.q_capacity();
                par_limbs_mut(&mut out).for_each(|(c, s, x)| {
                    if x.is_empty() {
                        return;
                    }
                    let m = ring.modulus(s);
                    let slot = active_index(s, shape.level, q_cap);
                    for (input, w) in inputs.iter().zip(row.chunks(active)) {
                        let (w, ws) = (w[slot], m.shoup(w[slot]));
                        for (xi, &yi) in x.iter_mut().zip(input.limb(c, s)) {
                            *xi = m.add(*xi, m.mul_shoup(yi, w, ws));
                        }
                    }
                });
                Ok(out)
            })
            .collect()
    }
}

impl KeySwitchBackend for CpuBackend {
    fn mod_up(&self, c: &RnsPoly, component: usize) -> Result<RnsPoly> {
        self.check(c)?;
        if component >= c.components() || c.shape().extended {
            return Err(Error::ShapeMismatch {
                what: "mod_up needs a component of a buffer over Q".into(),
            });
        }
        let level = c.level();
        let ring = &self.ring;
        let tables = ring.mod_up_tables(level);
        let mut ext = self.zeros(Shape {
            components: tables.len(),
            level,
            extended: true,
        })?;
        let (n, spc) = (ring.n(), ext.slots_per_component());
        for (j, t) in tables.iter().enumerate() {
            let coeffs: Vec<Vec<u64>> = t
                .digit_slots
                .clone()
                .into_par_iter()
                .map(|s| {
                    let mut v = self.intt_copy(s, c.limb(component, s));
                    let (m, h) = (ring.modulus(s), t.half_mod_digit[s - t.digit_slots.start]);
                    v.iter_mut().for_each(|x| *x = m.add(*x, h));
                    v
                })
                .collect();
            let inputs: Vec<&[u64]> = coeffs.iter().map(|v| v.as_slice()).collect();
            // Component j's limbs by slot: the digit's own take c's limbs, the targets receive
            // the conversion in place (no temporary limbs, no copy).
            let mut limbs: Vec<Option<&mut [u64]>> = ext.raw_mut()[j * spc * n..(j + 1) * spc * n]
                .chunks_mut(n)
                .map(Some)
                .collect();
            for s in t.digit_slots.clone() {
                if let Some(limb) = limbs[s].take() {
                    limb.copy_from_slice(c.limb(component, s));
                }
            }
            let mut outs: Vec<&mut [u64]> = t
                .target_slots
                .iter()
                .filter_map(|&s| limbs[s].take())
                .collect();
            debug_assert_eq!(outs.len(), t.target_slots.len(), "distinct target slots");
            t.converter.convert(&inputs, &mut outs);
            outs.par_iter_mut()
                .zip(&t.target_slots)
                .zip(&t.half_mod_target)
                .for_each(|((v, &s), &h)| {
                    let m = ring.modulus(s);
                    v.iter_mut().for_each(|x| *x = m.sub(*x, h));
                    ring.ntt(s).forward(v)
                });
        }
        Ok(ext)
    }

    fn key_product(
        &self,
        ext: &RnsPoly,
        key: &RnsPoly,
        galois: Option<u64>,
        acc: &mut RnsPoly,
    ) -> Result<()> {
        self.check(ext)?;
        self.check(key)?;
        self.check(acc)?;
        let digits = ext.components();
        if !acc.shape().extended
            || acc.components() != 2
            || !key.shape().extended
            || key.components() < 2 * digits
        {
            return Err(Error::ShapeMismatch {
                what: "key_product: accumulator, digits or key have the wrong shape".into(),
            });
        }
        check_covers(acc, ext, "key_product")?;
        check_covers(acc, key, "key_product")?;
        let map = galois.map(|g| self.ring.galois_map(g % (2 * self.ring.n() as u64)));
        let ring = &self.ring;
        par_limbs_mut(acc).for_each(|(c, s, x)| {
            if x.is_empty() {
                return;
            }
            let m = ring.modulus(s);
            let ext_limbs: Vec<&[u64]> = (0..digits).map(|j| ext.limb(j, s)).collect();
            let key_limbs: Vec<&[u64]> = (0..digits).map(|j| key.limb(2 * j + c, s)).collect();
            for (k, xk) in x.iter_mut().enumerate() {
                let src = map.as_ref().map_or(k, |mp| mp[k] as usize);
                let mut sum = *xk as u128;
                for j in 0..digits {
                    sum += ext_limbs[j][src] as u128 * key_limbs[j][k] as u128;
                }
                *xk = m.reduce_u128(sum);
            }
        });
        Ok(())
    }

    fn mod_down_into(&self, acc: &RnsPoly, out: &mut RnsPoly, rescale: bool) -> Result<()> {
        self.check(acc)?;
        self.check(out)?;
        let level = out.level();
        if !acc.shape().extended
            || acc.components() < 2
            || out.components() != 2
            || acc.level() != level
            || out.shape().extended
        {
            return Err(Error::ShapeMismatch { what: "mod_down: accumulator over Q·P and a 2-component output at its level are needed".into() });
        }
        let ring = &self.ring;
        let table = ring
            .mod_down_table(level)
            .ok_or_else(|| Error::ShapeMismatch {
                what: "mod_down needs special primes".into(),
            })?;
        let (q_cap, n) = (ring.q_count(), ring.n());
        // The converted P part of one component (level + 1 limbs), reused for both.
        let mut conv = vec![0u64; (level + 1) * n];
        for c in 0..2 {
            let p_coeffs: Vec<Vec<u64>> = (q_cap..q_cap + ring.p_count())
                .into_par_iter()
                .map(|s| {
                    let mut v = self.intt_copy(s, acc.limb(c, s));
                    let (m, h) = (ring.modulus(s), table.half_p_mod_p[s - q_cap]);
                    v.iter_mut().for_each(|x| *x = m.add(*x, h));
                    v
                })
                .collect();
            let inputs: Vec<&[u64]> = p_coeffs.iter().map(|v| v.as_slice()).collect();
            {
                let mut outs: Vec<&mut [u64]> = conv.chunks_mut(n).collect();
                table.converter.convert_exact(&inputs, &mut outs);
            }
            conv.par_chunks_mut(n).enumerate().for_each(|(s, v)| {
                let (m, h) = (ring.modulus(s), table.half_p_mod_q[s]);
                v.iter_mut().for_each(|x| *x = m.sub(*x, h));
                ring.ntt(s).forward(v)
            });
            let base = c * out.slots_per_component() * n;
            out.raw_mut()[base..base + (level + 1) * n]
                .par_chunks_mut(n)
                .enumerate()
                .for_each(|(s, x)| {
                    let m = ring.modulus(s);
                    let k = table.p_inv[s];
                    let conv_s = &conv[s * n..(s + 1) * n];
                    for ((xk, &ak), &ck) in x.iter_mut().zip(acc.limb(c, s)).zip(conv_s) {
                        *xk = m.add(*xk, m.mul_shoup(m.sub(ak, ck), k.value, k.shoup));
                    }
                });
        }
        if rescale {
            self.rescale(out)?;
        }
        Ok(())
    }
}

/// The reference body of [`crate::backend::RnsBlindRotateBackend`].
impl crate::backend::RnsBlindRotateBackend for CpuBackend {}

impl IntegerBackend for CpuBackend {
    fn decode_mod_t(
        &self,
        p: &RnsPoly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        // The buffer is already on the host: no copy.
        crate::backend::decode_mod_t_host(&self.ring, p, decoder, mode)
    }
}

impl CpuBackend {
    /// A buffer holding small signed integers drawn by `draw(component, out)`, reduced per slot.
    fn sample_small(&self, shape: Shape, draw: impl Fn(usize, &mut [i64])) -> Result<RnsPoly> {
        let mut p = self.zeros(shape)?;
        let ring = &self.ring;
        let mut values = vec![0i64; ring.n()];
        for c in 0..shape.components {
            draw(c, &mut values);
            let slots: Vec<usize> = p.active_slots().collect();
            for s in slots {
                sampler::signed_to_limb(&values, ring.modulus(s), p.limb_mut(c, s));
            }
        }
        values.zeroize();
        Ok(p)
    }
}
