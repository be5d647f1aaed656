//! BGV parameters: the literal a user writes, its validation into [`Parameters`] (primes, the
//! key-switching digit partition, the plaintext modulus and its tables), named presets, and the
//! serialized form.
//!
//! The parameters are scheme-neutral for the integer schemes: a later `bfv` crate reuses the
//! literal, the prime selection and the plaintext-modulus tables, and distinguishes its objects
//! by building with [`Parameters::with_scheme_tag`] (the tag enters the fingerprint).
//!
//! # Prime selection
//!
//! With `n = 2^log_n`, all primes are `≡ 1 (mod 2n)` and distinct:
//! 1. the `K` special primes: the `K` largest primes of `special_prime_bits` bits;
//! 2. `q_0`: the largest prime of `first_prime_bits` bits not already chosen;
//! 3. `q_1 … q_L`: the `L` largest primes of `prime_bits` bits not already chosen, in
//!    decreasing order.
//!
//! Each modulus switch divides the noise by `q_l` and adds a term of about
//! `t·√N·√(2N/3)` (see [`crate::noise`]), so `prime_bits` must leave room for the product of two
//! such terms: 40-bit primes carry one multiplication per level at `t = 65537` up to `N = 2^15`.

use std::ops::Range;
use std::sync::Arc;

use fhe_math::Modulus;
use fhe_math::primes::{is_prime, ntt_primes};
use rlwe::chain;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use rlwe::chain::{MAX_PARAMETERS_BLOB, MAX_PRIMES, Security};

/// The fingerprint tag of BGV objects.
pub const BGV_TAG: [u8; 4] = *b"bgv\0";

/// The user-facing description of a BGV parameter set; validated by [`Parameters::new`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParametersLiteral {
    /// log2 of the ring degree `N` (10..=17).
    pub log_n: u32,
    /// `L`, the number of modulus switches: the chain has `L + 1` ciphertext primes.
    pub levels: usize,
    /// Bit size of `q_0` (20..=60).
    pub first_prime_bits: u32,
    /// Bit size of `q_1 … q_L` (20..=60).
    pub prime_bits: u32,
    /// `K`, the number of special (key-switching) primes (at least 1).
    pub special_primes: usize,
    /// Bit size of the special primes (20..=60).
    pub special_prime_bits: u32,
    /// Number of key-switching digits (1..=`L + 1`); each digit holds `ceil((L + 1) / dnum)`
    /// consecutive ciphertext primes (the last may hold fewer).
    pub dnum: usize,
    /// The plaintext modulus `t` (`2 <= t`, below every ciphertext prime). Batching (SIMD
    /// slots) needs a prime `t ≡ 1 (mod 2N)`; any other `t` allows coefficient encoding only.
    pub plaintext_modulus: u64,
    /// The security requirement.
    pub security: Security,
}

/// The `CAT` chain shape (design brief §4) with a batching plaintext modulus.
///
/// `N = 2^15`, `L + 1 = 17` ciphertext primes (60 + 16 × 40 bits), `K = 3` special primes of
/// 60 bits, `dnum = 6` (digits of 3 primes, largest ≈ 140 bits ≤ log2 P ≈ 180), `t = 65537`
/// (`≡ 1 mod 2^16`: 2^15 slots). log2 QP ≈ 880.0 ≤ 881, the HomomorphicEncryption.org 2018
/// standard bound at `N = 2^15` (128-bit classical, uniform ternary secret): margin ≈ 1 bit.
/// Multiplicative depth 16 (one 40-bit prime per multiplication).
pub const CAT: ParametersLiteral = ParametersLiteral {
    log_n: 15,
    levels: 16,
    first_prime_bits: 60,
    prime_bits: 40,
    special_primes: 3,
    special_prime_bits: 60,
    dnum: 6,
    plaintext_modulus: 65537,
    security: Security::Bits128,
};

/// Like-for-like with the configuration of CAT's own benchmark program at `N = 2^15` (built on
/// SEAL: `CoeffModulus::BFVDefault(32768)`, "881 = 15 × 55 + 56", the last prime special, one
/// prime per digit; see `ckks::params::CAT_COMPAT`).
///
/// `N = 2^15`, `L + 1 = 15` ciphertext primes of 55 bits, `K = 1` special prime of 56 bits,
/// `dnum = 15`, `t = 786433` (a 20-bit batching prime, `3·2^18 + 1 ≡ 1 mod 2^16`, as SEAL's
/// benchmarks use `PlainModulus::Batching(N, 20)`). log2 QP ≈ 881.0 against the 881-bit
/// standard bound at `N = 2^15`: margin ≈ 0 (checked exactly: QP < 2^881).
pub const CAT_COMPAT: ParametersLiteral = ParametersLiteral {
    log_n: 15,
    levels: 14,
    first_prime_bits: 55,
    prime_bits: 55,
    special_primes: 1,
    special_prime_bits: 56,
    dnum: 15,
    plaintext_modulus: 786433,
    security: Security::Bits128,
};

/// Like-for-like with the Phantom BGV/BFV figures.
///
/// `N = 2^15`, `L + 1 = 14` ciphertext primes (60 + 13 × 50 bits), `K = 2` special primes of
/// 60 bits, `dnum = 7` (digits of 2 primes, largest ≈ 110 bits ≤ log2 P ≈ 120), `t = 65537`.
/// log2 QP ≈ 830 ≤ 881, the HomomorphicEncryption.org 2018 standard bound at `N = 2^15`:
/// margin ≈ 51 bits.
pub const PHANTOM_INT: ParametersLiteral = ParametersLiteral {
    log_n: 15,
    levels: 13,
    first_prime_bits: 60,
    prime_bits: 50,
    special_primes: 2,
    special_prime_bits: 60,
    dnum: 7,
    plaintext_modulus: 65537,
    security: Security::Bits128,
};

/// A small secure set for tests.
///
/// `N = 2^13`, `L + 1 = 4` ciphertext primes (46 + 3 × 40 bits), `K = 1` special prime of
/// 50 bits, `dnum = 4` (one prime per digit; largest digit 46 bits ≤ log2 P = 50),
/// `t = 65537` (`2N = 2^14` divides `t - 1`: 2^13 slots). log2 QP ≈ 216 ≤ 218, the
/// HomomorphicEncryption.org 2018 standard bound at `N = 2^13`: margin ≈ 2 bits.
pub const N13: ParametersLiteral = ParametersLiteral {
    log_n: 13,
    levels: 3,
    first_prime_bits: 46,
    prime_bits: 40,
    special_primes: 1,
    special_prime_bits: 50,
    dnum: 4,
    plaintext_modulus: 65537,
    security: Security::Bits128,
};

/// **Insecure** fast set for deep multiplication chains in CI.
///
/// `N = 2^11`, `L + 1 = 11` ciphertext primes (60 + 10 × 40 bits), `K = 2` special primes of
/// 60 bits, `dnum = 11` (one prime per digit), `t = 65537`. log2 QP ≈ 580, far above the 54-bit
/// bound at `N = 2^11`: **not secure**, hence [`Security::InsecureForTestingOnly`].
pub const TEST_N11_INSECURE: ParametersLiteral = ParametersLiteral {
    log_n: 11,
    levels: 10,
    first_prime_bits: 60,
    prime_bits: 40,
    special_primes: 2,
    special_prime_bits: 60,
    dnum: 11,
    plaintext_modulus: 65537,
    security: Security::InsecureForTestingOnly,
};

/// Validated BGV parameters: the chosen primes, the digit partition and the plaintext
/// modulus tables.
///
/// Built with [`Parameters::new`]; shared as `Arc<Parameters>`. Serializes as its literal, the
/// chosen primes, the scheme tag and the fingerprint; deserializing rebuilds from the literal
/// and checks them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ParametersWire", into = "ParametersWire")]
pub struct Parameters {
    literal: ParametersLiteral,
    tag: [u8; 4],
    n: usize,
    moduli_q: Vec<u64>,
    moduli_p: Vec<u64>,
    digits: Vec<Range<usize>>,
    log2_q: f64,
    log2_p: f64,
    /// `q_l^{-1} mod t` for every level (index 0 unused: 1).
    q_inv_mod_t: Vec<u64>,
    batching: bool,
    fingerprint: u64,
}

/// The serialized form of [`Parameters`].
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ParametersWire {
    literal: ParametersLiteral,
    tag: [u8; 4],
    moduli_q: Vec<u64>,
    moduli_p: Vec<u64>,
    fingerprint: u64,
}

impl From<Parameters> for ParametersWire {
    fn from(p: Parameters) -> Self {
        ParametersWire {
            literal: p.literal,
            tag: p.tag,
            moduli_q: p.moduli_q,
            moduli_p: p.moduli_p,
            fingerprint: p.fingerprint,
        }
    }
}

impl TryFrom<ParametersWire> for Parameters {
    type Error = Error;

    fn try_from(w: ParametersWire) -> Result<Self> {
        let p = Parameters::build(&w.literal, w.tag)?;
        let stored = chain::ChainId::new(&w.moduli_q, &w.moduli_p, w.fingerprint);
        chain::check_rebuilt(stored, p.chain_id())
            .map_err(|what| Error::ParameterMismatch { what })?;
        Ok(p)
    }
}

fn invalid(what: impl Into<String>) -> Error {
    Error::InvalidParameters { what: what.into() }
}

impl Parameters {
    /// Validates `literal`, chooses the primes and returns BGV parameters. Fails (never panics)
    /// on out-of-range fields, missing primes, a special modulus smaller than the largest digit,
    /// a plaintext modulus that is not below every prime, or, with [`Security::Bits128`], when
    /// log2 QP exceeds the 128-bit bound.
    pub fn new(literal: &ParametersLiteral) -> Result<Arc<Parameters>> {
        Ok(Arc::new(Self::build(literal, BGV_TAG)?))
    }

    /// Like [`Parameters::new`] with another scheme tag in the fingerprint (for `bfv`, which
    /// shares this parameter type but must not mix objects with BGV).
    pub fn with_scheme_tag(literal: &ParametersLiteral, tag: [u8; 4]) -> Result<Arc<Parameters>> {
        Ok(Arc::new(Self::build(literal, tag)?))
    }

    fn build(lit: &ParametersLiteral, tag: [u8; 4]) -> Result<Parameters> {
        chain::check_log_n(lit.log_n).map_err(invalid)?;
        for (name, bits) in [
            ("first_prime_bits", lit.first_prime_bits),
            ("prime_bits", lit.prime_bits),
            ("special_prime_bits", lit.special_prime_bits),
        ] {
            chain::check_prime_bits(name, bits).map_err(invalid)?;
        }
        let (_, digits) =
            chain::chain_layout(lit.levels, lit.special_primes, lit.dnum).map_err(invalid)?;
        let t = lit.plaintext_modulus;
        let min_bits = lit.first_prime_bits.min(lit.prime_bits);
        if t < 2 || t >= 1u64 << (min_bits - 1) {
            return Err(invalid(format!(
                "plaintext_modulus = {t} must satisfy 2 <= t < 2^{} (below every ciphertext prime)",
                min_bits - 1
            )));
        }

        let n = 1usize << lit.log_n;
        let two_n = 2 * n as u64;
        let (moduli_p, q0, chosen) = chain::special_and_first_primes(
            two_n,
            lit.special_prime_bits,
            lit.special_primes,
            lit.first_prime_bits,
        )?;
        let rest = ntt_primes(lit.prime_bits, two_n, lit.levels, &chosen)?;
        let mut moduli_q = vec![q0];
        moduli_q.extend(rest);

        let log2_q = chain::log2_product(&moduli_q);
        let log2_p = chain::log2_product(&moduli_p);
        chain::check_special_covers_digits(&moduli_q, &moduli_p, &digits).map_err(invalid)?;
        if let Some((log2_qp, bound)) = lit.security.violation(lit.log_n, &moduli_q, &moduli_p) {
            return Err(Error::NotSecure {
                log2_qp,
                bound,
                log_n: lit.log_n,
            });
        }
        let tm = Modulus::new(t)?;
        let mut q_inv_mod_t = vec![1u64];
        for &q in &moduli_q[1..] {
            q_inv_mod_t.push(tm.inv(tm.reduce(q)).map_err(|_| {
                invalid(format!(
                    "plaintext_modulus {t} is not coprime to the prime {q}"
                ))
            })?);
        }
        let batching = is_prime(t) && (t - 1).is_multiple_of(two_n);

        let mut p = Parameters {
            literal: lit.clone(),
            tag,
            n,
            moduli_q,
            moduli_p,
            digits,
            log2_q,
            log2_p,
            q_inv_mod_t,
            batching,
            fingerprint: 0,
        };
        p.fingerprint = p.compute_fingerprint();
        Ok(p)
    }

    /// FNV-1a over: the scheme tag, then as `u64` little-endian: `n`, the number of Q primes
    /// and each Q prime, the number of P primes and each P prime, `dnum`, `t`.
    fn compute_fingerprint(&self) -> u64 {
        let h = chain::chain_fingerprint(
            &self.tag,
            self.n,
            &self.moduli_q,
            &self.moduli_p,
            self.literal.dnum,
        );
        chain::fnv1a(h, &self.literal.plaintext_modulus.to_le_bytes())
    }

    /// The plaintext modulus `t`.
    pub fn t(&self) -> u64 {
        self.literal.plaintext_modulus
    }

    /// Whether `t` is a prime `≡ 1 (mod 2N)`: `N` SIMD slots in `Z_t`.
    pub fn batching(&self) -> bool {
        self.batching
    }

    /// `q_l^{-1} mod t`: the factor a modulus switch from level `l` multiplies the plaintext by.
    pub fn q_inv_mod_t(&self, level: usize) -> Result<u64> {
        if level == 0 || level > self.max_level() {
            return Err(Error::InvalidLevel {
                level,
                max_level: self.max_level(),
            });
        }
        Ok(self.q_inv_mod_t[level])
    }

    /// log2 of `Q_l = q_0 ⋯ q_l`.
    pub fn log2_q_at(&self, level: usize) -> f64 {
        chain::log2_product(&self.moduli_q[..=level.min(self.max_level())])
    }

    rlwe::chain_parameter_accessors!();

    /// A 64-bit FNV-1a fingerprint of the scheme tag, ring degree, primes, dnum and `t`, to
    /// detect objects loaded with other parameters (not a cryptographic hash).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The scheme tag in the fingerprint ([`BGV_TAG`] for BGV).
    pub fn scheme_tag(&self) -> [u8; 4] {
        self.tag
    }
}

rlwe::impl_prime_chain!(Parameters);

#[cfg(test)]
mod tests {
    use super::*;
    use rlwe::wire::{self, BlobKind};

    const PRESETS: [(&str, ParametersLiteral); 5] = [
        ("CAT", CAT),
        ("CAT_COMPAT", CAT_COMPAT),
        ("PHANTOM_INT", PHANTOM_INT),
        ("N13", N13),
        ("TEST_N11_INSECURE", TEST_N11_INSECURE),
    ];

    fn build(lit: &ParametersLiteral) -> Arc<Parameters> {
        Parameters::new(lit).unwrap_or_else(|e| panic!("{lit:?}: {e}"))
    }

    #[test]
    fn presets_build_with_expected_shapes() {
        for (name, lit) in PRESETS {
            let p = build(&lit);
            assert_eq!(p.n(), 1 << lit.log_n, "{name}");
            assert_eq!(p.max_level(), lit.levels, "{name}");
            assert_eq!(p.moduli_p().len(), lit.special_primes, "{name}");
            assert_eq!(p.digits().len(), lit.dnum, "{name}");
            assert!(p.batching(), "{name}");
            println!(
                "{name}: log2 Q = {:.3}, log2 P = {:.3}, log2 QP = {:.3}",
                p.log2_q(),
                p.log2_p(),
                p.log2_qp()
            );
            let all: Vec<u64> = p.moduli_q().iter().chain(p.moduli_p()).copied().collect();
            let mut d = all.clone();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), all.len(), "{name}");
            for q in all {
                assert!(is_prime(q) && q % (2 * p.n() as u64) == 1, "{name}");
            }
        }
    }

    #[test]
    fn secure_presets_are_secure() {
        for (lit, want) in [
            (CAT, 880.0),
            (PHANTOM_INT, 830.0),
            (N13, 216.0),
            (CAT_COMPAT, 881.0),
        ] {
            let p = build(&lit);
            assert!(p.log2_qp() <= fhe_math::security::max_log_qp_128(lit.log_n).unwrap());
            assert!((p.log2_qp() - want).abs() < 0.05, "{}", p.log2_qp());
        }
        let e = Parameters::new(&ParametersLiteral {
            security: Security::Bits128,
            ..TEST_N11_INSECURE
        })
        .unwrap_err();
        assert!(matches!(e, Error::NotSecure { log_n: 11, .. }), "{e:?}");
        let e = Parameters::new(&ParametersLiteral { levels: 17, ..CAT }).unwrap_err();
        assert!(matches!(e, Error::NotSecure { .. }), "{e:?}");
    }

    #[test]
    fn bad_literals_give_errors() {
        let bad = [
            ParametersLiteral { log_n: 9, ..N13 },
            ParametersLiteral { log_n: 18, ..N13 },
            ParametersLiteral {
                prime_bits: 61,
                ..N13
            },
            ParametersLiteral {
                first_prime_bits: 19,
                ..N13
            },
            ParametersLiteral {
                special_primes: 0,
                ..N13
            },
            ParametersLiteral { dnum: 0, ..N13 },
            ParametersLiteral { dnum: 3, ..N13 },
            ParametersLiteral { dnum: 1, ..N13 },
            ParametersLiteral {
                plaintext_modulus: 1,
                ..N13
            },
            ParametersLiteral {
                plaintext_modulus: 1 << 39,
                ..N13
            },
            ParametersLiteral {
                levels: usize::MAX,
                ..N13
            },
        ];
        for lit in bad {
            let e = Parameters::new(&lit).expect_err(&format!("{lit:?} accepted"));
            assert!(
                matches!(e, Error::InvalidParameters { .. } | Error::NotSecure { .. }),
                "{lit:?}: {e:?}"
            );
        }
    }

    #[test]
    fn batching_only_for_prime_t_one_mod_2n() {
        let p = build(&ParametersLiteral {
            plaintext_modulus: 256,
            ..N13
        });
        assert!(!p.batching());
        let p = build(&ParametersLiteral {
            plaintext_modulus: 40961, // prime, 1 mod 2^13 but not 1 mod 2^14
            ..N13
        });
        assert!(!p.batching());
    }

    #[test]
    fn q_inverses() {
        let p = build(&N13);
        let t = Modulus::new(p.t()).unwrap();
        for l in 1..=p.max_level() {
            let inv = p.q_inv_mod_t(l).unwrap();
            assert_eq!(t.mul(inv, t.reduce(p.moduli_q()[l])), 1);
        }
        assert!(p.q_inv_mod_t(0).is_err());
        assert!(p.q_inv_mod_t(4).is_err());
    }

    #[test]
    fn bytes_round_trip_and_tampering() {
        let p = build(&N13);
        let b = p.to_bytes().unwrap();
        assert_eq!(*Parameters::from_bytes(&b).unwrap(), *p);
        for len in 0..b.len() {
            assert!(Parameters::from_bytes(&b[..len]).is_err());
        }
        let mut w = ParametersWire::from((*p).clone());
        w.fingerprint ^= 1;
        let bad = wire::encode(BlobKind::Parameters, &w).unwrap();
        assert!(matches!(
            Parameters::from_bytes(&bad),
            Err(Error::ParameterMismatch { .. })
        ));
        let mut w = ParametersWire::from((*p).clone());
        w.tag = *b"bfv\0";
        let bad = wire::encode(BlobKind::Parameters, &w).unwrap();
        assert!(Parameters::from_bytes(&bad).is_err());
        let bfv = Parameters::with_scheme_tag(&N13, *b"bfv\0").unwrap();
        assert_ne!(bfv.fingerprint(), p.fingerprint());
    }
}
