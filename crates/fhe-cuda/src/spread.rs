//! [`Spread`]: one [`BlindRotateBackend`] over several, a batch split into contiguous parts,
//! one part per backend (e.g. one [`CudaBackend`] per visible GPU, [`Spread::all_gpus`]).
//!
//! Keys are uploaded to every backend; `upload_lwe_batch` splits a batch of `m` ciphertexts into
//! parts of `ceil(m / d)` (the last ones shorter or empty), and every call enqueues its part on
//! each backend in turn before any result is read, so devices run side by side (the CUDA methods
//! return once their launches are enqueued; the download synchronizes each device). Each
//! ciphertext is rotated and switched on its own, so the words are those of one backend alone:
//! the same as the CPU reference's.

use crate::backend::CudaBackend;
use crate::device::Device;
use fhe_math::backend::blind_rotate::{
    BlindRotateBackend, BootstrapKeyHost, KeySwitchKeyHost, LweBatchHost,
};
use fhe_math::ring::RingContext;
use fhe_math::{Error, Result};
use std::sync::Arc;

/// Several backends acting as one, a batch spread over them (see the module docs).
#[derive(Clone, Debug)]
pub struct Spread<B> {
    backends: Vec<B>,
}

/// A batch of a [`Spread`]: one part per backend, in order.
pub struct SpreadBatch<L> {
    parts: Vec<(usize, L)>,
}

impl<L> SpreadBatch<L> {
    /// Number of ciphertexts in the batch.
    pub fn len(&self) -> usize {
        self.parts.iter().map(|(n, _)| n).sum()
    }

    /// Whether the batch holds no ciphertext.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<B> Spread<B> {
    /// A spread over `backends` (at least one).
    pub fn new(backends: Vec<B>) -> Result<Self> {
        if backends.is_empty() {
            return Err(Error::ShapeMismatch {
                what: "a spread needs at least one backend".into(),
            });
        }
        Ok(Spread { backends })
    }

    /// The backends, in the order the parts of a batch go to them.
    pub fn backends(&self) -> &[B] {
        &self.backends
    }
}

impl Spread<CudaBackend> {
    /// One [`CudaBackend`] for `ring` on every visible GPU ([`Device::count`]).
    pub fn all_gpus(ring: Arc<RingContext>) -> crate::Result<Self> {
        let count = Device::count()?;
        let backends = (0..count)
            .map(|i| CudaBackend::new(Device::new(i)?, ring.clone()))
            .collect::<crate::Result<Vec<_>>>()?;
        Ok(Spread::new(backends)?)
    }
}

impl<B: BlindRotateBackend> Spread<B> {
    fn check_parts<L>(&self, batch: &SpreadBatch<L>) -> Result<()> {
        if batch.parts.len() != self.backends.len() {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "a batch of {} parts given to a spread over {} backends",
                    batch.parts.len(),
                    self.backends.len()
                ),
            });
        }
        Ok(())
    }

    /// `op` on every part with its backend (all enqueued before any result is read).
    fn each<L>(
        &self,
        batch: &SpreadBatch<L>,
        op: impl Fn(&B, usize, &L) -> Result<B::LweBatch>,
    ) -> Result<SpreadBatch<B::LweBatch>> {
        self.check_parts(batch)?;
        let parts = self
            .backends
            .iter()
            .zip(&batch.parts)
            .enumerate()
            .map(|(i, (b, (n, part)))| Ok((*n, op(b, i, part)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(SpreadBatch { parts })
    }
}

impl<B: BlindRotateBackend> BlindRotateBackend for Spread<B> {
    type BootstrapKey = Vec<B::BootstrapKey>;
    type KeySwitchKey = Vec<B::KeySwitchKey>;
    type LweBatch = SpreadBatch<B::LweBatch>;

    fn upload_bootstrap_key(&self, key: &BootstrapKeyHost) -> Result<Self::BootstrapKey> {
        self.backends
            .iter()
            .map(|b| b.upload_bootstrap_key(key))
            .collect()
    }

    fn upload_key_switch_key(&self, key: &KeySwitchKeyHost) -> Result<Self::KeySwitchKey> {
        self.backends
            .iter()
            .map(|b| b.upload_key_switch_key(key))
            .collect()
    }

    fn upload_lwe_batch(&self, batch: &LweBatchHost) -> Result<Self::LweBatch> {
        batch.check()?;
        let m = batch.len();
        let per = m.div_ceil(self.backends.len());
        let w = batch.dimension + 1;
        let parts = self
            .backends
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let lo = (i * per).min(m);
                let hi = ((i + 1) * per).min(m);
                let host = LweBatchHost {
                    dimension: batch.dimension,
                    modulus: batch.modulus,
                    data: batch.data[lo * w..hi * w].to_vec(),
                };
                Ok((hi - lo, b.upload_lwe_batch(&host)?))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(SpreadBatch { parts })
    }

    fn download_lwe_batch(&self, batch: &Self::LweBatch) -> Result<LweBatchHost> {
        self.check_parts(batch)?;
        let mut out: Option<LweBatchHost> = None;
        for (b, (_, part)) in self.backends.iter().zip(&batch.parts) {
            let host = b.download_lwe_batch(part)?;
            match &mut out {
                None => out = Some(host),
                Some(o) => o.data.extend_from_slice(&host.data),
            }
        }
        out.ok_or_else(|| Error::ShapeMismatch {
            what: "a spread batch without parts".into(),
        })
    }

    fn blind_rotate_extract(
        &self,
        key: &Self::BootstrapKey,
        test_poly: &[u64],
        input: &Self::LweBatch,
    ) -> Result<Self::LweBatch> {
        if key.len() != self.backends.len() {
            return Err(Error::ShapeMismatch {
                what: "a bootstrapping key of another spread".into(),
            });
        }
        self.each(input, |b, i, part| {
            b.blind_rotate_extract(&key[i], test_poly, part)
        })
    }

    fn key_switch(
        &self,
        key: &Self::KeySwitchKey,
        input: &Self::LweBatch,
    ) -> Result<Self::LweBatch> {
        if key.len() != self.backends.len() {
            return Err(Error::ShapeMismatch {
                what: "a key-switching key of another spread".into(),
            });
        }
        self.each(input, |b, i, part| b.key_switch(&key[i], part))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blind_rotate_fixtures::{Residues, tiny_params, tiny_ring};
    use fhe_math::cpu::CpuBackend;

    fn cpu() -> CpuBackend {
        CpuBackend::new(tiny_ring())
    }

    #[test]
    fn a_spread_gives_one_backends_words_for_every_split() {
        let p = tiny_params(2);
        let mut rng = Residues(7);
        let (key, ksk) = rng.keys(p);
        let tp = rng.take(16);
        let one = cpu();
        let (bk, kk) = (
            one.upload_bootstrap_key(&key).unwrap(),
            one.upload_key_switch_key(&ksk).unwrap(),
        );
        for (count, backends) in [(7usize, 3usize), (2, 3), (0, 2), (6, 1)] {
            let batch = rng.batch(p, count);
            let want = one.programmable_bootstrap(&bk, &kk, &tp, &batch).unwrap();
            let spread = Spread::new((0..backends).map(|_| cpu()).collect()).unwrap();
            let (sb, sk) = (
                spread.upload_bootstrap_key(&key).unwrap(),
                spread.upload_key_switch_key(&ksk).unwrap(),
            );
            let input = spread.upload_lwe_batch(&batch).unwrap();
            assert_eq!(input.len(), count);
            let got = spread
                .download_lwe_batch(
                    &spread
                        .programmable_bootstrap(&sb, &sk, &tp, &input)
                        .unwrap(),
                )
                .unwrap();
            assert_eq!(got, want, "{count} ciphertexts over {backends} backends");
            assert_eq!(got.dimension, 4);
        }
        assert!(Spread::<CpuBackend>::new(Vec::new()).is_err());
    }
}
