// Element-wise kernels over the limbs of RNS buffers: add/sub/mul/copy, negation, plaintext
// multiply-accumulate, per-limb scalars, the ciphertext tensor product and the two steps of
// rescaling. Grid: x over coefficients (blockDim.x each), y over the limbs of the set.
#include "common.cuh"

#define OP_ADD 0
#define OP_SUB 1
#define OP_MUL 2
#define OP_COPY 3

// Index of the operand limb matching limb `idx` of `a`: the same limb, or the same slot of the
// operand's only component when it has one component.
__device__ __forceinline__ u64* operand_ptr(const LimbSet& a, const LimbSet& b, u32 idx) {
    u32 per = a.q_cnt + a.p_cnt;
    return limbset_ptr(b, b.comps == 1 ? idx % per : idx);
}

// a <- a op b over the limbs of `a`.
extern "C" __global__ void elementwise_binary(LimbSet a, LimbSet b, const u64* slots, u32 op) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= a.n) return;
    u64* x = limbset_ptr(a, idx);
    const u64* y = operand_ptr(a, b, idx);
    Mod m = load_mod(slots, limbset_slot(a, idx));
    u64 u = x[k], v = y[k], r;
    switch (op) {
    case OP_ADD: r = mod_add(u, v, m.q); break;
    case OP_SUB: r = mod_sub(u, v, m.q); break;
    case OP_MUL: r = mod_mul(u, v, m); break;
    default: r = v; break;
    }
    x[k] = r;
}

// out <- a + b (op OP_ADD) or a - b (OP_SUB) over the limbs of `out`; `a` and `b` with the same
// limbs (the one-pass `Backend::add_new`).
extern "C" __global__ void elementwise_binary_new(LimbSet out, LimbSet a, LimbSet b,
                                                  const u64* slots, u32 op) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= out.n) return;
    const u64 q = slots[limbset_slot(out, idx) * SLOT_STRIDE];
    const u64 u = limbset_ptr(a, idx)[k], v = limbset_ptr(b, idx)[k];
    limbset_ptr(out, idx)[k] = op == OP_SUB ? mod_sub(u, v, q) : mod_add(u, v, q);
}

// a <- -a.
extern "C" __global__ void elementwise_neg(LimbSet a, const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= a.n) return;
    u64* x = limbset_ptr(a, idx);
    Mod m = load_mod(slots, limbset_slot(a, idx));
    x[k] = mod_neg(x[k], m.q);
}

// acc_c <- acc_c + a_c * b_0.
extern "C" __global__ void elementwise_mul_acc(LimbSet acc, LimbSet a, LimbSet b, const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= acc.n) return;
    u64* x = limbset_ptr(acc, idx);
    const u64* y = operand_ptr(acc, a, idx);
    const u64* z = operand_ptr(acc, b, idx);
    Mod m = load_mod(slots, limbset_slot(acc, idx));
    x[k] = mod_add(x[k], mod_mul(y[k], z[k], m), m.q);
}

// Products summed between reductions in elementwise_mul_sum: each is below (2^61)^2 = 2^122,
// so a residue (< 2^61) plus 32 of them stays below 2^128.
#define MUL_SUM_CHUNK 32

// out_c <- Σ_t a_{t,c} * b_{t,0} over the limbs of `out`, in one pass (each operand word read
// once, the sum written once; canonical like elementwise_mul_acc's chain). `terms` holds, per
// term t, the words (a_t base address, a_t slots per component, b_t base address); a_t has at
// least `out`'s components and b_t one used, both covering `out`'s limb slots.
extern "C" __global__ void elementwise_mul_sum(LimbSet out, const u64* terms, u32 count,
                                               const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= out.n) return;
    u32 comp, slot;
    limbset_locate(out, idx, comp, slot);
    Mod m = load_mod(slots, slot);
    u64 res = 0;
    for (u32 t0 = 0; t0 < count; t0 += MUL_SUM_CHUNK) {
        u128 acc = res;
        const u32 t1 = min(count, t0 + MUL_SUM_CHUNK);
        for (u32 t = t0; t < t1; t++) {
            const u64* a = (const u64*)terms[3 * t];
            const u64 spc = terms[3 * t + 1];
            const u64* b = (const u64*)terms[3 * t + 2];
            acc += (u128)a[((u64)comp * spc + slot) * out.n + k] * b[(u64)slot * out.n + k];
        }
        res = reduce_u128(acc, m);
    }
    limbset_ptr(out, idx)[k] = res;
}

// One constant per active limb (by position among a component's limbs), with its Shoup
// companion. Mirrors `Scalars` in Rust.
#define MAX_SCALARS 64
struct Scalars {
    u64 w[MAX_SCALARS];
    u64 ws[MAX_SCALARS];
};

// a <- a * w_i (Shoup) when op == OP_MUL, a <- a + w_i when op == OP_ADD.
extern "C" __global__ void elementwise_scalar(LimbSet a, Scalars sc, const u64* slots, u32 op) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= a.n) return;
    u32 pos = idx % (a.q_cnt + a.p_cnt);
    u64* x = limbset_ptr(a, idx);
    Mod m = load_mod(slots, limbset_slot(a, idx));
    if (op == OP_MUL) {
        x[k] = mul_shoup(x[k], sc.w[pos], sc.ws[pos], m.q);
    } else {
        x[k] = mod_add(x[k], sc.w[pos], m.q);
    }
}

// out <- (in + add_i)·mul_i (Shoup) for the limbs of `out`, read from the same positions of
// `in` (mod_up's prescale of a coefficient-form component, `CudaBackend::mod_up_prescale`).
extern "C" __global__ void elementwise_affine(LimbSet out, LimbSet in, Scalars add, Scalars mul,
                                              const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= out.n) return;
    u32 pos = idx % (out.q_cnt + out.p_cnt);
    Mod m = load_mod(slots, limbset_slot(out, idx));
    const u64 x = mod_add(limbset_ptr(in, idx)[k], add.w[pos], m.q);
    limbset_ptr(out, idx)[k] = mul_shoup(x, mul.w[pos], mul.ws[pos], m.q);
}

// Coefficient k of one limb of the tensor product, out = (a0 b0, a0 b1 + a1 b0, a1 b1): limb
// `ia` of `a` and `ib` of `b` (each with its components spc·n words apart) into limb `io` of
// `out`, the first two components only with c01.
__device__ __forceinline__ void tensor_limb(const LimbSet& out, u32 io, const LimbSet& a, u32 ia,
                                            const LimbSet& b, u32 ib, u32 k, const Mod& m,
                                            bool c01) {
    u64* o = limbset_ptr(out, io);
    const u64* x = limbset_ptr(a, ia);
    const u64* y = limbset_ptr(b, ib);
    u64 oc = (u64)out.spc * out.n, ac = (u64)a.spc * a.n, bc = (u64)b.spc * b.n;
    u64 a1 = x[ac + k], b1 = y[bc + k];
    if (c01) {
        u64 a0 = x[k], b0 = y[k];
        o[k] = mod_mul(a0, b0, m);
        o[oc + k] = reduce_u128((u128)a0 * b1 + (u128)a1 * b0, m);
    }
    o[2 * oc + k] = mod_mul(a1, b1, m);
}

// Tensor product, fused. `out` is the one-component set of output component 0 (the other two
// follow at +spc*n); `a` and `b` likewise. The first two components are written only at slots
// from `c01_from` (0: all; the key product adds them below it, `KeyProdArgs::prod_a` of ntt.cu).
extern "C" __global__ void elementwise_tensor(LimbSet out, LimbSet a, LimbSet b, const u64* slots,
                                              u32 c01_from) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= out.n) return;
    const u32 s = limbset_slot(out, idx);
    tensor_limb(out, idx, a, idx, b, idx, k, load_mod(slots, s), s >= c01_from);
}

// The tensor over two pairs of operands in one launch: `out`'s limbs below `split` from limbs
// of `a`, `b`, the others from `a2`, `b2` (from their first limb on): BFV's tensor over Q ∪ B,
// whose Q limbs are read from the ciphertexts and whose B limbs from the lifted buffer.
extern "C" __global__ void elementwise_tensor_pairs(LimbSet out, LimbSet a, LimbSet b, LimbSet a2,
                                                    LimbSet b2, u32 split, const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= out.n) return;
    const Mod m = load_mod(slots, limbset_slot(out, idx));
    if (idx < split) tensor_limb(out, idx, a, idx, b, idx, k, m, true);
    else tensor_limb(out, idx, a2, idx - split, b2, idx - split, k, m, true);
}

// Rescale, step 1: `t` holds at slot `level` the coefficients r of each component's top limb;
// writes t[c][i] = ((r + q_l/2) mod q_i) - (q_l/2 mod q_i) for the limbs of `t` (slots < level).
extern "C" __global__ void elementwise_rescale_prepare(LimbSet t, u32 level, const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= t.n) return;
    u32 c = limbset_comp(t, idx);
    const u64* top = (const u64*)t.ptr + ((u64)c * t.spc + level) * t.n;
    Mod ql = load_mod(slots, level);
    u64 half = ql.q >> 1;
    u64 v = mod_add(top[k], half, ql.q);
    Mod qi = load_mod(slots, limbset_slot(t, idx));
    u64 half_i = mod_reduce(half, qi);
    limbset_ptr(t, idx)[k] = mod_sub(mod_reduce(v, qi), half_i, qi.q);
}

// Rescale, step 2: a[c][i] <- (a[c][i] - t[c][i]) * q_l^-1 mod q_i (Shoup); `consts` holds
// (value, shoup) pairs for i < level.
extern "C" __global__ void elementwise_rescale_finish(LimbSet a, LimbSet t, const u64* consts, const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= a.n) return;
    u32 s = limbset_slot(a, idx);
    u64* x = limbset_ptr(a, idx);
    const u64* y = limbset_ptr(t, idx);
    Mod m = load_mod(slots, s);
    x[k] = mul_shoup(mod_sub(x[k], y[k], m.q), consts[2 * s], consts[2 * s + 1], m.q);
}

// BGV's modulus switch, step 2 (t preserved): `t` holds the correction of t^-1·a's top limb, so
// a[c][i] <- a[c][i]·q_l^-1 - t[c][i]·(t·q_l^-1) mod q_i, the residues of
// t·(t^-1·a - t)·q_l^-1; `tq` holds t·q_l^-1 by limb position (Shoup).
extern "C" __global__ void elementwise_rescale_finish_mod_t(LimbSet a, LimbSet t,
                                                            const u64* consts, Scalars tq,
                                                            const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= a.n) return;
    u32 s = limbset_slot(a, idx);
    u32 pos = idx % (a.q_cnt + a.p_cnt);
    u64* x = limbset_ptr(a, idx);
    const u64* y = limbset_ptr(t, idx);
    Mod m = load_mod(slots, s);
    u64 u = mul_shoup(x[k], consts[2 * s], consts[2 * s + 1], m.q);
    x[k] = mod_sub(u, mul_shoup(y[k], tq.w[pos], tq.ws[pos], m.q), m.q);
}

// RNS lift of an integer polynomial: limb idx of `a` (one component, Q slots) <- v_k mod q_s,
// canonical, with v_k the k-th signed integer of `src`: two's complement i128 as two words
// (low, high) when `wide`, else one i64 word, or (centre_t != 0) a residue w in [0, t) read
// centred (w - t when w > t/2). The same values as `Modulus::reduce_u128` of |v| followed by
// `neg` when v < 0.
extern "C" __global__ void elementwise_lift(LimbSet a, const u64* src, u32 wide, u64 centre_t,
                                            const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= a.n) return;
    u128 mag;
    bool neg;
    if (wide) {
        u128 v = ((u128)src[2 * k + 1] << 64) | (u128)src[2 * k];
        neg = (long long)src[2 * k + 1] < 0;
        mag = neg ? (u128)0 - v : v;
    } else {
        u64 v = src[k];
        if (centre_t != 0 && v > (centre_t >> 1)) v -= centre_t; // two's complement w - t
        neg = (long long)v < 0;
        mag = (u128)(neg ? 0 - v : v);
    }
    Mod m = load_mod(slots, limbset_slot(a, idx));
    u64 r = reduce_u128(mag, m);
    limbset_ptr(a, idx)[k] = neg ? mod_neg(r, m.q) : r;
}

// Small coefficients of component 0 of `a` (coefficient form, Q slots 0..q_cnt-1, q_lo = 0):
// x = the centred residue of limb 0 (x in [-(q_0-1)/2, (q_0-1)/2], so |x| < 2^60), and
// flag = 1 when x mod q_s equals limb s for every other slot. Writes out[k] = (x << 1) | flag
// (two's complement). One thread per coefficient, looping over the limbs.
extern "C" __global__ void elementwise_centered_q0(LimbSet a, u64* out, const u64* slots) {
    pdl_wait();
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= a.n) return;
    Mod m0 = load_mod(slots, 0);
    u64 r0 = limbset_ptr(a, 0)[k];
    bool neg = r0 > (m0.q >> 1);
    long long x = neg ? (long long)r0 - (long long)m0.q : (long long)r0;
    u64 mag = neg ? m0.q - r0 : r0;
    u64 flag = 1;
    for (u32 i = 1; i < a.q_cnt; i++) {
        Mod m = load_mod(slots, limbset_slot(a, i));
        u64 r = mod_reduce(mag, m);
        if (neg) r = mod_neg(r, m.q);
        if (r != limbset_ptr(a, i)[k]) {
            flag = 0;
            break;
        }
    }
    out[k] = ((u64)x << 1) | flag;
}
