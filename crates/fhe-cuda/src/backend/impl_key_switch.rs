//! [`KeySwitchBackend`] on the device. The parts and the fused key switch are here; their
//! kernels' plumbing (mod_up with the fused key product, `mod_down_any`, hoisted rotations) is
//! in `keyswitch/`. Relinearization, multiply-and-relinearize and hoisted rotation forward to
//! the `t`-preserving bodies of [`IntegerBackend`] (`impl_integer.rs`) with `t = 1`, the one
//! fused path for CKKS and BGV alike.

use super::*;

impl KeySwitchBackend for CudaBackend {
    fn mod_up(&self, c: &DevicePoly, component: usize) -> Result<DevicePoly> {
        // Returned to the caller: inactive slots zero, as on the CPU.
        let mut ext = self.alloc_zero_inactive(self.mod_up_shape(c, component)?)?;
        self.mod_up_into(c, component, &mut ext)?;
        Ok(ext)
    }

    fn key_product(
        &self,
        ext: &DevicePoly,
        key: &DevicePoly,
        galois: Option<u64>,
        acc: &mut DevicePoly,
    ) -> Result<()> {
        self.check(ext)?;
        self.check(key)?;
        self.check(acc)?;
        let digits = ext.shape.components;
        if !acc.shape.extended
            || acc.shape.components != 2
            || !key.shape.extended
            || key.shape.components < 2 * digits
        {
            return Err(shape_err(
                "key_product: accumulator, digits or key have the wrong shape",
            ));
        }
        check_covers(acc, ext, "key_product")?;
        check_covers(acc, key, "key_product")?;
        self.key_product_impl(&self.cx(), ext, key, galois, acc, false)
    }

    fn mod_down_into(&self, acc: &DevicePoly, out: &mut DevicePoly, rescale: bool) -> Result<()> {
        self.mod_down_impl(acc, out, rescale)
    }

    fn key_switch(
        &self,
        c: &DevicePoly,
        component: usize,
        key: &DevicePoly,
        galois: Option<u64>,
    ) -> Result<DevicePoly> {
        // The default body with scratch digits and accumulator, and the fused last NTT pass +
        // key product where it applies.
        if galois.is_some_and(|g| g.is_multiple_of(2)) {
            return Err(shape_err("key_switch: bad Galois element"));
        }
        let mut ext = self.scratch(self.mod_up_shape(c, component)?)?;
        let mut acc = self.scratch(Self::acc_shape(&ext))?;
        let pending = self.mod_up_and_product(
            c, component, key, galois, &mut ext, &mut acc, None, None, None,
        )?;
        let mut out = self.zeros(Shape {
            components: 2,
            level: c.shape.level,
            extended: false,
        })?;
        self.mod_down_any(&acc, &mut out, false, None, 1, pending, Addend::Ntt)?;
        Ok(out)
    }

    fn relinearize(
        &self,
        c: DevicePoly,
        relin_key: &DevicePoly,
        rescale: bool,
    ) -> Result<DevicePoly> {
        self.relinearize_mod_t(c, relin_key, rescale, 1)
    }

    fn mul_relin(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        relin_key: &DevicePoly,
        rescale: bool,
    ) -> Result<DevicePoly> {
        self.mul_relin_mod_t(a, b, relin_key, rescale, 1)
    }

    fn rotate_hoisted(
        &self,
        c: &DevicePoly,
        keys: &[(u64, &DevicePoly)],
    ) -> Result<Vec<DevicePoly>> {
        self.rotate_hoisted_mod_t(c, keys, 1)
    }
}
