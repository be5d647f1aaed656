//! [`BlindRotateBackend`] for [`AnyBackend`]: keys and LWE batches that remember their device,
//! every method forwarded to the chosen backend (the CPU reference or the CUDA kernels, whose
//! words are the same). Handing a key or batch of one side to the other is an
//! [`Error::DeviceMismatch`], never a silent copy.

use super::AnyBackend;
use crate::backend::{CudaBootstrapKey, CudaKeySwitchKey, CudaLweBatch};
use fhe_math::backend::blind_rotate::{
    BlindRotateBackend, BootstrapKeyHost, CpuBootstrapKey, CpuKeySwitchKey, ExtractionEntries,
    KeySwitchKeyHost, LweBatchHost,
};
use fhe_math::{Error, Result};

/// A bootstrapping key of an [`AnyBackend`].
#[derive(Debug)]
pub enum AnyBootstrapKey {
    /// Held by the CPU backend.
    Cpu(CpuBootstrapKey),
    /// In device memory.
    Cuda(CudaBootstrapKey),
}

/// An LWE key-switching key of an [`AnyBackend`].
#[derive(Debug)]
pub enum AnyKeySwitchKey {
    /// Held by the CPU backend.
    Cpu(CpuKeySwitchKey),
    /// In device memory.
    Cuda(CudaKeySwitchKey),
}

/// A batch of LWE ciphertexts of an [`AnyBackend`].
#[derive(Debug)]
pub enum AnyLweBatch {
    /// In host memory.
    Cpu(LweBatchHost),
    /// In device memory.
    Cuda(CudaLweBatch),
}

/// Where a key or batch lives: `"cpu"` or `"cuda"`.
trait Side {
    fn side(&self) -> &'static str;
}

macro_rules! side {
    ($($t:ty),*) => {$(
        impl Side for $t {
            fn side(&self) -> &'static str {
                match self {
                    Self::Cpu(_) => "cpu",
                    Self::Cuda(_) => "cuda",
                }
            }
        }
    )*};
}
side!(AnyBootstrapKey, AnyKeySwitchKey, AnyLweBatch);

impl AnyBackend {
    fn mismatch_of(&self, buffer: &dyn Side) -> Error {
        Error::DeviceMismatch {
            backend: self.kind(),
            buffer: buffer.side(),
        }
    }
}

impl BlindRotateBackend for AnyBackend {
    type BootstrapKey = AnyBootstrapKey;
    type KeySwitchKey = AnyKeySwitchKey;
    type LweBatch = AnyLweBatch;

    fn upload_bootstrap_key(&self, key: &BootstrapKeyHost) -> Result<AnyBootstrapKey> {
        Ok(match self {
            AnyBackend::Cpu(b) => AnyBootstrapKey::Cpu(b.upload_bootstrap_key(key)?),
            AnyBackend::Cuda(b) => AnyBootstrapKey::Cuda(b.upload_bootstrap_key(key)?),
        })
    }

    fn upload_key_switch_key(&self, key: &KeySwitchKeyHost) -> Result<AnyKeySwitchKey> {
        Ok(match self {
            AnyBackend::Cpu(b) => AnyKeySwitchKey::Cpu(b.upload_key_switch_key(key)?),
            AnyBackend::Cuda(b) => AnyKeySwitchKey::Cuda(b.upload_key_switch_key(key)?),
        })
    }

    fn upload_lwe_batch(&self, batch: &LweBatchHost) -> Result<AnyLweBatch> {
        Ok(match self {
            AnyBackend::Cpu(b) => AnyLweBatch::Cpu(b.upload_lwe_batch(batch)?),
            AnyBackend::Cuda(b) => AnyLweBatch::Cuda(b.upload_lwe_batch(batch)?),
        })
    }

    fn download_lwe_batch(&self, batch: &AnyLweBatch) -> Result<LweBatchHost> {
        match (self, batch) {
            (AnyBackend::Cpu(b), AnyLweBatch::Cpu(x)) => b.download_lwe_batch(x),
            (AnyBackend::Cuda(b), AnyLweBatch::Cuda(x)) => b.download_lwe_batch(x),
            _ => Err(self.mismatch_of(batch)),
        }
    }

    fn blind_rotate_extract(
        &self,
        key: &AnyBootstrapKey,
        test_poly: &[u64],
        input: &AnyLweBatch,
    ) -> Result<AnyLweBatch> {
        match (self, key, input) {
            (AnyBackend::Cpu(b), AnyBootstrapKey::Cpu(k), AnyLweBatch::Cpu(x)) => {
                Ok(AnyLweBatch::Cpu(b.blind_rotate_extract(k, test_poly, x)?))
            }
            (AnyBackend::Cuda(b), AnyBootstrapKey::Cuda(k), AnyLweBatch::Cuda(x)) => {
                Ok(AnyLweBatch::Cuda(b.blind_rotate_extract(k, test_poly, x)?))
            }
            (AnyBackend::Cpu(_), AnyBootstrapKey::Cpu(_), x)
            | (AnyBackend::Cuda(_), AnyBootstrapKey::Cuda(_), x) => Err(self.mismatch_of(x)),
            (_, k, _) => Err(self.mismatch_of(k)),
        }
    }

    fn key_switch(&self, key: &AnyKeySwitchKey, input: &AnyLweBatch) -> Result<AnyLweBatch> {
        match (self, key, input) {
            (AnyBackend::Cpu(b), AnyKeySwitchKey::Cpu(k), AnyLweBatch::Cpu(x)) => {
                Ok(AnyLweBatch::Cpu(b.key_switch(k, x)?))
            }
            (AnyBackend::Cuda(b), AnyKeySwitchKey::Cuda(k), AnyLweBatch::Cuda(x)) => {
                Ok(AnyLweBatch::Cuda(b.key_switch(k, x)?))
            }
            (AnyBackend::Cpu(_), AnyKeySwitchKey::Cpu(_), x)
            | (AnyBackend::Cuda(_), AnyKeySwitchKey::Cuda(_), x) => Err(self.mismatch_of(x)),
            (_, k, _) => Err(self.mismatch_of(k)),
        }
    }

    fn key_switch_extracted(
        &self,
        key: &AnyKeySwitchKey,
        entries: &ExtractionEntries,
        coeffs: &[usize],
    ) -> Result<AnyLweBatch> {
        match (self, key) {
            (AnyBackend::Cpu(b), AnyKeySwitchKey::Cpu(k)) => Ok(AnyLweBatch::Cpu(
                b.key_switch_extracted(k, entries, coeffs)?,
            )),
            (AnyBackend::Cuda(b), AnyKeySwitchKey::Cuda(k)) => Ok(AnyLweBatch::Cuda(
                b.key_switch_extracted(k, entries, coeffs)?,
            )),
            (_, k) => Err(self.mismatch_of(k)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blind_rotate_fixtures::{Residues, tiny_params, tiny_ring};
    use fhe_math::cpu::CpuBackend;

    fn cpu_pair() -> (AnyBackend, CpuBackend) {
        let ring = tiny_ring();
        (AnyBackend::cpu(ring.clone()), CpuBackend::new(ring))
    }

    #[test]
    fn cpu_side_gives_the_cpu_words() {
        let p = tiny_params(1);
        let (any, cpu) = cpu_pair();
        let mut rng = Residues(1);
        let (key, ksk) = rng.keys(p);
        let batch = rng.batch(p, 3);
        let tp = rng.take(16);

        let (ak, ck) = (
            any.upload_bootstrap_key(&key).unwrap(),
            cpu.upload_bootstrap_key(&key).unwrap(),
        );
        let (aks, cks) = (
            any.upload_key_switch_key(&ksk).unwrap(),
            cpu.upload_key_switch_key(&ksk).unwrap(),
        );
        let ab = any.upload_lwe_batch(&batch).unwrap();
        let got = any
            .download_lwe_batch(&any.programmable_bootstrap(&ak, &aks, &tp, &ab).unwrap())
            .unwrap();
        let want = cpu.programmable_bootstrap(&ck, &cks, &tp, &batch).unwrap();
        assert_eq!(got, want);
        assert_eq!(got.len(), 3);
        assert_eq!(got.dimension, 4);
    }
}
