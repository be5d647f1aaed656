//! Seeded sampling of keys, masks and noise, in the project's ChaCha20 layout.
//!
//! Every value is a function of `(seed, stream, index)`: the stream is
//! [`fhe_math::sampler::stream_id`]`(domain, object, part)` and the generator is
//! `rand_chacha::ChaCha20Rng` on that stream, the layout of [`fhe_math::sampler`]. Per
//! coefficient `i`:
//!
//! * uniform mod `q`: [`fhe_math::sampler::uniform_limb`] (16 bytes at offset `16 i`, as a
//!   little-endian `u128`, mod `q`);
//! * ternary: [`fhe_math::sampler::ternary`] (8 bytes at `8 i`, `(x · 3) >> 64` minus 1);
//! * binary: the 8 bytes at `8 i` as a little-endian `u64` `x`, value `x >> 63`;
//! * bounded uniform noise in `[-B, B]`: the 16 bytes at `16 i` as a little-endian `u128` `x`,
//!   value `(x mod (2B + 1)) − B` (statistical distance from uniform below `2B / 2^128`).
//!
//! Streams used (domain, object, part): LWE secret `(Secret, 0, 0)`, GLWE secret
//! `(Secret, 1, 0)` (all `k · N` coefficients in one stream); bootstrapping-key row `r`
//! (numbered over the whole key): masks `(PublicA, r, c)` for mask polynomial `c`, noise
//! `(Error, r, 0)`; key-switching-key row `r`: mask `(KeySwitchA, r, 0)`, noise `(Error, r, 1)`;
//! an LWE encryption from its own seed: mask `(PublicA, 0, 0)`, noise `(Error, 0, 0)`.

use fhe_math::Modulus;
use fhe_math::sampler::{self, Domain, Seed, stream_id};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use zeroize::Zeroize;

use crate::params::SecretKind;

/// A sampling stream: a domain, an object index and a part index.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stream {
    pub domain: Domain,
    pub object: u32,
    pub part: u16,
}

fn fill_words<const W: usize>(seed: &Seed, s: Stream, count: usize, mut f: impl FnMut([u8; W])) {
    let mut rng = ChaCha20Rng::from_seed(seed.0);
    rng.set_stream(stream_id(s.domain, s.object, s.part));
    rng.set_word_pos(0);
    let mut buf = vec![0u8; count * W];
    rng.fill_bytes(&mut buf);
    for c in buf.chunks_exact(W) {
        let mut w = [0u8; W];
        w.copy_from_slice(c);
        f(w);
    }
    buf.zeroize();
}

/// Uniform residues mod `q`.
pub(crate) fn uniform(seed: &Seed, s: Stream, q: &Modulus, out: &mut [u64]) {
    sampler::uniform_limb(seed, s.domain, s.object, s.part, q, out);
}

/// A secret key of the given kind, as signed integers.
pub(crate) fn secret(seed: &Seed, s: Stream, kind: SecretKind, out: &mut [i64]) {
    match kind {
        SecretKind::Ternary => {
            // The fhe-math ternary sampler reads limb 0 of the stream.
            debug_assert_eq!(s.part, 0);
            sampler::ternary(seed, s.domain, s.object, out);
        }
        SecretKind::Binary => {
            let mut i = 0;
            fill_words::<8>(seed, s, out.len(), |w| {
                out[i] = (u64::from_le_bytes(w) >> 63) as i64;
                i += 1;
            });
        }
    }
}

/// Bounded uniform noise in `[-bound, bound]`, reduced mod `q`.
pub(crate) fn noise(seed: &Seed, s: Stream, bound: u64, q: &Modulus, out: &mut [u64]) {
    let width = 2 * u128::from(bound) + 1;
    let mut i = 0;
    fill_words::<16>(seed, s, out.len(), |w| {
        let v = (u128::from_le_bytes(w) % width) as i64 - bound as i64;
        out[i] = q.reduce_i64(v);
        i += 1;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_bounded_and_centred() {
        let q = Modulus::new(1_073_738_753).unwrap();
        let mut out = vec![0u64; 20000];
        let s = Stream {
            domain: Domain::Error,
            object: 3,
            part: 0,
        };
        noise(&Seed([7; 32]), s, 5, &q, &mut out);
        let vals: Vec<i64> = out.iter().map(|&x| q.center(x)).collect();
        assert!(vals.iter().all(|v| v.abs() <= 5));
        assert!(vals.contains(&5) && vals.contains(&-5));
        let mean = vals.iter().sum::<i64>() as f64 / vals.len() as f64;
        assert!(mean.abs() < 0.1, "mean {mean}");
    }

    #[test]
    fn binary_secret_is_binary_and_balanced() {
        let mut out = vec![0i64; 10000];
        let s = Stream {
            domain: Domain::Secret,
            object: 0,
            part: 0,
        };
        secret(&Seed([1; 32]), s, SecretKind::Binary, &mut out);
        assert!(out.iter().all(|&v| v == 0 || v == 1));
        let ones = out.iter().filter(|&&v| v == 1).count();
        assert!((4500..5500).contains(&ones));
    }
}
