//! BoostCom's five workloads on encrypted integers, shared by the examples
//! (`examples/compare_*.rs`) and the GPU benchmark (`gpu_bench`, presets `cmp:sort16`,
//! `cmp:min16`, `cmp:mlp_batch`, `cmp:recolor`, `cmp:private_query`).
//!
//! Each workload is built once from a [`bgv::Context`] (key generation, untimed) and then
//! run end to end on plaintext inputs: encrypt, compute, decrypt, with the wall time of each
//! phase in [`Phases`]. Each has the same computation on plaintext beside it, to check the
//! decrypted result against. All are generic over the backend: the CPU, or the GPU through
//! `fhe_cuda::AnyBackend`.
//!
//! | module | workload |
//! |---|---|
//! | [`mod@array`] | sort and minimum of 16 encrypted words by the comparison matrix |
//! | [`recolor`] | image recoloring: `p·(1 + [p < θ])` per pixel |
//! | [`mlp`] | an MLP (fully connected, ReLU, fully connected) on encrypted images |
//! | [`query`] | a private query: the branch chosen by `EQ` on an encrypted query type |

pub mod array;
pub mod mlp;
pub mod query;
pub mod recolor;

use std::time::Instant;

/// Wall times of one end-to-end run, in seconds. On an asynchronous backend (the GPU) a
/// phase's work may finish in the next one; decryption waits for everything, so the total is
/// exact.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Encoding and encryption of the inputs.
    pub encrypt: f64,
    /// The homomorphic computation.
    pub compute: f64,
    /// Decryption and decoding of the result.
    pub decrypt: f64,
}

impl Phases {
    /// The end-to-end time: `encrypt + compute + decrypt`.
    pub fn total(&self) -> f64 {
        self.encrypt + self.compute + self.decrypt
    }
}

/// A clock that splits a run into [`Phases`].
pub(crate) struct PhaseClock {
    start: Instant,
    marks: Vec<f64>,
}

impl PhaseClock {
    /// Starts the encryption phase.
    pub(crate) fn start() -> Self {
        PhaseClock {
            start: Instant::now(),
            marks: Vec::with_capacity(3),
        }
    }

    /// Ends the current phase.
    pub(crate) fn mark(&mut self) {
        self.marks.push(self.start.elapsed().as_secs_f64());
    }

    /// The phases from the three marks (encrypt, compute, decrypt ends).
    pub(crate) fn phases(&self) -> Phases {
        let m = |i: usize| self.marks.get(i).copied().unwrap_or(0.0);
        Phases {
            encrypt: m(0),
            compute: m(1) - m(0),
            decrypt: m(2) - m(1),
        }
    }
}
