// BFV scale-and-round, step 3 of fhe-math's `scale_round` (HPS with 64-bit fixed point): from
// the tensor d over Q ∪ B (coefficient form) to r_k = ⌊t·d/Q⌉ mod b_k (before the ⌊B/2⌋ shift,
// which the B -> Q conversion adds as its input offset). Integer-only, the same sums as
// `ScaleRoundTables::scale_round_component`, so the bits match the CPU.
#include "common.cuh"

// Targets (B limbs) per block: their sums stay in registers.
#define SR_TARGETS 8

// The rounding's input from Q limb i of component dc at coefficient j:
// y_i = [d_i·(QB/q_i)^-1]_{q_i} (qbhat: the inverses, then their Shoup companions).
__device__ __forceinline__ u64 sr_y(const u64* dc, u32 n, u32 j, u32 i, u32 ql, const u64* qbhat,
                                    const u64* slots) {
    const u64 q = slots[i * SLOT_STRIDE];
    return mul_shoup(dc[(u64)i * n + j], qbhat[i], qbhat[ql + i], q);
}
// Adds y_i·⌊θ_i·2^64⌋ to the fixed-point sum kept as its high and low 64-bit parts.
__device__ __forceinline__ void sr_theta_add(u64 y, u64 theta, u128& hi, u128& lo) {
    const u128 p = (u128)y * theta;
    hi += p >> 64;
    lo += (u64)p;
}
// The rounding term ⌊Σ_i y_i·θ_i⌉ from those parts.
__device__ __forceinline__ u128 sr_round(u128 hi, u128 lo) {
    return hi + ((lo + ((u128)1 << 63)) >> 64);
}

// d: [3][ql + bl][n]; r: [3][bl][n]. slots: Q slots 0..ql then B slots ql..ql+bl.
// qbhat: (QB/q_i)^-1 mod q_i for i < ql, then their Shoup companions; theta: ⌊θ_i·2^64⌋;
// omega: [k][i] ⌊t·B/q_i⌋ mod b_k; tqinv: t·Q^-1 mod b_k (then their Shoup companions, which
// the tensor-core kernel reads).
// Grid: x over coefficients, y over groups of SR_TARGETS targets, z over the 3 components.
extern "C" __global__ void scale_round_to_b(const u64* d, u32 n, u32 ql, u32 bl,
                                            const u64* qbhat, const u64* theta,
                                            const u64* omega, const u64* tqinv, u64* r,
                                            const u64* slots) {
    pdl_wait();
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const u32 c = blockIdx.z;
    const u32 total = ql + bl;
    const u64* dc = d + (u64)c * total * n;
    const u32 k0 = blockIdx.y * SR_TARGETS;
    const u32 kc = min((u32)SR_TARGETS, bl - k0);
    u128 acc[SR_TARGETS];
#pragma unroll
    for (u32 t = 0; t < SR_TARGETS; t++) acc[t] = 0;
    u128 hi = 0, lo = 0;
    for (u32 i = 0; i < ql; i++) {
        const u64 y = sr_y(dc, n, j, i, ql, qbhat, slots);
        sr_theta_add(y, theta[i], hi, lo);
        const u64* col = omega + (u64)k0 * ql + i;
#pragma unroll
        for (u32 t = 0; t < SR_TARGETS; t++)
            if (t < kc) acc[t] += (u128)y * col[(u64)t * ql];
    }
    const u128 round = sr_round(hi, lo);
#pragma unroll
    for (u32 t = 0; t < SR_TARGETS; t++) {
        if (t >= kc) break;
        u32 k = k0 + t;
        Mod m = load_mod(slots, ql + k);
        u128 a = acc[t] + round + (u128)dc[(u64)(ql + k) * n + j] * tqinv[k];
        r[((u64)c * bl + k) * n + j] = reduce_u128(a, m);
    }
}

// Steps 3 and 4 in one pass (`scale_round_to_q`): each thread scales and rounds one coefficient
// of one component into all of B, keeping the residues in registers as the exact B -> Q
// conversion's v_k = (r_k + ⌊B/2⌋)·(B/b_k)^-1 mod b_k, and then converts them to every Q limb:
// out_j = (Σ_k v_k·(B/b_k mod q_j) + alpha·(q_j - B mod q_j)) mod q_j - (⌊B/2⌋ mod q_j), with
// alpha = ⌊Σ_k (v_k·bhi_k + ⌊v_k·blo_k / 2^64⌋) / 2^64⌋ over the B slots' Barrett constants
// (`keyswitch_convert`'s exact mode). The same sums as `scale_round_to_b` followed by that
// conversion, so the same words, without writing and reading back the B residues or forming
// y_i once per group of targets. For ql, bl <= SRQ_MAX (the launcher falls back to the two
// kernels otherwise).
#define SRQ_MAX 16
// Blocks of 256 an SM the kernel is compiled for, which sets its register cap: 3 (80 registers,
// a little spilled) measured faster than 2 (100 registers, no spill) by 15% and than 4 (64
// registers, more spilled) by 8% at PHANTOM_INT (H100, PERF.md).
#define SRQ_MIN_BLOCKS 3
// a + Σ_{i < cnt} x_i·row_i, exactly in 128 bits (cnt <= SRQ_MAX terms below 2^121 each), in two
// chains (even and odd i) that halve the dependent additions.
__device__ __forceinline__ u128 srq_dot(const u64 (&x)[SRQ_MAX], const u64* row, u32 cnt, u128 a) {
    u128 odd = 0;
#pragma unroll
    for (u32 i = 0; i < SRQ_MAX; i += 2)
        if (i < cnt) a += (u128)x[i] * row[i];
#pragma unroll
    for (u32 i = 1; i < SRQ_MAX; i += 2)
        if (i < cnt) odd += (u128)x[i] * row[i];
    return a + odd;
}
// b_qhatinv: (B/b_k)^-1 mod b_k then their Shoup companions; h: [j][k] (B/b_k) mod q_j; h_in:
// ⌊B/2⌋ mod b_k; h_out: ⌊B/2⌋ mod q_j; bmodq: B mod q_j. out: component c's limb j at
// out + (c·out_stride + j)·n words. Grid: x over coefficients, z over the 3 components.
extern "C" __global__ void __launch_bounds__(256, SRQ_MIN_BLOCKS)
    scale_round_to_q(const u64* d, u32 n, u32 ql, u32 bl, const u64* qbhat, const u64* theta,
                     const u64* omega, const u64* tqinv, const u64* b_qhatinv, const u64* h,
                     const u64* h_in, const u64* h_out, const u64* bmodq, u64* out,
                     u32 out_stride, const u64* slots) {
    __shared__ u64 s_omega[SRQ_MAX * SRQ_MAX];
    __shared__ u64 s_h[SRQ_MAX * SRQ_MAX];
    for (u32 i = threadIdx.x; i < ql * bl; i += blockDim.x) {
        s_omega[i] = omega[i];
        s_h[i] = h[i];
    }
    __syncthreads();
    // The tables above overlap the previous kernel's tail; `d` is that kernel's output.
    pdl_wait();
    const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const u32 c = blockIdx.z;
    const u32 total = ql + bl;
    const u64* dc = d + (u64)c * total * n;
    // y_i and the rounding term R, as in scale_round_to_b.
    u64 y[SRQ_MAX];
    u128 hi = 0, lo = 0;
#pragma unroll
    for (u32 i = 0; i < SRQ_MAX; i++) {
        if (i < ql) {
            y[i] = sr_y(dc, n, j, i, ql, qbhat, slots);
            sr_theta_add(y[i], theta[i], hi, lo);
        }
    }
    const u128 round = sr_round(hi, lo);
    // r_k, then v_k of the exact conversion, one target at a time.
    u64 v[SRQ_MAX];
    u128 f = 0;
#pragma unroll
    for (u32 k = 0; k < SRQ_MAX; k++) {
        if (k < bl) {
            const Mod m = load_mod(slots, ql + k);
            const u128 a = round + (u128)dc[(u64)(ql + k) * n + j] * tqinv[k];
            const u64 r = reduce_u128(srq_dot(y, s_omega + k * ql, ql, a), m);
            v[k] = mul_shoup(mod_add(r, h_in[k], m.q), b_qhatinv[k], b_qhatinv[bl + k], m.q);
            f += (u128)v[k] * m.bhi + (u128)__umul64hi(v[k], m.blo);
        }
    }
    const u64 alpha = (u64)(f >> 64);
#pragma unroll 1
    for (u32 t = 0; t < ql; t++) {
        const Mod m = load_mod(slots, t);
        const u128 a = srq_dot(v, s_h + t * bl, bl, (u128)alpha * (m.q - bmodq[t]));
        out[((u64)c * out_stride + t) * n + j] = mod_sub(reduce_u128(a, m), h_out[t], m.q);
    }
}

// `scale_round_to_q` on the tensor cores (mma.cuh, sm_80+): the same words. A warp takes 32
// coefficients of one component. Stage 1 forms y_i (A fragments) and the rounding term R, and
// each lane finishes its coefficient's r_k = (T_k + R + d_k·tqinv_k) mod b_k over the fragments
// of omega (`omega_frag`), then v_k and the overflow sum of the exact conversion; the v_k go
// through shared memory into the A fragments of stage 2, the B -> Q conversion over the
// fragments of `h` (`h_frag`), finished with alpha·(q_j - B mod q_j) and less ⌊B/2⌋ mod q_j.
// Each stage's fragments are staged in shared memory (zero chunks up to KC, so the MMA loops
// have no bounds to test), and the d_k of the warp's coefficients are copied there
// asynchronously while stage 1's A fragments form.
// Grid: x over blocks of SRQ_MMA_BLOCK coefficients, z over the 3 components. Dynamic shared
// memory (`srq_mma_shared_bytes` of scale_round.rs): the warps' [bl][32] words of d_k, then
// v_k (`srq_v_at`), then max(bl, ql)·KC·32 words of fragments.
#include "mma.cuh"
// Threads (coefficients) a block: 4 warps, so that the d_k / v_k words and the fragments fit
// under the 48 KiB of shared memory a launch takes without opting in, with 6 blocks an SM.
#define SRQ_MMA_BLOCK 128
// Blocks an SM `scale_round_to_q_mma` is compiled for (its register cap: 6 gives 80 registers,
// no spill; the 768 blocks of PHANTOM_INT's three components still fit in one wave). Against
// 8 (64 registers, MMA_MIN_BLOCKS' cap), BFV's multiply 2% faster on the H100 (PERF.md).
#define SRQ_MMA_MIN_BLOCKS 6
// Word of coefficient `coeff` (of the warp's 32) in row kk of a warp's d_k / v_k rows: the
// coefficient's bit 3 flipped on odd rows, so that stage 2's 32-bit reads (rows of both
// parities, coefficients g and g + 8, both halves) fall in 32 distinct banks.
__device__ __forceinline__ u32 srq_v_at(u32 kk, u32 coeff) {
    return kk * 32 + (coeff ^ ((kk & 1) << 3));
}
// Stages `rows` targets' fragments of `kc` chunks (at frag_g, `rows·kc·32` words) in `frag_s`
// as KC chunks each, the chunks from kc on zero.
template <int KC>
__device__ __forceinline__ void srq_stage_fragments(u64* frag_s, const u64* frag_g, u32 rows,
                                                    u32 kc) {
    for (u32 e = threadIdx.x; e < rows * KC * 32; e += blockDim.x) {
        const u32 t = e / (KC * 32), ch = (e / 32) % KC, w = e % 32;
        frag_s[e] = ch < kc ? frag_g[((u64)t * kc + ch) * 32 + w] : 0;
    }
}
extern "C" __global__ void __launch_bounds__(SRQ_MMA_BLOCK, SRQ_MMA_MIN_BLOCKS)
    scale_round_to_q_mma(const u64* d, u32 n, u32 ql, u32 bl, const u64* qbhat,
                         const u64* theta, const u64* omega_frag, const u64* tqinv,
                         const u64* b_qhatinv, const u64* h_frag, const u64* h_in,
                         const u64* h_out, const u64* bmodq, u64* out, u32 out_stride,
                         const u64* slots) {
    constexpr int KC = SRQ_MAX / 4;
    extern __shared__ u64 srq_smem[];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, tig = lane & 3;
    u64* sv = srq_smem + warp * bl * 32;
    u64* frag_s = srq_smem + (SRQ_MMA_BLOCK / 32) * bl * 32;
    const u32* frag = reinterpret_cast<const u32*>(frag_s);
    // Stage 2's targets: q_j, the correction q_j - (B mod q_j), the offset q_j - h_out_j (the
    // subtraction of ⌊B/2⌋ mod q_j) and the reduction's mu | s << 32 (`mma_reduce`).
    __shared__ u64 sq[SRQ_MAX][4];
    // Stage 1's targets b_k: b_k and its Barrett words, mu | s << 32, t·Q^-1 mod b_k and its
    // Shoup companion, ⌊B/2⌋ mod b_k, (B/b_k)^-1 mod b_k and its Shoup companion.
    __shared__ u64 sb[SRQ_MAX][9];
    for (u32 t = threadIdx.x; t < bl; t += blockDim.x) {
        const Mod m = load_mod(slots, ql + t);
        const u32 sh = mma_shift(m.q);
        const u64 row[9] = {m.q, m.bhi, m.blo, mma_mu(m, sh) | (u64)sh << 32, tqinv[t],
                            tqinv[bl + t], h_in[t], b_qhatinv[t], b_qhatinv[bl + t]};
        for (int w = 0; w < 9; w++) sb[t][w] = row[w];
    }
    for (u32 t = threadIdx.x; t < ql; t += blockDim.x) {
        const Mod m = load_mod(slots, t);
        const u32 sh = mma_shift(m.q);
        sq[t][0] = m.q;
        sq[t][1] = m.q - bmodq[t];
        sq[t][2] = m.q - h_out[t];
        sq[t][3] = mma_mu(m, sh) | (u64)sh << 32;
    }
    srq_stage_fragments<KC>(frag_s, omega_frag, bl, (ql + 3) / 4);
    __syncthreads();
    pdl_wait();
    // The launcher takes n as a multiple of the block: every warp has its 32 coefficients.
    const u32 par = tig >> 1, half_sel = tig & 1;
    const u32 warp_k = blockIdx.x * SRQ_MMA_BLOCK + warp * 32;
    const u32 c = blockIdx.z;
    const u64* dc = d + (u64)c * (ql + bl) * n;
    // d_k of coefficient warp_k + lane into its word of row kk, while the A fragments form.
    for (u32 kk = 0; kk < bl; kk++)
        mma_copy_async(sv + srq_v_at(kk, lane), dc + (u64)(ql + kk) * n + warp_k + lane);
    const u32 own = mma_lane_coeff(lane), k = warp_k + own;
    // Stage 1: y_i at the lane's own row of both tiles, and its part of the fixed-point sum
    // Σ y_i·θ_i (high and low words, as sr_theta_add) for those two coefficients.
    u32 a[KC][2][4];
    u64 th_hi[2] = {0, 0};
    u128 th_lo[2] = {0, 0};
    mma_build_a<KC>(a, ql, par, half_sel, [&](u32 i, u64(&y)[2]) {
        const u64 q = slots[i * SLOT_STRIDE], w = qbhat[i], ws = qbhat[ql + i], th = theta[i];
        const u64* src = dc + (u64)i * n + warp_k + g + 8 * half_sel;
#pragma unroll
        for (int t = 0; t < 2; t++) {
            y[t] = mul_shoup(src[16 * t], w, ws, q);
            const u128 p = (u128)y[t] * th;
            th_hi[t] += (u64)(p >> 64);
            th_lo[t] += (u64)p;
        }
    });
    // R for the lane's coefficient (tile par, its row): its own part and lane^2's (the other
    // source parity). Each part's high words stay below 2^64 (at most 8 terms below 2^61).
    u128 round;
    {
        const u64 give_hi = par ? th_hi[0] : th_hi[1], keep_hi = par ? th_hi[1] : th_hi[0];
        const u128 give_lo = par ? th_lo[0] : th_lo[1], keep_lo = par ? th_lo[1] : th_lo[0];
        const u64 got_hi = __shfl_xor_sync(0xffffffffu, give_hi, 2);
        const u64 got_lo0 = __shfl_xor_sync(0xffffffffu, (u64)give_lo, 2);
        const u64 got_lo1 = __shfl_xor_sync(0xffffffffu, (u64)(give_lo >> 64), 2);
        round = sr_round((u128)keep_hi + got_hi, keep_lo + (((u128)got_lo1 << 64) | got_lo0));
    }
    mma_copy_wait();
    __syncwarp();
    // r_k, v_k and the overflow sum F for the lane's coefficient; v_k replaces d_k.
    u128 f = 0;
    MMA_UNROLL_TARGETS
    for (u32 kk = 0; kk < bl; kk++) {
        u64 lo, hi;
        mma_target_sum<KC>(a, frag + kk * KC * 64, lane, lo, hi);
        const u64* cb = sb[kk];
        const u64 q = cb[0];
        u64* dv = sv + srq_v_at(kk, own);
        // d_k·(t·Q^-1) reduced (Shoup) keeps x below 2^(s+32): R < 2^65, b_k >= 2^35.
        const u64 r = mma_residue(lo, hi, round + mul_shoup(*dv, cb[4], cb[5], q), q, cb[3]);
        const u64 v = mul_shoup(mod_add(r, cb[6], q), cb[7], cb[8], q);
        f += (u128)v * cb[1] + (u128)__umul64hi(v, cb[2]);
        *dv = v;
    }
    const u64 alpha = (u64)(f >> 64);
    // Stage 2's fragments replace stage 1's once every warp is done with them.
    __syncthreads();
    srq_stage_fragments<KC>(frag_s, h_frag, ql, (bl + 3) / 4);
    __syncthreads();
    // Stage 2: the A fragments of the v_k (source kk = 4·c4 + 2j + par, rows g, g + 8 of each
    // tile, half half_sel), read from shared memory.
#pragma unroll
    for (int c4 = 0; c4 < KC; c4++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const u32 kk = 4 * c4 + 2 * j + par;
#pragma unroll
            for (int t = 0; t < 2; t++)
#pragma unroll
                for (int r = 0; r < 2; r++)
                    a[c4][t][2 * j + r] =
                        kk < bl ? reinterpret_cast<const u32*>(
                                      sv + srq_v_at(kk, 16 * t + 8 * r + g))[half_sel]
                                : 0u;
        }
    MMA_UNROLL_TARGETS
    for (u32 t = 0; t < ql; t++) {
        u64 lo, hi;
        mma_target_sum<KC>(a, frag + t * KC * 64, lane, lo, hi);
        // + alpha·(q - B mod q) - ⌊B/2⌋ mod q.
        const u64 y =
            mma_residue(lo, hi, (u128)sq[t][1] * (u32)alpha + sq[t][2], sq[t][0], sq[t][3]);
        out[((u64)c * out_stride + t) * n + k] = y;
    }
}
