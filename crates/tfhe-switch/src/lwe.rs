//! LWE secret keys and ciphertexts, message encoding, encryption and decryption.
//!
//! A ciphertext of dimension `n` is `(a_0, …, a_{n−1}, b)` mod `q` with
//! `b = Σ a_i s_i + Δ(m) + e`; its phase is `b − Σ a_i s_i`. Messages `m ∈ [0, p)`,
//! `p = 2^message_bits`, are encoded with a padding bit: `Δ(m) = round-half-up(m · q / (2p))`,
//! so a valid phase lies in `[0, q/2)` up to noise; decoding is
//! `round-half-up(phase · 2p / q) mod 2p`, a value in `[0, 2p)` whose top bit is the padding.

use fhe_math::Modulus;
use fhe_math::sampler::{Domain, Seed};
use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::{Error, Result};
use crate::params::{Parameters, SecretKind};
use crate::sample::{self, Stream};

/// `round-half-up(m · q / (2p)) mod q`: the encoding of message `m` of a space of `p` values
/// (0 when `p` or `q` is 0).
pub fn encode(m: u64, p: u64, q: u64) -> u64 {
    let v = (u128::from(m) * u128::from(q) + u128::from(p)).checked_div(2 * u128::from(p));
    v.and_then(|v| v.checked_rem(u128::from(q))).unwrap_or(0) as u64
}

/// `round-half-up(phase · 2p / q) mod 2p`: the decoding of a phase (padding bit included;
/// 0 when `p` or `q` is 0).
pub fn decode(phase: u64, p: u64, q: u64) -> u64 {
    let two_p = 2 * u128::from(p);
    let v = (u128::from(phase) * two_p + u128::from(q / 2)).checked_div(u128::from(q));
    v.and_then(|v| v.checked_rem(two_p)).unwrap_or(0) as u64
}

/// An LWE secret key: binary or ternary coefficients.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Zeroize, ZeroizeOnDrop)]
pub struct LweSecretKey {
    #[zeroize(skip)]
    kind: SecretKind,
    coeffs: Vec<i64>,
}

impl LweSecretKey {
    /// A key from its coefficients, which must match `kind` (`{0, 1}` or `{−1, 0, 1}`).
    pub fn from_coefficients(kind: SecretKind, coeffs: Vec<i64>) -> Result<Self> {
        let ok = |c: i64| match kind {
            SecretKind::Binary => c == 0 || c == 1,
            SecretKind::Ternary => (-1..=1).contains(&c),
        };
        if coeffs.is_empty() || !coeffs.iter().all(|&c| ok(c)) {
            return Err(Error::Mismatch {
                what: format!("secret key coefficients are not all {kind:?} (or the key is empty)"),
            });
        }
        Ok(LweSecretKey { kind, coeffs })
    }

    /// Samples a key of dimension `n` from `seed` on stream `(Secret, object, 0)`.
    pub(crate) fn sample(seed: &Seed, object: u32, kind: SecretKind, n: usize) -> Self {
        let mut coeffs = vec![0i64; n];
        let s = Stream {
            domain: Domain::Secret,
            object,
            part: 0,
        };
        sample::secret(seed, s, kind, &mut coeffs);
        LweSecretKey { kind, coeffs }
    }

    /// The kind of the coefficients.
    pub fn kind(&self) -> SecretKind {
        self.kind
    }

    /// The dimension `n`.
    pub fn dimension(&self) -> usize {
        self.coeffs.len()
    }

    /// The coefficients.
    pub fn coefficients(&self) -> &[i64] {
        &self.coeffs
    }

    /// `Σ a_i s_i mod q`.
    fn dot(&self, a: &[u64], q: &Modulus) -> u64 {
        let mut acc = 0u64;
        for (&x, &s) in a.iter().zip(&self.coeffs) {
            match s {
                1 => acc = q.add(acc, x),
                -1 => acc = q.sub(acc, x),
                _ => {}
            }
        }
        acc
    }

    /// Writes an encryption of the residue `plaintext` into `out` (`n + 1` residues), with the
    /// mask from `mask_stream` and noise bounded by `noise_bound` from `noise_stream`.
    pub(crate) fn encrypt_into(
        &self,
        plaintext: u64,
        noise_bound: u64,
        q: &Modulus,
        seed: &Seed,
        (mask_stream, noise_stream): (Stream, Stream),
        out: &mut [u64],
    ) {
        let n = self.coeffs.len();
        sample::uniform(seed, mask_stream, q, &mut out[..n]);
        let mut e = [0u64];
        sample::noise(seed, noise_stream, noise_bound, q, &mut e);
        out[n] = q.add(q.add(self.dot(&out[..n], q), plaintext), e[0]);
    }

    /// Encrypts the residue `plaintext` (already encoded) with the randomness of `seed`.
    pub fn encrypt_raw(
        &self,
        plaintext: u64,
        noise_bound: u64,
        q: &Modulus,
        seed: &Seed,
    ) -> LweCiphertext {
        let mut data = vec![0u64; self.coeffs.len() + 1];
        let streams = (
            Stream {
                domain: Domain::PublicA,
                object: 0,
                part: 0,
            },
            Stream {
                domain: Domain::Error,
                object: 0,
                part: 0,
            },
        );
        self.encrypt_into(
            q.reduce(plaintext),
            noise_bound,
            q,
            seed,
            streams,
            &mut data,
        );
        LweCiphertext { modulus: *q, data }
    }

    /// Encrypts message `m ∈ [0, p)` under `params` with the randomness of `seed`.
    pub fn encrypt(&self, params: &Parameters, m: u64, seed: &Seed) -> Result<LweCiphertext> {
        params.validate()?;
        let p = params.message_space();
        if m >= p {
            return Err(Error::MessageOutOfRange {
                message: m,
                space: p,
            });
        }
        self.check_params(params)?;
        let q = params.q()?;
        Ok(self.encrypt_raw(encode(m, p, q.value()), params.lwe_noise_bound, &q, seed))
    }

    /// Encrypts message `m` with fresh randomness from the operating system.
    pub fn encrypt_random(&self, params: &Parameters, m: u64) -> Result<LweCiphertext> {
        self.encrypt(params, m, &Seed::random())
    }

    /// The phase `b − Σ a_i s_i mod q`.
    pub fn phase(&self, ct: &LweCiphertext) -> Result<u64> {
        if ct.dimension() != self.dimension() {
            return Err(Error::Mismatch {
                what: format!(
                    "ciphertext of dimension {} for a key of dimension {}",
                    ct.dimension(),
                    self.dimension()
                ),
            });
        }
        let q = ct.modulus;
        Ok(q.sub(ct.body(), self.dot(ct.mask(), &q)))
    }

    /// Decrypts to a value in `[0, 2p)` (padding bit included) under `params`' message space.
    pub fn decrypt(&self, params: &Parameters, ct: &LweCiphertext) -> Result<u64> {
        params.validate()?;
        let phase = self.phase(ct)?;
        Ok(decode(phase, params.message_space(), ct.modulus.value()))
    }

    fn check_params(&self, params: &Parameters) -> Result<()> {
        if self.dimension() != params.lwe_dimension {
            return Err(Error::Mismatch {
                what: format!(
                    "key of dimension {} for parameters {} (n = {})",
                    self.dimension(),
                    params.name,
                    params.lwe_dimension
                ),
            });
        }
        Ok(())
    }
}

/// An LWE ciphertext: mask then body, residues mod `q`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LweCiphertext {
    modulus: Modulus,
    data: Vec<u64>,
}

impl LweCiphertext {
    /// A ciphertext from its residues (mask then body), checked to be below `q`.
    pub fn from_residues(modulus: Modulus, data: Vec<u64>) -> Result<Self> {
        if data.len() < 2 {
            return Err(Error::Mismatch {
                what: "an LWE ciphertext needs a mask of at least one residue and a body".into(),
            });
        }
        if let Some(&x) = data.iter().find(|&&x| x >= modulus.value()) {
            return Err(Error::Mismatch {
                what: format!("residue {x} is not below q = {}", modulus.value()),
            });
        }
        Ok(LweCiphertext { modulus, data })
    }

    /// The dimension `n`.
    pub fn dimension(&self) -> usize {
        self.data.len() - 1
    }

    /// The modulus.
    pub fn modulus(&self) -> Modulus {
        self.modulus
    }

    /// The mask `a`.
    pub fn mask(&self) -> &[u64] {
        &self.data[..self.data.len() - 1]
    }

    /// The body `b`.
    pub fn body(&self) -> u64 {
        self.data[self.data.len() - 1]
    }

    /// Mask then body.
    pub fn as_residues(&self) -> &[u64] {
        &self.data
    }

    /// The ciphertext with every residue switched to `2N` ([`fhe_math::backend::blind_rotate::mod_switch`]),
    /// as the blind rotation sees it (mask then body, values in `[0, 2N)`).
    pub fn mod_switched(&self, two_n: u64) -> Vec<u64> {
        self.data
            .iter()
            .map(|&x| fhe_math::backend::blind_rotate::mod_switch(x, self.modulus.value(), two_n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::TEST_256_INSECURE;

    #[test]
    fn encode_decode_roundtrip() {
        let q = 1_073_738_753;
        for p in [2u64, 8, 16] {
            for m in 0..2 * p {
                assert_eq!(decode(encode(m, p, q), p, q), m);
            }
        }
    }

    #[test]
    fn encrypt_decrypt_binary_and_ternary() {
        let params = TEST_256_INSECURE.opt_in_insecure();
        for kind in [SecretKind::Binary, SecretKind::Ternary] {
            let sk = LweSecretKey::sample(&Seed([3; 32]), 0, kind, params.lwe_dimension);
            for m in 0..params.message_space() {
                let ct = sk.encrypt(&params, m, &Seed([m as u8; 32])).unwrap();
                assert_eq!(sk.decrypt(&params, &ct).unwrap(), m);
            }
            assert!(matches!(
                sk.encrypt(&params, 16, &Seed([0; 32])),
                Err(Error::MessageOutOfRange { .. })
            ));
        }
    }

    #[test]
    fn modulus_switch_keeps_the_message() {
        // The switched ciphertext decrypts (in Z_2N, with the switched key's phase) to
        // m · N / p up to the rounding noise.
        let params = TEST_256_INSECURE.opt_in_insecure();
        let sk = LweSecretKey::sample(&Seed([9; 32]), 0, SecretKind::Binary, params.lwe_dimension);
        let two_n = 2 * params.ring_degree as u64;
        let p = params.message_space();
        for m in 0..p {
            let ct = sk.encrypt(&params, m, &Seed([m as u8 + 1; 32])).unwrap();
            let sw = ct.mod_switched(two_n);
            let mut phase = sw[params.lwe_dimension] as i64;
            for (a, s) in sw.iter().zip(sk.coefficients()) {
                phase -= *a as i64 * s;
            }
            let phase = phase.rem_euclid(two_n as i64);
            let target = (m * params.ring_degree as u64 / p) as i64;
            let d = (phase - target).rem_euclid(two_n as i64);
            let d = d.min(two_n as i64 - d);
            assert!(
                d < (params.ring_degree as u64 / (2 * p)) as i64,
                "m = {m}: off by {d}"
            );
        }
    }
}
