//! [`Scratch`]: the per-backend workspace of device buffers that operators borrow for their
//! internal temporaries, so that after the first call of an operator it allocates nothing on the
//! device and never waits for the host.
//!
//! # Design
//!
//! A size-keyed free list of `CudaSlice<u64>` behind a `Mutex`. `Scratch::take` lends the
//! smallest free buffer holding at least the requested number of words (best fit) as an RAII
//! guard (`ScratchBuf`, or `ScratchPoly` viewed as a [`DevicePoly`]) that puts it back on
//! drop. When no free buffer is large enough, one device allocation is made, of the request
//! rounded up to a size class (eight classes per octave, so a slot grows at most eight times per
//! doubling and wastes under 12.5%), and the largest free buffer (too small, by then) is freed
//! instead of kept: the workspace holds at most as many buffers as were ever lent at once, each
//! only growing. Request sizes come from the ring's shapes (a buffer's capacity, not its level),
//! so each key-switching temporary has one size for every level and the set stabilizes after
//! the first call of each operator.
//!
//! # Why reuse needs no host synchronization
//!
//! A `Scratch` belongs to one backend instance and so to one stream: [`crate::CudaBackend`]
//! clones share it (same stream), [`crate::CudaBackend::on_stream`] makes a new one. Its buffers
//! are allocated on that stream and only used by kernels on that stream, which run in the order
//! they were enqueued. A guard is dropped only after every kernel that uses its buffer has been
//! enqueued (the backend keeps each guard alive to the end of the call that took it), so any
//! later borrower enqueues its first use after those kernels and the stream runs it after them.
//! Freeing a buffer that is too small (on growth) is `cuMemFreeAsync` on the same stream,
//! ordered the same way.
//!
//! Several threads may use one backend at once. The `Mutex` is held only while a buffer is
//! taken or put back (host bookkeeping, plus the stream-ordered allocation on growth), never
//! while kernels are enqueued. While a guard is alive its buffer is out of the free list, so two
//! live borrows, from one call or from two threads, never share memory; a concurrent call that
//! finds the list empty allocates one more buffer. Reuse across threads is ordered by the mutex
//! (thread A puts a buffer back after enqueuing its last use; thread B takes it afterwards, so
//! its first use is enqueued later on the same stream and runs later).
//!
//! The workspace holds ciphertext-derived temporaries only (key switching, rescaling, BFV's
//! scale-and-round), never secret-key material, so its buffers are not zeroed when freed.

use crate::poly::DevicePoly;
use cudarc::driver::{CudaSlice, CudaStream, DriverError};
use fhe_math::poly::Shape;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};

/// Statistics of a backend's scratch workspace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScratchStats {
    /// Device bytes held by the workspace (free and lent buffers).
    pub bytes: u64,
    /// Buffers held (free and lent).
    pub buffers: usize,
    /// Buffers lent out now.
    pub lent: usize,
    /// Most buffers lent out at once.
    pub peak_lent: usize,
    /// Device allocations made by the workspace (a first allocation or a growth). Constant once
    /// every operator in use has run once.
    pub allocations: u64,
    /// Borrows served (with or without an allocation).
    pub takes: u64,
}

/// A buffer the arena can hold: its capacity in words.
trait Words {
    fn words(&self) -> usize;
}

impl Words for CudaSlice<u64> {
    fn words(&self) -> usize {
        self.len()
    }
}

/// The request rounded up to its size class: a multiple of 1/8 of its octave (minimum 256).
fn size_class(words: usize) -> usize {
    let words = words.max(256);
    let log = usize::BITS - 1 - words.leading_zeros();
    let step = 1usize << (log - 3);
    words.div_ceil(step) * step
}

/// The free list and its statistics (generic over the buffer so that the policy is tested on
/// the host).
struct Arena<B> {
    free: Vec<B>,
    stats: ScratchStats,
}

impl<B: Words> Arena<B> {
    fn new() -> Self {
        Arena {
            free: Vec::new(),
            stats: ScratchStats::default(),
        }
    }

    /// A buffer of at least `words` words: the best-fitting free one, else a new one from
    /// `alloc(capacity)` (replacing the largest free buffer, which is too small).
    fn take<E>(
        &mut self,
        words: usize,
        alloc: impl FnOnce(usize) -> std::result::Result<B, E>,
    ) -> std::result::Result<B, E> {
        let best = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.words() >= words)
            .min_by_key(|(_, b)| b.words())
            .map(|(i, _)| i);
        let buf = match best {
            Some(i) => self.free.swap_remove(i),
            None => {
                // Free the old buffer first so that the stream-ordered pool can reuse its memory.
                let largest = (0..self.free.len()).max_by_key(|&i| self.free[i].words());
                if let Some(i) = largest {
                    let old = self.free.swap_remove(i);
                    self.stats.bytes -= 8 * old.words() as u64;
                    self.stats.buffers -= 1;
                }
                let b = alloc(size_class(words))?;
                self.stats.allocations += 1;
                self.stats.bytes += 8 * b.words() as u64;
                self.stats.buffers += 1;
                b
            }
        };
        self.stats.takes += 1;
        self.stats.lent += 1;
        self.stats.peak_lent = self.stats.peak_lent.max(self.stats.lent);
        Ok(buf)
    }

    fn put(&mut self, b: B) {
        self.stats.lent -= 1;
        self.free.push(b);
    }
}

/// The scratch workspace of one backend instance (one stream). See the module documentation.
pub struct Scratch {
    stream: Arc<CudaStream>,
    arena: Mutex<Arena<CudaSlice<u64>>>,
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch")
            .field("stats", &self.stats())
            .finish()
    }
}

impl Scratch {
    /// An empty workspace whose buffers are allocated on (and only used on) `stream`.
    pub(crate) fn new(stream: Arc<CudaStream>) -> Self {
        Scratch {
            stream,
            arena: Mutex::new(Arena::new()),
        }
    }

    fn arena(&self) -> std::sync::MutexGuard<'_, Arena<CudaSlice<u64>>> {
        // The arena is bookkeeping only; a panic elsewhere leaves it usable.
        self.arena.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The workspace's statistics.
    pub fn stats(&self) -> ScratchStats {
        self.arena().stats
    }

    /// Lends a buffer of at least `words` words (contents unspecified: the borrower writes every
    /// word it reads) until the guard drops.
    pub(crate) fn take(&self, words: usize) -> std::result::Result<ScratchBuf<'_>, DriverError> {
        let buf = self.arena().take(words.max(1), |cap| {
            // SAFETY: the contents are uninitialized device memory of the right type; every
            // borrower writes the words it reads before reading them (kernels on this stream).
            unsafe { self.stream.alloc::<u64>(cap) }
        })?;
        Ok(ScratchBuf {
            buf: Some(buf),
            home: self,
        })
    }

    fn put(&self, buf: CudaSlice<u64>) {
        self.arena().put(buf);
    }
}

/// A lent scratch buffer; returned to its workspace on drop. Keep it alive until the last
/// kernel that uses it has been enqueued.
pub(crate) struct ScratchBuf<'a> {
    buf: Option<CudaSlice<u64>>,
    home: &'a Scratch,
}

impl<'a> ScratchBuf<'a> {
    /// The buffer viewed as a [`DevicePoly`] of `shape` (its capacity covers the shape's words).
    pub(crate) fn into_poly(
        mut self,
        shape: Shape,
        n: usize,
        q_capacity: usize,
        p_count: usize,
    ) -> ScratchPoly<'a> {
        let data = self.buf.take().expect("a lent buffer");
        let poly = DevicePoly {
            data,
            shape,
            n,
            q_capacity,
            p_count,
        };
        debug_assert!(poly.data.len() >= poly.len());
        ScratchPoly {
            poly: Some(poly),
            home: self.home,
        }
    }
}

impl Deref for ScratchBuf<'_> {
    type Target = CudaSlice<u64>;
    fn deref(&self) -> &CudaSlice<u64> {
        self.buf.as_ref().expect("a lent buffer")
    }
}

impl DerefMut for ScratchBuf<'_> {
    fn deref_mut(&mut self) -> &mut CudaSlice<u64> {
        self.buf.as_mut().expect("a lent buffer")
    }
}

impl Drop for ScratchBuf<'_> {
    fn drop(&mut self) {
        if let Some(b) = self.buf.take() {
            self.home.put(b);
        }
    }
}

/// A lent scratch buffer viewed as a [`DevicePoly`]; returned to its workspace on drop.
pub(crate) struct ScratchPoly<'a> {
    poly: Option<DevicePoly>,
    home: &'a Scratch,
}

impl Deref for ScratchPoly<'_> {
    type Target = DevicePoly;
    fn deref(&self) -> &DevicePoly {
        self.poly.as_ref().expect("a lent buffer")
    }
}

impl DerefMut for ScratchPoly<'_> {
    fn deref_mut(&mut self) -> &mut DevicePoly {
        self.poly.as_mut().expect("a lent buffer")
    }
}

impl Drop for ScratchPoly<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.poly.take() {
            self.home.put(p.data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host stand-in for a device buffer.
    #[derive(Debug)]
    struct Fake(usize);

    impl Words for Fake {
        fn words(&self) -> usize {
            self.0
        }
    }

    /// One operator's borrows: `Take(words)` lends a buffer, `Put(i)` returns the `i`-th taken.
    #[derive(Clone, Copy)]
    enum Step {
        Take(usize),
        Put(usize),
    }
    use Step::{Put, Take};

    fn run(arena: &mut Arena<Fake>, steps: &[Step]) {
        let mut taken: Vec<Option<Fake>> = Vec::new();
        for &s in steps {
            match s {
                Take(w) => {
                    let b = arena
                        .take(w, |cap| Ok::<_, ()>(Fake(cap)))
                        .expect("fake allocation");
                    assert!(b.words() >= w);
                    taken.push(Some(b));
                }
                Put(i) => arena.put(taken[i].take().expect("taken once")),
            }
        }
        for b in taken.into_iter().flatten() {
            arena.put(b);
        }
        assert_eq!(arena.stats.lent, 0);
    }

    #[test]
    fn size_classes_round_up_by_at_most_an_eighth() {
        for w in [
            1usize,
            255,
            256,
            257,
            1000,
            4096,
            4097,
            3 * 32 * 65536,
            25 * 65536 + 1,
        ] {
            let c = size_class(w);
            assert!(c >= w && c >= 256);
            assert!(w < 256 || (c - w) * 8 <= w, "{w} -> {c}");
            assert_eq!(size_class(c), c, "a class is its own class");
        }
    }

    /// The backend's borrow patterns (capacity-sized shapes of a ring with `q` primes, `k`
    /// special primes, `dnum` digits, degree `n`): after one call of an operator its next calls
    /// allocate nothing, and once each has run once, no mix of them allocates again.
    #[test]
    fn steady_after_one_call_of_each_operator() {
        for (q, k, dnum, n) in [
            (6, 2, 3, 8192),
            (8, 2, 3, 16384),
            (12, 2, 3, 32768),
            (25, 7, 3, 65536),
            (4, 1, 4, 1024),
            (3, 1, 1, 64),
        ] {
            let e = dnum * (q + k) * n; // mod_up output (one component per digit, over Q·P)
            let a = 2 * (q + k) * n; // key-product accumulator; mod_down's P-limb buffer
            let t = q * n; // mod_up's coefficient-form copy
            let c = 2 * q * n; // mod_down's conversion
            // relinearize / mul_relin (rescale or not): mod_up, key product, mod_down.
            let relin = [
                Take(e),
                Take(t),
                Put(1),
                Take(a),
                Take(a),
                Take(c),
                Put(3),
                Put(4),
            ];
            // rotate_hoisted with 3 keys: one ext, one accumulator reused, mod_down per key.
            let mut rot = vec![Take(e), Take(t), Put(1), Take(a)];
            for i in 0..3 {
                rot.extend([Take(a), Take(c), Put(3 + 2 * i), Put(4 + 2 * i)]);
            }
            // rescale of 2 or 3 components.
            let rs2 = [Take(2 * q * n)];
            let rs3 = [Take(3 * q * n)];
            // tensor_scale_round at two levels (ql primes of Q, bl of B).
            let tsr = |ql: usize, bl: usize| {
                [
                    Take(4 * ql * n),
                    Take(4 * (ql + bl) * n),
                    Take(3 * (ql + bl) * n),
                    Take(3 * bl * n),
                ]
            };
            let (t1, t2, t3) = (tsr(q, q + 1), tsr(q - 1, q), tsr(q, q));
            let ops: [&[Step]; 8] = [&relin, &rot, &rs2, &rs3, &t1, &t2, &t3, &relin];
            let mut arena = Arena::new();
            // One warm-up call of each operator, then its next calls allocate nothing.
            for (i, op) in ops.iter().enumerate() {
                run(&mut arena, op);
                let warm = arena.stats.allocations;
                for _ in 0..3 {
                    run(&mut arena, op);
                }
                assert_eq!(arena.stats.allocations, warm, "q={q} n={n} operator {i}");
            }
            let warm = arena.stats;
            // Any order afterwards: no allocation.
            for round in 0..5 {
                for i in 0..ops.len() {
                    run(&mut arena, ops[(i * (round + 1) + round) % ops.len()]);
                }
            }
            assert_eq!(arena.stats.allocations, warm.allocations, "q={q} n={n}");
            assert_eq!(arena.stats.bytes, warm.bytes);
            assert!(arena.stats.buffers <= arena.stats.peak_lent);
            // Bytes held: within a size class (1/8) of the largest operator's working set.
            let relin_set = e + 2 * a + c;
            let tsr_set = 4 * q * n + 7 * (2 * q + 1) * n + 3 * (q + 1) * n;
            let biggest = 8 * relin_set.max(tsr_set) as u64;
            assert!(8 * arena.stats.bytes <= 9 * biggest, "{:?}", arena.stats);
        }
    }

    /// Two interleaved borrowers (two threads on one stream) get distinct buffers; the arena grows
    /// to the number lent at once and no further.
    #[test]
    fn concurrent_borrows_are_distinct() {
        let mut arena: Arena<Fake> = Arena::new();
        let x = arena.take(100, |c| Ok::<_, ()>(Fake(c))).unwrap();
        let y = arena.take(100, |c| Ok::<_, ()>(Fake(c))).unwrap();
        assert_eq!(arena.stats.buffers, 2);
        assert_eq!(arena.stats.lent, 2);
        arena.put(x);
        arena.put(y);
        let before = arena.stats.allocations;
        for _ in 0..10 {
            let x = arena.take(100, |c| Ok::<_, ()>(Fake(c))).unwrap();
            let y = arena.take(50, |c| Ok::<_, ()>(Fake(c))).unwrap();
            arena.put(y);
            arena.put(x);
        }
        assert_eq!(arena.stats.allocations, before);
    }
}
