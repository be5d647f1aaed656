//! [`RnsPoly`]: polynomials in RNS form, laid out `[component][limb slot][coefficient]`.
//!
//! A polynomial (or a ciphertext's several polynomials, its *components*) lives in a buffer with
//! a fixed capacity of `L + 1` ciphertext-prime slots, optionally followed by the `K`
//! special-prime slots of the key-switching basis `P`. The *level* `l` says how many `Q` slots are
//! active (`0..=l`): dropping limbs only lowers the level, it never copies. Slot `s` always
//! belongs to the same prime of the [`RingContext`](crate::ring::RingContext), so tables are
//! indexed by slot.
//!
//! This is the host representation and the CPU backend's working type; the CUDA backend keeps
//! the same layout on the device.

use crate::error::{Error, Result};
use rayon::iter::ParallelExtend;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

/// Shape of an RNS polynomial buffer: what a backend needs to know to allocate or check it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Number of polynomials in the buffer (2 for a ciphertext, 3 after a tensor product).
    pub components: usize,
    /// Highest active `Q` slot: slots `0..=level` are active.
    pub level: usize,
    /// Whether the `K` special-prime slots are present (the extended basis `Q_l · P`).
    pub extended: bool,
}

/// `len` zero words, written rather than left to the allocator's lazily zeroed pages: a fresh
/// `calloc` mapping first maps the shared zero page, so a limb that is read (accumulated into)
/// before it is written takes a copy-on-write fault with a TLB shootdown on every page, which
/// cost the CPU key switch about a third of its time (`perf`: `do_wp_page` →
/// `ptep_clear_flush`). Writing the zeros up front (in parallel) makes each first touch a
/// plain page fault.
///
/// The whole capacity is written, so a buffer's memory is resident from the start (calloc's
/// pages for inactive limbs stayed unmapped until used). Writing only the active limbs of a
/// calloc'd buffer was tried: calloc zero-fills memory it recycles from the heap, so those limbs
/// were zeroed twice and CKKS at CAT ran 10% slower than with this single write.
fn written_zeros(len: usize) -> Vec<u64> {
    // malloc without zeroing; black_box keeps the optimizer from fusing the allocation and the
    // zero-fill below back into a calloc.
    let mut data = std::hint::black_box(Vec::with_capacity(len));
    if len >= 1 << 18 {
        data.par_extend(rayon::iter::repeat_n(0u64, len));
    } else {
        data.resize(len, 0);
    }
    data
}

/// A buffer of `components` polynomials over the active RNS limbs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RnsPoly {
    n: usize,
    shape: Shape,
    /// `L + 1`: capacity of `Q` slots.
    q_capacity: usize,
    /// `K` when extended, else 0.
    p_count: usize,
    data: Vec<u64>,
}

impl RnsPoly {
    /// A zero buffer. `q_capacity = L + 1`, `p_count = K` (used only when `shape.extended`).
    pub fn zeros(n: usize, shape: Shape, q_capacity: usize, p_count: usize) -> Result<Self> {
        if shape.level >= q_capacity {
            return Err(Error::InvalidLevel {
                level: shape.level,
                reason: "above the top level",
            });
        }
        let p_count = if shape.extended { p_count } else { 0 };
        let len = shape.components * (q_capacity + p_count) * n;
        Ok(RnsPoly {
            n,
            shape,
            q_capacity,
            p_count,
            data: written_zeros(len),
        })
    }

    /// Ring degree `N`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The buffer's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Number of components.
    pub fn components(&self) -> usize {
        self.shape.components
    }

    /// Highest active `Q` slot.
    pub fn level(&self) -> usize {
        self.shape.level
    }

    /// Capacity of `Q` slots (`L + 1`).
    pub fn q_capacity(&self) -> usize {
        self.q_capacity
    }

    /// Number of special-prime slots held (0 unless extended).
    pub fn p_count(&self) -> usize {
        self.p_count
    }

    /// Slots per component (capacity, active or not).
    pub fn slots_per_component(&self) -> usize {
        self.q_capacity + self.p_count
    }

    /// Active slot indices: `0..=level`, then the special slots when extended.
    pub fn active_slots(&self) -> impl Iterator<Item = usize> + Clone + use<> {
        let q = 0..=self.shape.level;
        let p = self.q_capacity..self.q_capacity + self.p_count;
        q.chain(p)
    }

    /// Whether slot `s` is active.
    pub fn is_active(&self, slot: usize) -> bool {
        slot <= self.shape.level
            || (slot >= self.q_capacity && slot < self.q_capacity + self.p_count)
    }

    /// Lowers the level to `level` (drops the top `Q` limbs) without copying.
    pub fn set_level(&mut self, level: usize) -> Result<()> {
        if level > self.shape.level {
            return Err(Error::InvalidLevel {
                level,
                reason: "can only lower the level of a buffer",
            });
        }
        self.shape.level = level;
        Ok(())
    }

    /// Keeps only the first `components` components (a prefix view; no copy).
    pub fn truncate_components(&mut self, components: usize) -> Result<()> {
        if components > self.shape.components {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "cannot grow components {} -> {components}",
                    self.shape.components
                ),
            });
        }
        self.shape.components = components;
        self.data
            .truncate(components * self.slots_per_component() * self.n);
        Ok(())
    }

    /// Coefficients of component `c` at slot `s`.
    pub fn limb(&self, c: usize, s: usize) -> &[u64] {
        let start = (c * self.slots_per_component() + s) * self.n;
        &self.data[start..start + self.n]
    }

    /// Mutable coefficients of component `c` at slot `s`.
    pub fn limb_mut(&mut self, c: usize, s: usize) -> &mut [u64] {
        let start = (c * self.slots_per_component() + s) * self.n;
        &mut self.data[start..start + self.n]
    }

    /// The whole buffer, capacity included (`[component][slot][coeff]`).
    pub fn raw(&self) -> &[u64] {
        &self.data
    }

    /// The whole buffer, mutable.
    pub fn raw_mut(&mut self) -> &mut [u64] {
        &mut self.data
    }
}

impl Zeroize for RnsPoly {
    fn zeroize(&mut self) {
        self.data.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both paths of `written_zeros` (sequential below 2^18 words, parallel above) give `len`
    /// zeros, and `RnsPoly::zeros` is zero over its whole capacity.
    #[test]
    fn written_zeros_are_zero_and_whole() {
        for len in [0, 1, 1000, (1 << 18) - 1, 1 << 18, (1 << 18) + 12_345] {
            let v = written_zeros(len);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x == 0), "len {len}");
        }
        let shape = Shape {
            components: 3,
            level: 2,
            extended: true,
        };
        let p = RnsPoly::zeros(1 << 12, shape, 20, 4).unwrap();
        assert_eq!(p.raw().len(), 3 * 24 * (1 << 12));
        assert!(p.raw().iter().all(|&x| x == 0));
    }
}
