//! [`AnyBackend`]: the backend chosen at run time, the GPU when one is usable and otherwise the
//! CPU, so that one binary runs everywhere without recompiling.
//!
//! Scheme code stays generic over [`Backend`]; `Context::with_backend(params,
//! AnyBackend::auto(ring))` binds it to whichever device this machine has. Buffers are
//! [`AnyPoly`] values that remember where they live: handing a host buffer to the CUDA side (or
//! the reverse) is an [`Error::DeviceMismatch`], never a
//! silent copy. Every method forwards to the chosen backend, overrides included, so results are
//! the bits of that backend (and the two backends' bits are the same by construction).

use crate::backend::CudaBackend;
use crate::device::Device;
use crate::poly::DevicePoly;
use fhe_math::Error;
use fhe_math::Result;
use fhe_math::backend::Backend;
use fhe_math::cpu::CpuBackend;
use fhe_math::crt_decode::{CrtDecoder, DecodeMode, NoiseFraction};
use fhe_math::ntt::NttTable;
use fhe_math::poly::{RnsPoly, Shape};
use fhe_math::ring::RingContext;
use fhe_math::sampler::{Domain, Seed};
use fhe_math::scale_round::ScaleRoundTables;
use std::sync::Arc;

/// Environment variable read by [`AnyBackend::auto`]: `cpu` forces the CPU backend, `cuda`
/// requires the GPU (falling back is then an error of [`AnyBackend::from_env`]); unset or `auto`
/// picks the GPU when one is usable.
pub const BACKEND_ENV: &str = "FHE_BACKEND";

/// A backend selected at run time: the CPU backend or the CUDA backend.
#[derive(Clone, Debug)]
pub enum AnyBackend {
    /// Host memory, rayon over limbs ([`CpuBackend`]).
    Cpu(CpuBackend),
    /// A CUDA device ([`CudaBackend`]).
    Cuda(CudaBackend),
}

/// A buffer of an [`AnyBackend`]: host memory or device memory.
#[derive(Debug)]
pub enum AnyPoly {
    /// A host buffer of the CPU backend.
    Cpu(RnsPoly),
    /// A device buffer of the CUDA backend.
    Cuda(DevicePoly),
}

impl AnyPoly {
    /// Where the buffer lives: `"cpu"` or `"cuda"`.
    pub fn device_kind(&self) -> &'static str {
        match self {
            AnyPoly::Cpu(_) => "cpu",
            AnyPoly::Cuda(_) => "cuda",
        }
    }
}

impl AnyBackend {
    /// The CPU backend for `ring`.
    pub fn cpu(ring: Arc<RingContext>) -> Self {
        AnyBackend::Cpu(CpuBackend::new(ring))
    }

    /// The CUDA backend for `ring` on device `ordinal`, the process-wide [`Device::shared`]
    /// (opened and its kernels compiled on first use, so that no later call waits for NVRTC).
    /// Errors when there is no driver, no such device, no NVRTC, or a kernel does not compile.
    pub fn cuda(ring: Arc<RingContext>, ordinal: usize) -> crate::Result<Self> {
        Ok(AnyBackend::Cuda(CudaBackend::new(
            Device::shared(ordinal)?,
            ring,
        )?))
    }

    /// The GPU (device 0) when one is usable, else the CPU; [`BACKEND_ENV`]`=cpu` forces the
    /// CPU. [`AnyBackend::auto_explained`] also says why the GPU was not taken.
    pub fn auto(ring: Arc<RingContext>) -> Self {
        Self::auto_explained(ring).0
    }

    /// [`AnyBackend::auto`], with the reason the CPU was chosen: `None` for the GPU or when
    /// [`BACKEND_ENV`]`=cpu` asked for the CPU, else the error that made the GPU unusable (no
    /// driver, no device, no NVRTC, a kernel that does not compile).
    pub fn auto_explained(ring: Arc<RingContext>) -> (Self, Option<crate::Error>) {
        let forced_cpu = std::env::var(BACKEND_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("cpu"));
        if forced_cpu {
            return (Self::cpu(ring), None);
        }
        match Self::cuda(ring.clone(), 0) {
            Ok(b) => (b, None),
            Err(e) => (Self::cpu(ring), Some(e)),
        }
    }

    /// Like [`AnyBackend::auto`], but [`BACKEND_ENV`]`=cuda` makes a missing GPU an error
    /// instead of a fall-back to the CPU; any other value than `cpu`, `cuda`, `auto` or unset
    /// is an error.
    pub fn from_env(ring: Arc<RingContext>) -> crate::Result<Self> {
        match std::env::var(BACKEND_ENV).ok().as_deref() {
            None | Some("") | Some("auto") => Ok(Self::auto(ring)),
            Some("cpu") => Ok(Self::cpu(ring)),
            Some("cuda") => Self::cuda(ring, 0),
            Some(other) => Err(crate::Error::Unsupported {
                what: format!("{BACKEND_ENV}={other} (expected cpu, cuda or auto)"),
            }),
        }
    }

    /// Whether the computation runs on a GPU.
    pub fn is_gpu(&self) -> bool {
        matches!(self, AnyBackend::Cuda(_))
    }

    /// The CUDA backend, when that is the choice.
    pub fn as_cuda(&self) -> Option<&CudaBackend> {
        match self {
            AnyBackend::Cuda(b) => Some(b),
            AnyBackend::Cpu(_) => None,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            AnyBackend::Cpu(_) => "cpu",
            AnyBackend::Cuda(_) => "cuda",
        }
    }

    fn mismatch(&self, p: &AnyPoly) -> Error {
        Error::DeviceMismatch {
            backend: self.kind(),
            buffer: p.device_kind(),
        }
    }
}

/// Unwraps an [`AnyPoly`] reference for one side of the dispatch.
trait Side: Sized {
    type Cpu;
    type Cuda;
    fn cpu(self, be: &AnyBackend) -> Result<Self::Cpu>;
    fn cuda(self, be: &AnyBackend) -> Result<Self::Cuda>;
}

impl<'a> Side for &'a AnyPoly {
    type Cpu = &'a RnsPoly;
    type Cuda = &'a DevicePoly;
    fn cpu(self, be: &AnyBackend) -> Result<&'a RnsPoly> {
        match self {
            AnyPoly::Cpu(p) => Ok(p),
            other => Err(be.mismatch(other)),
        }
    }
    fn cuda(self, be: &AnyBackend) -> Result<&'a DevicePoly> {
        match self {
            AnyPoly::Cuda(p) => Ok(p),
            other => Err(be.mismatch(other)),
        }
    }
}

impl<'a> Side for &'a mut AnyPoly {
    type Cpu = &'a mut RnsPoly;
    type Cuda = &'a mut DevicePoly;
    fn cpu(self, be: &AnyBackend) -> Result<&'a mut RnsPoly> {
        match self {
            AnyPoly::Cpu(p) => Ok(p),
            other => Err(be.mismatch(other)),
        }
    }
    fn cuda(self, be: &AnyBackend) -> Result<&'a mut DevicePoly> {
        match self {
            AnyPoly::Cuda(p) => Ok(p),
            other => Err(be.mismatch(other)),
        }
    }
}

/// `dispatch!(self, (a, b) => b.method(a, b))`: runs the body on the chosen backend `be` with
/// the named buffers unwrapped to that backend's type (a mismatch is an error). With `new`
/// first, the body's `Ok` buffer is wrapped back into [`AnyPoly`].
macro_rules! dispatch {
    ($self:ident, ($($p:ident),*) => $be:ident . $($body:tt)*) => {
        match $self {
            AnyBackend::Cpu($be) => {
                $(let $p = Side::cpu($p, $self)?;)*
                $be.$($body)*
            }
            AnyBackend::Cuda($be) => {
                $(let $p = Side::cuda($p, $self)?;)*
                $be.$($body)*
            }
        }
    };
    (new $self:ident, ($($p:ident),*) => $be:ident . $($body:tt)*) => {
        match $self {
            AnyBackend::Cpu($be) => {
                $(let $p = Side::cpu($p, $self)?;)*
                $be.$($body)*.map(AnyPoly::Cpu)
            }
            AnyBackend::Cuda($be) => {
                $(let $p = Side::cuda($p, $self)?;)*
                $be.$($body)*.map(AnyPoly::Cuda)
            }
        }
    };
}

impl Backend for AnyBackend {
    type Poly = AnyPoly;

    fn ring(&self) -> &Arc<RingContext> {
        dispatch!(self, () => be.ring())
    }

    fn device_name(&self) -> String {
        dispatch!(self, () => be.device_name())
    }

    fn shape(&self, p: &AnyPoly) -> Shape {
        match p {
            AnyPoly::Cpu(p) => p.shape(),
            AnyPoly::Cuda(p) => p.shape(),
        }
    }

    fn zeros(&self, shape: Shape) -> Result<AnyPoly> {
        dispatch!(new self, () => be.zeros(shape))
    }

    fn upload(&self, host: &RnsPoly) -> Result<AnyPoly> {
        dispatch!(new self, () => be.upload(host))
    }

    fn download(&self, p: &AnyPoly) -> Result<RnsPoly> {
        dispatch!(self, (p) => be.download(p))
    }

    fn upload_lifted(&self, coeffs: &[i128], level: usize) -> Result<AnyPoly> {
        dispatch!(new self, () => be.upload_lifted(coeffs, level))
    }

    fn upload_lifted_i64(&self, coeffs: &[i64], level: usize) -> Result<AnyPoly> {
        dispatch!(new self, () => be.upload_lifted_i64(coeffs, level))
    }

    fn download_centered_q0(&self, p: &AnyPoly) -> Result<Vec<Option<i64>>> {
        dispatch!(self, (p) => be.download_centered_q0(p))
    }

    fn decode_mod_t(
        &self,
        p: &AnyPoly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        dispatch!(self, (p) => be.decode_mod_t(p, decoder, mode))
    }

    fn upload_lifted_intt_mod_t(
        &self,
        values: &[u64],
        ntt: &NttTable,
        level: usize,
    ) -> Result<(AnyPoly, Vec<u64>)> {
        match self {
            AnyBackend::Cpu(be) => be
                .upload_lifted_intt_mod_t(values, ntt, level)
                .map(|(p, m)| (AnyPoly::Cpu(p), m)),
            AnyBackend::Cuda(be) => be
                .upload_lifted_intt_mod_t(values, ntt, level)
                .map(|(p, m)| (AnyPoly::Cuda(p), m)),
        }
    }

    fn decode_mod_t_ntt(
        &self,
        p: &AnyPoly,
        decoder: &CrtDecoder,
        mode: DecodeMode,
        ntt: &NttTable,
    ) -> Result<(Vec<u64>, NoiseFraction)> {
        dispatch!(self, (p) => be.decode_mod_t_ntt(p, decoder, mode, ntt))
    }

    fn duplicate(&self, p: &AnyPoly) -> Result<AnyPoly> {
        dispatch!(new self, (p) => be.duplicate(p))
    }

    fn set_level(&self, p: &mut AnyPoly, level: usize) -> Result<()> {
        dispatch!(self, (p) => be.set_level(p, level))
    }

    fn truncate_components(&self, p: &mut AnyPoly, components: usize) -> Result<()> {
        dispatch!(self, (p) => be.truncate_components(p, components))
    }

    fn zeroize(&self, p: &mut AnyPoly) {
        match (self, p) {
            (AnyBackend::Cpu(be), AnyPoly::Cpu(p)) => be.zeroize(p),
            (AnyBackend::Cuda(be), AnyPoly::Cuda(p)) => be.zeroize(p),
            // A buffer of the other side is erased by that side's code: on the host in place,
            // on the device through its own stream (the buffer keeps it).
            (_, AnyPoly::Cpu(p)) => p.raw_mut().fill(0),
            (_, AnyPoly::Cuda(p)) => p.zeroize_on_own_stream(),
        }
    }

    fn add_assign(&self, a: &mut AnyPoly, b: &AnyPoly) -> Result<()> {
        dispatch!(self, (a, b) => be.add_assign(a, b))
    }

    fn sub_assign(&self, a: &mut AnyPoly, b: &AnyPoly) -> Result<()> {
        dispatch!(self, (a, b) => be.sub_assign(a, b))
    }

    fn add_new(&self, a: &AnyPoly, b: &AnyPoly, subtract: bool) -> Result<AnyPoly> {
        dispatch!(new self, (a, b) => be.add_new(a, b, subtract))
    }

    fn add_component_assign(&self, a: &mut AnyPoly, component: usize, b: &AnyPoly) -> Result<()> {
        dispatch!(self, (a, b) => be.add_component_assign(a, component, b))
    }

    fn copy_component(
        &self,
        src: &AnyPoly,
        src_component: usize,
        dst: &mut AnyPoly,
        dst_component: usize,
    ) -> Result<()> {
        dispatch!(self, (src, dst) => be.copy_component(src, src_component, dst, dst_component))
    }

    fn neg_assign(&self, a: &mut AnyPoly) -> Result<()> {
        dispatch!(self, (a) => be.neg_assign(a))
    }

    fn mul_plain_assign(&self, a: &mut AnyPoly, b: &AnyPoly) -> Result<()> {
        dispatch!(self, (a, b) => be.mul_plain_assign(a, b))
    }

    fn mul_plain_acc(&self, acc: &mut AnyPoly, a: &AnyPoly, b: &AnyPoly) -> Result<()> {
        dispatch!(self, (acc, a, b) => be.mul_plain_acc(acc, a, b))
    }

    fn mul_scalar_assign(&self, a: &mut AnyPoly, scalars: &[u64]) -> Result<()> {
        dispatch!(self, (a) => be.mul_scalar_assign(a, scalars))
    }

    fn add_scalar_assign(&self, a: &mut AnyPoly, component: usize, scalars: &[u64]) -> Result<()> {
        dispatch!(self, (a) => be.add_scalar_assign(a, component, scalars))
    }

    fn ntt(&self, a: &mut AnyPoly) -> Result<()> {
        dispatch!(self, (a) => be.ntt(a))
    }

    fn intt(&self, a: &mut AnyPoly) -> Result<()> {
        dispatch!(self, (a) => be.intt(a))
    }

    fn tensor(&self, a: &AnyPoly, b: &AnyPoly) -> Result<AnyPoly> {
        dispatch!(new self, (a, b) => be.tensor(a, b))
    }

    fn automorphism_into(
        &self,
        a: &AnyPoly,
        galois: u64,
        out: &mut AnyPoly,
        mapped: usize,
    ) -> Result<()> {
        dispatch!(self, (a, out) => be.automorphism_into(a, galois, out, mapped))
    }

    fn rescale(&self, a: &mut AnyPoly) -> Result<()> {
        dispatch!(self, (a) => be.rescale(a))
    }

    fn mod_up(&self, c: &AnyPoly, component: usize) -> Result<AnyPoly> {
        dispatch!(new self, (c) => be.mod_up(c, component))
    }

    fn key_product(
        &self,
        ext: &AnyPoly,
        key: &AnyPoly,
        galois: Option<u64>,
        acc: &mut AnyPoly,
    ) -> Result<()> {
        dispatch!(self, (ext, key, acc) => be.key_product(ext, key, galois, acc))
    }

    fn mod_down_into(&self, acc: &AnyPoly, out: &mut AnyPoly, rescale: bool) -> Result<()> {
        dispatch!(self, (acc, out) => be.mod_down_into(acc, out, rescale))
    }

    fn mod_down_into_mod_t(
        &self,
        acc: &mut AnyPoly,
        out: &mut AnyPoly,
        rescale: bool,
        t: u64,
    ) -> Result<()> {
        dispatch!(self, (acc, out) => be.mod_down_into_mod_t(acc, out, rescale, t))
    }

    fn rescale_mod_t(&self, a: &mut AnyPoly, t: u64) -> Result<()> {
        dispatch!(self, (a) => be.rescale_mod_t(a, t))
    }

    fn rescaled_mod_t(&self, a: &AnyPoly, t: u64) -> Result<AnyPoly> {
        dispatch!(new self, (a) => be.rescaled_mod_t(a, t))
    }

    fn sample_uniform(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<AnyPoly> {
        dispatch!(new self, () => be.sample_uniform(seed, domain, poly_index, shape))
    }

    fn sample_ternary(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<AnyPoly> {
        dispatch!(new self, () => be.sample_ternary(seed, domain, poly_index, shape))
    }

    fn sample_gaussian(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<AnyPoly> {
        dispatch!(new self, () => be.sample_gaussian(seed, domain, poly_index, shape))
    }

    fn synchronize(&self) -> Result<()> {
        dispatch!(self, () => be.synchronize())
    }

    fn key_switch(
        &self,
        c: &AnyPoly,
        component: usize,
        key: &AnyPoly,
        galois: Option<u64>,
    ) -> Result<AnyPoly> {
        dispatch!(new self, (c, key) => be.key_switch(c, component, key, galois))
    }

    fn tensor_scale_round(
        &self,
        a: &AnyPoly,
        b: &AnyPoly,
        tables: &ScaleRoundTables,
    ) -> Result<AnyPoly> {
        dispatch!(new self, (a, b) => be.tensor_scale_round(a, b, tables))
    }

    fn mul_relin(
        &self,
        a: &AnyPoly,
        b: &AnyPoly,
        relin_key: &AnyPoly,
        rescale: bool,
    ) -> Result<AnyPoly> {
        dispatch!(new self, (a, b, relin_key) => be.mul_relin(a, b, relin_key, rescale))
    }

    fn tensor_scale_round_relin(
        &self,
        a: &AnyPoly,
        b: &AnyPoly,
        tables: &ScaleRoundTables,
        relin_key: &AnyPoly,
    ) -> Result<AnyPoly> {
        dispatch!(new self, (a, b, relin_key) => be.tensor_scale_round_relin(a, b, tables, relin_key))
    }

    fn tensor_scale_round_coeff(
        &self,
        a: &AnyPoly,
        b: &AnyPoly,
        tables: &ScaleRoundTables,
    ) -> Result<AnyPoly> {
        dispatch!(new self, (a, b) => be.tensor_scale_round_coeff(a, b, tables))
    }

    fn relinearize_from_coeff(&self, c: AnyPoly, relin_key: &AnyPoly) -> Result<AnyPoly> {
        self.on_owned(
            c,
            relin_key,
            |be, c, k| be.relinearize_from_coeff(c, k),
            |be, c, k| be.relinearize_from_coeff(c, k),
        )
    }

    fn mul_relin_mod_t(
        &self,
        a: &AnyPoly,
        b: &AnyPoly,
        relin_key: &AnyPoly,
        rescale: bool,
        t: u64,
    ) -> Result<AnyPoly> {
        dispatch!(new self, (a, b, relin_key) => be.mul_relin_mod_t(a, b, relin_key, rescale, t))
    }

    fn relinearize(&self, c: AnyPoly, relin_key: &AnyPoly, rescale: bool) -> Result<AnyPoly> {
        self.on_owned(
            c,
            relin_key,
            |be, c, k| be.relinearize(c, k, rescale),
            |be, c, k| be.relinearize(c, k, rescale),
        )
    }

    fn relinearize_mod_t(
        &self,
        c: AnyPoly,
        relin_key: &AnyPoly,
        rescale: bool,
        t: u64,
    ) -> Result<AnyPoly> {
        self.on_owned(
            c,
            relin_key,
            |be, c, k| be.relinearize_mod_t(c, k, rescale, t),
            |be, c, k| be.relinearize_mod_t(c, k, rescale, t),
        )
    }

    fn rotate_hoisted(&self, c: &AnyPoly, keys: &[(u64, &AnyPoly)]) -> Result<Vec<AnyPoly>> {
        self.on_keys(
            c,
            keys,
            |be, c, k| be.rotate_hoisted(c, k),
            |be, c, k| be.rotate_hoisted(c, k),
        )
    }

    fn rotate_hoisted_mod_t(
        &self,
        c: &AnyPoly,
        keys: &[(u64, &AnyPoly)],
        t: u64,
    ) -> Result<Vec<AnyPoly>> {
        self.on_keys(
            c,
            keys,
            |be, c, k| be.rotate_hoisted_mod_t(c, k, t),
            |be, c, k| be.rotate_hoisted_mod_t(c, k, t),
        )
    }
}

impl AnyBackend {
    /// Runs the chosen side's `cpu` or `cuda` on an owned buffer and a key (what `dispatch!`
    /// does for borrowed buffers).
    fn on_owned(
        &self,
        c: AnyPoly,
        key: &AnyPoly,
        cpu: impl FnOnce(&CpuBackend, RnsPoly, &RnsPoly) -> Result<RnsPoly>,
        cuda: impl FnOnce(&CudaBackend, DevicePoly, &DevicePoly) -> Result<DevicePoly>,
    ) -> Result<AnyPoly> {
        match (self, c) {
            (AnyBackend::Cpu(be), AnyPoly::Cpu(c)) => {
                cpu(be, c, Side::cpu(key, self)?).map(AnyPoly::Cpu)
            }
            (AnyBackend::Cuda(be), AnyPoly::Cuda(c)) => {
                cuda(be, c, Side::cuda(key, self)?).map(AnyPoly::Cuda)
            }
            (_, c) => Err(self.mismatch(&c)),
        }
    }

    /// Runs the chosen side's `cpu` or `cuda` on a buffer and a list of (Galois element, key).
    #[allow(clippy::type_complexity)]
    fn on_keys(
        &self,
        c: &AnyPoly,
        keys: &[(u64, &AnyPoly)],
        cpu: impl FnOnce(&CpuBackend, &RnsPoly, &[(u64, &RnsPoly)]) -> Result<Vec<RnsPoly>>,
        cuda: impl FnOnce(&CudaBackend, &DevicePoly, &[(u64, &DevicePoly)]) -> Result<Vec<DevicePoly>>,
    ) -> Result<Vec<AnyPoly>> {
        match self {
            AnyBackend::Cpu(be) => {
                let keys = keys
                    .iter()
                    .map(|&(g, k)| Ok((g, Side::cpu(k, self)?)))
                    .collect::<Result<Vec<_>>>()?;
                let out = cpu(be, Side::cpu(c, self)?, &keys)?;
                Ok(out.into_iter().map(AnyPoly::Cpu).collect())
            }
            AnyBackend::Cuda(be) => {
                let keys = keys
                    .iter()
                    .map(|&(g, k)| Ok((g, Side::cuda(k, self)?)))
                    .collect::<Result<Vec<_>>>()?;
                let out = cuda(be, Side::cuda(c, self)?, &keys)?;
                Ok(out.into_iter().map(AnyPoly::Cuda).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring() -> Arc<RingContext> {
        let q = fhe_math::primes::ntt_primes(50, 1 << 11, 3, &[]).unwrap();
        let p = fhe_math::primes::ntt_primes(55, 1 << 11, 1, &q).unwrap();
        RingContext::new(1 << 10, &q, &p, vec![0..2, 2..3]).unwrap()
    }

    #[test]
    fn auto_picks_the_gpu_exactly_when_cuda_works() {
        let r = ring();
        let gpu_usable = AnyBackend::cuda(r.clone(), 0).is_ok();
        let forced_cpu = std::env::var(BACKEND_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("cpu"));
        assert_eq!(
            AnyBackend::auto(r.clone()).is_gpu(),
            gpu_usable && !forced_cpu
        );
        // The reason is given exactly when a usable-looking request fell back.
        let (b, why) = AnyBackend::auto_explained(r);
        assert_eq!(why.is_some(), !b.is_gpu() && !forced_cpu);
    }

    #[test]
    fn backend_and_buffers_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<AnyBackend>();
        check::<AnyPoly>();
    }

    #[test]
    fn cpu_side_gives_the_cpu_backend_bits() {
        let r = ring();
        let any = AnyBackend::cpu(r.clone());
        let cpu = CpuBackend::new(r);
        let seed = Seed([7u8; 32]);
        let shape = Shape {
            components: 2,
            level: 2,
            extended: false,
        };
        let a = any.sample_uniform(&seed, Domain::Other, 0, shape).unwrap();
        let b = cpu.sample_uniform(&seed, Domain::Other, 0, shape).unwrap();
        let prod_any = any.download(&any.tensor(&a, &a).unwrap()).unwrap();
        let prod_cpu = cpu.tensor(&b, &b).unwrap();
        assert_eq!(prod_any, prod_cpu);
        // The owned-buffer and key-list forwards (random data stands in for the keys).
        let key_shape = Shape {
            components: 4,
            level: 2,
            extended: true,
        };
        let ka = any
            .sample_uniform(&seed, Domain::Other, 1, key_shape)
            .unwrap();
        let kc = cpu
            .sample_uniform(&seed, Domain::Other, 1, key_shape)
            .unwrap();
        let ta = any.tensor(&a, &a).unwrap();
        let tc = cpu.tensor(&b, &b).unwrap();
        let ra = any.relinearize(ta, &ka, false).unwrap();
        assert_eq!(
            any.download(&ra).unwrap(),
            cpu.relinearize(tc, &kc, false).unwrap()
        );
        let rot_any = any.rotate_hoisted(&a, &[(3, &ka), (5, &ka)]).unwrap();
        let rot_cpu = cpu.rotate_hoisted(&b, &[(3, &kc), (5, &kc)]).unwrap();
        for (x, y) in rot_any.iter().zip(&rot_cpu) {
            assert_eq!(&any.download(x).unwrap(), y);
        }
        assert_eq!(any.shape(&a), shape);
        assert!(!any.is_gpu());
        assert!(any.as_cuda().is_none());
    }
}
