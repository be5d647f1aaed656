// The key product fused with mod_up's last forward NTT pass (`ntt_keyprod_r8_S`; part of the
// `ntt` module, kernels/ntt.cu; launch wrappers in src/kernels/keyprod.rs). It fuses the last
// forward pass of the raised digits with the key product and owns the accumulator it writes.
#pragma once
#include "ntt_pass.cuh"

// ---------------------------------------------------------------------------------------------
// The last forward pass of mod_up fused with the key product, with an optional automorphism.
// Grid row i is slot kl.slot[i]; for every digit j the block runs the last (non-strided, L = 0)
// pass of ext_j's limb of that slot, keeping the outputs on chip, or, for the digit that
// owns the slot (kl.own[i] == j), reads the input's NTT-form limb instead (mod_up's copy of
// it is skipped), then
//   acc_c[k] = (Σ_j ext_j[map[k]]·key_{2j+c}[k]) mod q   (c = 0, 1; map[k] = k without `map`;
// exact 128-bit sums, one Barrett reduction), the same values as the last pass followed by
// `keyswitch_key_product` with `assign`: the NTT-form digits are never written to memory.
// An automorphism's NTT-form map sends each aligned run of 2^b indices onto another one (the
// run fixes the low bits of brv(k), hence of the odd exponent g·(2·brv(k)+1) mod 2n), so the
// block producing the outputs [base, base + E) transforms the source run holding map[base].
#define MAX_KP 64
#define NO_DIGIT 0xffffffffu
// Mirrors `KeyProdList` in Rust.
struct KeyProdList {
    u32 slot[MAX_KP];
    u32 own[MAX_KP];
};
// Buffers of the fused key product (mirrors `KeyProdArgs` in Rust): the raised digits (`ext`,
// ext_spc slots per digit, first pass done), the key (2·digits components, key_spc slots each),
// the input component (`input`: its limb of slot s at input + s·n), the 2-component
// accumulator (acc_spc slots per component) and the automorphism's index map (0: none).
// With `prod_a` (multiply + relinearize, no map), the rows of slots below `prod_slots` also
// add P·(c_0, c_1) of the product of the ciphertexts prod_a and prod_b (2 components,
// prod_a_spc / prod_b_spc slots each; `p_mod_q`: P mod q by slot), so that mod_down's finish
// yields c_c + (acc_c - conv_c)·P^-1 without reading c_0, c_1 (`FinishArgs::prod_slots`).
struct KeyProdArgs {
    u64 ext;
    u64 key;
    u64 input;
    u64 acc;
    u64 map;
    u32 ext_spc;
    u32 key_spc;
    u32 acc_spc;
    u32 digits;
    u64 prod_a;
    u64 prod_b;
    u64 p_mod_q;
    u32 prod_a_spc;
    u32 prod_b_spc;
    u32 prod_slots;
    u32 pad;
};
template <int S>
__device__ __forceinline__ void ntt_key_product(const KeyProdList& kl, const KeyProdArgs& ka,
                                                const u64* slots, const ulonglong2* twp,
                                                u32 logn, u32 logC) {
    extern __shared__ u64 sh[];
    const u32 s = kl.slot[blockIdx.y];
    const u32 own = kl.own[blockIdx.y];
    const u64 n = 1ull << logn;
    const u32 T = blockDim.x;
    // The block's outputs are the E = 8T consecutive words from `base` (C sub-problems of 2^S,
    // L = 0); output tid + T·i (i < 8) is the product of source element src_base + li[i]. The
    // last round leaves source element 8·tid + k in x[k] of thread tid, so the outputs go
    // through the exchange buffer (padded index e + e/8): loads and stores stay coalesced.
    const u32 logE = logC + S;
    const u64 base = (u64)blockIdx.x << logE;
    const u32* map = (const u32*)ka.map;
    const u32 src_block = map ? map[base] >> logE : blockIdx.x;
    const u64 src_base = (u64)src_block << logE;
    u32 li[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
        li[i] = map ? map[base + threadIdx.x + i * T] - (u32)src_base : threadIdx.x + i * T;
    // The 16 sums of a thread (8 elements, 2 components) live in shared memory after the
    // exchange buffer (its 8T·9/8 words, rounded up to 16 bytes): 128-bit sums in registers
    // would take 64 of them and leave a fifth of the warps.
    const u32 words = (8 * T * 9 / 8 + 1) & ~1u;
    ulonglong2* sums = (ulonglong2*)(sh + words) + threadIdx.x;
    for (u32 j = 0; j < ka.digits; j++) {
        u64 y[8];
        if (j == own) {
            const u64* in = (const u64*)ka.input + (u64)s * n + src_base;
#pragma unroll
            for (int i = 0; i < 8; i++) y[i] = in[li[i]];
        } else {
            // The previous digit's reads of the exchange buffer end first (block-uniform).
            if (j > 0) __syncthreads();
            const u64* e = (const u64*)ka.ext + ((u64)j * ka.ext_spc + s) * n;
            u64 x[8];
            ntt_pass_r8<S, false, false, false, false, true>(e, nullptr, s, slots, twp, nullptr,
                                                              logn, 0, logC, true, 0, {}, x,
                                                              src_block);
            exchange_outputs(x, y, li);
        }
        const u64* k0 = (const u64*)ka.key + ((u64)(2 * j) * ka.key_spc + s) * n + base +
                        threadIdx.x;
        const u64* k1 = k0 + (u64)ka.key_spc * n;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            u128 p0 = (u128)y[i] * load_once(k0 + (u64)i * T);
            u128 p1 = (u128)y[i] * load_once(k1 + (u64)i * T);
            ulonglong2* a0 = sums + (2 * i) * T;
            ulonglong2* a1 = a0 + T;
            if (j > 0) {
                const ulonglong2 v0 = *a0, v1 = *a1;
                p0 += ((u128)v0.y << 64) | v0.x;
                p1 += ((u128)v1.y << 64) | v1.x;
            }
            *a0 = make_ulonglong2((u64)p0, (u64)(p0 >> 64));
            *a1 = make_ulonglong2((u64)p1, (u64)(p1 >> 64));
        }
    }
    const Mod m = load_mod(slots, s);
    u64* o0 = (u64*)ka.acc + (u64)s * n + base + threadIdx.x;
    u64* o1 = o0 + (u64)ka.acc_spc * n;
    if (ka.prod_a && s < ka.prod_slots) {
        // + P·(a_0·b_0, a_0·b_1 + a_1·b_0) mod q: one more term below q^2 < 2^122 beside the
        // digits' products (each below q^2): exact in 128 bits for up to 62 digits.
        const u64 pq = ((const u64*)ka.p_mod_q)[s];
        const u64* a0 = (const u64*)ka.prod_a + (u64)s * n + base + threadIdx.x;
        const u64* a1 = a0 + (u64)ka.prod_a_spc * n;
        const u64* b0 = (const u64*)ka.prod_b + (u64)s * n + base + threadIdx.x;
        const u64* b1 = b0 + (u64)ka.prod_b_spc * n;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const u64 x0 = a0[(u64)i * T], x1 = a1[(u64)i * T];
            const u64 y0 = b0[(u64)i * T], y1 = b1[(u64)i * T];
            const u64 d0 = mod_mul(x0, y0, m);
            const u64 d1 = reduce_u128((u128)x0 * y1 + (u128)x1 * y0, m);
            const ulonglong2 v0 = sums[(2 * i) * T], v1 = sums[(2 * i + 1) * T];
            o0[(u64)i * T] = reduce_u128((((u128)v0.y << 64) | v0.x) + (u128)pq * d0, m);
            o1[(u64)i * T] = reduce_u128((((u128)v1.y << 64) | v1.x) + (u128)pq * d1, m);
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const ulonglong2 v0 = sums[(2 * i) * T], v1 = sums[(2 * i + 1) * T];
        o0[(u64)i * T] = reduce_u128(((u128)v0.y << 64) | v0.x, m);
        o1[(u64)i * T] = reduce_u128(((u128)v1.y << 64) | v1.x, m);
    }
}

#define NTT_KEYPROD(S)                                                                           \
    extern "C" __global__ void __launch_bounds__(128, 6)                                         \
        ntt_keyprod_r8_##S(KeyProdList kl, KeyProdArgs ka,                                       \
                                                 const u64* slots, const ulonglong2* twp,        \
                                                 u32 logn, u32 logC) {                           \
        pdl_wait();                                                                              \
        ntt_key_product<S>(kl, ka, slots, twp, logn, logC);                                      \
    }

