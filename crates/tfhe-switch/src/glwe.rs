//! GLWE secret keys, GLWE encryption and RGSW encryption (the rows of a bootstrapping key).
//!
//! A GLWE ciphertext is `(A_1, …, A_k, B)` in `Z_q[X]/(X^N + 1)` with
//! `B = Σ A_c S_c + M + E`. An RGSW encryption of a small integer `μ` has `(k + 1) · l` rows;
//! row `c · l + (j − 1)` is a GLWE encryption of zero with `μ · g_j` added to the constant
//! coefficient of component `c` (`g_j` the gadget values of
//! [`fhe_math::backend::blind_rotate::Gadget::values`]). Rows are stored in NTT form.

use fhe_math::backend::blind_rotate::BlindRotateParams;
use fhe_math::sampler::{Domain, Seed};
use fhe_math::{Modulus, NttTable};
use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::{Error, Result};
use crate::lwe::LweSecretKey;
use crate::params::SecretKind;
use crate::sample::{self, Stream};

/// A GLWE secret key: `k` polynomials of degree `N`, binary or ternary coefficients.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Zeroize, ZeroizeOnDrop)]
pub struct GlweSecretKey {
    #[zeroize(skip)]
    kind: SecretKind,
    #[zeroize(skip)]
    ring_degree: usize,
    coeffs: Vec<i64>,
}

impl GlweSecretKey {
    /// Samples a key of `k` polynomials of degree `n` on stream `(Secret, 1, 0)`.
    pub(crate) fn sample(seed: &Seed, kind: SecretKind, k: usize, n: usize) -> Self {
        let lwe = LweSecretKey::sample(seed, 1, kind, k * n);
        GlweSecretKey {
            kind,
            ring_degree: n,
            coeffs: lwe.coefficients().to_vec(),
        }
    }

    /// A key from its coefficients (`k · N` of them, polynomial after polynomial).
    pub fn from_coefficients(
        kind: SecretKind,
        ring_degree: usize,
        coeffs: Vec<i64>,
    ) -> Result<Self> {
        if ring_degree == 0 || !coeffs.len().is_multiple_of(ring_degree) {
            return Err(Error::Mismatch {
                what: format!(
                    "{} coefficients for ring degree {ring_degree}",
                    coeffs.len()
                ),
            });
        }
        let lwe = LweSecretKey::from_coefficients(kind, coeffs)?;
        Ok(GlweSecretKey {
            kind,
            ring_degree,
            coeffs: lwe.coefficients().to_vec(),
        })
    }

    /// The kind of the coefficients.
    pub fn kind(&self) -> SecretKind {
        self.kind
    }

    /// The number `k` of polynomials.
    pub fn glwe_dimension(&self) -> usize {
        self.coeffs.len() / self.ring_degree
    }

    /// The ring degree `N`.
    pub fn ring_degree(&self) -> usize {
        self.ring_degree
    }

    /// The coefficients, polynomial after polynomial.
    pub fn coefficients(&self) -> &[i64] {
        &self.coeffs
    }

    /// The LWE key (dimension `k · N`) that decrypts sample-extracted ciphertexts.
    pub fn extracted_lwe_key(&self) -> LweSecretKey {
        LweSecretKey::from_coefficients(self.kind, self.coeffs.clone())
            .expect("a GLWE key's coefficients are a valid LWE key")
    }

    /// The key polynomials in NTT form.
    pub(crate) fn ntt_form(&self, ntt: &NttTable) -> Vec<u64> {
        let q = *ntt.modulus();
        let mut out: Vec<u64> = self.coeffs.iter().map(|&c| q.reduce_i64(c)).collect();
        for poly in out.chunks_exact_mut(self.ring_degree) {
            ntt.forward(poly);
        }
        out
    }

    /// `B − Σ A_c S_c` of a GLWE ciphertext in coefficient form.
    pub fn phase(&self, ntt: &NttTable, glwe: &[u64]) -> Result<Vec<u64>> {
        let n = self.ring_degree;
        let k = self.glwe_dimension();
        if glwe.len() != (k + 1) * n || ntt.n() != n {
            return Err(Error::Mismatch {
                what: format!("GLWE of {} residues for k = {k}, N = {n}", glwe.len()),
            });
        }
        let q = *ntt.modulus();
        let mask_times_key = mask_product(ntt, &self.ntt_form(ntt), &glwe[..k * n]);
        Ok(glwe[k * n..]
            .iter()
            .zip(&mask_times_key)
            .map(|(&b, &as_)| q.sub(b, as_))
            .collect())
    }

    /// A GLWE encryption of the polynomial `message` (coefficient form), noise bounded by
    /// `noise_bound`, masks on streams `(PublicA, object, c)` and noise on `(Error, object, 0)`.
    pub fn encrypt(
        &self,
        ntt: &NttTable,
        message: &[u64],
        noise_bound: u64,
        seed: &Seed,
        object: u32,
    ) -> Result<Vec<u64>> {
        let n = self.ring_degree;
        if message.len() != n || ntt.n() != n {
            return Err(Error::Mismatch {
                what: format!("message of {} coefficients for N = {n}", message.len()),
            });
        }
        let mut out = self.encrypt_zero(ntt, &self.ntt_form(ntt), noise_bound, seed, object);
        let q = *ntt.modulus();
        let k = self.glwe_dimension();
        for (b, &m) in out[k * n..].iter_mut().zip(message) {
            *b = q.add(*b, q.reduce(m));
        }
        Ok(out)
    }

    fn encrypt_zero(
        &self,
        ntt: &NttTable,
        key_ntt: &[u64],
        noise_bound: u64,
        seed: &Seed,
        object: u32,
    ) -> Vec<u64> {
        let n = self.ring_degree;
        let k = self.glwe_dimension();
        let q = *ntt.modulus();
        let mut out = vec![0u64; (k + 1) * n];
        for c in 0..k {
            let s = Stream {
                domain: Domain::PublicA,
                object,
                part: c as u16,
            };
            sample::uniform(seed, s, &q, &mut out[c * n..(c + 1) * n]);
        }
        let body = mask_product(ntt, key_ntt, &out[..k * n]);
        let s = Stream {
            domain: Domain::Error,
            object,
            part: 0,
        };
        let dst = &mut out[k * n..];
        sample::noise(seed, s, noise_bound, &q, dst);
        for (d, &v) in dst.iter_mut().zip(&body) {
            *d = q.add(*d, v);
        }
        out
    }
}

/// `Σ_c A_c · S_c` (coefficient form out) from masks in coefficient form and the key in NTT form.
fn mask_product(ntt: &NttTable, key_ntt: &[u64], masks: &[u64]) -> Vec<u64> {
    let n = ntt.n();
    let q: Modulus = *ntt.modulus();
    let mut acc = vec![0u64; n];
    let mut tmp = vec![0u64; n];
    for (a, s) in masks.chunks_exact(n).zip(key_ntt.chunks_exact(n)) {
        tmp.copy_from_slice(a);
        ntt.forward(&mut tmp);
        for ((x, &t), &si) in acc.iter_mut().zip(&tmp).zip(s) {
            *x = q.add(*x, q.mul(t, si));
        }
    }
    ntt.inverse(&mut acc);
    acc
}

/// What RGSW encryptions under one key share: the key (also in NTT form), the ring's NTT
/// tables, the shape, the noise bound and the seed.
pub(crate) struct RgswEncryptor<'a> {
    pub key: &'a GlweSecretKey,
    pub ntt: &'a NttTable,
    pub key_ntt: &'a [u64],
    pub params: &'a BlindRotateParams,
    pub noise_bound: u64,
    pub seed: &'a Seed,
}

impl RgswEncryptor<'_> {
    /// Writes an RGSW encryption of `mu` (rows in NTT form) into `out`
    /// (`params.rgsw_len()` residues); row `r` uses the streams of object `first_row + r`.
    pub(crate) fn encrypt_into(&self, mu: i64, first_row: u32, out: &mut [u64]) {
        let params = self.params;
        let n = params.ring_degree;
        let k1 = params.glwe_dimension + 1;
        let l = params.gadget.levels as usize;
        let q = params.modulus;
        let g = params.gadget.values(q.value());
        let mu = q.reduce_i64(mu);
        for (r, row) in out.chunks_exact_mut(k1 * n).enumerate() {
            let mut z = self.key.encrypt_zero(
                self.ntt,
                self.key_ntt,
                self.noise_bound,
                self.seed,
                first_row + r as u32,
            );
            let (c, j) = (r / l, r % l);
            z[c * n] = q.add(z[c * n], q.mul(mu, g[j]));
            for poly in z.chunks_exact_mut(n) {
                self.ntt.forward(poly);
            }
            row.copy_from_slice(&z);
        }
    }
}

/// An RGSW encryption of `mu` (rows in NTT form), as [`fhe_math::backend::blind_rotate::external_product`]
/// takes it; rows use the streams of objects `first_row..`.
pub fn encrypt_rgsw(
    key: &GlweSecretKey,
    params: &BlindRotateParams,
    mu: i64,
    noise_bound: u64,
    seed: &Seed,
    first_row: u32,
) -> Result<Vec<u64>> {
    params.check()?;
    if key.ring_degree() != params.ring_degree || key.glwe_dimension() != params.glwe_dimension {
        return Err(Error::Mismatch {
            what: "GLWE key and RGSW shape differ".into(),
        });
    }
    let ntt = NttTable::new(params.modulus, params.ring_degree)?;
    let key_ntt = key.ntt_form(&ntt);
    let mut out = vec![0u64; params.rgsw_len()];
    let enc = RgswEncryptor {
        key,
        ntt: &ntt,
        key_ntt: &key_ntt,
        params,
        noise_bound,
        seed,
    };
    enc.encrypt_into(mu, first_row, &mut out);
    Ok(out)
}
