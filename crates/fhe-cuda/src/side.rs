//! [`SideStream`]: a backend's second, high-priority stream, on which a key switch's `mod_down`
//! starts while the key product is still running on the main stream (and on which hoisted
//! rotations of several keys run key product `j + 1` while mod_down `j` runs on the main stream,
//! `CudaBackend::hoisted_rotations`, with the same fork and join). A lowest-priority twin serves
//! the key switches whose mod_up first pass is split (N = 2^16 and above), so that the side
//! stream forks before the main stream's part of that pass, and runs the `Q` part of BFV's
//! product beside its lift to `B` (`backend/scale_round.rs`).
//!
//! # Why
//!
//! The first steps of `mod_down` (the inverse NTT of the accumulator's special-prime limbs, their
//! conversion to `Q`, and with the rescale the top limb) read only the accumulator's special-prime
//! rows (and its top row). So once mod_up's first forward pass is enqueued, the side stream
//! launches the fused key product of those rows and then those steps, while the main stream
//! launches the key product of the other rows; the main stream waits for the side stream before
//! mod_down's last NTT. The key product is bound by memory traffic, the inverse NTT of a few
//! limbs by latency and the conversion by integer multiplies, so they share the SMs better than
//! they run in turn. (Launching the early rows first on the main stream and forking after them
//! cost 6-11% at PHANTOM_N16 and CAT: that launch has too few blocks to fill the GPU, and the
//! rest waited for it; PERF.md.)
//!
//! # Ordering
//!
//! `fork` records `early` on the main stream (after the first pass and after the workspace's
//! stream-ordered allocations for mod_down, so the side stream uses them after they exist) and
//! makes the side stream wait for it; `join` records `done` on the side stream and makes the main
//! stream wait for it, also when an error is returned in between (the guard `fork` returns joins
//! on drop). Every buffer the side stream touches belongs to the backend's main
//! stream (scratch or caller buffers), and the join is enqueued on the main stream before the
//! call returns, so every later use on the main stream runs after the side stream's work
//! (the scratch workspace's reasoning in [`crate::scratch`] carries over unchanged). An event wait
//! refers to the record enqueued before it on the host, so calls from several threads may make a
//! stream wait longer, never deadlock or run early.

use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, sys};
use std::sync::Arc;

/// Whether key switches overlap `mod_down` with the key product ([`crate::tuning::MODDOWN_OVERLAP`]).
pub(crate) fn overlap_enabled() -> bool {
    crate::tuning::MODDOWN_OVERLAP
}

/// A high-priority stream with the two events that fork it from and join it to a main stream.
pub(crate) struct SideStream {
    pub stream: Arc<CudaStream>,
    early: CudaEvent,
    done: CudaEvent,
}

impl SideStream {
    /// A new stream at the context's highest priority (its blocks are scheduled ahead of the
    /// main stream's pending ones), or with `low_priority` at its lowest (where the side stream
    /// forks before a large launch of the main stream that it must not hold back), and two
    /// events without timing.
    pub fn new(ctx: &Arc<CudaContext>, low_priority: bool) -> Result<Self> {
        let (least, greatest) = cudarc::driver::result::stream::get_priority_range()
            .map_err(Error::driver("stream priority range"))?;
        let priority = if low_priority { least } else { greatest };
        let stream = ctx
            .new_stream_with_priority(priority)
            .map_err(Error::driver("side stream creation"))?;
        let event = || {
            ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                .map_err(Error::driver("event creation"))
        };
        Ok(SideStream {
            stream,
            early: event()?,
            done: event()?,
        })
    }

    /// The side stream waits for the work enqueued so far on `main`. The returned guard joins
    /// it back ([`Forked::join`]), and does so on drop too, so an error returned between the two
    /// never leaves side-stream work unordered with the main stream's later use of its buffers.
    pub fn fork<'a>(&'a self, main: &'a CudaStream) -> Result<Forked<'a>> {
        self.early
            .record(main)
            .map_err(Error::driver("event record"))?;
        self.stream
            .wait(&self.early)
            .map_err(Error::driver("stream wait"))?;
        Ok(Forked {
            side: self,
            main,
            joined: false,
        })
    }

    /// `main` waits for the work enqueued so far on the side stream.
    fn join_into(&self, main: &CudaStream) -> Result<()> {
        self.done
            .record(&self.stream)
            .map_err(Error::driver("event record"))?;
        main.wait(&self.done).map_err(Error::driver("stream wait"))
    }
}

/// A forked side stream, joined back into its main stream by [`Forked::join`] or on drop.
pub(crate) struct Forked<'a> {
    side: &'a SideStream,
    main: &'a CudaStream,
    joined: bool,
}

impl Forked<'_> {
    /// The main stream waits for the work enqueued so far on the side stream.
    pub fn join(mut self) -> Result<()> {
        self.joined = true;
        self.side.join_into(self.main)
    }
}

impl Drop for Forked<'_> {
    fn drop(&mut self) {
        if !self.joined {
            // An error is already being returned; a failed join surfaces at the next
            // synchronize as a driver error.
            let _ = self.side.join_into(self.main);
        }
    }
}
