//! SM partitions by green contexts, for the key switches' two branches (an experiment:
//! `FHE_GREEN_SIDE=k` gives mod_down's side chain `k` SMs of its own and the main stream's key
//! product the rest; unset or `0`, nothing changes).
//!
//! # Why
//!
//! A key switch's side chain (the special rows' key product, their inverse NTT and the
//! conversion back to `Q`, [`crate::side`]) is a run of latency-bound launches of few limbs; the
//! main stream's key product beside it is bound by memory traffic. Sharing all the SMs, the
//! product's blocks fill them and the chain's blocks wait for room: traced, the chain runs about
//! twice as long beside the product as alone, and it ends 20–50 µs after the product. A green
//! context is a view of the device's context restricted to a set of SMs; a stream created in
//! it runs its kernels only there. So the chain gets SMs that the product cannot take, and the
//! product keeps the rest.
//!
//! # Ordering and lifetime
//!
//! Green contexts share the primary context's memory and loaded functions (the probe
//! `examples/green_probe.rs` checked both on an H100), so kernels and buffers are used as they
//! are; streams are ordered by events exactly as the side stream is. The partitions are made
//! once per process (first use) and live until it ends: a green context's derived `CUcontext`
//! must not be destroyed as an ordinary context, so its wrapper is never dropped.

use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaStream, sys};
use std::sync::{Arc, OnceLock};

/// One SM partition: its green context and a `CudaContext` wrapper of the context derived
/// from it (kept alive for the process).
pub(crate) struct Partition {
    green: sys::CUgreenCtx,
    pub ctx: Arc<CudaContext>,
}

// SAFETY: a green context handle is a driver handle usable from any thread; the driver
// synchronizes the calls made with it (stream creation only, here).
unsafe impl Send for Partition {}
// SAFETY: as above.
unsafe impl Sync for Partition {}

/// The two partitions of the device: the side chain's and the main key product's.
pub(crate) struct Green {
    pub side: Partition,
    pub main: Partition,
}

/// The SM count asked for the side chain (`FHE_GREEN_SIDE`), if any.
fn side_sms() -> Option<u32> {
    static K: OnceLock<Option<u32>> = OnceLock::new();
    *K.get_or_init(|| {
        std::env::var("FHE_GREEN_SIDE")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&k| k > 0)
    })
}

/// Whether the side chain runs on its partition (`FHE_GREEN_MODE` unset or `both`) or on the
/// whole device beside the main rows' partition (`rows`).
pub(crate) fn side_partitioned() -> bool {
    static BOTH: OnceLock<bool> = OnceLock::new();
    *BOTH.get_or_init(|| std::env::var("FHE_GREEN_MODE").map_or(true, |v| v != "rows"))
}

/// The process's partitions of device `ctx` where `FHE_GREEN_SIDE` asks for them (ordinal 0
/// only: an experiment), made at first use.
pub(crate) fn partitions(ctx: &Arc<CudaContext>) -> Result<Option<&'static Green>> {
    static GREEN: OnceLock<Option<Green>> = OnceLock::new();
    let Some(k) = side_sms() else {
        return Ok(None);
    };
    if ctx.ordinal() != 0 {
        return Ok(None);
    }
    if let Some(g) = GREEN.get() {
        return Ok(g.as_ref());
    }
    let made = make(ctx, k)?;
    ctx.bind_to_thread()
        .map_err(Error::driver("context bind"))?;
    Ok(GREEN.get_or_init(|| Some(made)).as_ref())
}

fn driver(what: &'static str) -> impl Fn(sys::CUresult) -> Result<()> {
    move |r| r.result().map_err(Error::driver(what))
}

/// Splits the device's SMs into a group of at least `k` and the remainder, with a green
/// context for each.
fn make(ctx: &Arc<CudaContext>, k: u32) -> Result<Green> {
    // SAFETY: cuDeviceGetDevResource(resource*, device, type) and
    // cuDevSmResourceSplitByCount(result*, nbGroups*, input*, remaining*, flags, minCount) on
    // zeroed plain-data out-parameters of the declared types.
    let (mut group, mut rest) = unsafe {
        let mut all: sys::CUdevResource = std::mem::zeroed();
        driver("cuDeviceGetDevResource")(sys::cuDeviceGetDevResource(
            ctx.cu_device(),
            &mut all,
            sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM,
        ))?;
        let mut group: sys::CUdevResource = std::mem::zeroed();
        let mut rest: sys::CUdevResource = std::mem::zeroed();
        let mut groups = 1u32;
        driver("cuDevSmResourceSplitByCount")(sys::cuDevSmResourceSplitByCount(
            &mut group,
            &mut groups,
            &all,
            &mut rest,
            0,
            k,
        ))?;
        (group, rest)
    };
    Ok(Green {
        side: partition(ctx, &mut group)?,
        main: partition(ctx, &mut rest)?,
    })
}

/// A green context over the SMs of `res`.
fn partition(ctx: &Arc<CudaContext>, res: &mut sys::CUdevResource) -> Result<Partition> {
    let mut desc: sys::CUdevResourceDesc = std::ptr::null_mut();
    let mut green: sys::CUgreenCtx = std::ptr::null_mut();
    let mut raw: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: cuDevResourceGenerateDesc(desc*, resources*, 1), cuGreenCtxCreate(green*, desc,
    // device, CU_GREEN_CTX_DEFAULT_STREAM) and cuCtxFromGreenCtx(context*, green) with live
    // handles and out-parameters of the declared types.
    unsafe {
        driver("cuDevResourceGenerateDesc")(sys::cuDevResourceGenerateDesc(&mut desc, res, 1))?;
        driver("cuGreenCtxCreate")(sys::cuGreenCtxCreate(
            &mut green,
            desc,
            ctx.cu_device(),
            sys::CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM as u32,
        ))?;
        driver("cuCtxFromGreenCtx")(sys::cuCtxFromGreenCtx(&mut raw, green))?;
    }
    // SAFETY: `raw` is the live context of `green` on this device; the wrapper is never dropped
    // (below), so it never destroys that context as an ordinary one.
    let wrapped = unsafe { CudaContext::from_raw_context(ctx.ordinal(), ctx.cu_device(), raw) }
        .map_err(Error::driver("green context wrap"))?;
    // SAFETY: streams of this context are ordered with explicit events only.
    unsafe { wrapped.disable_event_tracking() };
    std::mem::forget(wrapped.clone());
    Ok(Partition {
        green,
        ctx: wrapped,
    })
}

impl Partition {
    /// A new non-blocking stream of the partition at `priority` (kept for the process).
    pub fn stream(&self, priority: i32) -> Result<Arc<CudaStream>> {
        let mut s: sys::CUstream = std::ptr::null_mut();
        // SAFETY: cuGreenCtxStreamCreate(stream*, green, CU_STREAM_NON_BLOCKING, priority) on a
        // live green context; the stream is never destroyed, so the borrowed wrapper stays valid.
        unsafe {
            driver("cuGreenCtxStreamCreate")(sys::cuGreenCtxStreamCreate(
                &mut s,
                self.green,
                sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                priority,
            ))?;
            Ok(self.ctx.wrap_borrowed_stream(s))
        }
    }
}
