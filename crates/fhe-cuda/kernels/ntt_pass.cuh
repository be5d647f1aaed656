// The register-blocked NTT pass (`ntt_pass_r8`) with its load and store paths: lifted and
// converted limbs (mod_up's basis conversion on load), the rescale's load and store, tensor and
// scaled-sum loads (tensor.cuh). Part of the `ntt` module (kernels/ntt.cu); the kernels built
// from it are instantiated there and in keyprod.cuh and moddown_finish.cuh.
#pragma once
#include "ntt_arith.cuh"

// ---------------------------------------------------------------------------------------------
// Register-blocked pass (used for 3 <= S <= 11; twiddles read through the arithmetic's
// `twiddle_at`: (w, w_shoup) pairs, or doubles): each thread owns 8 elements of one sub-problem
// and runs up to three stages on them in registers (a radix-8 round), so a pass of S stages is
// ceil(S / 3) rounds with ceil(S / 3) - 1 shared-memory exchanges; the first round loads from
// global memory and the last stores to it directly. T = 2^(S-3) threads per sub-problem,
// C = 2^logC sub-problems per block. Same stages, same twiddles and same lazy ranges as
// `ntt_pass`, so the output is the same.
//
// Round windows (3 bits of the local index, [lo, lo + 3)): the forward runs the bits from the
// top, [S-3, S), [S-6, S-3), ..., and a last window [0, 3) that runs only the bits not yet done;
// the inverse from the bottom. In a window the element k of thread t has local index
// mid = ((t >> lo) << (lo + 3)) | (k << lo) | (t & (2^lo - 1)).
//
// Shared layout: strided (L > 0, lanes walk the sub-problems first) mid * (C + 1) + c;
// otherwise e + (e >> 3) with e = c * 2^S + mid (padding against bank conflicts).
//
// Forward passes also take `mode` (0 plain; a uniform branch), fusing CKKS's rescale around the
// NTT of the correction: bit RESCALE_LOAD reads the coefficient-form top limb y of the
// component at `src` and transforms ((y + q_l/2) mod q_i) - (q_l/2 mod q_i) instead
// (`elementwise_rescale_prepare`), bit RESCALE_STORE (on the last, non-strided pass only) writes
// a[j] <- (a[j] - ntt[j])·q_l^-1 into the output limb at `a` (`elementwise_rescale_finish`;
// `rconsts` = (value, shoup) pairs by slot), in coalesced order through `exchange_outputs`. The
// same residues as the separate kernels, two global round trips fewer.
// With `use_t` (BGV's modulus switch, the top limb already scaled by t^-1) the store is
// a[j] <- a[j]·q_l^-1 - ntt[j]·(t·q_l^-1) (`elementwise_rescale_finish_mod_t`; `tq` by slot).
// Non-strided rounds on the lowest 3 bits load and store their 8 consecutive words as 16-byte
// pairs.
#define RESCALE_LOAD 1u
#define RESCALE_STORE 2u
// Lifted limbs (fused kernels only): bits LIFT_SHIFT.. of a limb's slot word hold one plus the
// slot `f` whose modulus its input is reduced by; the first pass then transforms the centred
// lift ((y + q_f/2) mod q_f) mod q_i - (q_f/2 mod q_i) of each input word y, which is mod_up's
// conversion of a one-prime digit (and the rescale correction's lift, with f the top slot).
// Integer-path limbs whose source modulus is below 2q skip the reduction.
#define LIFT_SHIFT 16
#define LIFT_SLOT_MASK 0xffffu
// Converted limbs (fused kernels only): a lift field with CONVERT_FLAG set names a row of the
// conversion-row table (`FusedArgs::conv_rows`, CONVERT_ROW words: [D, h_out, h_0 .. h_{D-1}])
// instead of a source slot. The limb's input is then the D consecutive limbs (stride n) of a
// digit of D <= CONVERT_MAX_FROM primes, already holding v_i = (x_i + h_in_i)·q̂_i^-1 mod q_i
// (mod_up's inverse NTT writes them so, `offs` below), and the first pass transforms
//   (Σ_i v_i·h_i mod q) - h_out mod q,
// mod_up's fast basis conversion of the digit (`keyswitch_convert`, the same residues), so the
// raised limbs are never written in coefficient form.
// A row's first word holds D in its low byte and CONVERT_F64_SOURCES when every source prime is
// below 2^F64_FACTOR_BITS (common.cuh): an FP64-path target (q < 2^NTT_F64_BITS) then forms the sum in
// doubles (`convert_words_f64`), off the integer pipe. CONVERT_F64_WIDE_SOURCES, every source
// prime below 2^50, does the same for a target on the wide FP64 path (2^NTT_F64_BITS <= q <
// 2^NTT_F64_WIDE_BITS).
#define CONVERT_FLAG 0x8000u
#define CONVERT_ROW_MASK 0x7fffu
#define CONVERT_MAX_FROM 4
#define CONVERT_COUNT_MASK 0xffu
#define CONVERT_F64_SOURCES 0x100u
#define CONVERT_F64_WIDE_SOURCES 0x200u
// CONVERT_EXACT (mod_down's rows, `BasisConverter::convert_exact`): the sum drops the overflow
// alpha·Q, alpha = floor(F / 2^64), F = Σ_i (v_i·bhi_i + floor(v_i·blo_i / 2^64)) over the
// Barrett constants of the source slots, which start at bits CONVERT_SOURCE_SHIFT.. of the head;
// the row's last word holds Q mod q. Integer path only (such rows carry no FP64 flag).
#define CONVERT_EXACT 0x400u
// The FUSED template argument of the forward passes: the set of load and store paths a kernel
// compiles (0: plain). FUSED_LIFT: lifted loads; FUSED_CONVERT: converted loads; FUSED_EXACT:
// exact conversion rows too (`ntt_fwd_convert_exact_r8_S`); FUSED_COEF: with them and with
// lifted loads, the coefficient-form output subtracted (`FusedArgs::coef_delta`,
// `ntt_fwd_convert_coef_r8_S`, BFV's relinearization of a coefficient-form product only);
// FUSED_RESCALE: the rescale's modes; FUSED_TENSOR (the
// inverse kernel `ntt_inv_tensor_r8_S`): tensor-product loads (TENSOR_FLAG below); FUSED_ADD
// (the inverse kernel `ntt_inv_add_r8_S`): scaled-sum loads (ADD_FLAG below).
// A kernel compiles only the paths its launches may take, with one exception: the lifted
// kernel `ntt_fwd_fused_r8_S` keeps the converted loads, whose registers (80 instead of 54,
// three blocks an SM instead of four) measured faster for its launches (CAT_COMPAT's mod_up
// 145 against 147-154 µs; PERF.md). The rescale's kernel without the
// conversion paths gained 4-11% (no spills).
#define FUSED_LIFT 1
#define FUSED_CONVERT 2
#define FUSED_EXACT 4
#define FUSED_RESCALE 8
#define FUSED_COEF 16
#define FUSED_TENSOR 32
#define FUSED_ADD 64
#define CONVERT_SOURCE_SHIFT 32
#define CONVERT_ROW (3 + CONVERT_MAX_FROM)
#define MAX_FUSED_SLOTS 64
// Arguments of the fused modes: the rescale constants ((value, shoup) pairs by slot), the level,
// for BGV t·q_l^-1 by slot, and the conversion rows of converted limbs. Mirrors `FusedArgs` in
// Rust.
struct FusedArgs {
    u64 rconsts;
    u32 level;
    u32 use_t;
    u64 conv_rows;
    // RESCALE_STORE reads the old word of `a` at a + src_delta (words): 0 in place, else the
    // input buffer's limb of the same slot (an out-of-place rescale, same layout).
    long long src_delta;
    u64 tq_w[MAX_FUSED_SLOTS];
    u64 tq_ws[MAX_FUSED_SLOTS];
    // Exact converted and lifted limbs (kernels of FUSED_COEF) subtract P·c, c the word at
    // a + coef_delta (words; the same element of a coefficient-form limb of slot s laid out
    // like `a`): mod_down of an output that is still in coefficient form (`convert_words`).
    long long coef_delta;
    // Tensor-product loads (FUSED_TENSOR): a limb whose lift field is TENSOR_FLAG | c reads
    // a_0 at its src and a_1, b_0, b_1 at src + tensor_delta[part][0..3] (words), part 1 from
    // slot tensor_split up (BFV's B limbs, read from another buffer than the Q limbs).
    long long tensor_delta[2][3];
    u32 tensor_split;
    u32 tensor_pad;
    // Scaled-sum loads (FUSED_ADD): a limb whose lift field is ADD_FLAG | c reads x at its src
    // and b at src + add_delta[c] (words) and transforms b + x·k mod q, k the (value, shoup)
    // pair of its slot at add_consts: mod_down's rescaled top limb out + acc·P^-1
    // (`keyswitch_mod_down_top`).
    long long add_delta[2];
    u64 add_consts;
    // The loading inverse passes (NTT_INV_LOADING) also store the words they form at
    // src + load_copy_delta (words; 0: no copy): multiply + relinearize's c_2 = a_1·b_1 in NTT
    // form, which its key product reads, written by the pass that forms it for mod_up.
    long long load_copy_delta;
};

#include "tensor.cuh"

// The converted words of a limb (CONVERT_FLAG): w[k] holds source 0's word at the element's
// index, the other D - 1 sources lie n words apart from it (`gsrc[(k << shift)]` for source 0).
// The sums are exact in 128 bits (D·2^122 < 2^128), so the residue equals the conversion
// kernel's.
// With EXACT (the kernels of FUSED_EXACT only, so that the others keep their registers), an
// exact row (CONVERT_EXACT) adds alpha·(q - Q mod q) before the reduction (the sum stays below
// D·2^122 + 2^3·2^61 < 2^128), the same residue as `convert_exact`. With `coef` (exact rows
// only; mod_down's rows, whose source product Q is P) it also adds c_k·(q - P mod q) for the
// word c_k at coef[k << shift], one more term below 2^122: the residue of conv - P·c. mod_down's
// finish then yields (acc - NTT(conv - P·c))·P^-1 = NTT(c) + (acc - NTT(conv))·P^-1, the
// output's c in coefficient form added without its NTT.
template <int D, int E, bool EXACT>
__device__ __forceinline__ void convert_words(u64 (&w)[E], const u64* gsrc, u32 shift, u32 n,
                                              const u64* row, const Mod& m, const u64* slots,
                                              const u64* coef) {
    u64 h[D];
#pragma unroll
    for (int i = 0; i < D; i++) h[i] = row[2 + i];
    const u64 h_out = row[1];
    if (EXACT && (row[0] & CONVERT_EXACT)) {
        const u32 src0 = (u32)(row[0] >> CONVERT_SOURCE_SHIFT);
        u64 bhi[D], blo[D];
#pragma unroll
        for (int i = 0; i < D; i++) {
            bhi[i] = slots[(src0 + i) * SLOT_STRIDE + 1];
            blo[i] = slots[(src0 + i) * SLOT_STRIDE + 2];
        }
        const u64 q_comp = m.q - row[CONVERT_ROW - 1];
        // Element by element, each loading its own source words: the exact sums need two
        // accumulators, and holding all (D - 1)·E words first spilled at the register cap.
#pragma unroll
        for (int k = 0; k < E; k++) {
            u128 acc = (u128)w[k] * h[0];
            u128 f = (u128)w[k] * bhi[0] + __umul64hi(w[k], blo[0]);
#pragma unroll
            for (int i = 1; i < D; i++) {
                const u64 v = gsrc[(u64)i * n + ((u64)k << shift)];
                acc += (u128)v * h[i];
                f += (u128)v * bhi[i] + __umul64hi(v, blo[i]);
            }
            acc += (u128)(u64)(f >> 64) * q_comp;
            if (coef) acc += (u128)coef[(u64)k << shift] * q_comp;
            w[k] = mod_sub(reduce_u128(acc, m), h_out, m.q);
        }
        return;
    }
    u64 y[D - 1][E];
#pragma unroll
    for (int i = 1; i < D; i++)
#pragma unroll
        for (int k = 0; k < E; k++) y[i - 1][k] = gsrc[(u64)i * n + ((u64)k << shift)];
#pragma unroll
    for (int k = 0; k < E; k++) {
        u128 acc = (u128)w[k] * h[0];
#pragma unroll
        for (int i = 1; i < D; i++) acc += (u128)y[i - 1][k] * h[i];
        w[k] = mod_sub(reduce_u128(acc, m), h_out, m.q);
    }
}
// `convert_words` on the FP64 pipe, for a target q < 2^NTT_F64_BITS whose sources are all below
// 2^F64_FACTOR_BITS: x[k] = Σ_i (v_i·h_i mod q) - h_out as a signed double, each term
// `F64Arith::mul` (|term| < 0.52q, h_i < q, v_i < 2^46), so |x[k]| < (0.52·D + 1)·q <= 3.08q for
// D <= 4: inside the forward pass's input range (|x| < 4q, see `F64Arith`), and congruent to the
// integer path's word, so the pass's canonical output is the same.
// For a wide target (`F64WideArith`, q < 2^50) with sources below 2^50: each term is below
// (1/2 + 2^-52·v_i)·q < 0.75q, so |x[k]| < (0.75·D + 1)·q <= 4q < 2^52 for D <= 4 (every sum
// exact), and the wide forward round reduces its values before the first stage.
template <int D, int E, class A>
__device__ __forceinline__ void convert_words_f64(typename A::V (&x)[E], const u64 (&w)[E],
                                                  const u64* gsrc, u32 shift, u32 n,
                                                  const u64* row, const A& ar) {
    double h[D];
#pragma unroll
    for (int i = 0; i < D; i++) h[i] = A::from_u64(row[2 + i]);
    u64 y[D - 1][E];
#pragma unroll
    for (int i = 1; i < D; i++)
#pragma unroll
        for (int k = 0; k < E; k++) y[i - 1][k] = gsrc[(u64)i * n + ((u64)k << shift)];
    const double h_out = A::from_u64(row[1]);
#pragma unroll
    for (int k = 0; k < E; k++) {
        double acc = __dsub_rn(ar.mul(A::from_u64(w[k]), h[0]), h_out);
#pragma unroll
        for (int i = 1; i < D; i++) acc = __dadd_rn(acc, ar.mul(A::from_u64(y[i - 1][k]), h[i]));
        x[k] = acc;
    }
}
// After the last round of a non-strided pass (L = 0: the block covers one run of 8T elements,
// thread tid holding elements 8·tid + k in x[k]), y[i] <- element li[i] of the run, through
// the exchange buffer (padded index e + e/8): with li[i] = tid + T·i the block's global loads
// and stores that follow are coalesced.
__device__ __forceinline__ void exchange_outputs(const u64 (&x)[8], u64 (&y)[8],
                                                 const u32 (&li)[8]) {
    extern __shared__ u64 sh[];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const u32 el = 8 * threadIdx.x + k;
        sh[el + (el >> 3)] = x[k];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 8; i++) y[i] = sh[li[i] + (li[i] >> 3)];
}

// Twiddle regions kept compacted in the double tables (tables.rs; `compaction` in
// kernels/ntt.rs mirrors this rule): in the pass of S stages over the low index bits (L = 0,
// radix-8 rounds), a stage whose thread reads 2^c twiddles, c = 2 - kb > 0, reads one and forms
// the rest (`twiddle_group`): the lowest stage (b = 0, n/2 twiddles) always, the next two (n/4
// and n/8) in passes of at least 8 stages (n = 2^16 and 2^17), where that measured 1-1.5%
// faster while at S = 7 (n = 2^15) it cost up to 6% on the rescale (PERF.md).
template <int S>
__host__ __device__ constexpr int compacted_log(int b, int kb) {
    return b == 0 || (S >= 8 && b < 3) ? 2 - kb : 0;
}

// One stage of a radix-8 round (8 elements a thread, its place kb in the window) over a
// compacted region starting at `start` (`compacted_log`): the thread's 2^(2 - kb) twiddles from
// one load (`twiddle_group`), then its butterflies, forward or inverse.
template <bool INV, class A>
__device__ __forceinline__ void compacted_stage(const A& ar, typename A::V (&x)[8],
                                                const ulonglong2* __restrict__ w_tab, u32 base,
                                                u32 start, int kb) {
    double wg[4];
    if (kb == 0) ar.template twiddle_group<2>(w_tab, base, start, wg);
    else ar.template twiddle_group<1>(w_tab, base, start, wg);
#pragma unroll
    for (int j = 0; j < (4 >> kb); j++)
#pragma unroll
        for (int i = 0; i < (1 << kb); i++) {
            const int k0 = (j << (kb + 1)) | i;
            if (INV) ar.inv(x[k0], x[k0 | (1 << kb)], wg[j]);
            else ar.fwd(x[k0], x[k0 | (1 << kb)], wg[j]);
        }
}

// With KEEP the last round leaves the thread's 8 outputs in `keep` (element k at global index
// goff + k) instead of storing them (the key product fused after the NTT), and the block
// transforms the sub-problems of block index `block` instead of blockIdx.x.
template <class A, int S, bool STRIDED, bool INV, int FUSED, bool TOP, bool KEEP>
__device__ __forceinline__ void ntt_pass_r8_impl(const A& ar, const u64* src, u64* a, u32 s,
                                                 const u64* slots,
                                                 const ulonglong2* __restrict__ twp,
                                                 const u64* consts, u32 logn, u32 L, u32 logC,
                                                 bool last, u32 mode, const FusedArgs& fa,
                                                 u64* keep, u32 block, u32 lift,
                                                 const u64* offs, long long copy_delta) {
    extern __shared__ u64 sh[];
    constexpr int R = 3;      // log2 of the elements per thread (radix-8 rounds)
    constexpr int E = 1 << R; // elements per thread
    constexpr u32 LT = S - R;
    constexpr int NR = (S + R - 1) / R;
    const u64 q = slots[s * SLOT_STRIDE];
    // This slot's twiddle table (2n words: pairs, or doubles then integers; `twiddle_at`).
    const ulonglong2* __restrict__ w_tab = twp + ((u64)s << logn);
    const u32 C = 1u << logC;
    u32 c, t;
    if (STRIDED) {
        c = threadIdx.x & (C - 1);
        t = threadIdx.x >> logC;
    } else {
        c = threadIdx.x >> LT;
        t = threadIdx.x & ((1u << LT) - 1);
    }
    const u32 p = (KEEP ? block : blockIdx.x) * C + c;
    const u32 hi = p >> L;
    const u32 lowp = p & ((1u << L) - 1);
    const u64 gbase = ((u64)hi << (S + L)) + lowp;
    // Shared index of element k of a round whose window starts at bit lo, with the round's
    // base mb (= mid of element 0): sidx(mb + (k << lo)) written so that the part depending on
    // k is a compile-time offset where it can be (the padding e >> 3 splits when lo >= 3).
    auto sh_index = [&](u32 mb, int k, int lo) -> u32 {
        if (STRIDED) return mb * (C + 1) + c + (u32)k * ((C + 1) << lo);
        const u32 e0 = (c << S) + mb;
        if (lo >= 3) return e0 + (e0 >> 3) + (u32)k * ((1u << lo) + (1u << (lo - 3)));
        const u32 e = e0 + ((u32)k << lo);
        return e + (e >> 3);
    };

    typename A::V x[E];
#pragma unroll
    for (int r = 0; r < NR; r++) {
        // Window and stage bits of this round (compile-time after unrolling).
        const int lo = INV ? (R * r < S - R ? R * r : S - R) : (S - R * (r + 1) > 0 ? S - R * (r + 1) : 0);
        const int b_lo = INV ? R * r : lo;                                   // lowest stage bit
        const int b_hi = INV ? (R * r + R < S ? R * r + R : S) : S - R * r;   // one past the top
        const u32 tlo = t & ((1u << lo) - 1);
        const u32 thi = t >> lo;
        const u32 mbase = (thi << (lo + R)) | tlo;
        // Element k of this thread: global index gbase + ((mbase + (k << lo)) << L), the bits of
        // the three terms disjoint, so one base pointer plus constant offsets.
        const u64 goff = gbase + ((u64)mbase << L);
        if (r == 0) {
            const u64* gsrc = src + goff;
            u64 w[E];
            if ((FUSED & FUSED_TENSOR) && (lift & TENSOR_FLAG)) {
                tensor_words<E>(
                    w, gsrc, lo + L, !STRIDED && lo == 0, lift & TENSOR_COMP_MASK,
                    fa.tensor_delta[s >= fa.tensor_split ? 1 : 0], load_mod(slots, s));
            } else if ((FUSED & FUSED_ADD) && (lift & ADD_FLAG)) {
                add_scaled_words<E>(w, gsrc, lo + L, !STRIDED && lo == 0,
                                    fa.add_delta[lift & ADD_COMP_MASK],
                                    (const u64*)fa.add_consts + 2 * s, q);
            } else if (!STRIDED && lo == 0) {
                // The thread's 8 elements are consecutive words (64-byte aligned): 4 16-byte
                // loads instead of 8.
                const ulonglong2* g2 = (const ulonglong2*)gsrc;
#pragma unroll
                for (int k = 0; k < E / 2; k++) {
                    const ulonglong2 v = KEEP ? load_last(g2 + k) : g2[k];
                    w[2 * k] = v.x;
                    w[2 * k + 1] = v.y;
                }
            } else {
#pragma unroll
                for (int k = 0; k < E; k++) {
                    // With KEEP (the fused key product, mod_down's finish) the pass reads a
                    // scratch buffer for the last time.
                    const u64* g = gsrc + ((u64)k << (lo + L));
                    w[k] = KEEP ? load_last(g) : *g;
                }
            }
            if (INV && copy_delta) {
                // The input words also go to src + copy_delta (the out-of-place rescale's
                // dropped limb, which keeps its input words; or the words a loading pass
                // formed, `FusedArgs::load_copy_delta`).
                u64* gcp = (u64*)gsrc + copy_delta;
                if (!STRIDED && lo == 0) {
#pragma unroll
                    for (int k = 0; k < E / 2; k++)
                        ((ulonglong2*)gcp)[k] = make_ulonglong2(w[2 * k], w[2 * k + 1]);
                } else {
#pragma unroll
                    for (int k = 0; k < E; k++) gcp[(u64)k << (lo + L)] = w[k];
                }
            }
            bool converted = false;
            if ((FUSED & FUSED_CONVERT) && (lift & CONVERT_FLAG)) {
                const u64* row = (const u64*)fa.conv_rows + (u64)(lift & CONVERT_ROW_MASK) * CONVERT_ROW;
                const u32 shift = lo + L, n = 1u << logn;
                const u32 head = (u32)row[0];
                if constexpr (A::IS_F64) {
                    if ((head & (A::IS_WIDE ? CONVERT_F64_WIDE_SOURCES : CONVERT_F64_SOURCES)) &&
                        !(head & CONVERT_EXACT)) {
                        converted = true;
                        switch (head & CONVERT_COUNT_MASK) {
                        case 2: convert_words_f64<2>(x, w, gsrc, shift, n, row, ar); break;
                        case 3: convert_words_f64<3>(x, w, gsrc, shift, n, row, ar); break;
                        default: convert_words_f64<4>(x, w, gsrc, shift, n, row, ar); break;
                        }
                    }
                }
                if (!converted) {
                    const Mod mi = load_mod(slots, s);
                    constexpr bool EX = (FUSED & FUSED_EXACT) != 0;
                    constexpr bool CO = (FUSED & FUSED_COEF) != 0;
                    const u64* coef = CO ? a + fa.coef_delta + goff : nullptr;
                    switch (head & CONVERT_COUNT_MASK) {
                    case 2: convert_words<2, E, EX>(w, gsrc, shift, n, row, mi, slots, coef); break;
                    case 3: convert_words<3, E, EX>(w, gsrc, shift, n, row, mi, slots, coef); break;
                    default: convert_words<4, E, EX>(w, gsrc, shift, n, row, mi, slots, coef); break;
                    }
                }
            } else if (((FUSED & FUSED_RESCALE) && (mode & RESCALE_LOAD)) ||
                       ((FUSED & FUSED_LIFT) && lift)) {
                // The centred lift from the modulus of slot `from` (the top limb's for the
                // rescale, the slot word's for a lifted limb).
                const u32 from = ((FUSED & FUSED_LIFT) && lift) ? lift - 1 : fa.level;
                const Mod mi = load_mod(slots, s);
                const u64 ql = slots[from * SLOT_STRIDE];
                const u64 half = ql >> 1;
                if (A::LAZY_INPUT && ql < 2 * q) {
                    // No reduction: y, or y - q_f + 2q above q_f/2 (the centred value plus
                    // 2q), is congruent to the lift and below 2q.
                    const u64 up = 2 * q - ql;
#pragma unroll
                    for (int k = 0; k < E; k++) w[k] = w[k] > half ? w[k] + up : w[k];
                } else {
                    const u64 half_i = reduce_u64(half, mi);
#pragma unroll
                    for (int k = 0; k < E; k++)
                        w[k] = mod_sub(reduce_u64(mod_add(w[k], half, ql), mi), half_i, q);
                }
                if constexpr ((FUSED & FUSED_COEF) != 0) {
                    // mod_down with one special prime P = q_from, its conversion the lift: minus
                    // P·c for the coefficient-form output word c (as `convert_words` does for
                    // exact rows), from w < 2q: w + c·(q - P mod q) < 2^125.
                    if (lift) {
                        const u64* coef = a + fa.coef_delta + goff;
                        const u64 p_comp = q - reduce_u64(ql, mi);
#pragma unroll
                        for (int k = 0; k < E; k++)
                            w[k] = reduce_u128((u128)coef[(u64)k << (lo + L)] * p_comp + w[k], mi);
                    }
                }
            }
            if (!converted) {
#pragma unroll
                for (int k = 0; k < E; k++) x[k] = ar.from_u64(w[k]);
            }
        } else {
            __syncthreads();
#pragma unroll
            for (int k = 0; k < E; k++) x[k] = ar.from_bits(sh[sh_index(mbase, k, lo)]);
        }
        if (INV) ar.inv_round_start(x);
        else ar.fwd_round_start(x);
        if (!INV) {
#pragma unroll
            for (int b = b_hi - 1; b >= b_lo; b--) {
                const int kb = b - lo;
                const u32 base = (1u << (logn - 1 - L - b)) + (hi << (S - b - 1)) +
                                 (thi << (R - 1 - kb));
                if constexpr (A::IS_F64 && !STRIDED) {
                    if (compacted_log<S>(b, kb) > 0) {
                        compacted_stage<false>(ar, x, w_tab, base, 1u << (logn - 1 - b), kb);
                        continue;
                    }
                }
#pragma unroll
                for (int j = 0; j < ((E / 2) >> kb); j++) {
                    const typename A::Tw wp = ar.twiddle_at(w_tab, base + j, 1u << logn);
#pragma unroll
                    for (int i = 0; i < (1 << kb); i++) {
                        const int k0 = (j << (kb + 1)) | i;
                        ar.fwd(x[k0], x[k0 | (1 << kb)], wp);
                    }
                }
            }
        } else {
#pragma unroll
            for (int b = b_lo; b < b_hi; b++) {
                const int kb = b - lo;
                const u32 h = 1u << (logn - 1 - L - b);
                // The transform's last stage (h = 1) is bit S - 1 of a pass with L + S = logn
                // (TOP), known at compile time so the other stages carry no second path.
                if (TOP && b == S - 1) {
                    const u64* cs = consts + 4 * s;
#pragma unroll
                    for (int k0 = 0; k0 < E; k0++)
                        if (!(k0 & (1 << kb))) ar.inv_last(x[k0], x[k0 | (1 << kb)], cs);
                } else {
                    const u32 base = h + (hi << (S - b - 1)) + (thi << (R - 1 - kb));
                    if constexpr (A::IS_F64 && !STRIDED) {
                        if (compacted_log<S>(b, kb) > 0) {
                            compacted_stage<true>(ar, x, w_tab, base, h, kb);
                            continue;
                        }
                    }
#pragma unroll
                    for (int j = 0; j < ((E / 2) >> kb); j++) {
                        const typename A::Tw wp = ar.twiddle_at(w_tab, base + j, 1u << logn);
#pragma unroll
                        for (int i = 0; i < (1 << kb); i++) {
                            const int k0 = (j << (kb + 1)) | i;
                            ar.inv(x[k0], x[k0 | (1 << kb)], wp);
                        }
                    }
                }
            }
        }
        if (r == NR - 1) {
            u64 o[E];
#pragma unroll
            for (int k = 0; k < E; k++) o[k] = ar.out(x[k], !INV && last);
            if (INV && TOP && offs) {
                // mod_up's prescaled inverse (the constants scaled by q̂^-1): add h_in·q̂^-1.
                const u64 off = offs[s];
#pragma unroll
                for (int k = 0; k < E; k++) o[k] = mod_add(o[k], off, q);
            }
            if (KEEP) {
#pragma unroll
                for (int k = 0; k < E; k++) keep[k] = o[k];
            } else if ((FUSED & FUSED_RESCALE) && !STRIDED && (mode & RESCALE_STORE)) {
                // The read-modify-write of `a` in coalesced order (L = 0 here).
                const u64* rc = (const u64*)fa.rconsts;
                const u64 c = rc[2 * s], cs = rc[2 * s + 1];
                const u32 T = blockDim.x;
                u32 li[E];
                u64 y[E];
#pragma unroll
                for (int i = 0; i < E; i++) li[i] = threadIdx.x + i * T;
                exchange_outputs(o, y, li);
                u64* pb = a + ((u64)blockIdx.x << (logC + S)) + threadIdx.x;
                const u64* rb = pb + fa.src_delta;
                // All old words are read before the first store (`pb` may alias `rb`, so a
                // load after a store would wait for it: one memory round trip an element).
                u64 r[E];
                if (fa.use_t) {
                    const u64 tw = fa.tq_w[s], tws = fa.tq_ws[s];
#pragma unroll
                    for (int i = 0; i < E; i++)
                        r[i] = mod_sub(mul_shoup(rb[(u64)i * T], c, cs, q),
                                       mul_shoup(y[i], tw, tws, q), q);
                } else {
#pragma unroll
                    for (int i = 0; i < E; i++)
                        r[i] = mul_shoup(mod_sub(rb[(u64)i * T], y[i], q), c, cs, q);
                }
#pragma unroll
                for (int i = 0; i < E; i++) pb[(u64)i * T] = r[i];
            } else {
                if (!STRIDED && lo == 0) {
                    ulonglong2* g2 = (ulonglong2*)(a + goff);
#pragma unroll
                    for (int k = 0; k < E / 2; k++) g2[k] = make_ulonglong2(o[2 * k], o[2 * k + 1]);
                } else {
#pragma unroll
                    for (int k = 0; k < E; k++) a[goff + ((u64)k << (lo + L))] = o[k];
                }
            }
        } else {
            if (r > 0) __syncthreads();
#pragma unroll
            for (int k = 0; k < E; k++) sh[sh_index(mbase, k, lo)] = ar.bits(x[k]);
        }
    }
}

// A register-blocked pass over limb slot `s`: `F64Arith` when its modulus is below
// 2^NTT_F64_BITS, `F64WideArith` below 2^NTT_F64_WIDE_BITS, else `IntArith` (a block-uniform
// branch; all give the same canonical outputs, and each accepts the others' intermediate words).
template <int S, bool STRIDED, bool INV, int FUSED = 0, bool TOP = false, bool KEEP = false>
__device__ __forceinline__ void ntt_pass_r8(const u64* src, u64* a, u32 s, const u64* slots,
                                            const ulonglong2* __restrict__ twp,
                                            const u64* consts, u32 logn, u32 L, u32 logC,
                                            bool last, u32 mode = 0, FusedArgs fa = {},
                                            u64* keep = nullptr, u32 block = 0, u32 lift = 0,
                                            const u64* offs = nullptr, long long copy_delta = 0) {
    if (slots[s * SLOT_STRIDE] < (1ull << NTT_F64_BITS)) {
        ntt_pass_r8_impl<F64Arith, S, STRIDED, INV, FUSED, TOP, KEEP>(
            F64Arith(slots, s), src, a, s, slots, twp, consts, logn, L, logC, last, mode, fa,
            keep, block, lift, offs, copy_delta);
        return;
    }
    if (slots[s * SLOT_STRIDE] < (1ull << NTT_F64_WIDE_BITS)) {
        ntt_pass_r8_impl<F64WideArith, S, STRIDED, INV, FUSED, TOP, KEEP>(
            F64WideArith(slots, s), src, a, s, slots, twp, consts, logn, L, logC, last, mode,
            fa, keep, block, lift, offs, copy_delta);
        return;
    }
    ntt_pass_r8_impl<IntArith, S, STRIDED, INV, FUSED, TOP, KEEP>(
            IntArith(slots, s), src, a, s, slots, twp, consts, logn, L, logC, last, mode, fa,
            keep, block, lift, offs, copy_delta);
}

