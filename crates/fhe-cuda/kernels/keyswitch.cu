// Hybrid key switching: fast basis conversion (mod_up / mod_down), the key inner product with
// 128-bit accumulation in registers (automorphism folded in), and the final step of mod_down.
#include "common.cuh"
#include "moddown.cuh"

#define MAX_FROM 64
#define TARGETS_PER_BLOCK 8
// Targets per block of the unrolled conversions, at most (the launcher picks `tpb`).
#define MAX_TPB 32
#define PREPARE_CHUNK 4
// The unrolled plain conversion (mod_up) sums a target below 2^F64_MOD_BITS on the FP64 pipe when
// every source prime is below 2^F64_FACTOR_BITS.
#define TGT_WORDS 8
// A first source prime of up to 61 bits (q_0 of the 60 + 40·L chains, in mod_up's first digit)
// keeps the FP64 sums open to the other targets: its term is split in two 30-bit-factor terms.
#define SPLIT_BITS 30

// Word strides between the conversions of one batched launch (grid z): the z-th conversion reads
// in + z*in, writes out + z*out, copies cp_src + z*cp_src to cp_dst + z*cp_dst and (fused
// rescale) reads top_w + z*top. Mirrors `ConvStrides` in Rust.
struct ConvStrides {
    u64 in;
    u64 out;
    u64 cp_src;
    u64 cp_dst;
    u64 top;
    // mod_up's digits of one size: their conversion tables lie `table` words apart in the table
    // buffer (every table pointer moves by z*table) and their sources `from_slot` slots apart.
    u64 table;
    u64 from_slot;
};

// Moves the pointers and the first source slot of a batched conversion launch to the z-th
// conversion (`ConvStrides`; grid z = 1 leaves them unchanged).
__device__ __forceinline__ void batch_offsets(const ConvStrides& st, const u64*& in, u64*& out,
                                              const u64*& cp_src, u64*& cp_dst,
                                              const u64*& qhatinv, const u64*& qhatinv_shoup,
                                              const u64*& h, const u64*& to_slots,
                                              const u64*& h_in, const u64*& h_out,
                                              const u64*& qmodp, u32& from_slot0) {
    const u64 z = blockIdx.z;
    in += z * st.in;
    out += z * st.out;
    cp_src += z * st.cp_src;
    cp_dst += z * st.cp_dst;
    qhatinv += z * st.table;
    qhatinv_shoup += z * st.table;
    h += z * st.table;
    to_slots += z * st.table;
    h_in += z * st.table;
    h_out += z * st.table;
    if (qmodp) qmodp += z * st.table;
    from_slot0 += (u32)(z * st.from_slot);
}

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
                                             const u64* qmodp, u64* out, const u64* slots,
                                             const u64* cp_src, u64* cp_dst, u32 cp_cnt,
                                             const u64* top_w, u32 level, const u64* pinv,
                                             const u64* tq, ConvStrides st, u32 tpb) {
    pdl_wait();
    // (top_w, level, pinv, tq, tpb): the signature of the unrolled kernels; the generic one never
    // fuses the rescale preparation, groups TARGETS_PER_BLOCK targets and ignores them.
    (void)top_w;
    (void)level;
    (void)pinv;
    (void)tq;
    (void)tpb;
    batch_offsets(st, in, out, cp_src, cp_dst, qhatinv, qhatinv_shoup, h, to_slots, h_in, h_out,
                  qmodp, from_slot0);
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    // Blocks of the first target group also copy cp_cnt consecutive limbs (mod_up: the digit's
    // own NTT-form limbs into the raised buffer).
    if (blockIdx.y == 0)
        for (u32 i = 0; i < cp_cnt; i++) cp_dst[(u64)i * n + k] = cp_src[(u64)i * n + k];
    const u32 t0 = blockIdx.y * TARGETS_PER_BLOCK;
    const u32 tc = min((u32)TARGETS_PER_BLOCK, to_cnt - t0);
    // One pass over the sources; the sums of this block's targets stay in registers (the
    // unrolled loops index `acc` with constants only). Rows past the last target are not read.
    u128 acc[TARGETS_PER_BLOCK];
#pragma unroll
    for (u32 t = 0; t < TARGETS_PER_BLOCK; t++) acc[t] = 0;
    u128 f = 0;
    for (u32 i = 0; i < from_cnt; i++) {
        Mod mi = load_mod(slots, from_slot0 + i);
        u64 v = mul_shoup(mod_add(in[(u64)i * n + k], h_in[i], mi.q), qhatinv[i], qhatinv_shoup[i], mi.q);
        if (qmodp) f += (u128)v * mi.bhi + (u128)__umul64hi(v, mi.blo);
        const u64* col = h + (u64)t0 * from_cnt + i;
#pragma unroll
        for (u32 t = 0; t < TARGETS_PER_BLOCK; t++)
            if (t < tc) acc[t] += (u128)v * col[(u64)t * from_cnt];
    }
    // alpha < from_cnt <= MAX_FROM is below every modulus. With at most 32 sources the sums stay
    // below 2^127, so the correction alpha·(p - Q mod p) joins the sum before the one reduction.
    u64 alpha = (u64)(f >> 64);
#pragma unroll
    for (u32 t = 0; t < TARGETS_PER_BLOCK; t++) {
        if (t >= tc) break;
        u32 s = (u32)to_slots[t0 + t];
        Mod m = load_mod(slots, s);
        u64 y;
        if (qmodp && from_cnt <= 32) {
            y = reduce_u128(acc[t] + (u128)alpha * (m.q - qmodp[t0 + t]), m);
        } else {
            y = reduce_u128(acc[t], m);
            if (qmodp) y = mod_sub(y, reduce_u128((u128)alpha * qmodp[t0 + t], m), m.q);
        }
        out[(u64)s * n + k] = mod_sub(y, h_out[t0 + t], m.q);
    }
}

// The unrolled conversion for FROM sources: the v_i stay in registers, then the block's targets
// are summed one at a time (a chain of FROM multiply-adds into one u128), so a thread holds
// FROM + 2 words of state instead of TARGETS_PER_BLOCK u128 sums: fewer registers, more warps
// in flight to hide the multiply latency. Same sums as `keyswitch_convert` (exact u128 sums do not
// depend on the order), so the same bits.
//
// With `top_w` non-null (mod_down fused with the rescale, targets = slots 0..=level in order),
// the output is `keyswitch_mod_down_rescale_prepare`'s z instead of the plain conversion: each
// thread also forms target `level` (conv_l), y = top_w[k] - conv_l·P^-1 mod q_l, and writes
// z_i = conv_i·P^-1 + ((y + q_l/2) mod q_i) - (q_l/2 mod q_i) for i < level, conv_l at slot l
// (the same values the separate prepare kernel computes, one global round trip fewer).
// BGV's t-preserving modulus switch (`tq` non-null: (t mod q_s, shoup) pairs by slot) takes
// top_w already scaled by t^-1 and writes t·z_i instead (see the prepare kernel).
// Grid: x over coefficients, y over groups of `tpb` <= MAX_TPB targets (a larger group shares
// the loads and Shoup products of the sources among more targets; the launcher trades that
// against the number of threads).
template <int FROM>
__device__ __forceinline__ void convert_unrolled(const u64* in, u32 n, u32 from_slot0,
                                                 const u64* qhatinv, const u64* qhatinv_shoup,
                                                 const u64* h, const u64* to_slots, u32 to_cnt,
                                                 const u64* h_in, const u64* h_out,
                                                 const u64* qmodp, u64* out, const u64* slots,
                                                 const u64* cp_src, u64* cp_dst, u32 cp_cnt,
                                                 const u64* top_w, u32 level,
                                                 const u64* pinv, const u64* tq,
                                                 const ConvStrides& st, u32 tpb) {
    batch_offsets(st, in, out, cp_src, cp_dst, qhatinv, qhatinv_shoup, h, to_slots, h_in, h_out,
                  qmodp, from_slot0);
    if (top_w) top_w += blockIdx.z * st.top;
    // Per target of the block: its row of h, and (q, bhi, blo, slot, h_out, Q mod p, q_l/2 mod q,
    // 1/q as a double or 0) (q_l/2 for the fused rescale; 1/q where the target may be summed in
    // doubles: a plain conversion to q < 2^F64_MOD_BITS).
    __shared__ u64 row[MAX_TPB * FROM];
    __shared__ u64 tgt_c[MAX_TPB * TGT_WORDS];
    // Per FP64 target: 2^SPLIT_BITS·h_0 mod q (source 0's row entry, for the split term).
    __shared__ u64 row0_hi[MAX_TPB];
    const u32 t0 = blockIdx.y * tpb;
    const u32 tc = min(tpb, to_cnt - t0);
    const u64 half = top_w ? slots[level * SLOT_STRIDE] >> 1 : 0;
    for (u32 j = threadIdx.x; j < tc * FROM; j += blockDim.x) row[j] = h[(u64)t0 * FROM + j];
    for (u32 t = threadIdx.x; t < tc; t += blockDim.x) {
        u32 sl = (u32)to_slots[t0 + t];
        const Mod m = load_mod(slots, sl);
        u64* c = tgt_c + t * TGT_WORDS;
        c[0] = m.q;
        c[1] = m.bhi;
        c[2] = m.blo;
        c[3] = sl;
        c[4] = h_out[t0 + t];
        c[5] = qmodp ? qmodp[t0 + t] : 0;
        c[6] = reduce_u64(half, m);
        const bool f64 = !qmodp && !top_w && m.q < (1ull << F64_MOD_BITS);
        c[7] = f64 ? slots[sl * SLOT_STRIDE + 3] : 0;
        row0_hi[t] = f64 ? reduce_u128((u128)h[(u64)(t0 + t) * FROM] << SPLIT_BITS, m) : 0;
    }
    __syncthreads();
    // Everything above reads only tables, so it overlaps the previous kernel's tail (the
    // kernel wrapper does not wait first); the data below is that kernel's output.
    pdl_wait();
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    if (blockIdx.y == 0)
        for (u32 i = 0; i < cp_cnt; i++) cp_dst[(u64)i * n + k] = cp_src[(u64)i * n + k];
    u64 v[FROM];
    u128 f = 0;
    // FP64 sums need every source below 2^F64_FACTOR_BITS, except source 0 when it is split.
    bool f64_sources = true, wide0 = false;
#pragma unroll
    for (int i = 0; i < FROM; i++) {
        Mod mi = load_mod(slots, from_slot0 + i);
        v[i] = mul_shoup(mod_add(in[(u64)i * n + k], h_in[i], mi.q), qhatinv[i], qhatinv_shoup[i],
                         mi.q);
        if (qmodp) f += (u128)v[i] * mi.bhi + (u128)__umul64hi(v[i], mi.blo);
        const bool narrow = mi.q < (1ull << F64_FACTOR_BITS);
        if (i == 0)
            wide0 = !narrow;
        else
            f64_sources &= narrow;
    }
    const u64 alpha = (u64)(f >> 64);
    // Target t's converted value (FROM <= 16 <= 32: the overflow correction joins the sum before
    // the one reduction, as in `keyswitch_convert`).
    auto target = [&](const u64* r, const Mod& m, u64 q_mod_p, u64 off) -> u64 {
        // Two independent sums (even and odd sources) halve the chain of dependent 128-bit adds.
        u128 acc = 0, acc_odd = 0;
#pragma unroll
        for (int i = 0; i < FROM; i += 2) acc += (u128)v[i] * r[i];
#pragma unroll
        for (int i = 1; i < FROM; i += 2) acc_odd += (u128)v[i] * r[i];
        acc += acc_odd;
        if (qmodp) acc += (u128)alpha * (m.q - q_mod_p);
        return mod_sub(reduce_u128(acc, m), off, m.q);
    };
    // The same residue in doubles (plain conversion, q < 2^42, v_i < 2^46): each term
    // f64_mul_mod(v_i, h_i) is below 0.52q in magnitude, so with FROM <= 16 the sum less h_out
    // stays below 9.4q < 2^46, where f64_canonical is exact. A wide v_0 (< 2^61) enters as
    // a·(2^30·h_0 mod q) + b·h_0 with v_0 = a·2^30 + b, both factors below 2^31: one term more,
    // the sum still below 9.9q. Every partial sum is an integer below 2^53, so the order of the
    // additions does not change the result.
    auto target_f64 = [&](const u64* r, u64 r0_hi, u64 q, double qinv, u64 off) -> u64 {
        const double qd = f64_from_u64(q);
        double acc = -f64_from_u64(off), acc_odd = 0.0;
        if (wide0) {
            acc_odd = f64_mul_mod(f64_from_u64(v[0] >> SPLIT_BITS), f64_from_u64(r0_hi), qd, qinv);
            acc = __dadd_rn(acc, f64_mul_mod(f64_from_u64(v[0] & ((1ull << SPLIT_BITS) - 1)),
                                             f64_from_u64(r[0]), qd, qinv));
        } else {
            acc = __dadd_rn(acc, f64_mul_mod(f64_from_u64(v[0]), f64_from_u64(r[0]), qd, qinv));
        }
#pragma unroll
        for (int i = 2; i < FROM; i += 2)
            acc = __dadd_rn(acc, f64_mul_mod(f64_from_u64(v[i]), f64_from_u64(r[i]), qd, qinv));
#pragma unroll
        for (int i = 1; i < FROM; i += 2)
            acc_odd = __dadd_rn(acc_odd,
                                f64_mul_mod(f64_from_u64(v[i]), f64_from_u64(r[i]), qd, qinv));
        return f64_canonical(__dadd_rn(acc, acc_odd), qd, qinv);
    };
    u64 rounded = 0;
    if (top_w) {
        // conv_l from row `level` of the global matrix (not necessarily in this block's group).
        Mod ml = load_mod(slots, level);
        u64 conv_l = target(h + (u64)level * FROM, ml, qmodp[level], h_out[level]);
        rounded = mod_down_rescale_rounded(top_w[k], conv_l, pinv, level, half, ml.q);
    }
#pragma unroll 2
    for (u32 t = 0; t < tc; t++) {
        const u64* c = tgt_c + t * TGT_WORDS;
        Mod m;
        m.q = c[0];
        m.bhi = c[1];
        m.blo = c[2];
        const u32 s = (u32)c[3];
        u64 y;
        if (c[7] && f64_sources)
            y = target_f64(row + t * FROM, row0_hi[t], m.q,
                           __longlong_as_double((long long)c[7]), c[4]);
        else
            y = target(row + t * FROM, m, c[5], c[4]);
        if (top_w && s != level) {
            u64 corr = mod_sub(reduce_u64(rounded, m), c[6], m.q);
            y = mod_add(mul_shoup(y, pinv[2 * s], pinv[2 * s + 1], m.q), corr, m.q);
            if (tq) y = mul_shoup(y, tq[2 * s], tq[2 * s + 1], m.q);
        }
        out[(u64)s * n + k] = y;
    }
}

#define CONVERT_PARAMS                                                                          \
    const u64 *in, u32 n, u32 from_slot0, u32 from_cnt, const u64 *qhatinv,                     \
        const u64 *qhatinv_shoup, const u64 *h, const u64 *to_slots, u32 to_cnt,                \
        const u64 *h_in, const u64 *h_out, const u64 *qmodp, u64 *out, const u64 *slots,        \
        const u64 *cp_src, u64 *cp_dst, u32 cp_cnt
// Unrolled variants for 1..=16 sources (the launcher picks `keyswitch_convert_f<from_cnt>`;
// `keyswitch_convert` above handles any count).
// They take four more parameters, (top_w, level, pinv, tq), for the fused mod_down rescale (null
// top_w: plain conversion; tq: BGV's t, null otherwise), and the strides of a batched launch (grid z). Their programmatic-
// launch wait comes after the table staging (in `convert_unrolled`).
// From 10 sources on the kernels are held to 64 registers (blocks of at most 256 threads) so
// that 4 blocks fit an SM: unbounded they took 66-94 registers and 3 blocks, and a launch of
// 2^17 threads then ran 1.3 waves (BFV's 14-source conversions at N = 2^15). They spill a
// little (22 local-memory instructions of about 4000 in f14, 73 in f16).
#define CONVERT_F(F, BOUNDS)                                                                    \
    extern "C" __global__ void BOUNDS keyswitch_convert_f##F(CONVERT_PARAMS, const u64* top_w,  \
                                                             u32 level, const u64* pinv,        \
                                                             const u64* tq, ConvStrides st,     \
                                                             u32 tpb) {                         \
        convert_unrolled<F>(in, n, from_slot0, qhatinv, qhatinv_shoup, h, to_slots, to_cnt,      \
                            h_in, h_out, qmodp, out, slots, cp_src, cp_dst, cp_cnt, top_w,      \
                            level, pinv, tq, st, tpb);                                          \
    }
#define BOUNDED __launch_bounds__(256, 4)
CONVERT_F(1, )
CONVERT_F(2, )
CONVERT_F(3, )
CONVERT_F(4, )
CONVERT_F(5, )
CONVERT_F(6, )
CONVERT_F(7, )
CONVERT_F(8, )
CONVERT_F(9, )
CONVERT_F(10, BOUNDED)
CONVERT_F(11, BOUNDED)
CONVERT_F(12, BOUNDED)
CONVERT_F(13, BOUNDED)
CONVERT_F(14, BOUNDED)
CONVERT_F(15, BOUNDED)
CONVERT_F(16, BOUNDED)

// The tensor-core conversions (convert_mma.cuh) for up to 4·KC sources: the parameters of the
// unrolled kernels and the conversion's B fragments (`ConvLayout::mma_frag`); launched with
// MMA_BLOCK threads and dynamic shared memory.
#include "convert_mma.cuh"
#define CONVERT_MMA_K(KC)                                                                       \
    extern "C" __global__ void __launch_bounds__(MMA_BLOCK, MMA_MIN_BLOCKS) keyswitch_convert_mma_k##KC(\
        CONVERT_PARAMS, const u64* top_w, u32 level, const u64* pinv, const u64* tq,          \
        ConvStrides st, u32 tpb, const u64* frag) {                                             \
        convert_mma<KC>(in, n, from_slot0, from_cnt, qhatinv, qhatinv_shoup, h, to_slots,       \
                        to_cnt, h_in, h_out, qmodp, out, slots, cp_src, cp_dst, cp_cnt, top_w,  \
                        level, pinv, tq, st, tpb, frag);                                        \
    }
CONVERT_MMA_K(1)
CONVERT_MMA_K(2)
CONVERT_MMA_K(3)
CONVERT_MMA_K(4)

// acc_c += sum_j ext_j[src(k)] * key_{2j+c}[k] for c in {0, 1}, exactly in 128 bits, then one
// Barrett reduction; src(k) = map[k] when map is non-null (hoisted rotation), else k.
// `acc` is the one-component set of component 0 (component 1 at +spc*n); ext and key are
// addressed with the same slots and their own slots-per-component.
// With `assign` != 0 the sums start from zero instead of acc (acc is only written).
extern "C" __global__ void keyswitch_key_product(LimbSet acc, const u64* ext, u32 ext_spc,
                                                 const u64* key, u32 key_spc, u32 digits,
                                                 const u32* map, u32 assign, const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    u32 n = acc.n;
    if (k >= n) return;
    u32 s = limbset_slot(acc, idx);
    u64* a0 = limbset_ptr(acc, idx);
    u64* a1 = a0 + (u64)acc.spc * n;
    u32 src = map ? map[k] : k;
    u128 sum0 = 0, sum1 = 0;
    if (!assign) {
        sum0 = a0[k];
        sum1 = a1[k];
    }
    for (u32 j = 0; j < digits; j++) {
        u64 e = load_last(ext + ((u64)j * ext_spc + s) * n + src);
        sum0 += (u128)e * load_once(key + ((u64)(2 * j) * key_spc + s) * n + k);
        sum1 += (u128)e * load_once(key + ((u64)(2 * j + 1) * key_spc + s) * n + k);
    }
    Mod m = load_mod(slots, s);
    a0[k] = reduce_u128(sum0, m);
    a1[k] = reduce_u128(sum1, m);
}

// mod_down, last step: out[c][s] += mod_down_term(acc[c][s], conv[c][s]).
extern "C" __global__ void keyswitch_mod_down_finish(LimbSet out, LimbSet acc, LimbSet conv,
                                                     const u64* pinv, SlotPairs tp, u32 use_t,
                                                     const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= out.n) return;
    u32 s = limbset_slot(out, idx);
    u64 q = slots[s * SLOT_STRIDE];
    u64* o = limbset_ptr(out, idx);
    u64 d = mod_down_term(limbset_ptr(acc, idx)[k], limbset_ptr(conv, idx)[k], s, pinv, tp, use_t, q);
    o[k] = mod_add(o[k], d, q);
}

// mod_down fused with the rescale, step 1 (top limb, NTT form): w_c = out[c][l] + acc[c][l] * P^-1
// mod q_l, written to `top` (the one-slot set of slot l, 2 components).
extern "C" __global__ void keyswitch_mod_down_top(LimbSet top, LimbSet out, LimbSet acc,
                                                  const u64* pinv, const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= top.n) return;
    u32 s = limbset_slot(top, idx);
    u64 q = slots[s * SLOT_STRIDE];
    u64 a = mul_shoup(limbset_ptr(acc, idx)[k], pinv[2 * s], pinv[2 * s + 1], q);
    limbset_ptr(top, idx)[k] = mod_add(limbset_ptr(out, idx)[k], a, q);
}

// Step 2 (coefficient form), per coefficient k and component c (grid y): the top limb of the
// mod_down result y = INTT(w)[k] - conv[c][l][k] * P^-1 mod q_l, then for i < l
// z[c][i][k] = conv[c][i][k] * P^-1 + ((y + q_l/2) mod q_i) - (q_l/2 mod q_i), in place in conv.
// `conv` is the 2-component buffer (slots per component `cspc`), `top` as in step 1.
// BGV's t-preserving switch (`tq` non-null: (t mod q_i, shoup) pairs by slot): `conv` converts
// t^-1·acc_P and `top` holds t^-1·INTT(w), so y is t^-1 times the mod_down result's top limb, and
// z_i is multiplied by t: step 3 then gives t·⌊t^-1·x / q_l⌉ for the mod_down result x, the value
// of mod_down and rescale between the scalings by t^-1 and t (`scaled_mod_down_into_mod_t`).
extern "C" __global__ void keyswitch_mod_down_rescale_prepare(u64* conv, u32 cspc, LimbSet top,
                                                              u32 level, const u64* pinv,
                                                              const u64* tq, const u64* slots) {
    pdl_wait();
    // Grid y: component (low bit) and chunk of PREPARE_CHUNK target limbs.
    u32 c = blockIdx.y & 1;
    u32 i0 = (blockIdx.y >> 1) * PREPARE_CHUNK;
    u32 i1 = min(i0 + PREPARE_CHUNK, level);
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    u32 n = top.n;
    if (k >= n) return;
    u64* z = conv + (u64)c * cspc * n;
    Mod ql = load_mod(slots, level);
    u64 w = limbset_ptr(top, c)[k];
    u64 half = ql.q >> 1;
    u64 v = mod_down_rescale_rounded(w, z[(u64)level * n + k], pinv, level, half, ql.q);
    for (u32 i = i0; i < i1; i++) {
        Mod qi = load_mod(slots, i);
        u64 t = mod_sub(reduce_u64(v, qi), reduce_u64(half, qi), qi.q);
        u64 x = mul_shoup(z[(u64)i * n + k], pinv[2 * i], pinv[2 * i + 1], qi.q);
        x = mod_add(x, t, qi.q);
        if (tq) x = mul_shoup(x, tq[2 * i], tq[2 * i + 1], qi.q);
        z[(u64)i * n + k] = x;
    }
}

// Step 3 (NTT form, i < l): out[c][i] <- (out[c][i] + acc[c][i] * P^-1 - z[c][i]) * q_l^-1 mod q_i,
// `rs` holding the rescale constants (value, shoup) by slot; slot l (now inactive) gets the plain
// mod_down result out[c][l] + (acc[c][l] - z[c][l]) * P^-1, as on the CPU.
extern "C" __global__ void keyswitch_mod_down_rescale_finish(LimbSet out, LimbSet acc, LimbSet z,
                                                             const u64* pinv, const u64* rs,
                                                             u32 level, const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= out.n) return;
    u32 s = limbset_slot(out, idx);
    u64 q = slots[s * SLOT_STRIDE];
    u64* o = limbset_ptr(out, idx);
    o[k] = mod_down_rescale_value(o[k], limbset_ptr(acc, idx)[k], limbset_ptr(z, idx)[k], s, level,
                                  pinv, rs, q);
}

// mod_down of a hoisted rotation, last step: out[0][s] = c[0][s][map[k]] + term(0, s),
// out[1][s] = term(1, s) with term = mod_down_term(acc, conv) (the automorphism of c_0 and the
// zero initialisation of the output folded in). `src` is the one-component set of c_0 at out's
// slots.
extern "C" __global__ void keyswitch_mod_down_finish_rot(LimbSet out, LimbSet acc, LimbSet conv,
                                                         LimbSet src, const u32* map,
                                                         const u64* pinv, SlotPairs tp,
                                                         u32 use_t, const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= out.n) return;
    u32 s = limbset_slot(out, idx);
    u64 q = slots[s * SLOT_STRIDE];
    u32 per = out.q_cnt + out.p_cnt;
    u64 base = idx < per ? limbset_ptr(src, idx)[map[k]] : 0;
    u64 d = mod_down_term(limbset_ptr(acc, idx)[k], limbset_ptr(conv, idx)[k], s, pinv, tp, use_t, q);
    limbset_ptr(out, idx)[k] = mod_add(base, d, q);
}
