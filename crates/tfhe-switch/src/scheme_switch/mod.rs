//! Scheme switching between CKKS and LWE: CKKS slots to LWE ciphertexts under the PBS's key,
//! any lookup table by programmable bootstrapping, and back to CKKS slots.
//!
//! # Pipeline
//!
//! 1. **CKKS → LWE** ([`SchemeSwitch::switch_to_lwe`]): SlotToCoeff (the forward special-FFT
//!    factors of `ckks::bootstrap::dft`, `stc_levels` BSGS transforms) puts slot `j` into
//!    coefficient `bitrev(j)·N/(2S)`; at level 0 the residues, times an integer that sets the
//!    message scale ([`LweEncoding`]), are switched to `q_sw`, key-switched on the host from the
//!    CKKS secret to the subring secret `s_m(X^r)` (`s_m` the PBS's GLWE secret, `r = N/N_t`;
//!    [`ring`]), switched to `q_t` and extracted as LWE ciphertexts of dimension `N_t` under
//!    `s_m`, which the PBS's own key switch takes to `n` (batched on the backend).
//! 2. **PBS** ([`SchemeSwitch::apply_lut`]): any [`crate::LookupTable`], batched.
//! 3. **LWE → CKKS** ([`SchemeSwitch::switch_to_ckks`]): homomorphic decryption (OpenFHE's
//!    FHEW → CKKS): the LWE secret, encrypted once in CKKS slots, goes through one BSGS linear
//!    transform whose plaintext diagonals hold the masks `−a/(q·K)` (the `n' = 2^⌈log2 n⌉`
//!    columns spread over `groups = min(n', N/(2S))` copies of the `S` rows, so `n'/groups`
//!    diagonals, then a rotation sum over the groups), plus the bodies `b/(q·K)`, giving
//!    `z/K = φ/(qK) + integer/K`; the modular reduction is `sin(2π z)` ([`sine`]), which maps
//!    the bit encodings `φ ∈ {0, q/4}` to `{0, 1}`.
//! 4. Composites: [`SchemeSwitch::ckks_step`] (`[x > 0]`), [`SchemeSwitch::ckks_sign`],
//!    [`SchemeSwitch::ckks_compare`] (`[a > b]`), and [`SchemeSwitch::ckks_apply`]: any table
//!    of the messages back in CKKS slots, one PBS and one way back per output bit.
//!
//! # Where the work runs
//!
//! The stages have batch forms ([`SchemeSwitch::switch_to_lwe_batch`],
//! [`SchemeSwitch::apply_lut_batch`], [`SchemeSwitch::switch_to_ckks_batch`]) whose LWE
//! ciphertexts stay in the backend's memory; the composites use them, so a comparison crosses
//! the bus three times: the level-0 CKKS residues down (`2N` words), the extracted batch up
//! (`S·(N_t + 1)` words, written in place on the host in parallel) and the PBS output down
//! (`S·(n + 1)` words, whose masks become the way back's plaintext diagonals). On the host:
//! the ring step (modulus switches, gadget key switch, `l + 2` NTTs of degree `N`, a few
//! milliseconds at `N = 2^16`), the extraction, and the special FFTs of the way back's
//! diagonals, in parallel ([`ckks::Encoder::encode_many`]; their reductions into the limbs and
//! NTTs run on the backend). Everything else runs on the backend.
//!
//! Keys serialize with [`SwitchKeys::to_bytes`] / [`SwitchKeys::from_bytes`]
//! ([`serialize`]).
//!
//! # Why homomorphic decryption for the way back
//!
//! Its cost per batch is `n'·S/(N/2)` plaintext multiply-accumulates (at least one) and about
//! `2√(n'/groups) + log2 groups` key switches at `output_level + levels_back`, plus the sine
//! (1 + depth(59) + 5 = 12 levels, about 17 products): at the classic set (`n' = 1024`) and
//! `N = 2^16`, 128 diagonals for 4096 slots and 1024 for 32768; the diagonals are encoded per
//! call (host FFTs in parallel, limbs and NTTs on the backend).
//! Ring packing (Chen-Dai-Kim-Song) would first need every LWE in the CKKS ring's dimension
//! (`n → N` key switch per ciphertext, `n·l·N` products each, 2.4·10^8 at `N = 2^16`), then
//! `log2 N` automorphism levels of packing (`S` key switches in all, each a full `N = 2^16`
//! key switch at the top level), then ModRaise + CoeffToSlot + EvalMod: a full bootstrap's
//! levels and roughly `S` key switches against the transform's ~64: the homomorphic
//! decryption is the cheaper and the simpler of the two here.
//!
//! # Precision
//!
//! The switch to LWE adds noise of about `2^-25` of a message step at the classic set
//! ([`ring`]); the PBS's own noise dominates (standard deviation 6.5 of `2N = 4096`, i.e.
//! 0.05 of a step of `N/p = 128`). A sign or comparison is therefore exact for inputs at
//! least [`LweEncoding::gap`] from 0 (half a message step: `bound/(p − 2)`, `bound/14` at
//! 4-bit messages). The way back returns `0` or `1` up to `2π` times the PBS output's noise
//! relative to `q` (the sine's own error is below `10^-11` in `f64`, [`sine`], and the CKKS
//! rounding is far smaller): at the classic set the output of the PBS's LWE key switch has
//! σ ≈ `2^-11.1·q` (`Parameters::key_switch_variance`), so each bit is off by σ ≈ `3·10^-3`;
//! measured on the H200 at `N = 2^16`: at most `1.1·10^-2` over 4096 slots and `1.3·10^-2` over
//! 32768, no slot on the wrong side of ½. At the insecure CI set σ ≈ `2^-13.5·q`, measured at
//! most `2·10^-3`. A value's round trip to LWE: the message `scale·x + offset` is read back
//! within 0.1 of a step at the CI set (test `switch_to_lwe_keeps_the_values`).
//!
//! # Parameters and security
//!
//! [`params::SWITCH_CLASSIC`]: the PBS at `CLASSIC_918_2048` (its security argument in
//! [`crate::params`]); the ring key modulus `q_sw ≈ 2^50`, an RLWE key over the `N_t = 2048`
//! ring under the ternary `s_m` (the subring argument of [`ring`]), within the
//! HomomorphicEncryption.org standard's 54-bit bound at `N = 2048` (Albrecht et al., 2018,
//! table 1, ternary secrets, σ = 3.2; ours σ ≈ 4.9); the CKKS side any 128-bit chain at
//! `N ≥ 2^11` with enough levels, e.g. [`params::CKKS_SWITCH_N16`]. The encryption of the LWE
//! secret under the CKKS key is a CKKS ciphertext like any other.
//! [`params::SWITCH_TEST_INSECURE`] and [`params::CKKS_SWITCH_TEST_INSECURE`] are for CI
//! only.

pub mod encoding;
pub mod error;
pub mod keys;
pub mod params;
pub mod ring;
pub mod serialize;
pub mod sine;
mod switch;
#[cfg(test)]
mod tests;

pub use encoding::LweEncoding;
pub use error::{Error, Result};
pub use keys::{KeyBytes, SwitchKeys};
pub use params::{
    CKKS_SWITCH_N16, CKKS_SWITCH_TEST_INSECURE, SWITCH_CLASSIC, SWITCH_TEST_INSECURE,
    SwitchParameters,
};
pub use switch::SchemeSwitch;
