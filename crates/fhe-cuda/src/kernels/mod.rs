//! Kernel sources (one module per `kernels/*.cu` file, embedded at build time with local
//! `#include`s inlined by `build.rs`), their NVRTC compilation, and the launch wrappers.
//!
//! Every module is compiled with `--device-int128 -std=c++17 --gpu-architecture=sm_XY` for the
//! device's own compute capability, at first use or by [`crate::Device::warm_up`], and cached per
//! device.

pub mod automorphism;
pub mod decode;
pub mod elementwise;
pub mod keyswitch;
pub mod ntt;
pub mod sampler;
pub mod scale_round;

use crate::error::{Error, Result};
use cudarc::driver::{DeviceRepr, LaunchConfig};
use cudarc::nvrtc::{CompileOptions, Ptx};

/// Names of all kernel modules (the `.cu` file stems).
pub const MODULES: [&str; 7] = [
    "ntt",
    "elementwise",
    "keyswitch",
    "automorphism",
    "sampler",
    "scale_round",
    "decode",
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
        _ => return None,
    })
}

/// Whether the NVRTC library can be loaded.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen libnvrtc; no symbol is called.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// The NVRTC options used for a module compiled for `arch` (e.g. `"sm_90"`).
pub fn compile_options(arch: &str) -> Vec<String> {
    vec![
        "--device-int128".into(),
        "-std=c++17".into(),
        format!("--gpu-architecture={arch}"),
    ]
}

/// Compiles a kernel module with NVRTC for `arch` (e.g. `"sm_90"`); needs only libnvrtc, no GPU.
pub fn compile(module: &str, arch: &str) -> Result<Ptx> {
    let src = source(module).ok_or_else(|| Error::UnknownModule {
        module: module.into(),
    })?;
    if !nvrtc_present() {
        return Err(Error::NoNvrtc);
    }
    let mut options = compile_options(arch);
    // Tuning runs only: extra NVRTC options for one module, e.g.
    // FHE_NVRTC_OPTS_NTT="--maxrregcount=40" (whitespace-separated).
    if let Ok(extra) = std::env::var(format!("FHE_NVRTC_OPTS_{}", module.to_uppercase())) {
        options.extend(extra.split_whitespace().map(String::from));
    }
    let opts = CompileOptions {
        options,
        name: Some(format!("{module}.cu")),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(src, opts).map_err(|e| match e {
        cudarc::nvrtc::CompileError::CompileError { log, .. } => Error::Compile {
            module: module.into(),
            log: log.to_string_lossy().into_owned(),
        },
        other => Error::Compile {
            module: module.into(),
            log: format!("{other:?}"),
        },
    })
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

/// Launches a kernel: `launch!(stream, function, config, args...)`, each argument a reference.
macro_rules! launch {
    ($stream:expr, $f:expr, $cfg:expr, $($a:expr),* $(,)?) => {{
        use cudarc::driver::PushKernelArg as _;
        let mut builder = $stream.launch_builder(&$f);
        $( builder.arg($a); )*
        // SAFETY: every call site pushes exactly the arguments of the `extern "C"` kernel it
        // names, in order and with the matching types (u64 pointers, u32 scalars, LimbSet).
        unsafe { builder.launch($cfg) }.map(|_| ()).map_err($crate::error::Error::driver("kernel launch"))
    }};
}
pub(crate) use launch;

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
