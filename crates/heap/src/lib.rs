//! CKKS bootstrapping by blind rotation (HEAP; design and budget in
//! `crates/tfhe-switch/HEAP.md`), written once over the backend traits.
//!
//! A level-0 ciphertext `(c_0, c_1)` under the dense secret `s` is switched to an ephemeral
//! sparse `s'` (weight 32); its integer phase is `Φ = m + q_0·I`. Each coefficient `k` is
//! extracted as an LWE sample over `Z`, switched from the virtual modulus `K'·q_0` to `2^k`
//! (the overflow `I_k` stays visible), key-switched to the binary `s_t` (dimension `n_t`),
//! switched to `2N` and blind-rotated in the CKKS ring at the full modulus `Q_BR` with the
//! staircase test polynomial `f(x̄) = u·round(x̄·K'/2N)`, giving `u·I_k` in the constant
//! coefficient. The accumulators are packed (Chen–Dai–Kim–Song `PackLWEs`) into `c·q_0·I(X)`,
//! subtracted from `c·ModRaise(ct')` switched back to `s`, and the top limbs `R` are rescaled
//! away: `c·m/R` at the ladder scale of level `L − 3`.
//!
//! The blind rotations of a bootstrap are one batched call of the backend trait
//! [`fhe_math::backend::RnsBlindRotateBackend`] (the CUDA backend keeps the accumulators on the
//! device through all steps; HEAP.md §6.1). The packing and the other key switches use the
//! backend's NTTs and pointwise products with the RNS digit decomposition (exact base
//! extension, no special prime) and the automorphisms on the host. All arithmetic is exact: the
//! CPU and CUDA backends give the same words.
//!
//! Entry points: [`HeapKeys::generate`] (from the dense CKKS secret and one seed),
//! [`HeapBootstrapper::new`], [`HeapBootstrapper::with_slots`] (sparse slots: `2n` blind
//! rotations and a trace), [`HeapBootstrapper::heap_bootstrap`],
//! [`HeapBootstrapper::heap_bootstrap_spread`] (blind rotations shared with other
//! bootstrappers, e.g. one per GPU), [`HeapBootstrapper::heap_bootstrap_spread_timed`] (the
//! same with each stage's wall time, [`StageTimes`]), [`budget()`] (the expected precision and failure
//! probability), [`HeapKeys::to_bytes`] / [`HeapKeys::from_bytes`].

pub mod bootstrap;
pub mod budget;
pub mod error;
pub mod gadget;
pub mod host;
pub mod keys;
pub mod lwe;
pub mod params;
pub mod serialize;

pub use bootstrap::{HeapBootstrapper, StageTimes};
pub use budget::{Budget, budget};
pub use error::{Error, Result};
pub use keys::{HeapKeys, user_relin_key};
pub use params::{HEAP_N10_INSECURE, HEAP_N13, HeapParams};
pub use serialize::{FORMAT_VERSION, MAGIC};
