//! Launch wrappers of `kernels/blind_rotate.cu`: the fused blind rotation with sample
//! extraction (`blind_rotate_run`, one block per ciphertext over all steps;
//! `blind_rotate_run_cluster`, one cluster of 4 blocks per ciphertext for batches of at most
//! SMs / 4; their `_multi_bit` twins for multi-bit keys) and LWE key switching (`blind_rotate_key_switch`, its input sliced over blocks for
//! small batches), with their argument structs and the host-side tables (twiddles, rounding
//! constants) and shape limits.

use super::launch;
use crate::error::{Error, Result};
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute_enum};
use cudarc::driver::{CudaStream, DeviceRepr, LaunchConfig};
use fhe_math::backend::blind_rotate::fft::{C64, NegacyclicFft};
use fhe_math::backend::blind_rotate::{BlindRotateParams, KeySwitchParams};
use std::sync::Arc;

/// `BR_MAX_K1` of blind_rotate.cu: the most GLWE components `k + 1`.
pub const MAX_GLWE_COMPONENTS: usize = 4;
/// `KS_MAX_LEVELS` of blind_rotate.cu: the most key-switching gadget levels.
pub const MAX_KS_LEVELS: u32 = 8;
/// `BR_CL_LOG` of blind_rotate.cu: `blind_rotate_run_cluster` spreads one ciphertext over
/// `2^CLUSTER_LOG` blocks.
const CLUSTER_LOG: u32 = 2;
/// `KS_TILE` of blind_rotate.cu: ciphertexts per key-switching block.
const KS_TILE: u32 = 16;
/// `KS_COLS` of blind_rotate.cu: output columns (threads) per key-switching block.
const KS_COLS: u32 = 128;
/// `KS_CHUNK` of blind_rotate.cu: input coefficients decomposed per shared-memory chunk.
const KS_CHUNK: u32 = 64;

/// `BrArgs` of blind_rotate.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BrArgs {
    q: u64,
    ms_c: u64,
    n_lwe: u32,
    log_n: u32,
    k: u32,
    levels: u32,
    base_log: u32,
    kpc: u32,
    radix_log: u32,
    group: u32,
}

// SAFETY: plain repr(C) data matching `struct BrArgs` of blind_rotate.cu (2 u64 then 8 u32).
unsafe impl DeviceRepr for BrArgs {}

/// `KsArgs` of blind_rotate.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KsArgs {
    q: u64,
    bhi: u64,
    blo: u64,
    dec_c: u64,
    n_in: u32,
    n_out: u32,
    levels: u32,
    base_log: u32,
    span: u32,
    extracted: u32,
}

// SAFETY: plain repr(C) data matching `struct KsArgs` of blind_rotate.cu (4 u64 then 6 u32).
unsafe impl DeviceRepr for KsArgs {}

/// `floor(2^(64 + bits) / q)`, the rounding constant of `br_round_scaled` (`2^bits < q`).
fn round_constant(bits: u32, q: u64) -> u64 {
    ((1u128 << (64 + bits)) / u128::from(q)) as u64
}

/// `re`, `im` bit patterns of complex values, the device's `double2` words.
pub fn complex_words(z: &[C64]) -> Vec<u64> {
    z.iter()
        .flat_map(|c| [c.re.to_bits(), c.im.to_bits()])
        .collect()
}

/// The device twiddle table of a blind rotation's ring: the `N/2` twiddles `T` of fhe-math's
/// [`NegacyclicFft`] as `double2` words.
pub fn twiddle_words(fft: &NegacyclicFft) -> Vec<u64> {
    complex_words(fft.twiddles())
}

/// The device roots table of the multi-bit key product: `ψ^x` for `x < 2N`
/// ([`NegacyclicFft::roots`]) as `double2` words.
pub fn root_words(fft: &NegacyclicFft) -> Vec<u64> {
    complex_words(fft.roots())
}

/// The device-side limits of the blind rotation: `k + 1 <= 4` and `N >= 8` (the first and
/// last rounds of the transforms take 4 points of `N/2`).
pub fn check_blind_rotate(p: &BlindRotateParams) -> Result<()> {
    if p.ring_degree < 8 {
        return Err(Error::Unsupported {
            what: format!(
                "blind rotation at ring degree {} on the GPU (at least 8)",
                p.ring_degree
            ),
        });
    }
    if p.glwe_dimension + 1 > MAX_GLWE_COMPONENTS {
        return Err(Error::Unsupported {
            what: format!(
                "blind rotation with GLWE dimension {} on the GPU (at most {})",
                p.glwe_dimension,
                MAX_GLWE_COMPONENTS - 1
            ),
        });
    }
    Ok(())
}

/// The device-side limits of key switching: at most [`MAX_KS_LEVELS`] levels and every sum of
/// the kernel exact in 64 bits: with each key word split as `h·2^31 + w`, `terms · 2^(base_log
/// − 1) · max(2^31, h + 1) < 2^63` over the `terms = n_in · levels` products.
pub fn check_key_switch(p: &KeySwitchParams) -> Result<()> {
    let g = p.gadget;
    let terms = (p.input_dimension as u128) * u128::from(g.levels);
    let digit = 1u128 << g.base_log.saturating_sub(1).min(64);
    let word = (1u128 << 31).max((u128::from(p.modulus.value()) >> 31) + 1);
    let fits = terms
        .checked_mul(digit)
        .and_then(|x| x.checked_mul(word))
        .is_some_and(|x| x < 1u128 << 63);
    if g.levels > MAX_KS_LEVELS || !fits || p.output_dimension >= u32::MAX as usize {
        return Err(Error::Unsupported {
            what: format!(
                "key switching from dimension {} with base 2^{} and {} levels mod {} on the GPU \
                 (at most {} levels, dimension · levels · 2^(base_log - 1) · max(2^31, q / 2^31) \
                 < 2^63)",
                p.input_dimension,
                g.base_log,
                g.levels,
                p.modulus.value(),
                MAX_KS_LEVELS
            ),
        });
    }
    Ok(())
}

/// Dynamic shared memory of `blind_rotate_run` in bytes: accumulator (`(k + 1)·N` words),
/// digit spectra (`(k + 1)·l·N/2` points of 16 bytes), the ternary sum (`(k + 1)·N/2` points),
/// each padded by one point in eight (`br_pad`), then `n + 1` exponents.
pub fn shared_bytes(p: &BlindRotateParams) -> usize {
    let k1 = p.glwe_dimension + 1;
    let m = p.ring_degree / 2;
    let padded = |points: usize| points + points / 8;
    let ternary = if p.keys_per_coefficient == 2 {
        padded(k1 * m)
    } else {
        0
    };
    8 * k1 * p.ring_degree
        + 16 * (padded(p.rows_per_rgsw() * m) + ternary)
        + 4 * (p.lwe_dimension + 1)
}

/// Dynamic shared memory of `blind_rotate_run_cluster` in bytes: the whole accumulator, the
/// block's segment (`P = N/2 / 2^CLUSTER_LOG` points) of the digit spectra and of the ternary
/// sum, each padded, the key slices of two steps (`R · (k + 1)·l·(k + 1)·P` points each: the
/// step's and the next's, fetched during it; `R` = `keys_per_coefficient`, 1 for the combined
/// keys of a multi-bit rotation), then `n + 1` exponents.
pub fn cluster_shared_bytes(p: &BlindRotateParams) -> usize {
    let k1 = p.glwe_dimension + 1;
    let pts = (p.ring_degree / 2) >> CLUSTER_LOG;
    let padded = |points: usize| points + points / 8;
    let ternary = if p.keys_per_coefficient == 2 {
        padded(k1 * pts)
    } else {
        0
    };
    let per_step = if p.group_size > 1 {
        1
    } else {
        p.keys_per_coefficient
    };
    let slice = 2 * per_step * p.rows_per_rgsw() * k1 * pts;
    8 * k1 * p.ring_degree
        + 16 * (padded(p.rows_per_rgsw() * pts) + ternary + slice)
        + 4 * (p.lwe_dimension + 1)
}

/// Device addresses of one `blind_rotate_run` launch.
pub struct RunBuffers {
    /// The bootstrapping key's spectra (fhe-math's `key_spectra` layout, `double2`).
    pub key: u64,
    /// [`twiddle_words`] on the device.
    pub twiddles: u64,
    /// [`root_words`] on the device.
    pub roots: u64,
    /// The test polynomial (`N` words).
    pub test_poly: u64,
    /// The input ciphertexts (`n + 1` words each).
    pub input: u64,
    /// The extracted outputs (`k·N + 1` words each).
    pub output: u64,
    /// Scratch of [`combined_key_words`] words for the combined keys of a multi-bit rotation
    /// on clusters (0 when that is 0).
    pub combined: u64,
}

/// Whether a batch of `count` runs on clusters of blocks (`blind_rotate_run_cluster*`): few
/// ciphertexts (each can have `2^CLUSTER_LOG` SMs of its own), segments of at least
/// `2^CLUSTER_LOG` points (`N >= 32`) and the shared memory available.
pub fn uses_cluster(stream: &Arc<CudaStream>, p: &BlindRotateParams, count: u32) -> Result<bool> {
    let ctx = stream.context();
    let sms = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(Error::driver("device attribute"))? as u32;
    let max_smem = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        .map_err(Error::driver("device attribute"))? as usize;
    Ok((count as u64) << CLUSTER_LOG <= u64::from(sms)
        && p.ring_degree.trailing_zeros() > 2 * CLUSTER_LOG
        && cluster_shared_bytes(p) <= max_smem)
}

/// Scratch words (`u64`) for the combined keys of a multi-bit rotation of `count` ciphertexts
/// on clusters (`blind_rotate_combine_multi_bit`: one RGSW-shaped spectrum a step and
/// ciphertext, 20 MB a ciphertext at `MULTI_BIT3_918_2048`); 0 otherwise.
pub fn combined_key_words(
    stream: &Arc<CudaStream>,
    p: &BlindRotateParams,
    count: u32,
) -> Result<usize> {
    if p.group_size < 2 || !uses_cluster(stream, p, count)? {
        return Ok(0);
    }
    // Spectra of N/2 double2 = N words a polynomial.
    Ok(count as usize * p.steps() * p.rgsw_len())
}

/// Enqueues the blind rotation and extraction of `count` ciphertexts.
pub fn run(
    dev: &crate::Device,
    stream: &Arc<CudaStream>,
    p: &BlindRotateParams,
    bufs: &RunBuffers,
    count: u32,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    check_blind_rotate(p)?;
    let ctx = stream.context();
    let sms = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(Error::driver("device attribute"))? as u32;
    let log_n = p.ring_degree.trailing_zeros();
    let max_smem = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        .map_err(Error::driver("device attribute"))? as usize;
    let cluster = uses_cluster(stream, p, count)?;
    let multi_bit = p.group_size > 1;
    let tuning = dev.tuning();
    let (radix_batched, radix_small) = tuning.blind_rotate_radix_log;
    let radix_log = if count < sms {
        radix_small
    } else {
        radix_batched
    }
    .clamp(1, 3)
    .min((log_n - 1).max(1));
    // 8 points a thread: the 256-thread entry (three blocks an SM); fewer: the 512-thread one.
    // Multi-bit keys: their own entries (two blocks an SM in a batch).
    let name = match (cluster, multi_bit) {
        (true, false) => "blind_rotate_run_cluster",
        (true, true) => "blind_rotate_run_cluster_multi_bit",
        (false, true) => "blind_rotate_run_multi_bit",
        (false, false) if radix_log == 3 => "blind_rotate_run",
        (false, false) => "blind_rotate_run_wide",
    };
    let f = dev.function("blind_rotate", name)?;
    let smem = if cluster {
        cluster_shared_bytes(p)
    } else {
        shared_bytes(p)
    };
    if smem > max_smem {
        return Err(Error::Unsupported {
            what: format!(
                "blind rotation at N = {}, k = {}, {} levels needs {smem} bytes of shared memory \
                 per block (the device has {max_smem})",
                p.ring_degree, p.glwe_dimension, p.gadget.levels
            ),
        });
    }
    f.set_attribute(
        CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        smem as i32,
    )
    .map_err(Error::driver("kernel attribute"))?;
    // The cluster entry: one thread a radix-4 group of its segment's rows; the others: one a
    // group of the rows' radix-2^radix_log rounds.
    let groups = if cluster {
        ((p.rows_per_rgsw() * (p.ring_degree / 2)) >> CLUSTER_LOG) as u32 >> 2
    } else {
        (p.rows_per_rgsw() * p.ring_degree / 2) as u32 >> radix_log
    };
    // The loops of the kernel are strided, so any whole number of warps up to the function's
    // limit (its register use) gives the same result.
    let limit = f
        .max_threads_per_block()
        .map_err(Error::driver("kernel attribute"))?
        .clamp(32, 1024) as u32;
    let threads = groups
        .clamp(32, tuning.blind_rotate_max_threads.clamp(32, 1024))
        .next_multiple_of(32)
        .min(limit / 32 * 32);
    let q = p.modulus;
    let args = BrArgs {
        q: q.value(),
        ms_c: round_constant(log_n + 1, q.value()),
        n_lwe: p.lwe_dimension as u32,
        log_n,
        k: p.glwe_dimension as u32,
        levels: p.gadget.levels,
        base_log: p.gadget.base_log,
        kpc: p.keys_per_coefficient as u32,
        radix_log,
        group: p.group_size as u32,
    };
    let cfg = LaunchConfig {
        grid_dim: (if cluster { count << CLUSTER_LOG } else { count }, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: smem as u32,
    };
    if !cluster {
        return launch!(
            stream,
            f,
            cfg,
            &args,
            &bufs.key,
            &bufs.twiddles,
            &bufs.roots,
            &bufs.test_poly,
            &bufs.input,
            &bufs.output,
            &count
        );
    }
    // Clusters: multi-bit keys combined per step and ciphertext first, over the whole GPU.
    let key = if multi_bit {
        if bufs.combined == 0 {
            return Err(Error::Unsupported {
                what: "a multi-bit blind rotation on clusters needs the combined-key scratch"
                    .into(),
            });
        }
        let combine = dev.function("blind_rotate", "blind_rotate_combine_multi_bit")?;
        let ccfg = LaunchConfig {
            grid_dim: (p.steps() as u32, count, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        launch!(
            stream,
            combine,
            ccfg,
            &args,
            &bufs.key,
            &bufs.roots,
            &bufs.input,
            &bufs.combined,
            &count
        )?;
        bufs.combined
    } else {
        bufs.key
    };
    launch!(
        stream,
        f,
        cfg,
        &args,
        &key,
        &bufs.twiddles,
        &bufs.test_poly,
        &bufs.input,
        &bufs.output,
        &count
    )
}

/// Input slices of a key switch of `count` ciphertexts: 1 when the column and ciphertext tiles
/// give at least two blocks an SM, else enough slices of the input (whole `KS_CHUNK`s) for that
/// (small batches: one ciphertext has 8 tiles at n = 918); [`key_switch`] then needs
/// `2 · slices · count · (n_out + 1)` scratch words.
pub fn key_switch_slices(stream: &Arc<CudaStream>, p: &KeySwitchParams, count: u32) -> Result<u32> {
    let sms = stream
        .context()
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(Error::driver("device attribute"))? as u32;
    let tiles = (p.output_dimension as u32 + 1).div_ceil(KS_COLS) * count.div_ceil(KS_TILE);
    let chunks = (p.input_dimension as u32).div_ceil(KS_CHUNK).max(1);
    Ok((2 * sms).div_ceil(tiles.max(1)).clamp(1, chunks))
}

/// Device addresses of one key switch: key, input, output and (several slices) the scratch of
/// the partial sums.
pub struct KeySwitchBuffers {
    /// The key-switching key (rows `i · l + j`).
    pub key: u64,
    /// The input ciphertexts, or (with `coeffs`) the extraction entries of one RLWE
    /// ciphertext (`3·n_in` words, fhe-math's `ExtractionEntries`).
    pub input: u64,
    /// 0 for a batch input; else the coefficient (`u32`, below `n_in`) of each ciphertext,
    /// extracted from the entries at `input`.
    pub coeffs: u64,
    /// The output ciphertexts.
    pub output: u64,
    /// `2 · slices · count · (n_out + 1)` words when `slices > 1` (unused otherwise).
    pub part: u64,
}

/// Enqueues the key switch of `count` ciphertexts in `slices` input slices
/// ([`key_switch_slices`]).
pub fn key_switch(
    dev: &crate::Device,
    stream: &Arc<CudaStream>,
    p: &KeySwitchParams,
    bufs: &KeySwitchBuffers,
    count: u32,
    slices: u32,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    check_key_switch(p)?;
    let f = dev.function("blind_rotate", "blind_rotate_key_switch")?;
    let q = p.modulus;
    let (bhi, blo) = q.barrett_constant();
    let chunks = (p.input_dimension as u32).div_ceil(KS_CHUNK).max(1);
    let slices = slices.clamp(1, chunks);
    let args = KsArgs {
        q: q.value(),
        bhi,
        blo,
        dec_c: round_constant(p.gadget.base_log * p.gadget.levels, q.value()),
        n_in: p.input_dimension as u32,
        n_out: p.output_dimension as u32,
        levels: p.gadget.levels,
        base_log: p.gadget.base_log,
        span: chunks.div_ceil(slices) * KS_CHUNK,
        extracted: u32::from(bufs.coeffs != 0),
    };
    let slices = (p.input_dimension as u32).div_ceil(args.span).max(1);
    let cfg = LaunchConfig {
        grid_dim: (
            (p.output_dimension as u32 + 1).div_ceil(KS_COLS),
            count.div_ceil(KS_TILE),
            slices,
        ),
        block_dim: (KS_COLS, 1, 1),
        shared_mem_bytes: 0,
    };
    launch!(
        stream,
        f,
        cfg,
        &args,
        &bufs.key,
        &bufs.input,
        &bufs.coeffs,
        &bufs.output,
        &bufs.part,
        &count
    )?;
    if slices == 1 {
        return Ok(());
    }
    let fin = dev.function("blind_rotate", "blind_rotate_key_switch_finish")?;
    let words = count * (p.output_dimension as u32 + 1);
    let cfg = LaunchConfig {
        grid_dim: (words.div_ceil(256), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    launch!(
        stream,
        fin,
        cfg,
        &args,
        &bufs.part,
        &bufs.input,
        &bufs.coeffs,
        &bufs.output,
        &count,
        &slices
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_math::Modulus;
    use fhe_math::backend::blind_rotate::Gadget;

    #[test]
    fn key_switch_sums_must_fit_64_bits() {
        let q = Modulus::new(1_125_899_906_826_241).unwrap();
        let ks = |input_dimension, base_log, levels| KeySwitchParams {
            input_dimension,
            output_dimension: 918,
            modulus: q,
            gadget: Gadget { base_log, levels },
        };
        // CLASSIC_918_2048's key switch: 8192 products of digits below 2^3 and 31-bit halves.
        assert!(check_key_switch(&ks(2048, 4, 4)).is_ok());
        // 2^21 products of digits up to 2^15 and 31-bit halves: up to 2^67, over 2^63.
        assert!(matches!(
            check_key_switch(&ks(1 << 20, 16, 2)),
            Err(Error::Unsupported { .. })
        ));
        assert!(check_key_switch(&ks(2048, 4, MAX_KS_LEVELS + 1)).is_err());
    }

    #[test]
    fn twiddle_table_layout_and_shared_size() {
        let q = Modulus::new(1_125_899_906_826_241).unwrap();
        let fft = NegacyclicFft::new(2048).unwrap();
        let w = twiddle_words(&fft);
        assert_eq!(w.len(), 2048);
        assert_eq!(w[2 * 5], fft.twiddles()[5].re.to_bits());
        assert_eq!(w[2 * 7 + 1], fft.twiddles()[7].im.to_bits());
        let p = BlindRotateParams {
            lwe_dimension: 918,
            ring_degree: 2048,
            glwe_dimension: 1,
            modulus: q,
            gadget: Gadget {
                base_log: 23,
                levels: 1,
            },
            keys_per_coefficient: 1,
            group_size: 1,
        };
        // 2 accumulator polynomials, 2 padded digit spectra, 919 exponents: three blocks fit an
        // H200 SM.
        assert_eq!(shared_bytes(&p), 8 * 2 * 2048 + 16 * 2304 + 4 * 919);
        // The cluster entry: the whole accumulator, 2 padded segments of 256 points, the key
        // slices of two steps (2 rows x 2 components x 256 points each), 919 exponents.
        assert_eq!(
            cluster_shared_bytes(&p),
            8 * 2 * 2048 + 16 * (576 + 2 * 1024) + 4 * 919
        );
        // Multi-bit groups of 3 on clusters: combined keys, one RGSW-shaped slice a step.
        let multi = BlindRotateParams { group_size: 3, ..p };
        assert_eq!(cluster_shared_bytes(&multi), cluster_shared_bytes(&p));
        assert_eq!(
            round_constant(12, q.value()),
            ((1u128 << 76) / 1_125_899_906_826_241) as u64
        );
    }
}
