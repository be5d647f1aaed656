// The batched RNS blind rotation's multiply-accumulate fused with the last forward NTT pass of
// its digit limbs (`ntt_rbr_mac_r8_S`; part of the `ntt` module, kernels/ntt.cu, for the
// register-blocked pass; launch wrapper `rns_blind_rotate::mac_fused`). It owns the
// accumulator it writes; the NTT-form digit limbs are never stored.
//
// Block (e, s, kb): sample e (grid x, fastest, so that the blocks running together read the same
// key rows), limb s and the kb-th run of E = 8T outputs of that limb (grid y = s·(n/E) + kb).
// For each decomposed component c' and digit j the block forms the digit's NTT-form limb s on
// chip, either by the last (non-strided, L = 0) forward pass of D[e][c'][pos_j(s)] (its first
// pass already run over the whole batch) or, for the digit whose group holds s, as
// (Q/Q_j)^{-1}·T with T = acc ⊙ (X^{a_e} − 1), and adds its products with the step's rows:
//   acc[e][c][s][k] += Σ_{c', j} digit_{c',j}[k]·row(c'·D + j)[c][s][k]
// then writes the next step's T = acc' ⊙ (X^{a'_e} − 1) (a_next null: none). The same words as
// the separate last pass and `rns_blind_rotate_mac_D`: every product is `f64_mul_mod`'s exact
// double-precision one (every modulus below 2^42), and the sum of a word and its 2·D products
// stays below (1 + 1.04·D)·q < 2^46, whose canonical residue is the integer result.
#pragma once
#include "ntt_pass.cuh"
#include "rns_blind_rotate.cuh"

// Buffers of one step (mirrors `FusedMacArgs` in Rust): acc and T [e][2][L][n]; D [e][2][dtot][n]
// after the first forward pass; the 2·D row addresses of the step (each row [2][row_spc][n]); the
// exponents a_e and a'_e (`a_next` 0 on the last step); the kernels' table.
struct RbrMacArgs {
    u64 acc;
    u64 t;
    u64 d;
    u64 rows;
    u64 a;
    u64 a_next;
    u64 tab;
    u32 row_spc;
    u32 pad;
};

// sum_c[i] += dv·row_c[k_i] (c = 0, 1) for the 8 outputs of the thread.
__device__ __forceinline__ void rbr_add_products(double (&sum0)[8], double (&sum1)[8],
                                                 const double (&dv)[8], const u64* r0,
                                                 const u64* r1, u32 T, double q, double qi) {
#pragma unroll
    for (int i = 0; i < 8; i++) {
        sum0[i] = __dadd_rn(sum0[i], f64_mul_mod(dv[i], f64_from_u64(r0[i * T]), q, qi));
        sum1[i] = __dadd_rn(sum1[i], f64_mul_mod(dv[i], f64_from_u64(r1[i * T]), q, qi));
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
    const u64 a_e = ((const u32*)m.a)[e];
    u64* acc = (u64*)m.acc + ((u64)e * 2 * sh.limbs + s) * n + k0; // component c at c·L·n
    const u64 cstride = (u64)sh.limbs * n;
    double sum0[8], sum1[8];
#pragma unroll
    for (int i = 0; i < 8; i++) {
        sum0[i] = f64_from_u64(acc[i * T]);
        sum1[i] = f64_from_u64(acc[cstride + i * T]);
    }
    u32 li[8];
#pragma unroll
    for (int i = 0; i < 8; i++) li[i] = threadIdx.x + i * T;
    const u64* const* rows = (const u64* const*)m.rows;
    bool passed = false;
    for (u32 c = 0; c < 2; c++) {
        for (u32 j = 0; j < sh.digits; j++) {
            double dv[8];
            if (j == js) {
                // (Q/Q_j)^{-1}·T in NTT form, from acc (block-uniform branch).
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const double f =
                        f64_from_u64(mod_sub(pw[(a_e * ex[i * T]) & (two_n - 1)], 1, qw));
                    const double tc = f64_mul_mod(f64_from_u64(acc[c * cstride + i * T]), f, q, qi);
                    dv[i] = f64_mul_mod(tc, own, q, qi);
                }
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
            const u64* row = rows[c * sh.digits + j] + (u64)s * n + k0;
            rbr_add_products(sum0, sum1, dv, row, row + (u64)m.row_spc * n, T, q, qi);
        }
    }
    const u32* a_next = (const u32*)m.a_next;
    u64* t = (u64*)m.t + ((u64)e * 2 * sh.limbs + s) * n + k0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const u64 n0 = f64_canonical(sum0[i], q, qi);
        const u64 n1 = f64_canonical(sum1[i], q, qi);
        acc[i * T] = n0;
        acc[cstride + i * T] = n1;
        if (a_next != nullptr) {
            const double g = f64_from_u64(
                mod_sub(pw[((u64)a_next[e] * ex[i * T]) & (two_n - 1)], 1, qw));
            t[i * T] = f64_canonical(f64_mul_mod(f64_from_u64(n0), g, q, qi), q, qi);
            t[cstride + i * T] = f64_canonical(f64_mul_mod(f64_from_u64(n1), g, q, qi), q, qi);
        }
    }
}

// Held to __launch_bounds__(128, 5): 96 registers without spills, the sums in registers. At 512
// HEAP_N13 samples (H200) that took 4.70 µs an external product; 128 registers with spills
// (bound 4) 4.97 µs; the sums in shared memory at bounds 6 and 8, 5.55 and 6.0 µs (PERF.md).
#define NTT_RBR_MAC(S)                                                                           \
    extern "C" __global__ void __launch_bounds__(128, 5)                                         \
        ntt_rbr_mac_r8_##S(RbrMacArgs m, RbrShape sh, const u64* slots, const ulonglong2* twp,   \
                           u32 logn, u32 logC) {                                                 \
        pdl_wait();                                                                              \
        ntt_rbr_mac<S>(m, sh, slots, twp, logn, logC);                                           \
    }
