//! Checks and helpers shared by every scheme's parameter validation: the ranges of the literal's
//! fields, the digit partition of hybrid key switching, the choice of the special primes and
//! `q_0`, `P` covering every digit, the 128-bit bound on `log2 QP` (exact near the bound), the
//! FNV-1a fingerprint, the checks of a deserialized parameter set, and whether a backend's ring
//! is the one of a chain.

use fhe_math::primes::ntt_primes;
use fhe_math::ring::RingContext;
use fhe_math::security::{MAX_LOG_N, MIN_LOG_N, max_log_qp_128};
use num_bigint::BigUint;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The largest number of primes (`L + 1 + K`) a parameter set may have.
pub const MAX_PRIMES: usize = 256;

/// The largest serialized parameter blob a scheme's `Parameters::from_bytes` accepts.
pub const MAX_PARAMETERS_BLOB: usize = 1 << 20;

/// The security requirement of a parameter set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Security {
    /// `log2 QP` must not exceed the 128-bit classical bound for uniform ternary secrets
    /// ([`fhe_math::security::max_log_qp_128`]).
    Bits128,
    /// No security check at all: for fast tests only, never for real data.
    InsecureForTestingOnly,
}

impl Security {
    /// `Some((log2 QP, bound))` when the requirement is [`Security::Bits128`] and the chain
    /// exceeds the bound at `log_n` ([`exceeds_security_bound`]); `None` when it is met.
    pub fn violation(self, log_n: u32, moduli_q: &[u64], moduli_p: &[u64]) -> Option<(f64, f64)> {
        match self {
            Security::Bits128 => exceeds_security_bound(log_n, moduli_q, moduli_p),
            Security::InsecureForTestingOnly => None,
        }
    }
}

/// An error message when `log_n` is outside the supported ring degrees.
pub fn check_log_n(log_n: u32) -> Result<(), String> {
    if !(MIN_LOG_N..=MAX_LOG_N).contains(&log_n) {
        return Err(format!(
            "log_n = {log_n} is outside {MIN_LOG_N}..={MAX_LOG_N}"
        ));
    }
    Ok(())
}

/// An error message when the bit size `bits` of the literal's field `name` is outside 20..=60.
pub fn check_prime_bits(name: &str, bits: u32) -> Result<(), String> {
    if !(20..=60).contains(&bits) {
        return Err(format!("{name} = {bits} is outside 20..=60"));
    }
    Ok(())
}

/// The number of ciphertext primes `L + 1` and the digit partition ([`digit_partition`]) of a
/// chain of `levels` switches with `special_primes` special primes and `dnum` digits; an error
/// message when there is no special prime or more than [`MAX_PRIMES`] primes in all.
pub fn chain_layout(
    levels: usize,
    special_primes: usize,
    dnum: usize,
) -> Result<(usize, Vec<Range<usize>>), String> {
    if special_primes == 0 {
        return Err("special_primes must be at least 1".into());
    }
    let q_count = levels
        .checked_add(1)
        .filter(|&c| c.saturating_add(special_primes) <= MAX_PRIMES)
        .ok_or_else(|| {
            format!(
                "levels + 1 + special_primes = {levels} + 1 + {special_primes} exceeds {MAX_PRIMES} primes"
            )
        })?;
    let digits = digit_partition(q_count, dnum)?;
    Ok((q_count, digits))
}

/// The special primes (the `special_primes` largest primes of `special_prime_bits` bits) and
/// `q_0` (the largest prime of `first_prime_bits` bits not among them), all `≡ 1 (mod two_n)`.
/// Returns `P`, `q_0`, and every prime chosen so far (to exclude from the next choices).
pub fn special_and_first_primes(
    two_n: u64,
    special_prime_bits: u32,
    special_primes: usize,
    first_prime_bits: u32,
) -> fhe_math::Result<(Vec<u64>, u64, Vec<u64>)> {
    let moduli_p = ntt_primes(special_prime_bits, two_n, special_primes, &[])?;
    let mut chosen = moduli_p.clone();
    let q0 = ntt_primes(first_prime_bits, two_n, 1, &chosen)?[0];
    chosen.push(q0);
    Ok((moduli_p, q0, chosen))
}

/// FNV-1a 64-bit offset basis (the start value of [`fnv1a`]).
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a (64-bit) over `bytes`, continuing from `h`. For mismatch detection, not security.
pub fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// FNV-1a over the chain every scheme's fingerprint starts with: `tag`, then as `u64`
/// little-endian: `n`, the number of Q primes and each Q prime, the number of P primes and each
/// P prime, `dnum`. A scheme continues with [`fnv1a`] over its own fields.
pub fn chain_fingerprint(
    tag: &[u8],
    n: usize,
    moduli_q: &[u64],
    moduli_p: &[u64],
    dnum: usize,
) -> u64 {
    let mut h = fnv1a(FNV_OFFSET, tag);
    let mut put = |v: u64| h = fnv1a(h, &v.to_le_bytes());
    put(n as u64);
    put(moduli_q.len() as u64);
    moduli_q.iter().for_each(|&q| put(q));
    put(moduli_p.len() as u64);
    moduli_p.iter().for_each(|&p| put(p));
    put(dnum as u64);
    h
}

/// What identifies a prime chain: its ciphertext and special primes and the parameter
/// fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainId<'a> {
    /// The ciphertext primes `q_0, q_1, …`.
    pub moduli_q: &'a [u64],
    /// The special primes of key switching.
    pub moduli_p: &'a [u64],
    /// The parameter fingerprint ([`chain_fingerprint`]).
    pub fingerprint: u64,
}

impl<'a> ChainId<'a> {
    /// The identity of the chain with these primes and fingerprint.
    pub fn new(moduli_q: &'a [u64], moduli_p: &'a [u64], fingerprint: u64) -> Self {
        ChainId {
            moduli_q,
            moduli_p,
            fingerprint,
        }
    }
}

/// Compares the chain stored with a deserialized parameter set with the one rebuilt from its
/// literal: an error message saying what differs.
pub fn check_rebuilt(stored: ChainId<'_>, rebuilt: ChainId<'_>) -> Result<(), String> {
    if rebuilt.moduli_q != stored.moduli_q || rebuilt.moduli_p != stored.moduli_p {
        return Err("the stored primes differ from those the literal yields".into());
    }
    if rebuilt.fingerprint != stored.fingerprint {
        return Err(format!(
            "stored fingerprint {:#018x} differs from the computed {:#018x}",
            stored.fingerprint, rebuilt.fingerprint
        ));
    }
    Ok(())
}

/// The prime chain of a scheme's parameter set: what building its ring and binding a backend
/// to it need (implemented by `ckks::Parameters` and `bgv::Parameters`).
pub trait PrimeChain {
    /// The ring degree `N`.
    fn n(&self) -> usize;
    /// The ciphertext primes `q_0 … q_L`.
    fn moduli_q(&self) -> &[u64];
    /// The special primes `p_0 … p_{K-1}`.
    fn moduli_p(&self) -> &[u64];
    /// The key-switching digits (ranges of indices into the ciphertext primes).
    fn digits(&self) -> Vec<Range<usize>>;
}

/// The accessors and the blob round trip that every scheme's `Parameters` shares, expanded
/// inside its `impl Parameters` block. The type needs the fields `literal` (with `log_n`, `dnum`
/// and `security`), `n`, `moduli_q`, `moduli_p`, `digits`, `log2_q`, `log2_p` and
/// `fingerprint`, and the call site needs `Result` (with `From<rlwe::Error>`), `Security`,
/// `ParametersLiteral`, `ParametersWire` (`From<Parameters>`, and `Parameters: TryFrom` of it)
/// and `MAX_PARAMETERS_BLOB` in scope. `chain_parameter_accessors!(without_blob)` leaves out
/// `to_bytes` and `from_bytes` (for a scheme that reads older payloads too).
#[macro_export]
macro_rules! chain_parameter_accessors {
    () => {
        $crate::chain_parameter_accessors!(without_blob);

        /// Serializes as an [`rlwe::wire`] blob of kind `BlobKind::Parameters`.
        pub fn to_bytes(&self) -> Result<Vec<u8>> {
            Ok($crate::wire::encode(
                $crate::wire::BlobKind::Parameters,
                &ParametersWire::from(self.clone()),
            )?)
        }

        /// Reads a parameters blob (at most `MAX_PARAMETERS_BLOB` bytes), rebuilds the
        /// parameters from the stored literal (and scheme tag) and checks that the stored
        /// primes and fingerprint match.
        pub fn from_bytes(bytes: &[u8]) -> Result<std::sync::Arc<Parameters>> {
            let w: ParametersWire = $crate::wire::decode(
                $crate::wire::BlobKind::Parameters,
                bytes,
                MAX_PARAMETERS_BLOB,
            )?;
            Ok(std::sync::Arc::new(Parameters::try_from(w)?))
        }
    };
    (without_blob) => {
        /// The ring degree `N`.
        pub fn n(&self) -> usize {
            self.n
        }

        /// log2 of the ring degree.
        pub fn log_n(&self) -> u32 {
            self.literal.log_n
        }

        /// The top level `L`; a ciphertext at level `l` has limbs `0..=l`.
        pub fn max_level(&self) -> usize {
            self.moduli_q.len() - 1
        }

        /// The chain's identity (primes and fingerprint), as `rlwe::chain::check_rebuilt`
        /// compares it.
        pub fn chain_id(&self) -> $crate::chain::ChainId<'_> {
            $crate::chain::ChainId::new(&self.moduli_q, &self.moduli_p, self.fingerprint)
        }

        /// The ciphertext primes `q_0 … q_L` (index = level of the prime).
        pub fn moduli_q(&self) -> &[u64] {
            &self.moduli_q
        }

        /// The special primes `p_0 … p_{K-1}`.
        pub fn moduli_p(&self) -> &[u64] {
            &self.moduli_p
        }

        /// The key-switching digits: ranges of indices into [`moduli_q`](Self::moduli_q),
        /// each `ceil((L + 1) / dnum)` primes long except possibly the last.
        pub fn digits(&self) -> Vec<std::ops::Range<usize>> {
            self.digits.clone()
        }

        /// The number of key-switching digits.
        pub fn dnum(&self) -> usize {
            self.literal.dnum
        }

        /// log2 Q, the sum of log2 of the ciphertext primes.
        pub fn log2_q(&self) -> f64 {
            self.log2_q
        }

        /// log2 P, the sum of log2 of the special primes.
        pub fn log2_p(&self) -> f64 {
            self.log2_p
        }

        /// log2 QP, the size of the full key-switching modulus (what the security bound
        /// limits).
        pub fn log2_qp(&self) -> f64 {
            self.log2_q + self.log2_p
        }

        /// The literal these parameters were built from.
        pub fn literal(&self) -> &ParametersLiteral {
            &self.literal
        }

        /// The security requirement they were checked against.
        pub fn security(&self) -> Security {
            self.literal.security
        }
    };
}

/// Implements [`PrimeChain`] for a parameter type by its inherent methods of the same names
/// (`n`, `moduli_q`, `moduli_p`, `digits`).
#[macro_export]
macro_rules! impl_prime_chain {
    ($params:ty) => {
        impl $crate::chain::PrimeChain for $params {
            fn n(&self) -> usize {
                <$params>::n(self)
            }

            fn moduli_q(&self) -> &[u64] {
                <$params>::moduli_q(self)
            }

            fn moduli_p(&self) -> &[u64] {
                <$params>::moduli_p(self)
            }

            fn digits(&self) -> Vec<std::ops::Range<usize>> {
                <$params>::digits(self)
            }
        }
    };
}

/// The RNS ring of a parameter set (primes, NTT tables, key-switching tables).
pub fn ring_of(chain: &impl PrimeChain) -> fhe_math::Result<std::sync::Arc<RingContext>> {
    RingContext::new(
        chain.n(),
        chain.moduli_q(),
        chain.moduli_p(),
        chain.digits(),
    )
}

/// Whether `backend` computes on the ring of `chain` ([`ring_matches`]).
pub fn backend_fits<B: fhe_math::backend::RingBackend>(
    backend: &B,
    chain: &impl PrimeChain,
) -> bool {
    ring_matches(
        backend.ring(),
        chain.n(),
        chain.moduli_q(),
        chain.moduli_p(),
    )
}

/// Whether `ring` has degree `n` and exactly the ciphertext primes `moduli_q` and the special
/// primes `moduli_p` (a backend bound to a parameter set must compute on its ring).
pub fn ring_matches(ring: &RingContext, n: usize, moduli_q: &[u64], moduli_p: &[u64]) -> bool {
    ring.n() == n
        && ring.q_count() == moduli_q.len()
        && ring.p_count() == moduli_p.len()
        && (0..ring.q_count()).all(|i| ring.modulus(i).value() == moduli_q[i])
        && (0..ring.p_count()).all(|i| ring.modulus(ring.q_count() + i).value() == moduli_p[i])
}

/// `Σ log2 q` over `primes`.
pub fn log2_product(primes: &[u64]) -> f64 {
    primes.iter().map(|&q| (q as f64).log2()).sum()
}

fn product(primes: &[u64]) -> BigUint {
    primes.iter().fold(BigUint::from(1u8), |acc, &q| acc * q)
}

/// Splits `q_count` ciphertext primes into `dnum` consecutive digits of `⌈q_count/dnum⌉` primes
/// (the last may be shorter); an error message when `dnum` is out of range or does not give
/// exactly `dnum` digits.
pub fn digit_partition(q_count: usize, dnum: usize) -> Result<Vec<Range<usize>>, String> {
    if !(1..=q_count).contains(&dnum) {
        return Err(format!(
            "dnum = {dnum} is outside 1..=levels + 1 ({q_count})"
        ));
    }
    let alpha = q_count.div_ceil(dnum);
    let digits: Vec<Range<usize>> = (0..q_count)
        .step_by(alpha)
        .map(|s| s..(s + alpha).min(q_count))
        .collect();
    if digits.len() != dnum {
        return Err(format!(
            "dnum = {dnum} does not partition {q_count} primes: digits of ceil({q_count}/{dnum}) = {alpha} primes give {} digits",
            digits.len()
        ));
    }
    Ok(digits)
}

/// Checks (exactly) that the special modulus `P` is at least every digit's product.
pub fn check_special_covers_digits(
    moduli_q: &[u64],
    moduli_p: &[u64],
    digits: &[Range<usize>],
) -> Result<(), String> {
    let p = product(moduli_p);
    match digits.iter().find(|d| product(&moduli_q[(*d).clone()]) > p) {
        Some(d) => Err(format!(
            "log2 P = {:.3} is below the largest digit's log2 = {:.3}; add special primes or raise dnum",
            log2_product(moduli_p),
            log2_product(&moduli_q[d.clone()])
        )),
        None => Ok(()),
    }
}

/// `Some((log2 QP, bound))` when `Q·P ≥ 2^bound` for the 128-bit bound at `log_n` (checked
/// exactly on the integer product; also when no bound is known for `log_n`, with bound 0).
pub fn exceeds_security_bound(
    log_n: u32,
    moduli_q: &[u64],
    moduli_p: &[u64],
) -> Option<(f64, f64)> {
    let log2_qp = log2_product(moduli_q) + log2_product(moduli_p);
    let Some(bound) = max_log_qp_128(log_n) else {
        return Some((log2_qp, 0.0));
    };
    let bits = (product(moduli_q) * product(moduli_p)).bits() as f64;
    (bits > bound).then_some((log2_qp, bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions() {
        assert_eq!(
            digit_partition(17, 6).unwrap(),
            vec![0..3, 3..6, 6..9, 9..12, 12..15, 15..17]
        );
        assert!(digit_partition(10, 6).is_err());
        assert!(digit_partition(3, 0).is_err());
        assert!(digit_partition(3, 4).is_err());
    }

    #[test]
    fn special_modulus_must_cover_digits() {
        assert!(
            check_special_covers_digits(&[1 << 40, 1 << 40], &[1 << 59], &[0..1, 1..2]).is_ok()
        );
        assert!(
            check_special_covers_digits(
                &[1 << 40, 1 << 40],
                &[1 << 59],
                &[Range { start: 0, end: 2 }]
            )
            .is_err()
        );
    }

    #[test]
    fn bound_is_exact() {
        // 2^13: bound 218 bits. 3 primes just below 2^60 plus one below 2^38: 218 bits -> fits.
        let q = [(1u64 << 60) - 1, (1 << 60) - 1, (1 << 60) - 1];
        assert!(exceeds_security_bound(13, &q, &[(1 << 38) - 1]).is_none());
        assert!(exceeds_security_bound(13, &q, &[(1 << 38) + 1]).is_some());
    }
}
