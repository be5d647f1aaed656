//! Host time of kernel launches, for performance work: between [`start`] and [`take`], every
//! launch of this process records how long the host spent since the previous launch returned
//! (the operator's own work between launches), in the launch wrapper before the driver call
//! (binding, configuration) and in `cuLaunchKernelEx` itself.
//!
//! # Why
//!
//! From an idle GPU (gpu_bench's wall-clock column) an operator's first kernel starts only
//! after the host's first launch returns, and a chain of short kernels can outrun the host's
//! launches. This says where that host time goes; it adds two clock reads a launch.

use cudarc::driver::CudaFunction;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The host time of one launch.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchCost {
    /// The kernel's name.
    pub kernel: String,
    /// µs from the previous launch's return (or [`start`]) to this launch wrapper's entry.
    pub before_us: f64,
    /// µs in the launch wrapper before the driver call.
    pub wrapper_us: f64,
    /// µs in `cuLaunchKernelEx`.
    pub driver_us: f64,
}

struct Raw {
    /// The launched function (a clone holds its module, so its name can be read later).
    function: CudaFunction,
    enter: Instant,
    driver: Instant,
    done: Instant,
}

static ACTIVE: AtomicBool = AtomicBool::new(false);
static LOG: Mutex<(Option<Instant>, Vec<Raw>)> = Mutex::new((None, Vec::new()));

fn log() -> std::sync::MutexGuard<'static, (Option<Instant>, Vec<Raw>)> {
    LOG.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts recording (earlier records are discarded); the first launch's `before_us` counts
/// from here.
pub fn start() {
    let mut l = log();
    l.1.clear();
    l.0 = Some(Instant::now());
    ACTIVE.store(true, Ordering::SeqCst);
}

/// Stops recording; returns the launches since [`start`] and the µs from the last launch's
/// return (or [`start`]) to now.
pub fn take() -> (Vec<LaunchCost>, f64) {
    ACTIVE.store(false, Ordering::SeqCst);
    let now = Instant::now();
    let (started, raws) = std::mem::take(&mut *log());
    let Some(mut last) = started else {
        return (Vec::new(), 0.0);
    };
    let us = |a: Instant, b: Instant| b.saturating_duration_since(a).as_secs_f64() * 1e6;
    let costs = raws
        .iter()
        .map(|r| {
            let c = LaunchCost {
                kernel: crate::trace::kernel_name(&r.function),
                before_us: us(last, r.enter),
                wrapper_us: us(r.enter, r.driver),
                driver_us: us(r.driver, r.done),
            };
            last = r.done;
            c
        })
        .collect();
    (costs, us(last, now))
}

/// The clock at a launch wrapper's entry, while recording.
pub(crate) fn enter() -> Option<Instant> {
    ACTIVE.load(Ordering::Relaxed).then(Instant::now)
}

/// Records a launch of `f` entered at `enter`, whose driver call began at `driver`.
pub(crate) fn record(f: &CudaFunction, enter: Option<Instant>, driver: Option<Instant>) {
    if let (Some(enter), Some(driver)) = (enter, driver) {
        let done = Instant::now();
        log().1.push(Raw {
            function: f.clone(),
            enter,
            driver,
            done,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_nothing_without_launches() {
        start();
        assert!(enter().is_some(), "recording is on after start");
        let (costs, tail) = take();
        assert!(costs.is_empty());
        assert!(tail >= 0.0);
        assert!(enter().is_none(), "recording is off after take");
    }
}
