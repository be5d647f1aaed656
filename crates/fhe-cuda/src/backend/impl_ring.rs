//! [`RingBackend`] on the device: buffers, transfers, the ring's element-wise operations, NTTs,
//! tensor, automorphisms, rescale, samplers and the fused linear combination.

use super::*;

impl RingBackend for CudaBackend {
    type Poly = DevicePoly;

    fn ring(&self) -> &Arc<RingContext> {
        &self.inner.ring
    }

    fn device_name(&self) -> String {
        self.inner.device.name().to_string()
    }

    fn shape(&self, p: &DevicePoly) -> Shape {
        p.shape
    }

    fn zeros(&self, shape: Shape) -> Result<DevicePoly> {
        let mut p = self.alloc(shape)?;
        self.inner
            .stream
            .memset_zeros(&mut p.data)
            .map_err(drv("memset"))?;
        Ok(p)
    }

    fn upload(&self, host: &RnsPoly) -> Result<DevicePoly> {
        self.inner.ring.check(host)?;
        let data = self
            .inner
            .stream
            .clone_htod(host.raw())
            .map_err(drv("upload"))?;
        Ok(DevicePoly {
            data,
            shape: host.shape(),
            n: host.n(),
            q_capacity: host.q_capacity(),
            p_count: host.p_count(),
        })
    }

    fn download(&self, p: &DevicePoly) -> Result<RnsPoly> {
        let mut host = RnsPoly::zeros(p.n, p.shape, p.q_capacity, p.p_count)?;
        let len = p.len();
        self.inner
            .stream
            .memcpy_dtoh(&p.data.slice(..len), host.raw_mut())
            .map_err(drv("download"))?;
        self.synchronize()?;
        Ok(host)
    }

    fn upload_lifted(&self, coeffs: &[i128], level: usize) -> Result<DevicePoly> {
        // i128 is stored as (low, high) little-endian words on every host CUDA supports, the
        // layout `elementwise_lift` reads with `wide = 1`.
        self.lift_words(coeffs, level, true)
    }

    fn upload_lifted_i64(&self, coeffs: &[i64], level: usize) -> Result<DevicePoly> {
        self.lift_words(coeffs, level, false)
    }

    fn download_centered_q0(&self, p: &DevicePoly) -> Result<Vec<Option<i64>>> {
        self.check(p)?;
        if p.shape.extended {
            return Err(shape_err(
                "cannot take centred residues of an extended buffer (basis Q·P)",
            ));
        }
        let n = p.n;
        // SAFETY: every word is written by `elementwise_centered_q0` before it is read.
        let out = unsafe { self.inner.stream.alloc::<u64>(n) }.map_err(drv("alloc"))?;
        let a = Self::q_only(p.limbs(self.s()), 0, p.shape.level as u32 + 1).components(0, 1);
        {
            let (op, _g) = out.device_ptr(self.s());
            ew::centered_q0(&self.cx(), a, op)?;
        }
        let mut words = vec![0u64; n];
        self.inner
            .stream
            .memcpy_dtoh(&out, &mut words)
            .map_err(drv("download"))?;
        self.synchronize()?;
        // out[k] = (x << 1) | flag with |x| < 2^60: an arithmetic shift recovers x.
        Ok(words
            .into_iter()
            .map(|w| (w & 1 == 1).then_some(w as i64 >> 1))
            .collect())
    }

    fn duplicate(&self, p: &DevicePoly) -> Result<DevicePoly> {
        let data = self
            .inner
            .stream
            .clone_dtod(&p.data)
            .map_err(drv("device copy"))?;
        Ok(DevicePoly { data, ..*p })
    }

    fn set_level(&self, p: &mut DevicePoly, level: usize) -> Result<()> {
        if level > p.shape.level {
            return Err(Error::InvalidLevel {
                level,
                reason: "can only lower the level of a buffer",
            });
        }
        p.shape.level = level;
        Ok(())
    }

    fn truncate_components(&self, p: &mut DevicePoly, components: usize) -> Result<()> {
        if components > p.shape.components {
            return Err(shape_err(format!(
                "cannot grow components {} -> {components}",
                p.shape.components
            )));
        }
        p.shape.components = components;
        Ok(())
    }

    fn zeroize(&self, p: &mut DevicePoly) {
        // Enqueued on the buffer's stream before its free; a failure is recorded in the context
        // and reported by the next synchronize.
        let r = self.inner.stream.memset_zeros(&mut p.data);
        self.inner.device.context().record_err(r);
    }

    fn add_assign(&self, a: &mut DevicePoly, b: &DevicePoly) -> Result<()> {
        self.binary(a, b, "add", ew::OP_ADD)
    }

    fn sub_assign(&self, a: &mut DevicePoly, b: &DevicePoly) -> Result<()> {
        self.binary(a, b, "sub", ew::OP_SUB)
    }

    fn add_new(&self, a: &DevicePoly, b: &DevicePoly, subtract: bool) -> Result<DevicePoly> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, "add")?;
        if b.shape.components < a.shape.components {
            return Err(shape_err("add: operand has fewer components"));
        }
        let mut out = self.alloc(a.shape)?;
        // The inactive limbs as the default body leaves them: copies of `a`'s.
        for range in a.inactive_ranges() {
            let mut dst = out.data.slice_mut(range.clone());
            self.inner
                .stream
                .memcpy_dtod(&a.data.slice(range), &mut dst)
                .map_err(drv("device copy"))?;
        }
        let lo = out.limbs(self.s());
        let op = if subtract { ew::OP_SUB } else { ew::OP_ADD };
        ew::binary_new(
            &self.cx(),
            lo,
            a.like(self.s(), &lo),
            b.like(self.s(), &lo),
            op,
        )?;
        Ok(out)
    }

    fn add_component_assign(
        &self,
        a: &mut DevicePoly,
        component: usize,
        b: &DevicePoly,
    ) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, "add to component")?;
        if component >= a.shape.components {
            return Err(shape_err(format!("no component {component} to add to")));
        }
        let la = a.limbs(self.s()).components(component as u32, 1);
        let lb = b.like(self.s(), &la).components(0, 1);
        ew::binary(&self.cx(), la, lb, ew::OP_ADD)?;
        Ok(())
    }

    fn combine_leading_assign(
        &self,
        a: &mut DevicePoly,
        b: &DevicePoly,
        subtract: bool,
    ) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, "combine the leading components")?;
        let k = b.shape.components;
        if k > a.shape.components {
            return Err(shape_err(format!(
                "cannot combine the leading components: the operand has {k} components, more \
                 than {}",
                a.shape.components
            )));
        }
        // One launch over the first k components of `a`.
        let la = a.limbs(self.s()).components(0, k as u32);
        let lb = b.like(self.s(), &la);
        let op = if subtract { ew::OP_SUB } else { ew::OP_ADD };
        ew::binary(&self.cx(), la, lb, op)?;
        Ok(())
    }

    fn copy_component(
        &self,
        src: &DevicePoly,
        src_component: usize,
        dst: &mut DevicePoly,
        dst_component: usize,
    ) -> Result<()> {
        self.check(src)?;
        self.check(dst)?;
        check_covers(dst, src, "copy component")?;
        if src_component >= src.shape.components || dst_component >= dst.shape.components {
            return Err(shape_err("copy component: no such component"));
        }
        let ld = dst.limbs(self.s()).components(dst_component as u32, 1);
        let ls = src.like(self.s(), &ld).components(src_component as u32, 1);
        ew::binary(&self.cx(), ld, ls, ew::OP_COPY)?;
        Ok(())
    }

    fn neg_assign(&self, a: &mut DevicePoly) -> Result<()> {
        self.check(a)?;
        ew::neg(&self.cx(), a.limbs(self.s()))?;
        Ok(())
    }

    fn mul_plain_assign(&self, a: &mut DevicePoly, b: &DevicePoly) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        check_covers(a, b, "multiply by plaintext")?;
        let la = a.limbs(self.s());
        let lb = b.like(self.s(), &la).components(0, 1);
        ew::binary(&self.cx(), la, lb, ew::OP_MUL)?;
        Ok(())
    }

    fn mul_plain_acc(&self, acc: &mut DevicePoly, a: &DevicePoly, b: &DevicePoly) -> Result<()> {
        self.check(acc)?;
        check_covers(acc, a, "multiply-accumulate")?;
        check_covers(acc, b, "multiply-accumulate")?;
        if a.shape.components < acc.shape.components {
            return Err(shape_err(
                "multiply-accumulate: operand has fewer components",
            ));
        }
        let lacc = acc.limbs(self.s());
        let la = a.like(self.s(), &lacc);
        let lb = b.like(self.s(), &lacc).components(0, 1);
        ew::mul_acc(&self.cx(), lacc, la, lb)?;
        Ok(())
    }

    fn mul_plain_sum(
        &self,
        shape: Shape,
        terms: &[(&DevicePoly, &DevicePoly)],
    ) -> Result<DevicePoly> {
        let mut out = self.alloc_zero_inactive(shape)?;
        if out.shape.extended {
            return Err(shape_err("multiply-sum: an extended output"));
        }
        let mut table = Vec::with_capacity(3 * terms.len());
        for (a, b) in terms {
            self.check(a)?;
            self.check(b)?;
            check_covers(&out, a, "multiply-sum")?;
            check_covers(&out, b, "multiply-sum")?;
            if a.shape.components < out.shape.components || b.shape.extended {
                return Err(shape_err(
                    "multiply-sum: operand has fewer components or an extended plaintext",
                ));
            }
            table.extend([
                a.ptr(self.s()),
                a.slots_per_component() as u64,
                b.ptr(self.s()),
            ]);
        }
        if terms.is_empty() {
            self.zeroize(&mut out);
            return Ok(out);
        }
        ew::mul_sum(&self.cx(), out.limbs(self.s()), &table)?;
        Ok(out)
    }

    fn mul_scalar_assign(&self, a: &mut DevicePoly, scalars: &[u64]) -> Result<()> {
        self.check(a)?;
        let sc = self.scalars(a, scalars, true)?;
        ew::scalar(&self.cx(), a.limbs(self.s()), &sc, ew::OP_MUL)?;
        Ok(())
    }

    fn add_scalar_assign(
        &self,
        a: &mut DevicePoly,
        component: usize,
        scalars: &[u64],
    ) -> Result<()> {
        self.check(a)?;
        if component >= a.shape.components {
            return Err(shape_err(
                "one scalar per active limb of an existing component is needed",
            ));
        }
        let sc = self.scalars(a, scalars, false)?;
        ew::scalar(
            &self.cx(),
            a.limbs(self.s()).components(component as u32, 1),
            &sc,
            ew::OP_ADD,
        )?;
        Ok(())
    }

    fn ntt(&self, a: &mut DevicePoly) -> Result<()> {
        self.check(a)?;
        kernels::ntt::forward(&self.cx(), a.limbs(self.s()))?;
        Ok(())
    }

    fn intt(&self, a: &mut DevicePoly) -> Result<()> {
        self.check(a)?;
        kernels::ntt::inverse(&self.cx(), a.limbs(self.s()))?;
        Ok(())
    }

    fn tensor(&self, a: &DevicePoly, b: &DevicePoly) -> Result<DevicePoly> {
        self.tensor_from(a, b, 0)
    }

    fn automorphism_into(
        &self,
        a: &DevicePoly,
        galois: u64,
        out: &mut DevicePoly,
        mapped: usize,
    ) -> Result<()> {
        self.check(a)?;
        self.check(out)?;
        check_covers(out, a, "automorphism")?;
        if galois.is_multiple_of(2) || mapped > a.shape.components || mapped > out.shape.components
        {
            return Err(shape_err(format!(
                "automorphism: bad Galois element {galois} or component count"
            )));
        }
        let map = self.galois_map(galois)?;
        let (mp, _g) = map.device_ptr(self.s());
        let lo = out.limbs(self.s()).components(0, mapped as u32);
        let la = a.like(self.s(), &lo);
        kernels::automorphism::apply(&self.cx(), lo, la, mp)?;
        Ok(())
    }

    fn rescale(&self, a: &mut DevicePoly) -> Result<()> {
        self.rescale_mod_t(a, 1)
    }

    fn rescaled(&self, a: &DevicePoly) -> Result<DevicePoly> {
        self.rescaled_mod_t(a, 1)
    }

    fn sample_uniform(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<DevicePoly> {
        let p = self.zeros(shape)?;
        kernels::sampler::uniform(&self.cx(), p.limbs(self.s()), seed, domain, poly_index)?;
        Ok(p)
    }

    fn sample_ternary(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<DevicePoly> {
        let p = self.zeros(shape)?;
        kernels::sampler::small(&self.cx(), p.limbs(self.s()), seed, domain, poly_index, 0)?;
        Ok(p)
    }

    fn sample_gaussian(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<DevicePoly> {
        let p = self.zeros(shape)?;
        kernels::sampler::small(&self.cx(), p.limbs(self.s()), seed, domain, poly_index, 1)?;
        Ok(p)
    }

    /// One launch (`lincomb_apply`): the inputs' limbs are read once for up to four outputs,
    /// each output limb written once; the checks are the CPU's
    /// ([`fhe_math::backend::check_linear_combination`]).
    fn linear_combination(
        &self,
        inputs: &[&DevicePoly],
        coeffs: &[u64],
        outputs: usize,
    ) -> Result<Vec<DevicePoly>> {
        for p in inputs {
            self.check(p)?;
        }
        let shapes: Vec<Shape> = inputs.iter().map(|p| p.shape).collect();
        let shape = fhe_math::backend::check_linear_combination(
            &self.inner.ring,
            &shapes,
            coeffs,
            outputs,
        )?;
        let out = (0..outputs)
            .map(|_| self.alloc_zero_inactive(shape))
            .collect::<Result<Vec<_>>>()?;
        let Some(first) = out.first() else {
            return Ok(out);
        };
        // The kernel addresses every buffer with the outputs' layout.
        if inputs
            .iter()
            .any(|p| p.slots_per_component() != first.slots_per_component())
        {
            return Err(shape_err(
                "cannot form a linear combination: buffers of one shape with different layouts",
            ));
        }
        let in_ptrs: Vec<u64> = inputs.iter().map(|p| p.ptr(self.s())).collect();
        let out_ptrs: Vec<u64> = out.iter().map(|p| p.ptr(self.s())).collect();
        kernels::lincomb::apply(
            &self.cx(),
            first.limbs(self.s()),
            &in_ptrs,
            &out_ptrs,
            coeffs,
        )?;
        Ok(out)
    }

    fn synchronize(&self) -> Result<()> {
        self.inner
            .stream
            .synchronize()
            .map_err(drv("stream synchronize"))?;
        self.inner
            .device
            .context()
            .check_err()
            .map_err(drv("deferred driver error"))
    }
}
