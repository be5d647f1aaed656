//! TFHE-style ciphertexts and batched programmable bootstrapping (PBS) over one prime modulus.
//!
//! # What is here
//!
//! * LWE secret keys (binary or ternary), ciphertexts, message encoding with a padding bit,
//!   encryption and decryption ([`lwe`]);
//! * GLWE keys and encryption, RGSW encryption ([`glwe`]);
//! * key generation: the client key and the server key (bootstrapping key, LWE key-switching
//!   key) ([`keys`]);
//! * lookup tables as test polynomials, with the negacyclic half ([`lut`]);
//! * programmable bootstrapping over any [`BlindRotateBackend`] ([`pbs::Bootstrapper`]):
//!   modulus switch of the input to `2N`, blind rotation of the test polynomial, sample
//!   extraction, key switching back to the input key;
//! * scheme switching between CKKS and LWE ([`scheme_switch`]): CKKS slots to LWE
//!   ciphertexts under the PBS key, any lookup table, and back to CKKS slots; comparisons and
//!   signs of CKKS vectors;
//! * parameter sets with their sources and failure probabilities ([`params`]), blobs with
//!   validation ([`serialize`]), seeded sampling in the project's ChaCha20 layout ([`sample`]:
//!   the layout is documented there; its functions are internal).
//!
//! The device operations (blind rotation with extraction, key switching, on whole batches)
//! are the trait [`BlindRotateBackend`] of `fhe_math::backend::blind_rotate`, implemented by
//! [`fhe_math::CpuBackend`] and by `fhe_cuda::CudaBackend` (one fused launch per batch), with
//! the same words.
//!
//! # Arithmetic
//!
//! Ciphertexts and keys are residues mod a prime `q ≡ 1 (mod 2N)`, `q < 2^53` (instead of
//! tfhe-rs's `2^64`), and every step is exact modular arithmetic except the polynomial products
//! of the external product: digit polynomial × key polynomial by a negacyclic f64 FFT
//! (`fhe_math::backend::blind_rotate::fft`, tfhe-rs's approach), rounded to integers and reduced
//! mod `q` exactly. Its rounding error is a noise term, bounded and measured, and counted in
//! the failure probability of every set ([`params`]). The algorithms, in the order of a
//! bootstrap of `(a, b)`:
//!
//! 1. modulus switch `ã_i = round-half-up(a_i · 2N / q) mod 2N`, same for `b`;
//! 2. accumulator `(0, X^{−b̃} · v)` for the test polynomial `v` ([`lut`]);
//! 3. for each `i`: a CMux with the RGSW encryption of `s_i` (two for a ternary `s_i`), the
//!    external product decomposing the accumulator with the signed gadget; or, with a multi-bit
//!    key ([`MULTI_BIT3_918_2048`]), one step per group of 3 coefficients multiplying the
//!    decomposed accumulator by `Σ_p (X^{t_p} − 1) · BSK_p` over the group's 7 patterns
//!    (a third of the sequential steps: the latency-oriented set);
//! 4. sample extraction of coefficient 0: an LWE ciphertext under the GLWE key read as an LWE
//!    key of dimension `k · N`;
//! 5. LWE key switching back to dimension `n` with the signed gadget of the key-switching key.
//!
//! # Bit-exactness rules (for a GPU implementation)
//!
//! A backend must produce the same words as the CPU reference. The rules are stated in
//! `fhe_math::backend::blind_rotate` (module docs): the modulus switch (round half up, no
//! ties for odd `q`), the signed decomposition (the low part dropped by rounding half up, then
//! digits in `[−B/2, B/2)` from the least significant, a digit `≥ B/2` giving `d − B` and a
//! carry, the last carry dropped), the gadget values `round-half-up(q / B^j)`, the order of
//! the CMux updates, the sample extraction and the key switch, and the f64 FFT of the external
//! product: one specified transform (radix-2 stages in a fixed order, twiddles computed once on
//! the host by one function), the same IEEE operations in the same order on every backend with
//! no fused multiply-add, each result rounded half away from zero and reduced exactly. Outside
//! the FFT every operation is exact mod `q`. The test polynomial is built as in
//! [`lut`]. Keys and encryptions are sampled on the host from seeds in the layout of
//! [`fhe_math::sampler`] with the streams listed in [`sample`] (uniform masks: 16
//! bytes per residue mod `q`; binary secrets: the top bit of 8 bytes; ternary secrets:
//! `fhe_math::sampler::ternary`; noise: 16 bytes mod `2B + 1`, minus `B`).

pub mod error;
pub mod glwe;
pub mod keys;
pub mod lut;
pub mod lwe;
pub mod params;
pub mod pbs;
pub mod sample;
pub mod scheme_switch;
pub mod serialize;

pub use error::{Error, Result};
pub use fhe_math::backend::blind_rotate::BlindRotateBackend;
pub use keys::{ClientKey, ServerKey};
pub use lut::LookupTable;
pub use lwe::{LweCiphertext, LweSecretKey};
pub use params::{
    CLASSIC_918_2048, LPF_STD128_556_1024, MULTI_BIT3_918_2048, Parameters, SecretKind,
    TEST_256_INSECURE, TEST_MULTI_BIT_256_INSECURE, TEST_TERNARY_256_INSECURE,
};
pub use pbs::Bootstrapper;

/// A CPU backend for the ring of `params`. The [`BlindRotateBackend`] methods do not use the
/// backend's RLWE ring, but [`fhe_math::CpuBackend`] is built over one: `q` and one special
/// prime near `2^45` (both `≡ 1 mod 2N`).
pub fn cpu_backend(params: &Parameters) -> Result<fhe_math::CpuBackend> {
    params.validate()?;
    let two_n = 2 * params.ring_degree as u64;
    let special = fhe_math::primes::ntt_prime_nearest(1 << 45, two_n, &[params.modulus])?;
    let ring = fhe_math::RingContext::new(
        params.ring_degree,
        &[params.modulus],
        &[special],
        std::iter::once(0..1).collect(),
    )?;
    Ok(fhe_math::CpuBackend::new(ring))
}
