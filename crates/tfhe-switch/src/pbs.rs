//! Programmable bootstrapping over any [`BlindRotateBackend`].

use fhe_math::backend::blind_rotate::{BlindRotateBackend, LweBatchHost};

use crate::error::{Error, Result};
use crate::keys::ServerKey;
use crate::lut::LookupTable;
use crate::lwe::LweCiphertext;
use crate::params::Parameters;

/// The server side of a backend: the evaluation keys uploaded once, batches bootstrapped
/// per call.
pub struct Bootstrapper<'b, B: BlindRotateBackend> {
    backend: &'b B,
    params: Parameters,
    bootstrap: B::BootstrapKey,
    key_switch: B::KeySwitchKey,
}

impl<'b, B: BlindRotateBackend> Bootstrapper<'b, B> {
    /// Uploads the server key's two keys to `backend`.
    pub fn new(backend: &'b B, key: &ServerKey) -> Result<Self> {
        Ok(Bootstrapper {
            backend,
            params: key.params,
            bootstrap: backend.upload_bootstrap_key(&key.bootstrap)?,
            key_switch: backend.upload_key_switch_key(&key.key_switch)?,
        })
    }

    /// The parameter set.
    pub fn params(&self) -> &Parameters {
        &self.params
    }

    fn upload(&self, cts: &[LweCiphertext], dimension: usize) -> Result<B::LweBatch> {
        let q = self.params.q()?;
        let mut data = Vec::with_capacity(cts.len() * (dimension + 1));
        for ct in cts {
            if ct.dimension() != dimension || ct.modulus() != q {
                return Err(Error::Mismatch {
                    what: format!(
                        "ciphertext of dimension {} mod {}, expected dimension {dimension} mod {}",
                        ct.dimension(),
                        ct.modulus().value(),
                        q.value()
                    ),
                });
            }
            data.extend_from_slice(ct.as_residues());
        }
        let host = LweBatchHost {
            dimension,
            modulus: q,
            data,
        };
        Ok(self.backend.upload_lwe_batch(&host)?)
    }

    /// Uploads a host batch of ciphertexts of dimension `k · N` (checked by the backend) and
    /// key-switches it to `n`, the result left in the backend's memory.
    pub(crate) fn key_switch_batch(&self, batch: &LweBatchHost) -> Result<B::LweBatch> {
        let q = self.params.q()?;
        let wide = self.params.glwe_dimension * self.params.ring_degree;
        if batch.dimension != wide || batch.modulus != q {
            return Err(Error::Mismatch {
                what: format!(
                    "batch of dimension {} mod {}, expected dimension {wide} mod {}",
                    batch.dimension,
                    batch.modulus.value(),
                    q.value()
                ),
            });
        }
        let input = self.backend.upload_lwe_batch(batch)?;
        Ok(self.backend.key_switch(&self.key_switch, &input)?)
    }

    /// [`Self::bootstrap`] of a batch in the backend's memory, the result left there.
    pub(crate) fn bootstrap_batch(
        &self,
        lut: &LookupTable,
        input: &B::LweBatch,
    ) -> Result<B::LweBatch> {
        Ok(self.backend.programmable_bootstrap(
            &self.bootstrap,
            &self.key_switch,
            lut.test_polynomial(),
            input,
        )?)
    }

    /// Downloads a batch as a host batch.
    pub(crate) fn download_batch(&self, batch: &B::LweBatch) -> Result<LweBatchHost> {
        Ok(self.backend.download_lwe_batch(batch)?)
    }

    pub(crate) fn download(&self, batch: &B::LweBatch) -> Result<Vec<LweCiphertext>> {
        let host = self.backend.download_lwe_batch(batch)?;
        host.data
            .chunks_exact(host.dimension + 1)
            .map(|c| LweCiphertext::from_residues(host.modulus, c.to_vec()))
            .collect()
    }

    /// Blind rotation and sample extraction of every ciphertext (dimension `n`): LWE
    /// ciphertexts of dimension `k · N` under the extracted GLWE key encrypting `lut(m)`.
    pub fn blind_rotate_extract(
        &self,
        lut: &LookupTable,
        cts: &[LweCiphertext],
    ) -> Result<Vec<LweCiphertext>> {
        let input = self.upload(cts, self.params.lwe_dimension)?;
        let out =
            self.backend
                .blind_rotate_extract(&self.bootstrap, lut.test_polynomial(), &input)?;
        self.download(&out)
    }

    /// LWE key switching from the extracted key (`k · N`) to the LWE key (`n`).
    pub fn key_switch(&self, cts: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        let input = self.upload(cts, self.params.glwe_dimension * self.params.ring_degree)?;
        let out = self.backend.key_switch(&self.key_switch, &input)?;
        self.download(&out)
    }

    /// Programmable bootstrapping of a batch: each ciphertext of `m` becomes a fresh
    /// ciphertext (dimension `n`, same key) of `lut(m)`.
    pub fn bootstrap(
        &self,
        lut: &LookupTable,
        cts: &[LweCiphertext],
    ) -> Result<Vec<LweCiphertext>> {
        let input = self.upload(cts, self.params.lwe_dimension)?;
        let out = self.backend.programmable_bootstrap(
            &self.bootstrap,
            &self.key_switch,
            lut.test_polynomial(),
            &input,
        )?;
        self.download(&out)
    }
}
