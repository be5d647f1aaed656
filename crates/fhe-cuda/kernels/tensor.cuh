// Loads that form a transform's input as the first pass reads it (part of the `ntt` module,
// kernels/ntt.cu; launch wrappers in src/kernels/tensor.rs): the tensor product of two
// ciphertexts (`tensor_words`, BFV's and the CKKS/BGV product's c_0, c_1, c_2) and scaled sums
// b + x·k (`add_scaled_words`, mod_down's rescaled top limb), and the first inverse pass that
// takes them (`ntt_inv_tensor_r8_S`, `ntt_inv_add_r8_S`, instantiated by NTT_R8 in ntt.cu).
// These fused kernels own the inverse transform's output.
#pragma once
#include "common.cuh"

// Tensor-product loads: component c of (a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1) mod q at the E words
// of a thread, element k at gsrc[k << shift] (consecutive words, 16-byte loads, with VEC; the
// canonical words of `elementwise_tensor_pairs`).
#define TENSOR_FLAG 0x4000u
#define TENSOR_COMP_MASK 0x3u
template <int E>
__device__ __forceinline__ void tensor_load(u64 (&v)[E], const u64* g, u32 shift, bool vec) {
    if (vec) {
#pragma unroll
        for (int k = 0; k < E / 2; k++) {
            const ulonglong2 p = ((const ulonglong2*)g)[k];
            v[2 * k] = p.x;
            v[2 * k + 1] = p.y;
        }
    } else {
#pragma unroll
        for (int k = 0; k < E; k++) v[k] = g[(u64)k << shift];
    }
}
template <int E>
__device__ __forceinline__ void tensor_words(u64 (&w)[E], const u64* gsrc, u32 shift, bool vec,
                                             u32 comp, const long long* d, const Mod& m) {
    u64 x[E], y[E];
    if (comp == 1) {
        // a_0 b_1 + a_1 b_0 as one 128-bit sum (below 2^123), one reduction.
        u128 acc[E];
        tensor_load<E>(x, gsrc, shift, vec);
        tensor_load<E>(y, gsrc + d[2], shift, vec);
#pragma unroll
        for (int k = 0; k < E; k++) acc[k] = (u128)x[k] * y[k];
        tensor_load<E>(x, gsrc + d[0], shift, vec);
        tensor_load<E>(y, gsrc + d[1], shift, vec);
#pragma unroll
        for (int k = 0; k < E; k++) w[k] = reduce_u128(acc[k] + (u128)x[k] * y[k], m);
    } else {
        tensor_load<E>(x, comp == 0 ? gsrc : gsrc + d[0], shift, vec);
        tensor_load<E>(y, gsrc + d[comp == 0 ? 1 : 2], shift, vec);
#pragma unroll
        for (int k = 0; k < E; k++) w[k] = mod_mul(x[k], y[k], m);
    }
}

// Scaled-sum loads: w[i] = b_i + x_i·c mod q (Shoup, canonical; c = k[0], its companion k[1])
// for x_i at gsrc and b_i at gsrc + delta, element i at [i << shift] (16-byte loads with VEC):
// the words of `keyswitch_mod_down_top`.
#define ADD_FLAG 0x2000u
#define ADD_COMP_MASK 0x1u
template <int E>
__device__ __forceinline__ void add_scaled_words(u64 (&w)[E], const u64* gsrc, u32 shift, bool vec,
                                                 long long delta, const u64* k, u64 q) {
    u64 x[E], b[E];
    tensor_load<E>(x, gsrc, shift, vec);
    tensor_load<E>(b, gsrc + delta, shift, vec);
#pragma unroll
    for (int i = 0; i < E; i++) w[i] = mod_add(b[i], mul_shoup(x[i], k[0], k[1], q), q);
}

// The first inverse pass (L = 0) `NAME` for S stages whose loads take the paths of the set F
// (FUSED_TENSOR or FUSED_ADD) on the limbs whose slot word says so, plain loads on the others.
#define NTT_INV_LOADING(NAME, S, F)                                                              \
    extern "C" __global__ void NAME(LimbList ll, const u64* slots, const ulonglong2* twp,        \
                                    const u64* consts, u32 logn, u32 L, u32 logC, FusedArgs fa) {\
        pdl_wait();                                                                              \
        u32 i = blockIdx.y;                                                                      \
        const u64* src = (const u64*)ll.src[i];                                                  \
        u64* dst = (u64*)ll.dst[i];                                                              \
        const u32 s = ll.slot[i] & LIFT_SLOT_MASK, lift = ll.slot[i] >> LIFT_SHIFT;              \
        if (S == logn)                                                                           \
            ntt_pass_r8<S, false, true, F, true>(src, dst, s, slots, twp, consts, logn, L, logC, \
                                                 false, 0, fa, nullptr, 0, lift, nullptr,        \
                                                 fa.load_copy_delta);                            \
        else                                                                                     \
            ntt_pass_r8<S, false, true, F>(src, dst, s, slots, twp, consts, logn, L, logC,       \
                                           false, 0, fa, nullptr, 0, lift, nullptr,              \
                                           fa.load_copy_delta);                                  \
    }
