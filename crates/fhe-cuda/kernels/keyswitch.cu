// Hybrid key switching: fast basis conversion (mod_up / mod_down), the key inner product with
// 128-bit accumulation in registers (automorphism folded in), and the final step of mod_down.
#include "common.cuh"

#define MAX_FROM 64
#define TARGETS_PER_BLOCK 8

// Fast basis conversion (fhe-math `BasisConverter` contract) of centred values:
//   x_i' = x_i + h_in[i] mod q_i (the centring offset of `ModUpTable` / `ModDownTable`),
//   v_i = mul_shoup(x_i', qhatinv_i)  (canonical mod q_i),
//   S_t = sum_i v_i * h[t][i]  exactly in 128 bits,  out_t = (S_t mod p_t) - h_out[t] mod p_t.
// When `qmodp` is non-null (`BasisConverter::convert_exact`, used by mod_down), the overflow
// alpha = floor(F / 2^64), F = sum_i (v_i * bhi_i + floor(v_i * blo_i / 2^64)) over the source
// moduli's Barrett constants, is removed first: (S_t mod p_t) - alpha * (Q mod p_t) mod p_t.
// Input: from_cnt contiguous limbs at `in` (stride n) of slots from_slot0..; output: limb
// out + to_slots[t] * n for target t, with modulus of slot to_slots[t].
// Grid: x over coefficients, y over groups of TARGETS_PER_BLOCK targets.
extern "C" __global__ void keyswitch_convert(const u64* in, u32 n, u32 from_slot0, u32 from_cnt,
                                             const u64* qhatinv, const u64* qhatinv_shoup,
                                             const u64* h, const u64* to_slots, u32 to_cnt,
                                             const u64* h_in, const u64* h_out,
                                             const u64* qmodp, u64* out, const u64* slots) {
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    u64 v[MAX_FROM];
    for (u32 i = 0; i < from_cnt; i++) {
        u64 q = slots[(from_slot0 + i) * SLOT_STRIDE];
        v[i] = mul_shoup(mod_add(in[(u64)i * n + k], h_in[i], q), qhatinv[i], qhatinv_shoup[i], q);
    }
    u64 alpha = 0;
    if (qmodp) {
        u128 f = 0;
        for (u32 i = 0; i < from_cnt; i++) {
            Mod mi = load_mod(slots, from_slot0 + i);
            f += (u128)v[i] * mi.bhi + (u128)__umul64hi(v[i], mi.blo);
        }
        alpha = (u64)(f >> 64);
    }
    u32 t0 = blockIdx.y * TARGETS_PER_BLOCK;
    u32 t1 = min(t0 + TARGETS_PER_BLOCK, to_cnt);
    for (u32 t = t0; t < t1; t++) {
        const u64* row = h + (u64)t * from_cnt;
        u128 acc = 0;
        for (u32 i = 0; i < from_cnt; i++) acc += (u128)v[i] * row[i];
        u32 s = (u32)to_slots[t];
        Mod m = load_mod(slots, s);
        u64 y = reduce_u128(acc, m);
        if (qmodp) y = mod_sub(y, reduce_u128((u128)mod_reduce(alpha, m) * qmodp[t], m), m.q);
        out[(u64)s * n + k] = mod_sub(y, h_out[t], m.q);
    }
}

// acc_c += sum_j ext_j[src(k)] * key_{2j+c}[k] for c in {0, 1}, exactly in 128 bits, then one
// Barrett reduction; src(k) = map[k] when map is non-null (hoisted rotation), else k.
// `acc` is the one-component set of component 0 (component 1 at +spc*n); ext and key are
// addressed with the same slots and their own slots-per-component.
extern "C" __global__ void keyswitch_key_product(LimbSet acc, const u64* ext, u32 ext_spc,
                                                 const u64* key, u32 key_spc, u32 digits,
                                                 const u32* map, const u64* slots) {
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    u32 n = acc.n;
    if (k >= n) return;
    u32 s = limbset_slot(acc, idx);
    u64* a0 = limbset_ptr(acc, idx);
    u64* a1 = a0 + (u64)acc.spc * n;
    u32 src = map ? map[k] : k;
    u128 sum0 = a0[k], sum1 = a1[k];
    for (u32 j = 0; j < digits; j++) {
        u64 e = ext[((u64)j * ext_spc + s) * n + src];
        sum0 += (u128)e * key[((u64)(2 * j) * key_spc + s) * n + k];
        sum1 += (u128)e * key[((u64)(2 * j + 1) * key_spc + s) * n + k];
    }
    Mod m = load_mod(slots, s);
    a0[k] = reduce_u128(sum0, m);
    a1[k] = reduce_u128(sum1, m);
}

// mod_down, last step: out[c][s] += (acc[c][s] - conv[c][s]) * P^-1 mod q_s (Shoup), `pinv`
// holding (value, shoup) pairs by slot.
extern "C" __global__ void keyswitch_mod_down_finish(LimbSet out, LimbSet acc, LimbSet conv,
                                                     const u64* pinv, const u64* slots) {
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= out.n) return;
    u32 s = limbset_slot(out, idx);
    Mod m = load_mod(slots, s);
    u64* o = limbset_ptr(out, idx);
    u64 d = mod_sub(limbset_ptr(acc, idx)[k], limbset_ptr(conv, idx)[k], m.q);
    o[k] = mod_add(o[k], mul_shoup(d, pinv[2 * s], pinv[2 * s + 1], m.q), m.q);
}
