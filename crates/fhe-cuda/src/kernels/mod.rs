//! Kernel sources (one module per `kernels/*.cu` file, embedded at build time with local
//! `#include`s inlined by `build.rs`), their NVRTC compilation, and the launch wrappers.
//!
//! Every module is compiled with `--device-int128 -std=c++17 --gpu-architecture=sm_XY` for the
//! device's own compute capability into a CUBIN ([`nvrtc`]), at first use or by
//! [`crate::Device::warm_up`], kept per device and stored in the on-disk
//! [`crate::kernel_cache`], so that later processes skip NVRTC.

pub mod automorphism;
pub mod blind_rotate;
mod compile;
pub mod decode;
pub mod elementwise;
pub mod keyprod;
pub mod keyswitch;
pub mod lincomb;
pub mod mma;
pub mod moddown_finish;
pub mod ntt;
pub mod nvrtc;
pub mod rescale;
pub mod rns_blind_rotate;
pub mod sampler;
pub mod scale_round;
pub mod tensor;

use crate::error::{Error, Result};
pub use compile::{Cubin, Unit, cached_or_compiled, compile, compile_options, compile_unit, units};
use cudarc::driver::{CudaFunction, CudaStream, DeviceRepr, LaunchConfig};
use std::sync::OnceLock;

/// Names of all kernel modules (the `.cu` file stems).
pub const MODULES: [&str; 10] = [
    "ntt",
    "elementwise",
    "keyswitch",
    "automorphism",
    "sampler",
    "scale_round",
    "decode",
    "lincomb",
    "blind_rotate",
    "rns_blind_rotate",
];

/// The self-contained source of a kernel module.
pub fn source(module: &str) -> Option<&'static str> {
    Some(match module {
        "ntt" => include_str!(concat!(env!("OUT_DIR"), "/ntt.cu")),
        "elementwise" => include_str!(concat!(env!("OUT_DIR"), "/elementwise.cu")),
        "keyswitch" => include_str!(concat!(env!("OUT_DIR"), "/keyswitch.cu")),
        "automorphism" => include_str!(concat!(env!("OUT_DIR"), "/automorphism.cu")),
        "sampler" => include_str!(concat!(env!("OUT_DIR"), "/sampler.cu")),
        "scale_round" => include_str!(concat!(env!("OUT_DIR"), "/scale_round.cu")),
        "decode" => include_str!(concat!(env!("OUT_DIR"), "/decode.cu")),
        "lincomb" => include_str!(concat!(env!("OUT_DIR"), "/lincomb.cu")),
        "blind_rotate" => include_str!(concat!(env!("OUT_DIR"), "/blind_rotate.cu")),
        "rns_blind_rotate" => include_str!(concat!(env!("OUT_DIR"), "/rns_blind_rotate.cu")),
        _ => return None,
    })
}

/// Whether the NVRTC library can be loaded.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen libnvrtc; no symbol is called.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// A set of limbs of a device buffer (`[component][slot][coeff]`, `spc` slots per component):
/// components `comp_lo..comp_lo + comps`, and in each the slots `q_lo..q_lo + q_cnt` then
/// `p_lo..p_lo + p_cnt`. Mirrors `struct LimbSet` of `common.cuh`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LimbSet {
    /// Device address of the buffer.
    pub ptr: u64,
    /// Ring degree.
    pub n: u32,
    /// Slots per component of the buffer.
    pub spc: u32,
    /// First component.
    pub comp_lo: u32,
    /// Number of components.
    pub comps: u32,
    /// First `Q` slot.
    pub q_lo: u32,
    /// Number of `Q` slots.
    pub q_cnt: u32,
    /// First special slot.
    pub p_lo: u32,
    /// Number of special slots.
    pub p_cnt: u32,
}

// SAFETY: plain `repr(C)` data matching `struct LimbSet` of common.cuh (u64 then 8 u32).
unsafe impl DeviceRepr for LimbSet {}

impl LimbSet {
    /// Number of limbs in the set.
    pub fn count(&self) -> u32 {
        self.comps * (self.q_cnt + self.p_cnt)
    }

    /// The same slots restricted to components `lo..lo + comps`.
    pub fn components(mut self, lo: u32, comps: u32) -> Self {
        self.comp_lo = lo;
        self.comps = comps;
        self
    }
}

/// The distance in u64 words from device address `from` to `to` (negative when `to` is lower):
/// the kernels' per-launch offsets between buffers.
pub(crate) fn word_offset(from: u64, to: u64) -> i64 {
    (to.wrapping_sub(from) as i64) / 8
}

/// Threads per block of the element-wise launches.
pub(crate) const BLOCK: u32 = 256;

/// Grid over `items` per limb (x) and `limbs` (y).
pub(crate) fn grid(items: u32, limbs: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (items.div_ceil(BLOCK).max(1), limbs.max(1), 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Enqueues a copy of `words` u64 words from device address `src` to `dst` on `cx`'s stream.
/// The caller guarantees both ranges are inside live device buffers that outlive the copy.
pub(crate) fn copy_words(cx: &Ctx, src: u64, dst: u64, words: usize) -> crate::error::Result<()> {
    // SAFETY: cuMemcpyDtoDAsync_v2(dst, src, bytes, stream) on the caller's live ranges (see
    // above), ordered on the stream like the kernels around it.
    unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, 8 * words, cx.stream.cu_stream()) }
        .map_err(crate::error::Error::driver("device copy"))
}

/// Launches a kernel: `launch!(stream, function, config, args...)`, each argument a reference
/// to a plain value (`DeviceRepr`: u64 device addresses, u32 scalars, `repr(C)` structs), with
/// programmatic dependent launch where the device has it ([`launch_raw`]).
macro_rules! launch {
    ($stream:expr, $f:expr, $cfg:expr, $($a:expr),* $(,)?) => {{
        let mut params = [$($crate::kernels::param($a)),*];
        // SAFETY: every call site passes exactly the arguments of the `extern "C"` kernel it
        // names, in order and with the matching types (u64 pointers, u32 scalars, LimbSet);
        // `params` points at them and outlives the call.
        unsafe { $crate::kernels::launch_raw(&$stream, &$f, $cfg, &mut params) }
    }};
}
pub(crate) use launch;

/// The kernel-parameter pointer of one argument.
pub(crate) fn param<T: DeviceRepr>(x: &T) -> *mut std::ffi::c_void {
    x as *const T as *mut std::ffi::c_void
}

/// Whether launches on devices of this ordinal use programmatic dependent launch: compute
/// capability 9.0 or higher (decided once per ordinal). Measured against launches without it at
/// 8c79c7e on an H200 at N = 2^13: key switches 5–10% faster with it (2026-11-28).
fn pdl_enabled(stream: &CudaStream) -> bool {
    static BY_ORDINAL: [OnceLock<bool>; 16] = [const { OnceLock::new() }; 16];
    let decide = || {
        let major = stream.context().attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        );
        major.is_ok_and(|m| m >= 9)
    };
    match BY_ORDINAL.get(stream.context().ordinal()) {
        Some(cell) => *cell.get_or_init(decide),
        None => decide(),
    }
}

thread_local! {
    /// Set while a [`PdlOff`] guard of this thread is alive.
    static PDL_OFF_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While alive, this thread's launches go without programmatic dependent launch ([`pdl_off`]).
pub(crate) struct PdlOff(bool);

/// This thread's launches go without programmatic dependent launch until the guard drops: each
/// kernel's blocks are scheduled only once the previous kernel of its stream has completed, so
/// none sit on an SM waiting for it.
pub(crate) fn pdl_off() -> PdlOff {
    PdlOff(PDL_OFF_HERE.with(|c| c.replace(true)))
}

impl Drop for PdlOff {
    fn drop(&mut self) {
        PDL_OFF_HERE.with(|c| c.set(self.0));
    }
}

/// Launches `f` on `stream` with `cuLaunchKernelEx`. On Hopper and later the launch allows
/// programmatic stream serialization: the kernel may be scheduled while the previous kernel of
/// the stream drains, and every kernel begins with `pdl_wait()` (common.cuh), which holds it
/// until the previous grid has completed and its writes are visible. Stream order is therefore
/// kept; what overlaps is the launch latency and block scheduling with the previous tail.
///
/// # Safety
/// `params` must point at the kernel's arguments, in order and with its parameter types.
pub(crate) unsafe fn launch_raw(
    stream: &CudaStream,
    f: &CudaFunction,
    cfg: LaunchConfig,
    params: &mut [*mut std::ffi::c_void],
) -> Result<()> {
    use cudarc::driver::sys;
    let entered = crate::launch_stats::enter();
    stream
        .context()
        .bind_to_thread()
        .map_err(Error::driver("kernel launch"))?;
    // SAFETY: a zeroed attribute value is valid plain data; the field set below is the one the
    // attribute id selects.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: u32::from(pdl_enabled(stream) && !PDL_OFF_HERE.with(|c| c.get())),
    };
    let traced = crate::trace::before(stream)?;
    let driver = entered.map(|_| std::time::Instant::now());
    // SAFETY: the function handle is alive (`f` borrows its module), `config` and `attr` outlive
    // the call, and the caller guarantees `params`.
    unsafe {
        sys::cuLaunchKernelEx(
            &config,
            f.cu_function(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .map_err(Error::driver("kernel launch"))?;
    crate::launch_stats::record(f, entered, driver);
    crate::trace::after(stream, f, traced)
}

/// What every launch wrapper needs: the device (functions), the stream, and the table buffer.
pub(crate) struct Ctx<'a> {
    pub dev: &'a crate::Device,
    pub stream: &'a std::sync::Arc<cudarc::driver::CudaStream>,
    /// Device address of the table buffer.
    pub tables: u64,
    pub layout: &'a crate::tables::TableLayout,
    pub n: u32,
}

impl Ctx<'_> {
    /// Device address of table word `off`.
    pub fn t(&self, off: usize) -> u64 {
        self.tables + 8 * off as u64
    }

    /// Device address of the per-slot modulus table.
    pub fn slots(&self) -> u64 {
        self.t(self.layout.ntt.slots)
    }
}

/// A xorshift64 generator for test inputs (not for anything secret).
#[cfg(test)]
pub(crate) fn xorshift(mut s: u64) -> impl FnMut() -> u64 {
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}
