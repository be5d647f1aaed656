//! [`DevicePoly`]: an RNS buffer on the device, with the same `[component][slot][coeff]`
//! capacity layout as the host [`fhe_math::RnsPoly`].

use crate::kernels::LimbSet;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use fhe_math::poly::Shape;

/// A device buffer of RNS polynomials: `shape.components` components of `q_capacity + p_count`
/// slots (`p_count` is 0 unless `shape.extended`), `n` coefficients each. Dropping it returns
/// the memory to the device's stream-ordered pool.
#[derive(Debug)]
pub struct DevicePoly {
    pub(crate) data: CudaSlice<u64>,
    pub(crate) shape: Shape,
    pub(crate) n: usize,
    pub(crate) q_capacity: usize,
    pub(crate) p_count: usize,
}

impl DevicePoly {
    /// The buffer's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Ring degree.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Slots per component (capacity).
    pub fn slots_per_component(&self) -> usize {
        self.q_capacity + self.p_count
    }

    /// The word ranges of the inactive `Q` slots (above the level), one per component (none at
    /// the top level).
    pub(crate) fn inactive_ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + use<> {
        let (n, spc, qc, level) = (
            self.n,
            self.slots_per_component(),
            self.q_capacity,
            self.shape.level,
        );
        let comps = if level + 1 < qc {
            self.shape.components
        } else {
            0
        };
        (0..comps).map(move |c| (c * spc + level + 1) * n..(c * spc + qc) * n)
    }

    /// The ordinal of the CUDA device that holds the buffer.
    pub fn device_ordinal(&self) -> usize {
        self.data.ordinal()
    }

    /// Zeroes the whole buffer on the stream it was allocated on (ordered before its free);
    /// a failure is recorded in its context and reported by the next synchronize.
    pub(crate) fn zeroize_on_own_stream(&mut self) {
        let stream = self.data.stream().clone();
        let r = stream.memset_zeros(&mut self.data);
        stream.context().record_err(r);
    }

    /// Number of words of the live components.
    pub(crate) fn len(&self) -> usize {
        self.shape.components * self.slots_per_component() * self.n
    }

    /// Device address of the buffer.
    pub(crate) fn ptr(&self, stream: &CudaStream) -> u64 {
        let (p, _guard) = self.data.device_ptr(stream);
        p
    }

    /// All active limbs of all components.
    pub(crate) fn limbs(&self, stream: &CudaStream) -> LimbSet {
        LimbSet {
            ptr: self.ptr(stream),
            n: self.n as u32,
            spc: self.slots_per_component() as u32,
            comp_lo: 0,
            comps: self.shape.components as u32,
            q_lo: 0,
            q_cnt: self.shape.level as u32 + 1,
            p_lo: self.q_capacity as u32,
            p_cnt: self.p_count as u32,
        }
    }

    /// The limbs of this buffer with the same slots as `like` (its components, Q and P ranges).
    pub(crate) fn like(&self, stream: &CudaStream, like: &LimbSet) -> LimbSet {
        LimbSet {
            ptr: self.ptr(stream),
            spc: self.slots_per_component() as u32,
            ..*like
        }
    }
}
