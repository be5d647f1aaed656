//! [`BlindRotateBackend`] on the device: keys uploaded once and kept in device memory, batches
//! of LWE ciphertexts as device buffers, the whole blind rotation of a batch in one fused launch
//! (`blind_rotate_run`, or `blind_rotate_run_cluster` for batches of at most SMs / 4,
//! [`crate::kernels::blind_rotate`]) and key switching in another (two for small batches). The
//! results are the CPU reference's words (fhe-math's `backend::blind_rotate` rules: exact
//! arithmetic mod `q` except the specified f64 FFT of the external product, the same
//! operations in the same order), in a batch or alone.

use super::*;
use crate::kernels::blind_rotate as br;
use fhe_math::backend::blind_rotate::fft::NegacyclicFft;
use fhe_math::backend::blind_rotate::{
    BlindRotateBackend, BlindRotateParams, BootstrapKeyHost, ExtractionEntries, KeySwitchKeyHost,
    KeySwitchParams, LweBatchHost, key_spectra,
};
use fhe_math::modulus::Modulus;

/// A bootstrapping key in device memory: the RGSW rows' FFT spectra (fhe-math's
/// `key_spectra`, computed on the host at upload), the FFT twiddles of its ring and the roots
/// `ψ^x` of the multi-bit key product.
pub struct CudaBootstrapKey {
    params: BlindRotateParams,
    data: CudaSlice<u64>,
    twiddles: CudaSlice<u64>,
    roots: CudaSlice<u64>,
}

impl CudaBootstrapKey {
    /// The shape of the key.
    pub fn params(&self) -> &BlindRotateParams {
        &self.params
    }
}

impl std::fmt::Debug for CudaBootstrapKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBootstrapKey")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

/// An LWE key-switching key in device memory (rows `i · l + j`, each an LWE ciphertext).
pub struct CudaKeySwitchKey {
    params: KeySwitchParams,
    data: CudaSlice<u64>,
}

impl CudaKeySwitchKey {
    /// The shape of the key.
    pub fn params(&self) -> &KeySwitchParams {
        &self.params
    }
}

impl std::fmt::Debug for CudaKeySwitchKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaKeySwitchKey")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

/// A batch of LWE ciphertexts of one dimension in device memory, `dimension + 1` words each.
pub struct CudaLweBatch {
    dimension: usize,
    modulus: Modulus,
    count: usize,
    data: CudaSlice<u64>,
}

impl CudaLweBatch {
    /// Number of ciphertexts.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the batch holds no ciphertext.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The dimension of every ciphertext.
    pub fn dimension(&self) -> usize {
        self.dimension
    }
}

impl std::fmt::Debug for CudaLweBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaLweBatch")
            .field("dimension", &self.dimension)
            .field("modulus", &self.modulus.value())
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

/// An error unless an input's `(dimension, modulus)` is the key's: "`what` of dimension … mod
/// …, key `relation` dimension … mod …".
fn check_input_shape(
    what: &str,
    (dim, q): (usize, Modulus),
    relation: &str,
    (key_dim, key_q): (usize, Modulus),
) -> Result<()> {
    if dim != key_dim || q != key_q {
        return Err(shape_err(format!(
            "{what} of dimension {dim} mod {}, key {relation} dimension {key_dim} mod {}",
            q.value(),
            key_q.value()
        )));
    }
    Ok(())
}

impl CudaBackend {
    /// An error unless `data` lives in this backend's CUDA context.
    fn check_context(&self, data: &CudaSlice<u64>, what: &str) -> Result<()> {
        if data.context().cu_ctx() != self.inner.device.context().cu_ctx() {
            return Err(Error::Backend {
                message: format!(
                    "{what} of another CUDA device was given to a backend on device {}",
                    self.inner.device.ordinal()
                ),
            });
        }
        Ok(())
    }

    /// A device batch of `count` ciphertexts of `dimension` (unspecified contents).
    fn alloc_lwe(&self, dimension: usize, modulus: Modulus, count: usize) -> Result<CudaLweBatch> {
        let len = count
            .checked_mul(dimension + 1)
            .ok_or_else(|| shape_err("LWE batch too large"))?;
        // SAFETY: every word is written by the kernel that produces the batch before any read.
        let data = unsafe { self.inner.stream.alloc::<u64>(len.max(1)) }.map_err(drv("alloc"))?;
        Ok(CudaLweBatch {
            dimension,
            modulus,
            count,
            data,
        })
    }
}

impl BlindRotateBackend for CudaBackend {
    type BootstrapKey = CudaBootstrapKey;
    type KeySwitchKey = CudaKeySwitchKey;
    type LweBatch = CudaLweBatch;

    fn upload_bootstrap_key(&self, key: &BootstrapKeyHost) -> Result<CudaBootstrapKey> {
        key.check()?;
        br::check_blind_rotate(&key.params)?;
        let ntt = NttTable::new(key.params.modulus, key.params.ring_degree)?;
        let fft = NegacyclicFft::new(key.params.ring_degree)?;
        let spectra = key_spectra(&key.params, &ntt, &fft, &key.data);
        Ok(CudaBootstrapKey {
            params: key.params,
            data: self.upload_words(&br::complex_words(&spectra))?,
            twiddles: self.upload_words(&br::twiddle_words(&fft))?,
            roots: self.upload_words(&br::root_words(&fft))?,
        })
    }

    fn upload_key_switch_key(&self, key: &KeySwitchKeyHost) -> Result<CudaKeySwitchKey> {
        key.check()?;
        br::check_key_switch(&key.params)?;
        Ok(CudaKeySwitchKey {
            params: key.params,
            data: self.upload_words(&key.data)?,
        })
    }

    fn upload_lwe_batch(&self, batch: &LweBatchHost) -> Result<CudaLweBatch> {
        batch.check()?;
        let count = batch.len();
        if count > u32::MAX as usize {
            return Err(shape_err("LWE batch of more than 2^32 - 1 ciphertexts"));
        }
        let data = if batch.data.is_empty() {
            self.upload_words(&[0])?
        } else {
            self.upload_words(&batch.data)?
        };
        Ok(CudaLweBatch {
            dimension: batch.dimension,
            modulus: batch.modulus,
            count,
            data,
        })
    }

    fn download_lwe_batch(&self, batch: &CudaLweBatch) -> Result<LweBatchHost> {
        self.check_context(&batch.data, "an LWE batch")?;
        let mut data = vec![0u64; batch.count * (batch.dimension + 1)];
        if !data.is_empty() {
            self.inner
                .stream
                .memcpy_dtoh(&batch.data.slice(..data.len()), &mut data)
                .map_err(drv("download"))?;
        }
        self.inner.stream.synchronize().map_err(drv("download"))?;
        Ok(LweBatchHost {
            dimension: batch.dimension,
            modulus: batch.modulus,
            data,
        })
    }

    fn blind_rotate_extract(
        &self,
        key: &CudaBootstrapKey,
        test_poly: &[u64],
        input: &CudaLweBatch,
    ) -> Result<CudaLweBatch> {
        let p = &key.params;
        check_input_shape(
            "blind rotation: batch",
            (input.dimension, input.modulus),
            "for",
            (p.lwe_dimension, p.modulus),
        )?;
        self.check_context(&key.data, "a bootstrapping key")?;
        self.check_context(&input.data, "an LWE batch")?;
        let out = self.alloc_lwe(p.output_dimension(), p.modulus, input.count)?;
        if input.count == 0 {
            return Ok(out);
        }
        // The CPU checks the test polynomial with each ciphertext (so not for an empty batch).
        if test_poly.len() != p.ring_degree {
            return Err(shape_err(format!(
                "blind rotation: test polynomial of {} and LWE of {} residues, expected {} and {}",
                test_poly.len(),
                p.lwe_dimension + 1,
                p.ring_degree,
                p.lwe_dimension + 1
            )));
        }
        if let Some(&bad) = test_poly.iter().find(|&&x| x >= p.modulus.value()) {
            return Err(shape_err(format!(
                "blind rotation: residue {bad} is not below q = {}",
                p.modulus.value()
            )));
        }
        let tp = self.upload_words(test_poly)?;
        let combined_words = br::combined_key_words(&self.inner.stream, p, input.count as u32)?;
        // SAFETY: the combine kernel writes every word the rotation reads (inactive steps are
        // neither written nor read).
        let combined = unsafe { self.inner.stream.alloc::<u64>(combined_words.max(1)) }
            .map_err(drv("alloc"))?;
        {
            let s = self.s();
            let (kp, _g1) = key.data.device_ptr(s);
            let (tw, _g2) = key.twiddles.device_ptr(s);
            let (roots, _g6) = key.roots.device_ptr(s);
            let (comb, _g7) = combined.device_ptr(s);
            let (tpp, _g3) = tp.device_ptr(s);
            let (inp, _g4) = input.data.device_ptr(s);
            let (outp, _g5) = out.data.device_ptr(s);
            br::run(
                &self.inner.device,
                &self.inner.stream,
                p,
                &br::RunBuffers {
                    key: kp,
                    twiddles: tw,
                    roots,
                    test_poly: tpp,
                    input: inp,
                    output: outp,
                    combined: if combined_words > 0 { comb } else { 0 },
                },
                input.count as u32,
            )?;
        }
        Ok(out)
    }

    fn key_switch(&self, key: &CudaKeySwitchKey, input: &CudaLweBatch) -> Result<CudaLweBatch> {
        let p = &key.params;
        check_input_shape(
            "key switch: batch",
            (input.dimension, input.modulus),
            "from",
            (p.input_dimension, p.modulus),
        )?;
        self.check_context(&input.data, "an LWE batch")?;
        let (inp, _g) = input.data.device_ptr(self.s());
        self.key_switch_launch(key, inp, 0, input.count)
    }

    /// The samples formed on the device from the `3·N` entries (`blind_rotate_key_switch`
    /// reads word `N + k − j` of them for mask entry `j` of coefficient `k`), so that no
    /// batch of `coeffs.len()·(N + 1)` words is built or uploaded.
    fn key_switch_extracted(
        &self,
        key: &CudaKeySwitchKey,
        entries: &ExtractionEntries,
        coeffs: &[usize],
    ) -> Result<CudaLweBatch> {
        let p = &key.params;
        entries.check()?;
        entries.check_coefficients(coeffs)?;
        check_input_shape(
            "key switch: extraction entries",
            (entries.dimension, entries.modulus),
            "from",
            (p.input_dimension, p.modulus),
        )?;
        if coeffs.len() > u32::MAX as usize {
            return Err(shape_err("LWE batch of more than 2^32 - 1 ciphertexts"));
        }
        // Indices below N (checked), so below 2^32.
        let ks: Vec<u32> = coeffs.iter().map(|&k| k as u32).collect();
        let words = self.upload_words(&entries.words)?;
        let idx = self
            .inner
            .stream
            .clone_htod(if ks.is_empty() { &[0u32][..] } else { &ks })
            .map_err(drv("upload"))?;
        let s = self.s();
        let (wp, _g1) = words.device_ptr(s);
        let (ip, _g2) = idx.device_ptr(s);
        self.key_switch_launch(key, wp, ip, coeffs.len())
    }
}

impl CudaBackend {
    /// The key switch of `count` ciphertexts at device address `input`: a batch, or with
    /// `coeffs` ≠ 0 (a device array of `count` `u32`) the samples of those coefficients read
    /// from extraction entries ([`br::KeySwitchBuffers`]).
    fn key_switch_launch(
        &self,
        key: &CudaKeySwitchKey,
        input: u64,
        coeffs: u64,
        count: usize,
    ) -> Result<CudaLweBatch> {
        let p = &key.params;
        self.check_context(&key.data, "a key-switching key")?;
        let out = self.alloc_lwe(p.output_dimension, p.modulus, count)?;
        if count == 0 {
            return Ok(out);
        }
        let slices = br::key_switch_slices(&self.inner.stream, p, count as u32)?;
        // Scratch of the partial sums when the input is sliced (small batches).
        let part_words = if slices > 1 {
            2 * slices as usize * count * (p.output_dimension + 1)
        } else {
            1
        };
        // SAFETY: every word the finishing kernel reads is written by the slices before it.
        let part = unsafe { self.inner.stream.alloc::<u64>(part_words) }.map_err(drv("alloc"))?;
        {
            let s = self.s();
            let (kp, _g1) = key.data.device_ptr(s);
            let (outp, _g3) = out.data.device_ptr(s);
            let (pp, _g4) = part.device_ptr(s);
            br::key_switch(
                &self.inner.device,
                &self.inner.stream,
                p,
                &br::KeySwitchBuffers {
                    key: kp,
                    input,
                    coeffs,
                    output: outp,
                    part: pp,
                },
                count as u32,
                slices,
            )?;
        }
        Ok(out)
    }
}
