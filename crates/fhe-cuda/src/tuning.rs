//! The launch choices of the CUDA backend in one table: block shapes, thresholds and which of
//! two equivalent launch sequences runs, decided from the shape of the work (ring degree `n`,
//! limb or prime counts, batch size), never from a parameter preset's name. Every choice gives
//! the same residues; only the time differs.
//!
//! A [`Tuning`] is a value: [`crate::Device`] owns one ([`crate::Device::tuning`], today
//! [`Tuning::MEASURED`] on every device), and the launch wrappers read it through their context.
//! Each field says what it decides and which measurement chose it. The measurements are
//! `gpu_perf` / `gpu_bench` event-time medians with the alternatives alternated in one device
//! call (PERF.md and `benchmarks/results/` hold the runs). Before the experiment switches were
//! removed (at 8c79c7e), each losing path was also timed at the small shapes of the coming work
//! (N = 2^13 CKKS, BGV and BFV, H200, 2026-11-28,
//! `benchmarks/results/2026-11-28_h200_8c79c7e_switches_small_shapes.{md,json,sh}`): the run-to-run spread
//! there was 10–20%, so the entries marked *small rings: to confirm* keep both paths, with
//! today's choice on every shape, for a repeat with alternation.
//!
//! Compile-time kernel parameters (register caps and blocks per SM of the `.cu` files:
//! `NTT_RESCALE_MAXNREG`, `NTT_CONVERT_MAXNREG`, `MMA_MIN_BLOCKS`, `MMA_UNROLL`,
//! `SRQ_MIN_BLOCKS`, `SRQ_MMA_MIN_BLOCKS`, and the FP64 butterfly bounds `NTT_F64_BITS` /
//! `NTT_F64_WIDE_BITS`) are `#define`s of the kernels, each documented there with its
//! measurement.

/// The launch choices of the backend (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// Generic NTT passes (stage counts the register-blocked kernels do not cover): log2 of the
    /// elements a block holds in shared memory (8 bytes each). 2^10 with [`Self::ntt_max_threads`]
    /// from the first NTT measurements (PERF.md); the register-blocked passes cover 2^11..2^17
    /// rings, so these passes rarely run.
    pub ntt_log_elems: u32,
    /// Generic NTT passes: threads per block, at most (128; see [`Self::ntt_log_elems`]).
    pub ntt_max_threads: u32,
    /// Register-blocked NTT passes over limbs that mostly run the integer butterflies:
    /// `(log2 threads per block at most (non-strided passes), log2 sub-problems per block at
    /// most (strided passes))`. On the H200: 2^6 / 2^3 measured 2–5% faster than 2^7 / 2^4,
    /// then 2^5 / 2^2 a further 1.3% (mul_relin_rescale 441–443 → 436–437 µs; 2^1 sub-problems
    /// 477): more, smaller blocks shorten the last partial wave. BGV/BFV PHANTOM_INT and CKKS
    /// CAT_COMPAT key switching kept 2^5 / 2^2 ahead of 2^6 / 2^3 by 0.6–1.8% (alternated twice).
    pub r8_shape_int: (u32, u32),
    /// The same for limbs that mostly run the FP64 butterflies: at N16_L24_D3 2^6 / 2^3 gave
    /// mul_relin_rescale 368 µs (four runs) against 381 for 2^5 / 2^2 (H200).
    pub r8_shape_f64: (u32, u32),
    /// Fewest limbs a forward or inverse NTT launch list must have for its limbs to be ordered
    /// by slot (limbs of one prime side by side, so they read its twiddles from L2): a host-side
    /// counting sort before each launch. Measured on with every list at N = 2^16 (PERF.md).
    /// *Small rings: to confirm*: at N = 2^13 one unsorted run was 5–10% faster in key switches
    /// (host time), within the spread of the defaults; 0 keeps the sort everywhere.
    pub ntt_sort_min_limbs: usize,
    /// Ring degree from which a single key switch's key product is fused with mod_up's last
    /// forward NTT pass (`ntt_keyprod_r8_S`: the NTT-form digits never stored); below it the
    /// pass and the product run as separate launches. The fused kernel measured faster at
    /// N = 2^15..2^16 (PERF.md). *Small rings: to confirm*: at N = 2^13 one unfused run was
    /// 10–20% faster (BGV rotate 49 → 38 µs), against a default spread of 10%; 0 keeps it fused
    /// on every ring.
    pub key_product_fused_min_n: usize,
    /// Ring degree from which mod_down converts its special part as the forward NTT loads it
    /// (where the ring has conversion rows for it), instead of a conversion launch first.
    /// *Small rings: to confirm* (N = 2^13: one run without it 5–15% faster in some key
    /// switches, within the spread); 0 keeps the loads on every ring.
    pub moddown_convert_loads_min_n: usize,
    /// Most special primes for which mod_down runs the first forward pass of its converted limbs
    /// early, on the side stream before the join. On the H200 (PERF.md): BGV PHANTOM_INT (two)
    /// rotate 135.5 → 125 µs, CKKS CAT_COMPAT (one) rotate 246.5 → 233, while with three (CKKS
    /// CAT, PHANTOM_N16) or seven (N16_L24_D3) special primes it cost 0.5–7%. At N = 2^13 (one
    /// special prime) the late pass was not faster (2026-11-28).
    pub early_first_max_special: usize,
    /// Ring degree from which mod_down's inverse NTT, in a key switch with the rescale whose
    /// mod_down chain runs on the side stream, is launched without programmatic dependent launch
    /// (its blocks would sit on SMs the main stream's key product needs). H100 (PERF.md):
    /// N16_L24_D3 mul_relin_rescale 337 → 320 µs, PHANTOM_N16 493 → 476, while at n = 2^15 the
    /// launch without it cost 0.5–1%; at N = 2^13 too (2026-11-28).
    pub rescale_inverse_no_pdl_min_n: usize,
    /// Ring degree from which mod_up's first forward pass is split around the fork of mod_down's
    /// two streams (the side stream's rows' limbs first). H100 (PERF.md): at n = 2^16 rotations
    /// and relinearizations 2–3.5% faster, at n = 2^15 6–35% slower.
    pub split_first_min_n: usize,
    /// Threads per block of the unrolled basis-conversion kernels (a power of two, 32..=256: the
    /// kernels for 10 or more sources are compiled for at most 256).
    pub convert_block: u32,
    /// Threads a conversion launch should have at least: the targets are split into as few
    /// groups per block as keep this many. On the H200 at N16_L24_D3 (mul_relin_rescale):
    /// 2^16 453 µs, 2^18 458, 2^19 478, 2^20 511; alternated twice, 2^17 444–445 against 2^16
    /// 447–449. One group of all targets wins where the coefficients fill the device.
    pub convert_min_threads: u32,
    /// Sources of an exact conversion (mod_down) that count as few for
    /// [`Self::convert_few_sources_threads_per_coeff`].
    pub convert_few_sources: usize,
    /// Threads per coefficient of an exact conversion from few sources, at least (two target
    /// groups for mod_down's two components). On the H200: at PHANTOM_N16 (3 special primes to
    /// 27 targets) mul_relin_rescale 541.1 / 538.0 with 2^17 threads (one group), 531.2 / 531.2
    /// with 2^18 (two), 538 with 2^19, 548 with 2^20; at CAT four groups lost 1–2%; at
    /// N16_L24_D3 (7 special primes, not few) two groups lost 1%.
    pub convert_few_sources_threads_per_coeff: u32,
    /// Ring degree from which conversions of 1..=16 sources take the kernel unrolled by source
    /// count (`keyswitch_convert_fK`) instead of the generic `keyswitch_convert`. *Small rings:
    /// to confirm*: at N = 2^13 one run with the generic kernel was faster for BGV (relinearize
    /// 52 → 43 µs) and not for CKKS, within the spread; 0 keeps the unrolled kernels everywhere.
    pub convert_unrolled_min_n: usize,
    /// Fewest sources a conversion runs on the tensor cores with (sm_80 and later, `n` a
    /// multiple of 256, at most 16 sources). With the P^-1-scaled rows of mod_down's fused
    /// rescale, 3 took PHANTOM_N16's and CAT's mul_relin_rescale 2% below the integer kernel
    /// (H100); the conversions without the rescale measured even at 3 and 4. The tables hold B
    /// fragments only for such conversions.
    pub convert_mma_min_from: usize,
    /// Ring degree from which the tensor-core conversion runs at all. *Small rings: to confirm*:
    /// at N = 2^13 one run with the integer kernels was faster in CKKS key switches and slower
    /// in BGV rotations, within the spread; 0 keeps the tensor cores on every ring.
    pub convert_mma_min_n: usize,
    /// Blind rotation: butterfly stages per shared-memory round of its FFTs when the batch
    /// fills the GPU (at least one ciphertext per SM), and when it does not. 3 (8 points a
    /// thread) runs the 256-thread entry `blind_rotate_run` (80 registers, three blocks an SM),
    /// fewer the 512-thread `blind_rotate_run_wide` (64 registers, two blocks). Batched, 2
    /// measured slower on the H200 (CLASSIC_918_2048 × 4096: 348.1 against 315.8 ms at
    /// `14a02ea`, 2026-11-29); alone, 2 gives one ciphertext 512 threads. Batches of at most
    /// SMs / 4 take neither: `blind_rotate_run_cluster` (one cluster of 4 blocks a ciphertext,
    /// radix-4 rounds; one PBS alone 6.86 ms against 16.0 ms on one SM, H200, `fc50342`).
    pub blind_rotate_radix_log: (u32, u32),
    /// Blind rotation: most threads per block. A 1024-thread launch of the small-batch shape
    /// was refused for resources on an H200 inside gpu_bench (2026-11-29) although the
    /// function's limit allowed it; 512 has run everywhere.
    pub blind_rotate_max_threads: u32,
    /// Batched RNS blind rotation (`RnsBlindRotateBackend`): most bytes of device state (the
    /// accumulators, `T` and the digit limbs, `(4L + 2·dtot)·N` words a sample) one chunk of
    /// the batch takes; the chunks run one after another. On the H200 (`314a612`,
    /// 2026-11-29, `HEAP_N13`, 3 MiB a sample) a chunk of 512 samples (1.5 GiB) ran
    /// 4.34 µs an external product, chunks of 5461 and 2731 samples (16 GiB) 8.16 µs on
    /// average: 1.5 GiB keeps the measured faster regime.
    pub rns_blind_rotate_chunk_bytes: usize,
}

impl Tuning {
    /// The table measured on H100 and H200 GPUs (see the fields).
    pub const MEASURED: Tuning = Tuning {
        ntt_log_elems: 10,
        ntt_max_threads: 128,
        r8_shape_int: (5, 2),
        r8_shape_f64: (6, 3),
        ntt_sort_min_limbs: 0,
        key_product_fused_min_n: 0,
        moddown_convert_loads_min_n: 0,
        early_first_max_special: 2,
        rescale_inverse_no_pdl_min_n: 1 << 16,
        split_first_min_n: 1 << 16,
        convert_block: 256,
        convert_min_threads: 1 << 17,
        convert_few_sources: 4,
        convert_few_sources_threads_per_coeff: 4,
        convert_unrolled_min_n: 0,
        convert_mma_min_from: 3,
        convert_mma_min_n: 0,
        blind_rotate_radix_log: (3, 2),
        blind_rotate_max_threads: 512,
        rns_blind_rotate_chunk_bytes: 3 << 29,
    };

    /// Whether `kernels::keyprod::key_product_early` takes the unfused launches for `rows` rows of which
    /// `special` are the special primes' (the rest the rescale's top row), on a ring of degree `n`.
    /// Measured on an H100 (gpu_perf, old and new binaries alternated twice in one call): the
    /// unfused launches pay where the side stream's rows are the critical path of the key switch
    /// and the fused launch has few warps: n = 2^15 with two special primes (BGV/BFV PHANTOM_INT:
    /// relinearize and rotate 5–7% faster) or three (CKKS CAT: 2–5%). With one special prime
    /// (CAT_COMPAT) the side stream is not the critical path (1–2% slower), at n = 2^13 the extra
    /// launches cost more than they save (BGV N13: 3–25% slower), and at n = 2^16 the fused launch
    /// has warps enough (PHANTOM_N16 1–1.5% slower, N16_L24_D3 with the rescale 2.5%). Measured
    /// again on an H200 with the later key switch (three alternations):
    /// PHANTOM_N16's three special rows without the rescale now gain (rotate 456.8 → 453.6 µs,
    /// multiply + relinearize 481.6 → 478.4), with its rescale row they do not (499.5 → 500.1), and
    /// N16_L24_D3's seven rows are even without the rescale and 2% slower with it.
    pub fn early_unfused(&self, n: usize, rows: usize, special: usize) -> bool {
        (n == 1 << 15 && special >= 2 && rows <= 4) || (n == 1 << 16 && special == 3 && rows == 3)
    }

    /// Whether multiply + relinearize pays for forming the product's `c_0`, `c_1` in the key
    /// product's rows rather than in the tensor (on a ring of degree `n` with `special` special
    /// primes). It moves that work off the tensor, which precedes everything, onto the main
    /// stream's key product, which runs beside mod_down's side stream: a gain where the side
    /// stream is the longer branch and the main one has slack. Measured on an H100 (gpu_perf,
    /// off / on alternated twice): n = 2^15 with two special primes (BGV
    /// PHANTOM_INT) multiply + relinearize 139.4 → 136.7 µs, with the modulus switch 157.1 → 150.6;
    /// with three (CKKS CAT) 157.8 → 152.2 without the rescale, 163.1 → 161.7 with it; but with one
    /// (CAT_COMPAT, where the side stream is the shorter branch) 2% slower, and at n = 2^16
    /// (N16_L24_D3, PHANTOM_N16) 3% slower with the rescale and even without it.
    pub fn product_in_key_product(&self, n: usize, special: usize) -> bool {
        n == 1 << 15 && (2..=3).contains(&special)
    }

    /// Whether an NTT launch list of `limbs` limbs is ordered by slot.
    pub fn ntt_sort(&self, limbs: usize) -> bool {
        limbs >= self.ntt_sort_min_limbs
    }

    /// Whether a single key switch's key product is fused with the last forward pass on a ring
    /// of degree `n`.
    pub fn key_product_fused(&self, n: usize) -> bool {
        n >= self.key_product_fused_min_n
    }

    /// Whether mod_down converts its special part on load on a ring of degree `n`.
    pub fn moddown_convert_loads(&self, n: usize) -> bool {
        n >= self.moddown_convert_loads_min_n
    }

    /// Whether mod_down runs its first forward pass early with `special` special primes.
    pub fn moddown_early_first(&self, special: usize) -> bool {
        special <= self.early_first_max_special
    }

    /// Whether mod_down's rescaling inverse NTT beside the main stream's key product is
    /// launched programmatically on a ring of degree `n`.
    pub fn rescale_inverse_pdl(&self, n: usize) -> bool {
        n < self.rescale_inverse_no_pdl_min_n
    }

    /// Whether mod_up's first forward pass is split around mod_down's fork on a ring of degree
    /// `n`.
    pub fn split_first(&self, n: usize) -> bool {
        n >= self.split_first_min_n
    }

    /// Threads a conversion launch over `n` coefficients should have at least (`exact`: a
    /// mod_down conversion, from `from_cnt` sources).
    pub fn convert_min_threads(&self, exact: bool, from_cnt: usize, n: u32) -> u32 {
        if exact && from_cnt <= self.convert_few_sources {
            self.convert_min_threads
                .max(self.convert_few_sources_threads_per_coeff.saturating_mul(n))
        } else {
            self.convert_min_threads
        }
    }

    /// Whether conversions on a ring of degree `n` take the unrolled kernels.
    pub fn convert_unrolled(&self, n: usize) -> bool {
        n >= self.convert_unrolled_min_n
    }

    /// Whether a conversion from `from_cnt` sources on a ring of degree `n` may run on the
    /// tensor cores (the device and ring permitting).
    pub fn convert_mma(&self, n: usize, from_cnt: usize) -> bool {
        n >= self.convert_mma_min_n && from_cnt >= self.convert_mma_min_from.max(1)
    }
}

impl Default for Tuning {
    fn default() -> Self {
        Self::MEASURED
    }
}

/// Whether key switches overlap mod_down with the key product on a side stream. Always: the
/// overlap measured faster on every preset from N = 2^15 (PERF.md); at N = 2^13 one run
/// without it was 5–15% faster, within the 10–20% spread of that call (2026-11-28), so the
/// path without it stays ([`crate::side`]) for a repeat with alternation.
pub(crate) const MODDOWN_OVERLAP: bool = true;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_table_keeps_the_old_defaults() {
        let t = Tuning::default();
        for n in [1usize << 11, 1 << 13, 1 << 15, 1 << 16, 1 << 17] {
            assert!(t.ntt_sort(1));
            assert!(t.key_product_fused(n));
            assert!(t.moddown_convert_loads(n));
            assert!(t.convert_unrolled(n));
            assert_eq!(t.rescale_inverse_pdl(n), n < 1 << 16);
            assert_eq!(t.split_first(n), n >= 1 << 16);
        }
        assert!(t.moddown_early_first(2) && !t.moddown_early_first(3));
        assert!(t.product_in_key_product(1 << 15, 2) && !t.product_in_key_product(1 << 13, 2));
        assert!(!t.convert_mma(1 << 13, 2) && t.convert_mma(1 << 13, 3));
        assert_eq!(t.convert_min_threads(true, 3, 1 << 16), 1 << 18);
        assert_eq!(t.convert_min_threads(true, 7, 1 << 16), 1 << 17);
        assert_eq!(t.convert_min_threads(false, 3, 1 << 16), 1 << 17);
    }
}
