// The batched RNS blind rotation's multiply-accumulate fused with the last forward NTT pass of
// its digit limbs (`ntt_rbr_mac_r8_S`; part of the `ntt` module, kernels/ntt.cu, for the
// register-blocked pass; launch wrapper `rns_blind_rotate::mac_fused`). It owns the
// accumulator it writes; the NTT-form digit limbs are never stored.
//
// One step is a pair p of LWE coefficients (key unrolling, fhe-math's
// `backend::rns_blind_rotate`): three keys k, with the exponents
// (e_0, e_1, e_2) = (a_{2p} + a_{2p+1}, a_{2p}, a_{2p+1}) mod 2N.
// Block (e, s, kb): sample e (grid x, fastest, so that the blocks running together read the same
// key rows), limb s and the kb-th run of E = 8T outputs of that limb (grid y = s·(n/E) + kb).
// For each decomposed component c' and digit j the block forms the digit's NTT-form limb s on
// chip, either by the last (non-strided, L = 0) forward pass of D[e][c'][pos_j(s)] (its first
// pass already run over the whole batch) or, for the digit whose group holds s, as
// (Q/Q_j)^{-1}·acc (the step decomposes acc itself), and adds its products with the pair's rows,
// the keys combined first:
//   acc[e][c][s][k] += Σ_{c', j} digit_{c',j}[k]·Σ_{k'} (X^{e_k'} − 1)[k]·row(k', c', j)[c][s][k]
// then writes the next step's T = acc' (write_t 0 on the last step). The factors X^{e_k'} − 1 of
// the thread's outputs are formed once, into its own words of shared memory. Every product is
// `f64_mul_mod`'s exact double-precision one (every modulus below 2^42): a key sum stays below
// 1.56q, a word plus its 2·D products below (1 + 1.04·D)·q < 2^46, whose canonical residue is
// the integer result.
#pragma once
#include "ntt_pass.cuh"
#include "rns_blind_rotate.cuh"

// Buffers of one step (mirrors `MacArgs` in Rust): acc and T [e][2][L][n]; D [e][2][dtot][n]
// after the first forward pass; the 3·2·D row addresses of the pair (row (k·2 + c')·D + j, each
// [2][row_spc][n]); the exponents a_{2p} and a_{2p+1} by sample; the kernels' table.
struct RbrMacArgs {
    u64 acc;
    u64 t;
    u64 d;
    u64 rows;
    u64 a0;
    u64 a1;
    u64 tab;
    u32 row_spc;
    u32 write_t;
};

#define RBR_KEYS 3
// Threads of a block (`MAC_THREADS` in Rust; the launch bound). Read as blockDim.x in the
// kernel: as a compile-time constant the compiler hoists more loads and spills more.
#define RBR_MAC_THREADS 128

// sum_c[i] += dv·Σ_k m_k[i]·row_{k,c}[k_i] (c = 0, 1) for the 8 outputs of the thread; m_k[i]
// at mf[k·E + i·T] (shared memory, mf at the thread's first output).
__device__ __forceinline__ void rbr_add_products(double (&sum0)[8], double (&sum1)[8],
                                                 const double (&dv)[8],
                                                 const u64* const (&row)[RBR_KEYS], u64 cstride,
                                                 const double* mf, u32 T, double q, double qi) {
    const u32 E = 8 * T;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        double c0 = 0.0, c1 = 0.0;
#pragma unroll
        for (int k = 0; k < RBR_KEYS; k++) {
            const double m = mf[k * E + i * T];
            c0 = __dadd_rn(c0, f64_mul_mod(f64_from_u64(row[k][i * T]), m, q, qi));
            c1 = __dadd_rn(c1, f64_mul_mod(f64_from_u64(row[k][cstride + i * T]), m, q, qi));
        }
        sum0[i] = __dadd_rn(sum0[i], f64_mul_mod(c0, dv[i], q, qi));
        sum1[i] = __dadd_rn(sum1[i], f64_mul_mod(c1, dv[i], q, qi));
    }
}

template <int S>
__device__ __forceinline__ void ntt_rbr_mac(const RbrMacArgs& m, const RbrShape& sh,
                                            const u64* slots, const ulonglong2* twp, u32 logn,
                                            u32 logC) {
    const u32 T = blockDim.x;
    const u32 logE = logC + S;
    const u32 e = blockIdx.x;
    const u32 runs = sh.n >> logE;
    const u32 s = blockIdx.y / runs, kb = blockIdx.y % runs;
    const u64 n = sh.n, two_n = 2 * n;
    const u64 k0 = ((u64)kb << logE) + threadIdx.x; // output i at k0 + i·T
    const u64 qw = slots[s * SLOT_STRIDE];
    const double q = f64_from_u64(qw);
    const double qi = __longlong_as_double((long long)slots[s * SLOT_STRIDE + 3]);
    const u64* tab = (const u64*)m.tab;
    const u64* lt = tab + RBR_LIMB + 8 * s;
    const u32 js = (u32)lt[6];
    const double own = f64_from_u64(lt[4]);
    const u64* pw = tab + RBR_POW + (u64)s * two_n;
    const u64* ex = tab + RBR_POW + (u64)sh.limbs * two_n + (u64)s * n + k0;
    const u64 a0 = ((const u32*)m.a0)[e], a1 = ((const u32*)m.a1)[e];
    const u64 ek[RBR_KEYS] = {(a0 + a1) & (two_n - 1), a0, a1};
    u64* acc = (u64*)m.acc + ((u64)e * 2 * sh.limbs + s) * n + k0; // component c at c·L·n
    const u64 cstride = (u64)sh.limbs * n;
    u32 li[8];
#pragma unroll
    for (int i = 0; i < 8; i++) li[i] = threadIdx.x + i * T;
    // The factors X^{e_k} − 1 of this thread's outputs, after the pass's exchange buffer.
    extern __shared__ u64 sh_words[];
    const u32 E = 8 * T;
    double* mf = (double*)(sh_words + E + E / 8) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < RBR_KEYS; k++)
#pragma unroll
        for (int i = 0; i < 8; i++)
            mf[k * E + i * T] = f64_from_u64(mod_sub(pw[(ek[k] * ex[i * T]) & (two_n - 1)], 1, qw));
    double sum0[8], sum1[8];
#pragma unroll
    for (int i = 0; i < 8; i++) {
        sum0[i] = f64_from_u64(acc[i * T]);
        sum1[i] = f64_from_u64(acc[cstride + i * T]);
    }
    const u64* const* rows = (const u64* const*)m.rows;
    const u64 row_c = (u64)m.row_spc * n;
    bool passed = false;
    for (u32 c = 0; c < 2; c++) {
        for (u32 j = 0; j < sh.digits; j++) {
            double dv[8];
            if (j == js) {
                // (Q/Q_j)^{-1}·acc in NTT form (block-uniform branch).
#pragma unroll
                for (int i = 0; i < 8; i++)
                    dv[i] = f64_mul_mod(f64_from_u64(acc[c * cstride + i * T]), own, q, qi);
            } else {
                const u64* grp = tab + RBR_GROUP + 8 * j;
                const u32 lo = (u32)grp[0], hi = (u32)grp[1];
                const u32 pos = (u32)grp[6] + (s < lo ? s : s - (hi - lo));
                const u64* src = (const u64*)m.d + (((u64)e * 2 + c) * sh.dtot + pos) * n;
                // The previous pass's reads of the exchange buffer end first.
                if (passed) __syncthreads();
                passed = true;
                u64 x[8], y[8];
                ntt_pass_r8<S, false, false, 0, false, true>(src, nullptr, s, slots, twp, nullptr,
                                                             logn, 0, logC, true, 0, {}, x, kb);
                exchange_outputs(x, y, li);
#pragma unroll
                for (int i = 0; i < 8; i++) dv[i] = f64_from_u64(y[i]);
            }
            const u64* const row[RBR_KEYS] = {
                rows[(0 * 2 + c) * sh.digits + j] + (u64)s * n + k0,
                rows[(1 * 2 + c) * sh.digits + j] + (u64)s * n + k0,
                rows[(2 * 2 + c) * sh.digits + j] + (u64)s * n + k0};
            rbr_add_products(sum0, sum1, dv, row, row_c, mf, T, q, qi);
        }
    }
    u64* t = (u64*)m.t + ((u64)e * 2 * sh.limbs + s) * n + k0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const u64 n0 = f64_canonical(sum0[i], q, qi);
        const u64 n1 = f64_canonical(sum1[i], q, qi);
        acc[i * T] = n0;
        acc[cstride + i * T] = n1;
        if (m.write_t) {
            t[i * T] = n0;
            t[cstride + i * T] = n1;
        }
    }
}

// Held to __launch_bounds__(128, 4): with the three keys a pair, at most 128 registers (16 bytes
// of spills at S = 6, the last pass of N = 2^13). At 512 HEAP_N13 samples (H200) that took
// 3.06 µs a CMux; bound 5 (96 registers, 72 bytes of spills) 3.22 µs (PERF.md).
#define NTT_RBR_MAC(S)                                                                           \
    extern "C" __global__ void __launch_bounds__(RBR_MAC_THREADS, 4)                             \
        ntt_rbr_mac_r8_##S(RbrMacArgs m, RbrShape sh, const u64* slots, const ulonglong2* twp,   \
                           u32 logn, u32 logC) {                                                 \
        pdl_wait();                                                                              \
        ntt_rbr_mac<S>(m, sh, slots, twp, logn, logC);                                           \
    }
