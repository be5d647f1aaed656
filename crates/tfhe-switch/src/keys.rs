//! Key generation: the client key (LWE and GLWE secrets) and the server key (bootstrapping
//! key and key-switching key), each from a seed in the layout of [`crate::sample`].

use fhe_math::NttTable;
use fhe_math::backend::blind_rotate::{BootstrapKeyHost, KeySwitchKeyHost};
use fhe_math::sampler::{Domain, Seed};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::glwe::{GlweSecretKey, RgswEncryptor};
use crate::lwe::{LweCiphertext, LweSecretKey};
use crate::params::{Parameters, SecretKind};
use crate::sample::Stream;

/// The secret keys: the LWE key (dimension `n`) and the GLWE key (`k` polynomials of degree
/// `N`), for one parameter set.
#[derive(Clone, Debug)]
pub struct ClientKey {
    pub(crate) params: Parameters,
    pub(crate) lwe: LweSecretKey,
    pub(crate) glwe: GlweSecretKey,
}

/// The public evaluation keys: the bootstrapping key (RGSW encryptions of the LWE secret under
/// the GLWE key, NTT form) and the key-switching key (from the extracted `k · N` key to `n`).
#[derive(Clone, Debug, PartialEq)]
pub struct ServerKey {
    pub(crate) params: Parameters,
    pub(crate) bootstrap: BootstrapKeyHost,
    pub(crate) key_switch: KeySwitchKeyHost,
}

impl ClientKey {
    /// Samples both secrets from `seed` (after validating `params`).
    pub fn generate(params: &Parameters, seed: &Seed) -> Result<Self> {
        params.validate()?;
        Ok(ClientKey {
            params: *params,
            lwe: LweSecretKey::sample(seed, 0, params.lwe_secret, params.lwe_dimension),
            glwe: GlweSecretKey::sample(
                seed,
                params.glwe_secret,
                params.glwe_dimension,
                params.ring_degree,
            ),
        })
    }

    /// Samples both secrets with fresh randomness from the operating system.
    pub fn generate_random(params: &Parameters) -> Result<Self> {
        Self::generate(params, &Seed::random())
    }

    /// Builds a client key from its parts (checked against `params`).
    pub fn from_parts(params: &Parameters, lwe: LweSecretKey, glwe: GlweSecretKey) -> Result<Self> {
        params.validate()?;
        if lwe.dimension() != params.lwe_dimension
            || lwe.kind() != params.lwe_secret
            || glwe.ring_degree() != params.ring_degree
            || glwe.glwe_dimension() != params.glwe_dimension
            || glwe.kind() != params.glwe_secret
        {
            return Err(Error::Mismatch {
                what: format!("secret keys do not have the shape of {}", params.name),
            });
        }
        Ok(ClientKey {
            params: *params,
            lwe,
            glwe,
        })
    }

    /// The parameter set.
    pub fn params(&self) -> &Parameters {
        &self.params
    }

    /// The LWE secret key.
    pub fn lwe_key(&self) -> &LweSecretKey {
        &self.lwe
    }

    /// The GLWE secret key.
    pub fn glwe_key(&self) -> &GlweSecretKey {
        &self.glwe
    }

    /// Encrypts `m ∈ [0, p)` under the LWE key with the randomness of `seed`.
    pub fn encrypt(&self, m: u64, seed: &Seed) -> Result<LweCiphertext> {
        self.lwe.encrypt(&self.params, m, seed)
    }

    /// Encrypts `m ∈ [0, p)` with fresh randomness.
    pub fn encrypt_random(&self, m: u64) -> Result<LweCiphertext> {
        self.lwe.encrypt_random(&self.params, m)
    }

    /// Decrypts an LWE ciphertext under the LWE key (dimension `n`) or the extracted GLWE key
    /// (dimension `k · N`), whichever has its dimension; the value is in `[0, 2p)`.
    pub fn decrypt(&self, ct: &LweCiphertext) -> Result<u64> {
        if ct.dimension() == self.lwe.dimension() {
            self.lwe.decrypt(&self.params, ct)
        } else {
            self.glwe.extracted_lwe_key().decrypt(&self.params, ct)
        }
    }

    /// Generates the server key from `seed`.
    pub fn server_key(&self, seed: &Seed) -> Result<ServerKey> {
        let p = &self.params;
        let br = p.blind_rotate_params()?;
        let ntt = NttTable::new(br.modulus, br.ring_degree)?;
        let key_ntt = self.glwe.ntt_form(&ntt);
        let mut data = vec![0u64; br.key_len()];
        let rows = br.rows_per_rgsw() as u32;
        let per_step = br.rgsws_per_step();
        let enc = RgswEncryptor {
            key: &self.glwe,
            ntt: &ntt,
            key_ntt: &key_ntt,
            params: &br,
            noise_bound: p.glwe_noise_bound,
            seed,
        };
        data.par_chunks_mut(br.rgsw_len())
            .enumerate()
            .for_each(|(idx, out)| {
                let (i, t) = (idx / per_step, idx % per_step);
                let s = self.lwe.coefficients();
                let mu = if br.group_size > 1 {
                    // Pattern t + 1 over coefficients g·i + j: the indicator that it is s's.
                    let g = br.group_size;
                    let pattern = t + 1;
                    i64::from((0..g).all(|j| s[g * i + j] == (pattern >> j & 1) as i64))
                } else {
                    match (p.lwe_secret, t) {
                        (SecretKind::Binary, _) => s[i],
                        (SecretKind::Ternary, 0) => i64::from(s[i] == 1),
                        (SecretKind::Ternary, _) => i64::from(s[i] == -1),
                    }
                };
                enc.encrypt_into(mu, idx as u32 * rows, out);
            });
        let bootstrap = BootstrapKeyHost { params: br, data };

        let ks = p.key_switch_params()?;
        let q = ks.modulus;
        let g = ks.gadget.values(q.value());
        let l = ks.gadget.levels as usize;
        let width = ks.output_dimension + 1;
        let mut data = vec![0u64; ks.key_len()];
        let big = self.glwe.coefficients();
        data.par_chunks_mut(width).enumerate().for_each(|(r, out)| {
            let (i, j) = (r / l, r % l);
            let pt = q.mul(q.reduce_i64(big[i]), g[j]);
            let streams = (
                Stream {
                    domain: Domain::KeySwitchA,
                    object: r as u32,
                    part: 0,
                },
                Stream {
                    domain: Domain::Error,
                    object: r as u32,
                    part: 1,
                },
            );
            self.lwe
                .encrypt_into(pt, p.lwe_noise_bound, &q, seed, streams, out);
        });
        let key_switch = KeySwitchKeyHost { params: ks, data };
        Ok(ServerKey {
            params: *p,
            bootstrap,
            key_switch,
        })
    }
}

impl ServerKey {
    /// The parameter set.
    pub fn params(&self) -> &Parameters {
        &self.params
    }

    /// The bootstrapping key (host form, rows in NTT form).
    pub fn bootstrap_key(&self) -> &BootstrapKeyHost {
        &self.bootstrap
    }

    /// The key-switching key (host form).
    pub fn key_switch_key(&self) -> &KeySwitchKeyHost {
        &self.key_switch
    }
}
