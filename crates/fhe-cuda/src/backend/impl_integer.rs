//! [`IntegerBackend`] on the device: decoding into `Z_t` and encoding's lift with the plaintext
//! NTT on the GPU, the `t`-preserving rescale and key switches, and BFV's scale-and-round
//! product (its kernels' plumbing is in `scale_round.rs`, the key switches' in `keyswitch/`).

use super::*;

impl CudaBackend {
    /// The device table of a decoder, uploaded at first use.
    fn decoder_table(&self, d: &CrtDecoder) -> Result<Arc<CudaSlice<u64>>> {
        cached(
            &self.inner.decoders,
            kernels::decode::fingerprint(d),
            || self.upload_words(&kernels::decode::build(d)),
        )
    }

    /// The device NTT tables modulo `ntt`'s modulus, uploaded at first use.
    fn plain_ntt(&self, ntt: &NttTable) -> Result<Arc<PlainNtt>> {
        cached(&self.inner.plain_ntts, ntt.modulus().value(), || {
            let (host, layout) = tables::build_ntt_only(&[ntt]);
            Ok(PlainNtt {
                buf: self.upload_words(&host)?,
                layout,
            })
        })
    }

    /// The context of the plaintext NTT tables `plain` (one slot: `t`).
    fn plain_cx<'a>(&'a self, plain: &'a PlainNtt, tables: u64) -> Ctx<'a> {
        Ctx {
            dev: &self.inner.device,
            stream: &self.inner.stream,
            tables,
            layout: &plain.layout,
            n: self.inner.ring.n() as u32,
        }
    }

    /// The single limb of `n` words at `ptr`, transformed with a plaintext NTT table.
    fn plain_limb(&self, ptr: u64) -> LimbSet {
        LimbSet {
            ptr,
            n: self.inner.ring.n() as u32,
            spc: 1,
            comp_lo: 0,
            comps: 1,
            q_lo: 0,
            q_cnt: 1,
            p_lo: 0,
            p_cnt: 0,
        }
    }

    /// [`IntegerBackend::upload_lifted_intt_mod_t`] on the device: the values go up, the inverse NTT
    /// modulo `t` and the centred lift run there, and the message comes back (one sync).
    fn upload_lifted_intt_mod_t_impl(
        &self,
        values: &[u64],
        ntt: &NttTable,
        level: usize,
    ) -> Result<(DevicePoly, Vec<u64>)> {
        let ring = &self.inner.ring;
        fhe_math::backend::check_lift_args(ring, values.len(), level)?;
        check_residues_mod_t(ring, values, ntt)?;
        let plain = self.plain_ntt(ntt)?;
        let m = self
            .inner
            .stream
            .clone_htod(values)
            .map_err(drv("upload"))?;
        let p = self.alloc_zero_inactive(Shape {
            components: 1,
            level,
            extended: false,
        })?;
        {
            let (mp, _g1) = m.device_ptr(self.s());
            let (pp, _g2) = plain.buf.device_ptr(self.s());
            kernels::ntt::inverse(&self.plain_cx(&plain, pp), self.plain_limb(mp))?;
            ew::lift(
                &self.cx(),
                p.limbs(self.s()),
                mp,
                false,
                ntt.modulus().value(),
            )?;
        }
        let mut host = vec![0u64; values.len()];
        self.inner
            .stream
            .memcpy_dtoh(&m, &mut host)
            .map_err(drv("download"))?;
        self.synchronize()?;
        Ok((p, host))
    }

    /// [`IntegerBackend::decode_mod_t`] (and with `ntt`, [`IntegerBackend::decode_mod_t_ntt`]) on the device:
    /// one kernel writes the `N` results and the block summaries, the NTT kernels transform the
    /// results modulo `t` in place, and everything comes down in one copy. When a coefficient
    /// is within the fraction's error of `Q/4` and none is surely above, the exact decision
    /// needs the limbs: the host body runs (rare: the noise must be within `2^-60` relative of
    /// a quarter of `Q`).
    fn decode_mod_t_impl(
        &self,
        p: &DevicePoly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
        ntt: Option<&NttTable>,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        self.check(p)?;
        let ring = &self.inner.ring;
        check_decoder(ring, p.shape, decoder)?;
        if let Some(ntt) = ntt {
            check_plain_ntt(ring, decoder, ntt)?;
        }
        let table = self.decoder_table(decoder)?;
        let n = p.n;
        let words = kernels::decode::result_words(n);
        // SAFETY: the kernel writes every word (n results, one summary per block).
        let out = unsafe { self.inner.stream.alloc::<u64>(words) }.map_err(drv("alloc"))?;
        {
            let (tp, _g1) = table.device_ptr(self.s());
            let (op, _g2) = out.device_ptr(self.s());
            kernels::decode::crt_mod_t(
                &self.inner.device,
                &self.inner.stream,
                decoder,
                mode,
                (p.ptr(self.s()), n as u32, tp, op),
            )?;
            if let Some(ntt) = ntt {
                let plain = self.plain_ntt(ntt)?;
                let (pp, _g3) = plain.buf.device_ptr(self.s());
                kernels::ntt::forward(&self.plain_cx(&plain, pp), self.plain_limb(op))?;
            }
        }
        let mut host = vec![0u64; words];
        self.inner
            .stream
            .memcpy_dtoh(&out, &mut host)
            .map_err(drv("download"))?;
        self.synchronize()?;
        let (max_abs, sure, maybe) = kernels::decode::fold_summaries(&host[n..]);
        if maybe && !sure {
            let (mut m, f) = decode_mod_t_host(ring, &self.download(p)?, decoder, mode)?;
            if let Some(ntt) = ntt {
                ntt.forward(&mut m);
            }
            return Ok((m, f));
        }
        host.truncate(n);
        Ok((
            host,
            NoiseFraction {
                max_abs,
                error: decoder.error_bound(),
                above_quarter: sure,
            },
        ))
    }
}

impl IntegerBackend for CudaBackend {
    fn decode_mod_t(
        &self,
        p: &DevicePoly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        self.decode_mod_t_impl(p, decoder, mode, None)
    }

    fn upload_lifted_intt_mod_t(
        &self,
        values: &[u64],
        ntt: &NttTable,
        level: usize,
    ) -> Result<(DevicePoly, Vec<u64>)> {
        self.upload_lifted_intt_mod_t_impl(values, ntt, level)
    }

    fn decode_mod_t_ntt(
        &self,
        p: &DevicePoly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
        ntt: &NttTable,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        self.decode_mod_t_impl(p, decoder, mode, Some(ntt))
    }

    /// Default: `tensor`, then `relinearize_mod_t`. Where the fused key product and mod_down's
    /// fused finish apply (`CudaBackend::product_in_key_product`), the tensor writes only
    /// `c_2` (and, with the rescale, the top limb of `c_0`, `c_1`, which the rescale's side
    /// chain reads), and the key product's rows add `P·(c_0, c_1)` to the accumulator, so that
    /// mod_down's finish gives `c_0 + (acc_0 - conv_0)·P^-1` without `c_0`, `c_1` written and
    /// read back: the same words.
    fn mul_relin_mod_t(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        relin_key: &DevicePoly,
        rescale: bool,
        t: u64,
    ) -> Result<DevicePoly> {
        if !self.product_in_key_product() {
            let c = self.tensor(a, b)?;
            return self.relinearize_mod_t(c, relin_key, rescale, t);
        }
        let level = a.shape.level.min(b.shape.level);
        let slots = level as u32 + u32::from(!rescale);
        // Without the rescale no slot of c_0, c_1 is read, so with c_2 formed by mod_up's first
        // pass the tensor has nothing left to write: one launch fewer at the head of a chain
        // that, from an idle GPU, waits on the host's launches.
        let c2_on_load = !rescale && self.c2_on_load();
        let c = match c2_on_load {
            true => self.product_buffer(a, b)?,
            false => self.tensor_from(a, b, slots)?,
        };
        let product = Product {
            a,
            b,
            slots,
            c2_on_load,
        };
        self.relinearize_from(c, relin_key, rescale, t, None, Addend::Product(product))
    }

    fn tensor_scale_round(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        tables: &ScaleRoundTables,
    ) -> Result<DevicePoly> {
        self.check_scale_round_inputs(a, b, tables)?;
        self.tensor_scale_round_impl(a, b, tables, true)
    }

    fn rescaled_mod_t(&self, a: &DevicePoly, t: u64) -> Result<DevicePoly> {
        self.check(a)?;
        let level = a.shape.level;
        if level == 0 || a.shape.extended {
            return Err(Error::InvalidLevel {
                level,
                reason: "cannot rescale a buffer at level 0 or over Q·P",
            });
        }
        if !kernels::rescale::rescale_fusable(&self.cx(), level) {
            let mut out = self.duplicate(a)?;
            self.rescale_impl(&mut out, t)?;
            return Ok(out);
        }
        // A new buffer laid out like `a` (same slots per component): its limbs 0..l are written
        // by the rescale's fused passes, which read `a`'s; its slots l and above, inactive
        // afterwards, receive `a`'s (so every word is what a copy rescaled in place holds): slot
        // l by the inverse NTT that reads it, the others (below a's top level) by a copy.
        let mut out = self.alloc(a.shape)?;
        let src = a.limbs(self.s());
        if a.q_capacity > level + 1 {
            let above = LimbSet {
                q_lo: (level + 1) as u32,
                q_cnt: (a.q_capacity - level - 1) as u32,
                p_cnt: 0,
                ..src
            };
            ew::binary(&self.cx(), out.like(self.s(), &above), above, ew::OP_COPY)?;
        }
        self.rescale_from(src, &out, t, true)?;
        out.shape.level = level - 1;
        Ok(out)
    }

    fn rescale_mod_t(&self, a: &mut DevicePoly, t: u64) -> Result<()> {
        self.check(a)?;
        let level = a.shape.level;
        if level == 0 || a.shape.extended {
            return Err(Error::InvalidLevel {
                level,
                reason: "cannot rescale a buffer at level 0 or over Q·P",
            });
        }
        self.rescale_impl(a, t)
    }

    fn mod_down_into_mod_t(
        &self,
        acc: &mut DevicePoly,
        out: &mut DevicePoly,
        rescale: bool,
        t: u64,
    ) -> Result<()> {
        self.mod_down_any(acc, out, rescale, None, t, None, Addend::Ntt)
    }

    fn relinearize_mod_t(
        &self,
        c: DevicePoly,
        relin_key: &DevicePoly,
        rescale: bool,
        t: u64,
    ) -> Result<DevicePoly> {
        self.relinearize_from(c, relin_key, rescale, t, None, Addend::Ntt)
    }

    fn tensor_scale_round_relin(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        tables: &ScaleRoundTables,
        relin_key: &DevicePoly,
    ) -> Result<DevicePoly> {
        // The product's third component goes to mod_up in coefficient form, before any NTT of
        // the product.
        let c = self.tensor_scale_round_coeff(a, b, tables)?;
        self.relinearize_from_coeff(c, relin_key)
    }

    fn tensor_scale_round_coeff(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        tables: &ScaleRoundTables,
    ) -> Result<DevicePoly> {
        self.check_scale_round_inputs(a, b, tables)?;
        self.tensor_scale_round_impl(a, b, tables, false)
    }

    fn relinearize_from_coeff(&self, c: DevicePoly, relin_key: &DevicePoly) -> Result<DevicePoly> {
        self.check(&c)?;
        if c.shape.components != 3 || c.shape.extended {
            return Err(shape_err(
                "relinearize: a 3-component buffer over Q is needed",
            ));
        }
        let level = c.shape.level;
        // c_2's coefficient form prescaled takes the place of mod_up's inverse NTT
        // (`relinearize_from` with `coeffs`). Where mod_down converts or lifts on load, c_0 and
        // c_1 stay in coefficient form and reach the result through that first pass
        // (`Addend::Coefficients`); elsewhere they go to NTT form first.
        let coeffs = self.scratch(Self::mod_up_coeffs_shape(level))?;
        let all = Self::q_only(c.limbs(self.s()), 0, level as u32 + 1);
        self.mod_up_prescale(all.components(2, 1), &coeffs, level)?;
        let addend = match self.mod_down_adds_coefficients() {
            true => Addend::Coefficients,
            false => {
                kernels::ntt::forward(&self.cx(), all.components(0, 2))?;
                Addend::Ntt
            }
        };
        self.relinearize_from(c, relin_key, false, 1, Some(coeffs), addend)
    }

    fn rotate_hoisted_mod_t(
        &self,
        c: &DevicePoly,
        keys: &[(u64, &DevicePoly)],
        t: u64,
    ) -> Result<Vec<DevicePoly>> {
        let level = c.shape.level;
        if let Some((g, _)) = keys.iter().find(|(g, _)| g.is_multiple_of(2)) {
            return Err(shape_err(format!("rotate: bad Galois element {g}")));
        }
        // Scratch digits and one scratch accumulator reused by every rotation (stream order),
        // alive until the last mod_down is enqueued.
        let mut ext = self.scratch(self.mod_up_shape(c, 1)?)?;
        let mut acc = self.scratch(Self::acc_shape(&ext))?;
        // One rotation fuses mod_up's last NTT pass with its key product where that applies and
        // starts its mod_down on the side stream; several share the NTT-form digits (hoisting).
        if let [(g, key)] = keys {
            let pending =
                self.mod_up_and_product(c, 1, key, Some(*g), &mut ext, &mut acc, None, None, None)?;
            let mut out = self.alloc_zero_inactive(Shape {
                components: 2,
                level,
                extended: false,
            })?;
            self.mod_down_any(
                &acc,
                &mut out,
                false,
                Some((c, *g)),
                t,
                pending,
                Addend::Ntt,
            )?;
            return Ok(vec![out]);
        }
        self.mod_up_into(c, 1, &mut ext)?;
        self.hoisted_rotations(c, &ext, acc, keys, t)
    }
}
