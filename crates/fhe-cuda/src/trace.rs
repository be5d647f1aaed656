//! A launch timeline for performance work: between [`start`] and [`take`], every kernel launch
//! of this process is bracketed by two timing events on its stream, and [`take`] returns, per
//! launch, the kernel's name, its device and stream, and when it started and ended on the device
//! (µs from the first traced start on the same device: the devices' clocks are not compared).
//!
//! # Why
//!
//! Key switching runs on two streams (the side stream of `side.rs`), and the kernels of one
//! run beside the other's: their serialized durations (ncu) do not say which chain is the
//! critical path, and our GPU machine has no Nsight Systems. This shows what ran beside what.
//!
//! # Caveat
//!
//! The events add work between the launches: a traced kernel no longer starts under its
//! predecessor's tail (programmatic dependent launch), and each record costs a little. The spans
//! give the shape of the timeline, not timings to report; time operators with their events off
//! (`gpu_bench`, `gpu_perf`).
//!
//! ```no_run
//! # fn demo(be: &fhe_cuda::CudaBackend, a: &fhe_cuda::DevicePoly) -> fhe_cuda::Result<()> {
//! use fhe_math::backend::prelude::*;
//! fhe_cuda::trace::start();
//! let mut x = be.duplicate(a)?;
//! be.ntt(&mut x)?;
//! for s in fhe_cuda::trace::take()? {
//!     println!("{:8.1} {:8.1} stream {} {}", s.start_us, s.end_us, s.stream, s.kernel);
//! }
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use cudarc::driver::{CudaEvent, CudaFunction, CudaStream, sys};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// One traced kernel launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The kernel's name (`extern "C"` name in `kernels/*.cu`).
    pub kernel: String,
    /// The device's ordinal.
    pub device: usize,
    /// The stream, numbered 0, 1, ... in the order the trace first saw them.
    pub stream: usize,
    /// Device time of the event recorded before the launch, µs after the start of the first
    /// span on the same device.
    pub start_us: f64,
    /// Device time of the event recorded after the launch, µs after the same reference.
    pub end_us: f64,
    /// Host time of the launch call, µs after [`start`]: how far ahead of the device the host
    /// enqueues, and how long an operator's host work delays its first kernel.
    pub host_us: f64,
}

/// A launch whose events are recorded but not yet read.
struct Pending {
    kernel: String,
    device: usize,
    stream: u64,
    start: CudaEvent,
    end: CudaEvent,
    host: Instant,
}

static ACTIVE: AtomicBool = AtomicBool::new(false);
static LOG: Mutex<Vec<Pending>> = Mutex::new(Vec::new());
static STARTED: Mutex<Option<Instant>> = Mutex::new(None);

fn log() -> std::sync::MutexGuard<'static, Vec<Pending>> {
    // A panic while holding the lock leaves a Vec that is still valid.
    LOG.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts tracing every launch of this process (earlier traced launches are discarded).
pub fn start() {
    log().clear();
    *STARTED.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    ACTIVE.store(true, Ordering::SeqCst);
}

/// Stops tracing and returns the launches traced since [`start`], in launch order, after
/// waiting for their events (a host synchronization).
pub fn take() -> Result<Vec<Span>> {
    ACTIVE.store(false, Ordering::SeqCst);
    let pending = std::mem::take(&mut *log());
    let Some(first) = pending.first() else {
        return Ok(Vec::new());
    };
    let started = STARTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or(first.host);
    let mut streams: Vec<u64> = Vec::new();
    // Each device's first traced start: events of different contexts cannot be compared.
    let mut origins: Vec<(usize, &CudaEvent)> = Vec::new();
    pending
        .iter()
        .map(|p| {
            let stream = match streams.iter().position(|&s| s == p.stream) {
                Some(i) => i,
                None => {
                    streams.push(p.stream);
                    streams.len() - 1
                }
            };
            let origin = match origins.iter().find(|(d, _)| *d == p.device) {
                Some(&(_, e)) => e,
                None => {
                    origins.push((p.device, &p.start));
                    &p.start
                }
            };
            let elapsed = |e: &CudaEvent| {
                origin
                    .elapsed_ms(e)
                    .map(|ms| 1000.0 * f64::from(ms))
                    .map_err(Error::driver("trace event time"))
            };
            Ok(Span {
                kernel: p.kernel.clone(),
                device: p.device,
                stream,
                start_us: elapsed(&p.start)?,
                end_us: elapsed(&p.end)?,
                host_us: p.host.saturating_duration_since(started).as_secs_f64() * 1e6,
            })
        })
        .collect()
}

/// The event before a launch on `stream`, while tracing.
pub(crate) fn before(stream: &CudaStream) -> Result<Option<(CudaEvent, Instant)>> {
    if !ACTIVE.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let host = Instant::now();
    stream
        .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .map(|e| Some((e, host)))
        .map_err(Error::driver("trace event record"))
}

/// Records the event after the launch of `f` on `stream` that `start` ([`before`]) preceded.
pub(crate) fn after(
    stream: &CudaStream,
    f: &CudaFunction,
    start: Option<(CudaEvent, Instant)>,
) -> Result<()> {
    let Some((start, host)) = start else {
        return Ok(());
    };
    let end = stream
        .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(Error::driver("trace event record"))?;
    log().push(Pending {
        kernel: kernel_name(f),
        device: stream.context().ordinal(),
        stream: stream.cu_stream() as u64,
        start,
        end,
        host,
    });
    Ok(())
}

/// The name of a loaded kernel (`cuFuncGetName`), or `?` where the driver does not give it.
pub(crate) fn kernel_name(f: &CudaFunction) -> String {
    let mut name: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: cuFuncGetName(&name, hfunc) on a live function handle (`f` holds its module);
    // on success `name` points at a NUL-terminated string owned by the driver, copied at once.
    let ok = unsafe { sys::cuFuncGetName(&mut name, f.cu_function()) }.result();
    if ok.is_err() || name.is_null() {
        return "?".into();
    }
    // SAFETY: a non-null name from a successful cuFuncGetName is a valid C string.
    unsafe { std::ffi::CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned()
}
