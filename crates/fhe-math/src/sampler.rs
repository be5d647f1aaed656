//! Seeded samplers following the project's randomness layout (version [`LAYOUT_VERSION`]).
//!
//! Every random polynomial is expanded from a 32-byte [`Seed`] by ChaCha20 in a fixed layout, so
//! that the CUDA kernels can generate the very same values in parallel (one thread per
//! coefficient or per ChaCha block) and a seed can replace a uniform polynomial on the wire.
//! **This layout is a contract**: the GPU kernels reproduce it bit for bit and serialized seeded
//! data depends on it. Changing anything below requires bumping [`LAYOUT_VERSION`] (which is
//! versioned together with the serialization format).
//!
//! # Layout, version 1
//!
//! ## ChaCha20
//!
//! The generator is the original (Bernstein) ChaCha20 with a 64-bit block counter and a 64-bit
//! nonce ("stream id"), exactly as `rand_chacha::ChaCha20Rng` with `set_stream` and
//! `set_word_pos`: 20 rounds (10 double rounds), and the 16-word input state
//!
//! ```text
//! word  0.. 3 : 0x61707865 0x3320646e 0x79622d32 0x6b206574   ("expand 32-byte k")
//! word  4..11 : key = seed; word 4 + k = u32::from_le_bytes(seed[4k .. 4k + 4]), k = 0..8
//! word 12     : block counter, low 32 bits
//! word 13     : block counter, high 32 bits
//! word 14     : stream id, low 32 bits   = (poly_index << 16 | limb) & 0xffff_ffff
//! word 15     : stream id, high 32 bits  = tag << 24 | poly_index >> 16
//! ```
//!
//! Block `b` of a stream is the state above with block counter `b`, run through the 20 rounds,
//! with the input state added word-wise (mod 2^32): output words `o[0..16]`. Its 64 keystream
//! bytes are `o[0].to_le_bytes() ‖ o[1].to_le_bytes() ‖ … ‖ o[15].to_le_bytes()`, and the
//! keystream of a stream is block 0 ‖ block 1 ‖ … (byte offset `64·b + 4·w` is the first byte
//! of word `w` of block `b`). The counter of every stream starts at 0. (This equals the
//! RFC 8439 block function with its 32-bit counter and 96-bit nonce
//! `n0 ‖ n1 ‖ n2` mapped as counter = word 12, n0 = word 13, n1 = word 14, n2 = word 15; the
//! unit test `chacha_known_answer_rfc8439` checks RFC 8439 §2.3.2 in this form.)
//!
//! ## Stream id
//!
//! [`stream_id`]`(domain, poly_index, limb) = tag << 56 | poly_index << 16 | limb` (bits 48..56
//! are zero), where `tag` is [`Domain::tag`], `poly_index` numbers the polynomials drawn from one
//! seed in one domain (e.g. the component, digit or key index; the caller assigns it), and
//! `limb` is the RNS limb index (0 for the integer-valued samplers, which do not depend on q).
//!
//! ## Uniform mod q ([`uniform_limb`])
//!
//! Coefficient `i` reads the 16 keystream bytes at byte offset `16·i`: block `i / 4`, words
//! `4·(i % 4) .. 4·(i % 4) + 4`, as a little-endian `u128`
//! `x = o[w] | o[w+1] << 32 | o[w+2] << 64 | o[w+3] << 96` (`w = 4·(i % 4)`), and the value is
//! `x mod q`. No rejection; the statistical distance from uniform is at most `q / 2^128 ≤ 2^-64`.
//!
//! ## Ternary ([`ternary`])
//!
//! Stream with `limb = 0`. Coefficient `i` reads the 8 bytes at offset `8·i`: block `i / 8`,
//! words `w = 2·(i % 8)` and `w + 1`, `x = o[w] | o[w+1] << 32`, and the value is
//! `((x as u128 · 3) >> 64) − 1 ∈ {−1, 0, 1}` (each with probability 1/3 up to 2^-64).
//!
//! ## Discrete Gaussian ([`gaussian`])
//!
//! Stream with `limb = 0`, the same 8 bytes `x` per coefficient as the ternary sampler. Target:
//! the discrete Gaussian `ρ(v) = exp(−v² / (2σ²))`, σ = [`GAUSSIAN_SIGMA`] = 3.2, restricted to
//! `|v| ≤ B` = [`GAUSSIAN_BOUND`] = 19 (≈ 6σ) and renormalised by `S = Σ_{|v| ≤ B} ρ(v)`.
//!
//! * `s = x >> 63` is the sign bit, `r = x & (2^63 − 1)` a uniform 63-bit value.
//! * The table [`gaussian_cdt`] has `B` = 19 entries, `T[j] = round(2^63 · P(|v| ≤ j))` for
//!   `j = 0..19`, where the *magnitude* distribution is `P(|v| = 0) = ρ(0) / S` and
//!   `P(|v| = m) = 2ρ(m) / S` for `m ≥ 1`.
//! * `magnitude = #{ j : r ≥ T[j] } = B − Σ_j ((r − T[j]) mod 2^64) >> 63`, always evaluating all
//!   19 comparisons (constant time: no early exit, no branch or table index on secret data).
//! * `value = s ? −magnitude : magnitude`, computed as `(magnitude XOR −s) + s`.
//!
//! Handling of 0: magnitude 0 has its own one-sided weight `ρ(0)/S` in the table (the "half
//! weight" compared with `2ρ(0)/S` for a two-sided magnitude), and both signs map it to 0, so
//! `P(0) = ρ(0)/S` and `P(±m) = ρ(m)/S` exactly as the truncated Gaussian, up to the rounding of
//! the table (each entry within 2^-64 of the exact cumulative probability).
//!
//! Precision: the table is a literal, computed once with 80-significant-digit decimal arithmetic
//! (Python `decimal`: `exp`, sums, then `round-half-even(c · 2^63)`), so it does not depend on
//! the platform's `libm`; a unit test recomputes it in `f64` and checks agreement to 2^-50.
//! The mass the tail cut removes from the untruncated distribution is ≈ 9.5·10^-10 ≈ 2^-30.
//!
//! ## Integer values mod q ([`signed_to_limb`])
//!
//! Ternary and Gaussian samples are drawn once per polynomial (independent of the limb) and
//! reduced into every limb: `v mod q` in `[0, q)`.
//!
//! # Implementation notes
//!
//! The CPU implementation drives `rand_chacha::ChaCha20Rng` (`set_stream`, `set_word_pos`,
//! `fill_bytes` of whole buffers), splitting long outputs into chunks of [`PAR_CHUNK`]
//! coefficients generated in parallel with rayon; since coefficient `i` only depends on
//! `(seed, domain, poly_index, limb, i)`, the chunking does not change any value.
//! Intermediate keystream buffers are zeroized; the ChaCha state inside `rand_chacha` (which
//! holds the key) is not, since that crate offers no zeroization.

use crate::modulus::Modulus;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Version of the randomness layout documented in this module (bumped on any change).
pub const LAYOUT_VERSION: u32 = 1;

/// Standard deviation σ of the discrete Gaussian error distribution.
pub const GAUSSIAN_SIGMA: f64 = 3.2;

/// Tail cut of the discrete Gaussian: samples satisfy `|v| <= GAUSSIAN_BOUND` (about 6σ).
pub const GAUSSIAN_BOUND: i64 = 19;

/// Outputs longer than this many coefficients are generated in chunks of this size in parallel.
pub const PAR_CHUNK: usize = 4096;

/// Bytes of keystream generated per `fill_bytes` call (16 ChaCha blocks).
const BUF_BYTES: usize = 1024;

/// Cumulative distribution table of the Gaussian magnitude, see the module documentation:
/// `T[j] = round-half-even(2^63 · P(|v| <= j))`, `j = 0..19`, 80-digit decimal arithmetic.
const GAUSSIAN_CDT: [u64; GAUSSIAN_BOUND as usize] = [
    0x0ff5_2b40_a591_7f1d,
    0x2e5a_25d4_bf0e_400e,
    0x489a_e269_55b0_4bd6,
    0x5d2b_c20f_621b_f185,
    0x6bc8_694c_3cc8_0ff5,
    0x7532_d89a_c6ba_7dcf,
    0x7ab3_96cb_7443_6799,
    0x7d9e_4e91_6643_eb08,
    0x7f05_4958_19eb_2051,
    0x7fa1_ce9c_0039_a957,
    0x7fdf_b3f2_12e8_c4e9,
    0x7ff5_e6f9_d231_4fcc,
    0x7ffd_1f97_bc44_06a3,
    0x7fff_40fa_0088_d11e,
    0x7fff_d2e8_35e1_c57e,
    0x7fff_f652_4386_ff1e,
    0x7fff_fe1d_b476_9da5,
    0x7fff_ffac_0a1d_cb09,
    0x7fff_fff4_2867_3853,
];

/// The Gaussian sampler's cumulative distribution table (19 entries, 63-bit fixed point):
/// `T[j] = round(2^63 · P(|v| <= j))`, uploaded to the GPU as is.
pub fn gaussian_cdt() -> &'static [u64] {
    &GAUSSIAN_CDT
}

/// A 32-byte seed: the ChaCha20 key from which polynomials are expanded.
///
/// Zeroized on drop; its `Debug` output does not show the bytes.
#[derive(Clone, Zeroize, ZeroizeOnDrop, Serialize, Deserialize)]
pub struct Seed(pub [u8; 32]);

impl Seed {
    /// A fresh seed from the operating system's CSPRNG.
    ///
    /// # Panics
    ///
    /// If the operating system's random number generator fails (it practically never does;
    /// continuing without randomness would be unsafe).
    pub fn random() -> Seed {
        let mut seed = Seed([0u8; 32]);
        getrandom::fill(&mut seed.0)
            .expect("the operating system's random number generator failed");
        seed
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seed(..)")
    }
}

impl PartialEq for Seed {
    /// Constant-time comparison (no early exit on the first differing byte).
    fn eq(&self, other: &Self) -> bool {
        let diff = self
            .0
            .iter()
            .zip(other.0.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        diff == 0
    }
}

impl Eq for Seed {}

/// What a random polynomial is used for: the high byte of its ChaCha stream id, which keeps
/// the streams of different purposes disjoint even when they share a seed.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Domain {
    /// The uniform `a` of public keys and (seeded) ciphertexts.
    PublicA = 1,
    /// Secret keys.
    Secret = 2,
    /// Error (noise) polynomials.
    Error = 3,
    /// The ephemeral ternary `u` of public-key encryption.
    EncryptU = 4,
    /// The uniform `a` of key-switching keys (relinearization, Galois keys).
    KeySwitchA = 5,
    /// Anything else.
    Other = 255,
}

impl Domain {
    /// The domain's tag byte (the top byte of the stream id).
    #[inline]
    pub fn tag(self) -> u8 {
        self as u8
    }
}

/// The ChaCha20 stream id (64-bit nonce) of a polynomial limb:
/// `tag << 56 | poly_index << 16 | limb`.
#[inline]
pub fn stream_id(domain: Domain, poly_index: u32, limb: u16) -> u64 {
    (u64::from(domain.tag()) << 56) | (u64::from(poly_index) << 16) | u64::from(limb)
}

/// Fills `out[k]` with `map(bytes of coefficient start + k)`, `W` keystream bytes per
/// coefficient, from one ChaCha20 stream positioned at byte `W · start`.
fn generate_range<T, const W: usize>(
    seed: &Seed,
    stream: u64,
    start: usize,
    out: &mut [T],
    map: &(impl Fn([u8; W]) -> T + Sync),
) {
    debug_assert!(W.is_multiple_of(4) && BUF_BYTES.is_multiple_of(W));
    let mut rng = ChaCha20Rng::from_seed(seed.0);
    rng.set_stream(stream);
    rng.set_word_pos((start as u128) * (W as u128 / 4));
    let mut buf = [0u8; BUF_BYTES];
    for part in out.chunks_mut(BUF_BYTES / W) {
        let bytes = &mut buf[..part.len() * W];
        rng.fill_bytes(bytes);
        for (o, c) in part.iter_mut().zip(bytes.chunks_exact(W)) {
            let mut word = [0u8; W];
            word.copy_from_slice(c);
            *o = map(word);
        }
    }
    buf.zeroize();
}

/// Fills all of `out` (coefficient `i` at `out[i]`), in parallel chunks for long outputs.
fn generate<T: Send, const W: usize>(
    seed: &Seed,
    stream: u64,
    out: &mut [T],
    map: impl Fn([u8; W]) -> T + Sync,
) {
    if out.len() <= PAR_CHUNK {
        generate_range(seed, stream, 0, out, &map);
    } else {
        out.par_chunks_mut(PAR_CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| generate_range(seed, stream, c * PAR_CHUNK, chunk, &map));
    }
}

/// Fills `out` with uniform residues mod `q`: `out[i] = (16 keystream bytes at offset 16·i as
/// a little-endian u128) mod q` on the stream [`stream_id`]`(domain, poly_index, limb)`.
pub fn uniform_limb(
    seed: &Seed,
    domain: Domain,
    poly_index: u32,
    limb: u16,
    q: &Modulus,
    out: &mut [u64],
) {
    let q = *q;
    generate::<u64, 16>(seed, stream_id(domain, poly_index, limb), out, move |b| {
        q.reduce_u128(u128::from_le_bytes(b))
    });
}

/// Fills `out` (all limbs, `[limb][coeff]`, `n = out.len() / moduli.len()` coefficients each)
/// with uniform residues: limb `j` is [`uniform_limb`] with `limb = j` and modulus `moduli[j]`.
///
/// # Errors
///
/// [`crate::Error::ShapeMismatch`] if `out.len()` is not `moduli.len()` times a whole number
/// of coefficients, or if there are more than 2^16 limbs.
pub fn uniform_limbs(
    seed: &Seed,
    domain: Domain,
    poly_index: u32,
    moduli: &[Modulus],
    out: &mut [u64],
) -> crate::Result<()> {
    if moduli.is_empty() {
        return if out.is_empty() {
            Ok(())
        } else {
            Err(crate::Error::ShapeMismatch {
                what: format!("{} coefficients for 0 limbs", out.len()),
            })
        };
    }
    if !out.len().is_multiple_of(moduli.len()) || moduli.len() > 1 << 16 {
        return Err(crate::Error::ShapeMismatch {
            what: format!(
                "{} coefficients is not a whole number of coefficients for each of {} limbs \
                 (at most 2^16 limbs)",
                out.len(),
                moduli.len()
            ),
        });
    }
    let n = out.len() / moduli.len();
    if n == 0 {
        return Ok(());
    }
    out.par_chunks_mut(n)
        .zip(moduli.par_iter())
        .enumerate()
        .for_each(|(j, (limb, q))| uniform_limb(seed, domain, poly_index, j as u16, q, limb));
    Ok(())
}

/// Maps 64 random bits to {-1, 0, 1}: `((x · 3) >> 64) - 1`.
#[inline]
fn ternary_from_u64(x: u64) -> i64 {
    ((u128::from(x) * 3) >> 64) as i64 - 1
}

/// Maps 64 random bits to the tail-cut discrete Gaussian by the constant-time CDT.
#[inline]
fn gaussian_from_u64(x: u64) -> i64 {
    let r = x & (u64::MAX >> 1);
    let sign = (x >> 63) as i64;
    // Each (r - T[j]) >> 63 is 1 exactly when r < T[j] (both are below 2^63).
    let below: u64 = GAUSSIAN_CDT
        .iter()
        .fold(0u64, |acc, &t| acc + (r.wrapping_sub(t) >> 63));
    let magnitude = (GAUSSIAN_BOUND as u64 - below) as i64;
    (magnitude ^ -sign) + sign
}

/// Fills `out` with uniform ternary values {-1, 0, 1}: `out[i] = ((x · 3) >> 64) - 1` for the
/// little-endian u64 `x` at keystream offset 8·i on the stream `stream_id(domain, poly_index, 0)`.
pub fn ternary(seed: &Seed, domain: Domain, poly_index: u32, out: &mut [i64]) {
    generate::<i64, 8>(seed, stream_id(domain, poly_index, 0), out, |b| {
        ternary_from_u64(u64::from_le_bytes(b))
    });
}

/// Fills `out` with discrete Gaussian values (σ = [`GAUSSIAN_SIGMA`], `|v| <= GAUSSIAN_BOUND`)
/// by the constant-time CDT on the little-endian u64 at keystream offset 8·i of the stream
/// `stream_id(domain, poly_index, 0)` (see the module documentation).
pub fn gaussian(seed: &Seed, domain: Domain, poly_index: u32, out: &mut [i64]) {
    generate::<i64, 8>(seed, stream_id(domain, poly_index, 0), out, |b| {
        gaussian_from_u64(u64::from_le_bytes(b))
    });
}

/// Most bits [`wide_uniform`] draws per coefficient (64 keystream bytes).
pub const WIDE_UNIFORM_MAX_BITS: u32 = 512;

/// One integer per coefficient, uniform in `[-2^(bits-1), 2^(bits-1))`, as residues:
/// `out[j][i] = v_i mod moduli[j]`. `v_i + 2^(bits-1)` is the low `bits` bits of the 64
/// keystream bytes at offset `64·i` (eight little-endian u64 words, least significant first)
/// on the stream `stream_id(domain, poly_index, 0)`; `n = out[j].len()`.
///
/// An error term spread over a wide interval, for keys whose modulus is larger than their
/// security allows with a narrow error (sparse-secret encapsulation): the ratio of modulus to
/// error is what lattice attacks see.
///
/// # Errors
///
/// [`crate::Error::ShapeMismatch`] if `bits` is 0 or above [`WIDE_UNIFORM_MAX_BITS`], if
/// `out` and `moduli` differ in length, or if the limbs differ in length.
pub fn wide_uniform(
    seed: &Seed,
    domain: Domain,
    poly_index: u32,
    bits: u32,
    moduli: &[Modulus],
    out: &mut [&mut [u64]],
) -> crate::Result<()> {
    let n = out.first().map_or(0, |l| l.len());
    if bits == 0 || bits > WIDE_UNIFORM_MAX_BITS || out.len() != moduli.len() {
        return Err(crate::Error::ShapeMismatch {
            what: format!(
                "wide uniform of {bits} bits (1..={WIDE_UNIFORM_MAX_BITS}) into {} limbs for {} moduli",
                out.len(),
                moduli.len()
            ),
        });
    }
    if out.iter().any(|l| l.len() != n) {
        return Err(crate::Error::ShapeMismatch {
            what: "wide uniform limbs of different lengths".into(),
        });
    }
    let mut words = vec![[0u64; 8]; n];
    generate::<[u64; 8], 64>(seed, stream_id(domain, poly_index, 0), &mut words, |b| {
        let mut w = [0u64; 8];
        for (k, c) in b.chunks_exact(8).enumerate() {
            w[k] = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        }
        w
    });
    // Keep the low `bits` bits.
    let top = ((bits - 1) / 64) as usize;
    let top_bits = bits - 64 * top as u32;
    let mask = if top_bits == 64 {
        u64::MAX
    } else {
        (1u64 << top_bits) - 1
    };
    for w in &mut words {
        w[top] &= mask;
        w[top + 1..].iter_mut().for_each(|x| *x = 0);
    }
    for (q, limb) in moduli.iter().zip(out.iter_mut()) {
        // 2^(bits-1) mod q, the offset that centres the interval.
        let half = (0..bits - 1).fold(1u64, |acc, _| q.add(acc, acc));
        for (o, w) in limb.iter_mut().zip(&words) {
            let v = w[..=top].iter().rev().fold(0u64, |r, &x| {
                q.reduce_u128((u128::from(r) << 64) | u128::from(x))
            });
            *o = q.sub(v, half);
        }
    }
    words.zeroize();
    Ok(())
}

/// Reduces small signed integers into `[0, q)`: `out[i] = values[i] mod q`.
///
/// Constant time for `|values[i]| < q` (the case of ternary and Gaussian samples); larger
/// magnitudes take a slower general path.
///
/// # Panics
///
/// If `values.len() != out.len()`.
pub fn signed_to_limb(values: &[i64], q: &Modulus, out: &mut [u64]) {
    assert_eq!(
        values.len(),
        out.len(),
        "signed_to_limb: input and output lengths differ"
    );
    let qv = q.value();
    for (o, &v) in out.iter_mut().zip(values) {
        *o = if v.unsigned_abs() < qv {
            // v + (q if v < 0), without a branch on the sign.
            (v as u64).wrapping_add(qv & ((v >> 63) as u64))
        } else {
            q.reduce_i64(v)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Independent reference ChaCha20 block function (64-bit counter, 64-bit stream id),
    /// written from the specification for the GPU port to follow.
    fn ref_block(key: &[u8; 32], counter: u64, stream: u64) -> [u32; 16] {
        let mut s = [0u32; 16];
        s[0] = 0x6170_7865;
        s[1] = 0x3320_646e;
        s[2] = 0x7962_2d32;
        s[3] = 0x6b20_6574;
        for k in 0..8 {
            s[4 + k] = u32::from_le_bytes(key[4 * k..4 * k + 4].try_into().unwrap());
        }
        s[12] = counter as u32;
        s[13] = (counter >> 32) as u32;
        s[14] = stream as u32;
        s[15] = (stream >> 32) as u32;
        let mut x = s;
        fn qr(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
            x[a] = x[a].wrapping_add(x[b]);
            x[d] = (x[d] ^ x[a]).rotate_left(16);
            x[c] = x[c].wrapping_add(x[d]);
            x[b] = (x[b] ^ x[c]).rotate_left(12);
            x[a] = x[a].wrapping_add(x[b]);
            x[d] = (x[d] ^ x[a]).rotate_left(8);
            x[c] = x[c].wrapping_add(x[d]);
            x[b] = (x[b] ^ x[c]).rotate_left(7);
        }
        for _ in 0..10 {
            qr(&mut x, 0, 4, 8, 12);
            qr(&mut x, 1, 5, 9, 13);
            qr(&mut x, 2, 6, 10, 14);
            qr(&mut x, 3, 7, 11, 15);
            qr(&mut x, 0, 5, 10, 15);
            qr(&mut x, 1, 6, 11, 12);
            qr(&mut x, 2, 7, 8, 13);
            qr(&mut x, 3, 4, 9, 14);
        }
        for k in 0..16 {
            x[k] = x[k].wrapping_add(s[k]);
        }
        x
    }

    fn block_bytes(words: &[u32; 16]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn test_seed() -> Seed {
        let mut s = [0u8; 32];
        for (i, b) in s.iter_mut().enumerate() {
            *b = i as u8;
        }
        Seed(s)
    }

    fn rand_chacha_bytes(key: &[u8; 32], counter: u64, stream: u64, len: usize) -> Vec<u8> {
        let mut rng = ChaCha20Rng::from_seed(*key);
        rng.set_stream(stream);
        rng.set_word_pos(u128::from(counter) * 16);
        let mut out = vec![0u8; len];
        rng.fill_bytes(&mut out);
        out
    }

    /// RFC 8439 §2.3.2: key 00..1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1.
    /// In the 64/64 layout: block counter = 1 | 0x09000000 << 32, stream id = 0x4a000000.
    #[test]
    fn chacha_known_answer_rfc8439() {
        let expected: [u8; 64] = [
            0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20,
            0x71, 0xc4, 0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22, 0xaa, 0x9a,
            0xc3, 0xd4, 0x6c, 0x4e, 0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa, 0x09, 0x14, 0xc2,
            0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2, 0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e, 0xb9,
            0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e,
        ];
        let key = test_seed().0;
        let counter = 1u64 | (0x0900_0000u64 << 32);
        let stream = 0x4a00_0000u64;
        assert_eq!(block_bytes(&ref_block(&key, counter, stream)), expected);
        assert_eq!(rand_chacha_bytes(&key, counter, stream, 64), expected);
    }

    /// rand_chacha agrees with the reference block function over several blocks, including a
    /// stream id with all fields set and a block counter above 2^32.
    #[test]
    fn rand_chacha_matches_reference_layout() {
        let key = test_seed().0;
        let stream = stream_id(Domain::KeySwitchA, 0x0102_0304, 0x0506);
        assert_eq!(stream, 0x0500_0102_0304_0506);
        for &start in &[0u64, 1, 5, (1 << 32) - 2] {
            let got = rand_chacha_bytes(&key, start, stream, 64 * 5);
            let want: Vec<u8> = (0..5)
                .flat_map(|b| block_bytes(&ref_block(&key, start + b, stream)))
                .collect();
            assert_eq!(got, want, "start block {start}");
        }
    }

    /// Known answer for the all-zero key, counter 0, stream 0 (the classic ChaCha20 test vector,
    /// first 16 bytes 76 b8 e0 ad a0 f1 3d 90 ...).
    #[test]
    fn chacha_known_answer_zero_key() {
        let b = block_bytes(&ref_block(&[0u8; 32], 0, 0));
        assert_eq!(
            &b[..16],
            &[
                0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86,
                0xbd, 0x28
            ]
        );
        assert_eq!(rand_chacha_bytes(&[0u8; 32], 0, 0, 64), b);
    }

    #[test]
    fn stream_id_layout() {
        assert_eq!(stream_id(Domain::PublicA, 0, 0), 1 << 56);
        assert_eq!(
            stream_id(Domain::Other, u32::MAX, u16::MAX),
            0xff00_ffff_ffff_ffff
        );
        assert_eq!(stream_id(Domain::Error, 2, 7), (3 << 56) | (2 << 16) | 7);
        let tags = [
            Domain::PublicA,
            Domain::Secret,
            Domain::Error,
            Domain::EncryptU,
            Domain::KeySwitchA,
            Domain::Other,
        ]
        .map(Domain::tag);
        assert_eq!(tags, [1, 2, 3, 4, 5, 255]);
    }

    /// The samplers against the layout computed directly from the reference block function.
    #[test]
    fn samplers_match_reference_layout() {
        let seed = test_seed();
        let q = Modulus::new((1 << 60) - 93).unwrap();
        let n = 300;
        let mut u = vec![0u64; n];
        uniform_limb(&seed, Domain::PublicA, 3, 2, &q, &mut u);
        let st = stream_id(Domain::PublicA, 3, 2);
        for (i, &v) in u.iter().enumerate() {
            let o = ref_block(&seed.0, (i / 4) as u64, st);
            let w = 4 * (i % 4);
            let x = u128::from(o[w])
                | u128::from(o[w + 1]) << 32
                | u128::from(o[w + 2]) << 64
                | u128::from(o[w + 3]) << 96;
            assert_eq!(v, (x % u128::from(q.value())) as u64);
        }

        let mut t = vec![0i64; n];
        let mut g = vec![0i64; n];
        ternary(&seed, Domain::Secret, 1, &mut t);
        gaussian(&seed, Domain::Error, 1, &mut g);
        for i in 0..n {
            let w = 2 * (i % 8);
            let word = |st: u64| {
                let o = ref_block(&seed.0, (i / 8) as u64, st);
                u64::from(o[w]) | u64::from(o[w + 1]) << 32
            };
            let x = word(stream_id(Domain::Secret, 1, 0));
            assert_eq!(t[i], ((u128::from(x) * 3) >> 64) as i64 - 1);
            // Naive (variable-time) CDT lookup as the reference.
            let x = word(stream_id(Domain::Error, 1, 0));
            let r = x & (u64::MAX >> 1);
            let mag = GAUSSIAN_CDT.iter().position(|&c| r < c).unwrap_or(19) as i64;
            assert_eq!(g[i], if x >> 63 == 1 { -mag } else { mag });
        }
    }

    /// Pinned outputs: any change here is a layout change (bump LAYOUT_VERSION).
    #[test]
    fn golden_values() {
        let seed = test_seed();
        let q = Modulus::new(0x1fff_ffff_ffe0_0001).unwrap();
        let mut u = [0u64; 4];
        uniform_limb(&seed, Domain::PublicA, 0, 0, &q, &mut u);
        let mut t = [0i64; 16];
        ternary(&seed, Domain::Secret, 0, &mut t);
        let mut g = [0i64; 16];
        gaussian(&seed, Domain::Error, 0, &mut g);
        assert_eq!(u, GOLDEN_UNIFORM, "uniform {u:#x?}");
        assert_eq!(t, GOLDEN_TERNARY, "ternary {t:?}");
        assert_eq!(g, GOLDEN_GAUSSIAN, "gaussian {g:?}");
    }

    const GOLDEN_UNIFORM: [u64; 4] = [
        0x181a_81d3_bd1f_0360,
        0x0733_ebeb_572d_fe35,
        0x12df_71e7_4050_b277,
        0x173b_dce1_a8ef_ffb3,
    ];
    const GOLDEN_TERNARY: [i64; 16] = [1, -1, 0, 1, 0, 1, 0, 1, -1, -1, 1, 1, 0, 0, 0, 1];
    const GOLDEN_GAUSSIAN: [i64; 16] = [-4, -1, -2, -3, 4, 5, 7, 6, 5, 2, 2, -2, -5, -5, -1, -1];

    #[test]
    fn deterministic_and_prefix_independent() {
        let seed = test_seed();
        let q = Modulus::new(1_152_921_504_606_830_593).unwrap();
        // Serial path (<= PAR_CHUNK), parallel path, and chunk boundaries.
        let mut long = vec![0u64; 3 * PAR_CHUNK + 77];
        uniform_limb(&seed, Domain::PublicA, 9, 4, &q, &mut long);
        for len in [0, 1, 100, 1000, PAR_CHUNK, PAR_CHUNK + 1, 2 * PAR_CHUNK + 5] {
            let mut short = vec![0u64; len];
            uniform_limb(&seed, Domain::PublicA, 9, 4, &q, &mut short);
            assert_eq!(short[..], long[..len], "uniform prefix {len}");
        }
        let mut again = vec![0u64; long.len()];
        uniform_limb(&seed, Domain::PublicA, 9, 4, &q, &mut again);
        assert_eq!(again, long);

        let mut tl = vec![0i64; 3 * PAR_CHUNK + 5];
        let mut gl = vec![0i64; 3 * PAR_CHUNK + 5];
        ternary(&seed, Domain::Secret, 0, &mut tl);
        gaussian(&seed, Domain::Error, 0, &mut gl);
        for len in [1, 100, 1000, PAR_CHUNK + 3] {
            let mut ts = vec![0i64; len];
            let mut gs = vec![0i64; len];
            ternary(&seed, Domain::Secret, 0, &mut ts);
            gaussian(&seed, Domain::Error, 0, &mut gs);
            assert_eq!(ts[..], tl[..len]);
            assert_eq!(gs[..], gl[..len]);
        }
    }

    #[test]
    fn different_inputs_give_different_streams() {
        let seed = test_seed();
        let q = Modulus::new(1_152_921_504_606_830_593).unwrap();
        let gen_u = |seed: &Seed, d: Domain, p: u32, l: u16| {
            let mut v = vec![0u64; 64];
            uniform_limb(seed, d, p, l, &q, &mut v);
            v
        };
        let base = gen_u(&seed, Domain::PublicA, 0, 0);
        assert_ne!(base, gen_u(&seed, Domain::KeySwitchA, 0, 0));
        assert_ne!(base, gen_u(&seed, Domain::PublicA, 1, 0));
        assert_ne!(base, gen_u(&seed, Domain::PublicA, 0, 1));
        let mut other = seed.clone();
        other.0[31] ^= 1;
        assert_ne!(base, gen_u(&other, Domain::PublicA, 0, 0));

        let gen_t = |d: Domain, p: u32| {
            let mut v = vec![0i64; 64];
            ternary(&seed, d, p, &mut v);
            v
        };
        assert_ne!(gen_t(Domain::Secret, 0), gen_t(Domain::EncryptU, 0));
        assert_ne!(gen_t(Domain::Secret, 0), gen_t(Domain::Secret, 1));
    }

    #[test]
    fn uniform_statistics() {
        let seed = Seed::random();
        // Large modulus: mean and 16-bucket chi-square.
        let q = Modulus::new(1_152_921_504_606_830_593).unwrap();
        let n = 1 << 16;
        let mut v = vec![0u64; n];
        uniform_limb(&seed, Domain::PublicA, 0, 0, &q, &mut v);
        assert!(v.iter().all(|&x| x < q.value()));
        let mean = v.iter().map(|&x| x as f64 / q.value() as f64).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
        let mut buckets = [0f64; 16];
        for &x in &v {
            buckets[((x as u128 * 16) / q.value() as u128) as usize] += 1.0;
        }
        let e = n as f64 / 16.0;
        let chi2: f64 = buckets.iter().map(|&c| (c - e) * (c - e) / e).sum();
        assert!(chi2 < 60.0, "chi2 {chi2}");
        // Small modulus: exact residue counts.
        let q = Modulus::new(17).unwrap();
        uniform_limb(&seed, Domain::PublicA, 0, 1, &q, &mut v);
        let mut counts = [0f64; 17];
        for &x in &v {
            counts[x as usize] += 1.0;
        }
        let e = n as f64 / 17.0;
        let chi2: f64 = counts.iter().map(|&c| (c - e) * (c - e) / e).sum();
        assert!(chi2 < 60.0, "chi2 {chi2}");
    }

    #[test]
    fn uniform_limbs_matches_per_limb() {
        let seed = test_seed();
        let moduli: Vec<Modulus> = [17u64, (1 << 40) + 15, 1_152_921_504_606_830_593]
            .iter()
            .map(|&q| Modulus::new(q).unwrap())
            .collect();
        let n = 1000;
        let mut all = vec![0u64; 3 * n];
        uniform_limbs(&seed, Domain::KeySwitchA, 2, &moduli, &mut all).unwrap();
        for (j, q) in moduli.iter().enumerate() {
            let mut one = vec![0u64; n];
            uniform_limb(&seed, Domain::KeySwitchA, 2, j as u16, q, &mut one);
            assert_eq!(all[j * n..(j + 1) * n], one[..]);
        }
        assert!(uniform_limbs(&seed, Domain::KeySwitchA, 2, &moduli, &mut all[..10]).is_err());
        assert!(uniform_limbs(&seed, Domain::KeySwitchA, 2, &[], &mut all).is_err());
        assert!(uniform_limbs(&seed, Domain::KeySwitchA, 2, &[], &mut []).is_ok());
    }

    #[test]
    fn ternary_statistics() {
        let seed = Seed::random();
        let n = 1 << 16;
        let mut v = vec![0i64; n];
        ternary(&seed, Domain::Secret, 0, &mut v);
        let mut counts = [0usize; 3];
        for &x in &v {
            assert!((-1..=1).contains(&x));
            counts[(x + 1) as usize] += 1;
        }
        for c in counts {
            let f = c as f64 / n as f64;
            assert!((f - 1.0 / 3.0).abs() < 0.01, "frequency {f}");
        }
        assert_eq!(ternary_from_u64(0), -1);
        assert_eq!(ternary_from_u64(u64::MAX), 1);
        assert_eq!(ternary_from_u64(u64::MAX / 3 + 1), 0);
    }

    #[test]
    fn gaussian_statistics() {
        let seed = Seed::random();
        let n = 1 << 16;
        let mut v = vec![0i64; n];
        gaussian(&seed, Domain::Error, 0, &mut v);
        assert!(v.iter().all(|&x| x.abs() <= GAUSSIAN_BOUND));
        let mean = v.iter().sum::<i64>() as f64 / n as f64;
        let var = v.iter().map(|&x| (x * x) as f64).sum::<f64>() / n as f64 - mean * mean;
        assert!(mean.abs() < 0.1, "mean {mean}");
        let want = GAUSSIAN_SIGMA * GAUSSIAN_SIGMA;
        assert!((var - want).abs() < 0.4, "variance {var}");
        let zeros = v.iter().filter(|&&x| x == 0).count() as f64 / n as f64;
        let p0 = 1.0 / (GAUSSIAN_SIGMA * (2.0 * std::f64::consts::PI).sqrt());
        assert!((zeros - p0).abs() < 0.01, "P(0) {zeros} vs {p0}");
    }

    #[test]
    fn gaussian_extremes() {
        // r = 0 gives magnitude 0 for either sign; r = 2^63 - 1 gives the bound.
        assert_eq!(gaussian_from_u64(0), 0);
        assert_eq!(gaussian_from_u64(1 << 63), 0);
        assert_eq!(gaussian_from_u64(u64::MAX >> 1), GAUSSIAN_BOUND);
        assert_eq!(gaussian_from_u64(u64::MAX), -GAUSSIAN_BOUND);
        // Exactly at a table entry the magnitude steps up.
        for (j, &t) in GAUSSIAN_CDT.iter().enumerate() {
            assert_eq!(gaussian_from_u64(t - 1), j as i64);
            assert_eq!(gaussian_from_u64(t), j as i64 + 1);
            assert_eq!(gaussian_from_u64(t | 1 << 63), -(j as i64 + 1));
        }
    }

    /// The literal table agrees with an f64 recomputation to 2^-50 and is increasing.
    #[test]
    fn gaussian_cdt_table() {
        let cdt = gaussian_cdt();
        assert_eq!(cdt.len(), GAUSSIAN_BOUND as usize);
        assert!(cdt.windows(2).all(|w| w[0] < w[1]));
        assert!(cdt[cdt.len() - 1] < 1 << 63);
        let s2 = 2.0 * GAUSSIAN_SIGMA * GAUSSIAN_SIGMA;
        let rho = |x: i64| (-((x * x) as f64) / s2).exp();
        let total: f64 = (-GAUSSIAN_BOUND..=GAUSSIAN_BOUND).map(rho).sum();
        for (j, &t) in cdt.iter().enumerate() {
            // Complement P(|v| > j), accurate in relative terms.
            let tail: f64 = ((j as i64 + 1)..=GAUSSIAN_BOUND)
                .map(|m| 2.0 * rho(m))
                .sum::<f64>()
                / total;
            let exact = (1u64 << 63) as f64 * (1.0 - tail);
            let err = (exact - t as f64).abs() / (1u64 << 63) as f64;
            assert!(err < 2f64.powi(-50), "entry {j}: error {err}");
        }
    }

    #[test]
    fn signed_to_limb_reduces() {
        let q = Modulus::new(97).unwrap();
        let vals = [
            0i64,
            1,
            -1,
            19,
            -19,
            96,
            -96,
            97,
            -97,
            1000,
            -1000,
            i64::MIN,
            i64::MAX,
        ];
        let mut out = [0u64; 13];
        signed_to_limb(&vals, &q, &mut out);
        for (&v, &o) in vals.iter().zip(&out) {
            assert_eq!(o as i128, (v as i128).rem_euclid(97));
        }
    }

    #[test]
    fn seed_traits() {
        let a = Seed::random();
        let b = Seed::random();
        assert_ne!(a, b);
        assert_eq!(a, a.clone());
        let dbg = format!("{a:?}");
        assert_eq!(dbg, "Seed(..)");
        let mut z = a.clone();
        z.zeroize();
        assert_eq!(z.0, [0u8; 32]);
    }

    /// `wide_uniform`'s coefficient `i` is the `i`-th ChaCha20 block of its stream, cut to
    /// `bits` bits and centred: checked against the reference block function at 100 bits,
    /// whose values fit an i128.
    #[test]
    fn wide_uniform_matches_reference_blocks() {
        let seed = Seed([17; 32]);
        let moduli = [
            Modulus::new(0x0fff_ffff_fffc_0001).unwrap(),
            Modulus::new(1_152_921_504_606_584_833).unwrap(),
        ];
        let n = 300;
        let bits = 100u32;
        let mut l0 = vec![0u64; n];
        let mut l1 = vec![0u64; n];
        wide_uniform(
            &seed,
            Domain::Other,
            1,
            bits,
            &moduli,
            &mut [&mut l0, &mut l1],
        )
        .unwrap();
        let stream = stream_id(Domain::Other, 1, 0);
        let mut widest = 0i128;
        for i in 0..n {
            let b = ref_block(&seed.0, i as u64, stream);
            let lo = u64::from(b[0]) | (u64::from(b[1]) << 32);
            let hi = (u64::from(b[2]) | (u64::from(b[3]) << 32)) & ((1u64 << (bits - 64)) - 1);
            let v = ((i128::from(hi) << 64) | i128::from(lo)) - (1i128 << (bits - 1));
            assert!(v >= -(1i128 << (bits - 1)) && v < (1i128 << (bits - 1)));
            widest = widest.max(v.abs());
            for (q, l) in moduli.iter().zip([&l0, &l1]) {
                let want = v.rem_euclid(i128::from(q.value())) as u64;
                assert_eq!(l[i], want, "coefficient {i} mod {}", q.value());
            }
        }
        assert!(
            widest > 1i128 << (bits - 3),
            "values spread over the interval"
        );
        // Bad shapes are errors.
        let mut short = vec![0u64; n - 1];
        assert!(
            wide_uniform(
                &seed,
                Domain::Other,
                1,
                bits,
                &moduli,
                &mut [&mut l0, &mut short]
            )
            .is_err()
        );
        assert!(
            wide_uniform(&seed, Domain::Other, 1, 0, &moduli, &mut [&mut l0, &mut l1]).is_err()
        );
        assert!(
            wide_uniform(
                &seed,
                Domain::Other,
                1,
                513,
                &moduli,
                &mut [&mut l0, &mut l1]
            )
            .is_err()
        );
    }
}
