//! Test fixtures of the blind-rotation tests: a tiny ring (N = 16, q = 97) and keys filled with
//! pseudo-random residues. Only the agreement between backends is tested with them, so the
//! keys need not be encryptions of anything.

use fhe_math::Modulus;
use fhe_math::backend::blind_rotate::{
    BlindRotateParams, BootstrapKeyHost, Gadget, KeySwitchKeyHost, KeySwitchParams, LweBatchHost,
};
use fhe_math::ring::RingContext;
use std::sync::Arc;

/// The fixtures' prime: `97 ≡ 1 (mod 32)`, so the ring of degree 16 has its NTT.
const Q: u64 = 97;

/// The ring `Z_97[X]/(X^16 + 1)` (with one special prime, which blind rotation does not use).
pub(crate) fn tiny_ring() -> Arc<RingContext> {
    let special = fhe_math::primes::ntt_prime_nearest(1 << 30, 32, &[Q]).unwrap();
    RingContext::new(16, &[Q], &[special], std::iter::once(0..1).collect()).unwrap()
}

/// n = 4, N = 16, k = 1, q = 97, gadget 2^2 × 2, `keys_per_coefficient` RGSW per coefficient.
pub(crate) fn tiny_params(keys_per_coefficient: usize) -> BlindRotateParams {
    BlindRotateParams {
        lwe_dimension: 4,
        ring_degree: 16,
        glwe_dimension: 1,
        modulus: Modulus::new(Q).unwrap(),
        gadget: Gadget {
            base_log: 2,
            levels: 2,
        },
        keys_per_coefficient,
        group_size: 1,
    }
}

/// Residues mod 97 from a 64-bit linear congruential generator (Knuth's MMIX constants).
pub(crate) struct Residues(pub(crate) u64);

impl Residues {
    /// The next residue.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % Q
    }

    /// `len` residues.
    pub(crate) fn take(&mut self, len: usize) -> Vec<u64> {
        (0..len).map(|_| self.next()).collect()
    }

    /// A bootstrapping key of shape `p` and a key-switching key from dimension `k·N = 16` to
    /// `n = 4`, with the gadget of `p`.
    pub(crate) fn keys(&mut self, p: BlindRotateParams) -> (BootstrapKeyHost, KeySwitchKeyHost) {
        let key = BootstrapKeyHost {
            params: p,
            data: self.take(p.key_len()),
        };
        let ksp = KeySwitchParams {
            input_dimension: 16,
            output_dimension: 4,
            modulus: p.modulus,
            gadget: p.gadget,
        };
        let ksk = KeySwitchKeyHost {
            params: ksp,
            data: self.take(ksp.key_len()),
        };
        (key, ksk)
    }

    /// `count` LWE ciphertexts of dimension 4 under the modulus of `p`.
    pub(crate) fn batch(&mut self, p: BlindRotateParams, count: usize) -> LweBatchHost {
        LweBatchHost {
            dimension: 4,
            modulus: p.modulus,
            data: self.take(count * 5),
        }
    }
}
