// Batched blind rotation, sample extraction and LWE key switching (fhe-math's
// `backend::blind_rotate`, whose module documentation fixes every rounding; the CPU reference is
// `blind_rotate/cpu.rs`). Residues modulo one prime q < 2^53; the external product's polynomial
// products by the negacyclic f64 FFT specified in fhe-math's `blind_rotate/fft.rs`: the same
// binary64 operations in the same order as the CPU (every product and sum of the transforms
// through __dmul_rn, __dadd_rn, __dsub_rn, so never fused into a multiply-add; the one fused
// multiply-add, in br_residue, has an exact result), so equal output words.
//
// `blind_rotate_run`: one thread block per LWE ciphertext runs the whole rotation (all n CMux
// steps, one launch): the accumulator (residues), the digit spectra (double2) and (ternary keys)
// the first key's spectral sum stay in shared memory; each step decomposes X^a·ACC − ACC into
// folded digit polynomials, runs their forward FFTs at once, multiplies-and-accumulates with the
// key's spectra (read from global memory, shared by every block through L2, and through L1 by
// the blocks of one SM: all blocks walk the steps in the same order), runs the inverse FFTs,
// rounds, reduces and adds the result to the accumulator; the decomposition runs in the same
// pass as the first two forward stages and the rounding in that of the last two inverse stages
// (br_digits_first_stages, br_last_stages_update). At the end the block writes the extracted
// LWE (coefficient 0). `blind_rotate_run_cluster` (batches of at most SMs / 4): the same steps,
// through the same device functions, for one ciphertext on a cluster of 4 blocks (distributed
// shared memory), the key slice of the next step fetched during the step.
//
// Multi-bit keys (group size g = 2..3, fhe-math's module documentation): a step decomposes ACC
// itself (not a difference) and multiplies its digit spectra by the combined key
// Σ_j (X^{t_j} − 1)·BSK_j of the group, formed point by point from the 2^g − 1 keys' spectra and
// the roots table ψ^x (`br_key_product_multi_bit`); the rest of the step is the CMux's.
//
// `blind_rotate_key_switch`: LWE key switching; a block owns 128 output columns of KS_TILE
// ciphertexts, so each key word read serves KS_TILE ciphertexts; small batches also split the
// input over blocks (`blind_rotate_key_switch_finish` adds the partial sums). Its input is a
// batch of ciphertexts or the extraction entries of one RLWE ciphertext (`ks_input`).
#include "ntt_arith.cuh"

// Mirrors `BrArgs` in src/kernels/blind_rotate.rs (repr(C)).
struct BrArgs {
    u64 q;
    u64 ms_c;      // floor(2^(64 + log2(2N)) / q): the modulus switch
    u32 n_lwe;     // LWE dimension n
    u32 log_n;     // log2 N
    u32 k;         // GLWE dimension
    u32 levels;    // gadget levels l
    u32 base_log;  // gadget base log
    u32 kpc;       // RGSW per LWE coefficient (1 binary, 2 ternary)
    u32 radix_log; // butterfly stages per shared-memory round (1..3)
    u32 group;     // LWE coefficients per step: 1, or 2..3 (multi-bit)
};

#define BR_MAX_K1 4        // k + 1 <= 4 (checked on the host)
#define BR_MAX_PATTERNS 7  // 2^g − 1 RGSW a multi-bit step, g <= 3 (checked on the host)

// floor((x·2^bits + floor(q/2)) / q) mod 2^bits for x < q, 2^bits < q, with
// c = floor(2^(64+bits) / q): the estimate floor(x·c / 2^64) is at most 3 below the quotient
// (`Decomposer::decompose` of fhe-math, the same steps).
__device__ __forceinline__ u64 br_round_scaled(u64 x, u32 bits, u64 c, u64 q) {
    u128 num = ((u128)x << bits) + (u128)(q >> 1);
    u64 y = __umul64hi(x, c);
    u128 r = num - (u128)y * q;
    while (r >= (u128)q) {
        y++;
        r -= q;
    }
    return y & ((1ull << bits) - 1);
}

// Coefficient p of X^e · poly (negacyclic, e < 2N): the source index (p − e) mod 2N, negated
// when it lies in the upper half.
__device__ __forceinline__ u64 br_rotated(const u64* poly, u32 p, u32 e, u32 n, u64 q) {
    u32 i = (p - e) & (2 * n - 1);
    return i < n ? poly[i] : mod_neg(poly[i - n], q);
}

// Complex arithmetic of fft.rs, never contracted: (a + ib)(c + id) = (ac − bd) + i(ad + bc),
// (a + ib)·conj(c + id) = (ac + bd) + i(bc − ad).
__device__ __forceinline__ double2 c_add(double2 a, double2 b) {
    return make_double2(__dadd_rn(a.x, b.x), __dadd_rn(a.y, b.y));
}
__device__ __forceinline__ double2 c_sub(double2 a, double2 b) {
    return make_double2(__dsub_rn(a.x, b.x), __dsub_rn(a.y, b.y));
}
__device__ __forceinline__ double2 c_mul(double2 a, double2 b) {
    return make_double2(__dsub_rn(__dmul_rn(a.x, b.x), __dmul_rn(a.y, b.y)),
                        __dadd_rn(__dmul_rn(a.x, b.y), __dmul_rn(a.y, b.x)));
}
__device__ __forceinline__ double2 c_mul_conj(double2 a, double2 b) {
    return make_double2(__dadd_rn(__dmul_rn(a.x, b.x), __dmul_rn(a.y, b.y)),
                        __dsub_rn(__dmul_rn(a.y, b.x), __dmul_rn(a.x, b.y)));
}

// Spectra in shared memory are padded: point `f` of the flat array (polynomial · N/2 + point)
// sits at `f + f/8`, so the strided accesses of every FFT round (8 threads of 16-byte loads
// touching 8 distinct 16-byte bank groups) are free of bank conflicts.
__device__ __forceinline__ u32 br_pad(u32 f) { return f + (f >> 3); }

// round(v) mod q (halves away from zero), exactly: with r = round(v) and k = rint(r · fl(1/q)),
// r − k·q is an integer below q in magnitude (the host checks |v| < 2^50 · q, so k is off the
// true quotient by less than 1/2), which one fused multiply-add forms without rounding. The CPU
// reduces the same integer from its bits (`fft::f64_to_residue`); both are exact, so equal.
__device__ __forceinline__ u64 br_residue(double v, u64 q, double qd, double qinv) {
    const double r = round(v);
    const double k = rint(__dmul_rn(r, qinv));
    const long long t = __double2ll_rn(__fma_rn(-k, qd, r));
    return (u64)(t < 0 ? t + (long long)q : t);
}

// br_round_scaled for the gadget, from an f64 estimate: y = floor((x·2^bits + floor(q/2)) / q)
// mod 2^bits for x < q < 2^53, 2^bits < q. `scale` = fl(2^bits / q); the estimate is within 2
// of the quotient and the remainder x·2^bits + floor(q/2) − y·q, small, is exact in wrapping
// 64-bit arithmetic, so the steps reach the exact quotient.
__device__ __forceinline__ u64 br_round_digits(u64 x, u32 bits, double scale, u64 q) {
    long long y = (long long)__dadd_rn(__dmul_rn((double)x, scale), 0.5);
    long long r = (long long)((x << bits) + (q >> 1) - (u64)y * q);
    while (r < 0) {
        y--;
        r += (long long)q;
    }
    while (r >= (long long)q) {
        y++;
        r -= (long long)q;
    }
    return (u64)y & ((1ull << bits) - 1);
}

// The rounds next to the decomposition and to the rounding take 2^BR_CL_LOG points at once:
// points j + e·P (e < 2^BR_CL_LOG, P = N/2 / 2^BR_CL_LOG) of a spectrum, one in each of its
// 2^BR_CL_LOG segments. `blind_rotate_run_cluster` gives segment e to block e of a cluster of
// 2^BR_CL_LOG blocks (Hopper distributed shared memory); the one-block entries keep all
// segments.
#define BR_CL_LOG 2
#define BR_CLUSTER (1 << BR_CL_LOG)

__device__ __forceinline__ void br_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The generic address of `p` (this block's shared memory) in block `rank` of the cluster.
template <typename T>
__device__ __forceinline__ T* br_map(T* p, u32 rank) {
    u64 out;
    asm("mapa.u64 %0, %1, %2;" : "=l"(out) : "l"(p), "r"(rank));
    return (T*)out;
}

// The block of the cluster that owns accumulator coefficient i (of any component): the group
// j = (i mod P) belongs to block j / (P / 2^BR_CL_LOG).
__device__ __forceinline__ u32 br_owner(u32 i, u32 log_p) {
    return (i & ((1u << log_p) - 1)) >> (log_p - BR_CL_LOG);
}

__device__ __forceinline__ void br_cp_async16(void* dst, const void* src) {
    const u32 d = (u32)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}

// S forward (Cooley-Tukey) stages on 2^S points in registers, x[e] the point start + e·2^u of
// a spectrum of 2^log_m points whose block at local stage s is (b << s) + (e >> (S − s)); the
// spectrum is segment `seg` of 2^cl_log equal segments whose first cl_log stages are done, so
// global stage cl_log + st0 + s, global block (((seg << st0) + b) << s) + (e >> (S − s)).
// Butterfly (fft.rs): t = v·T[m + b], (u + t, u − t).
template <int S>
__device__ __forceinline__ void br_fwd_stages(double2 (&x)[1 << S], const double2* __restrict__ tw,
                                              u32 cl_log, u32 st0, u32 seg, u32 b) {
#pragma unroll
    for (int s = 0; s < S; s++) {
        const u32 half = 1u << (S - 1 - s);
        const double2* ws = tw + (1u << (cl_log + st0 + s)) + (((seg << st0) + b) << s);
        double2 w[1 << (S - 1)];
#pragma unroll
        for (int i = 0; i < (1 << s); i++) w[i] = __ldg(ws + i);
#pragma unroll
        for (int e = 0; e < (1 << S); e++) {
            if (e & half) continue;
            const double2 t = c_mul(x[e + half], w[e >> (S - s)]);
            const double2 u = x[e];
            x[e] = c_add(u, t);
            x[e + half] = c_sub(u, t);
        }
    }
}

// S inverse (Gentleman-Sande) stages on 2^S points in registers, x[e] the point
// start + e·2^st0 (half-size 2^st0 at the first), block (b << (S − s − 1)) + (e >> (s + 1)) at
// local stage s; `log_m`, `cl_log`, `seg` as for br_fwd_stages (the segment's stages are those
// below log_m; the last cl_log are the whole spectrum's). Butterfly (fft.rs):
// (A + B, (A − B)·conj(T[m + b])).
template <int S>
__device__ __forceinline__ void br_inv_stages(double2 (&x)[1 << S], const double2* __restrict__ tw,
                                              u32 log_m, u32 st0, u32 cl_log, u32 seg, u32 b) {
#pragma unroll
    for (int s = 0; s < S; s++) {
        const u32 half = 1u << s;
        const double2* ws = tw + (((1u << log_m) >> (st0 + s + 1)) << cl_log) +
                            (seg << (log_m - st0 - s - 1)) + (b << (S - s - 1));
        double2 w[1 << (S - 1)];
#pragma unroll
        for (int i = 0; i < (1 << (S - s - 1)); i++) w[i] = __ldg(ws + i);
#pragma unroll
        for (int e = 0; e < (1 << S); e++) {
            if (e & half) continue;
            const double2 a = x[e], bb = x[e + half];
            x[e] = c_add(a, bb);
            x[e + half] = c_mul_conj(c_sub(a, bb), w[e >> (s + 1)]);
        }
    }
}

// One round of S forward stages over `polys` spectra of 2^log_m points at `base`, starting at
// stage `st0`: each thread loads groups of 2^S points (stride 2^u), applies the stages in
// registers and stores them back. `cl_log`, `seg`: as for br_fwd_stages (0, 0 for a whole
// spectrum).
template <int S>
__device__ __forceinline__ void br_fwd_round(double2* base, u32 polys, u32 log_m, u32 st0,
                                             const double2* __restrict__ tw, u32 cl_log, u32 seg) {
    const u32 log_u = log_m - st0 - S;
    const u32 per = (1u << log_m) >> S;
    for (u32 g = threadIdx.x; g < polys * per; g += blockDim.x) {
        const u32 pb = (g >> (log_m - S)) << log_m;
        const u32 gg = g & (per - 1);
        const u32 b = gg >> log_u, j = gg & ((1u << log_u) - 1);
        const u32 start = pb + (b << (log_u + S)) + j;
        double2 x[1 << S];
#pragma unroll
        for (int e = 0; e < (1 << S); e++) x[e] = base[br_pad(start + (e << log_u))];
        br_fwd_stages<S>(x, tw, cl_log, st0, seg, b);
#pragma unroll
        for (int e = 0; e < (1 << S); e++) base[br_pad(start + (e << log_u))] = x[e];
    }
}

// One round of S inverse stages starting at stage `st0` (half-size 2^st0); as br_fwd_round.
template <int S>
__device__ __forceinline__ void br_inv_round(double2* base, u32 polys, u32 log_m, u32 st0,
                                             const double2* __restrict__ tw, u32 cl_log, u32 seg) {
    const u32 per = (1u << log_m) >> S;
    for (u32 g = threadIdx.x; g < polys * per; g += blockDim.x) {
        const u32 pb = (g >> (log_m - S)) << log_m;
        const u32 gg = g & (per - 1);
        const u32 b = gg >> st0, j = gg & ((1u << st0) - 1);
        const u32 start = pb + (b << (st0 + S)) + j;
        double2 x[1 << S];
#pragma unroll
        for (int e = 0; e < (1 << S); e++) x[e] = base[br_pad(start + (e << st0))];
        br_inv_stages<S>(x, tw, log_m, st0, cl_log, seg, b);
#pragma unroll
        for (int e = 0; e < (1 << S); e++) base[br_pad(start + (e << st0))] = x[e];
    }
}

// Forward stages st_begin … log_m − 1 in rounds of `radix` stages, a barrier after each.
__device__ __forceinline__ void br_forward(double2* base, u32 polys, u32 log_m, u32 st_begin,
                                           u32 radix, const double2* tw, u32 cl_log, u32 seg) {
    for (u32 st = st_begin; st < log_m;) {
        const u32 s = min(radix, log_m - st);
        if (s == 3) br_fwd_round<3>(base, polys, log_m, st, tw, cl_log, seg);
        else if (s == 2) br_fwd_round<2>(base, polys, log_m, st, tw, cl_log, seg);
        else br_fwd_round<1>(base, polys, log_m, st, tw, cl_log, seg);
        st += s;
        __syncthreads();
    }
}

// Inverse stages 0 … st_end − 1 in rounds of `radix` stages, a barrier after each.
__device__ __forceinline__ void br_inverse(double2* base, u32 polys, u32 log_m, u32 st_end,
                                           u32 radix, const double2* tw, u32 cl_log, u32 seg) {
    for (u32 st = 0; st < st_end;) {
        const u32 s = min(radix, st_end - st);
        if (s == 3) br_inv_round<3>(base, polys, log_m, st, tw, cl_log, seg);
        else if (s == 2) br_inv_round<2>(base, polys, log_m, st, tw, cl_log, seg);
        else br_inv_round<1>(base, polys, log_m, st, tw, cl_log, seg);
        st += s;
        __syncthreads();
    }
}

// Where point j + e·P of digit row `row` lives: in the cluster entry, `j` of row `row` of
// block e's segment (`dig_at[e]`, rows of P points); in one block, row `row` of N/2 points.
template <bool CLUSTER>
__device__ __forceinline__ double2* br_point(double2* dig, double2* const (&dig_at)[BR_CLUSTER],
                                             u32 row, u32 e, u32 j, u32 log_p) {
    if constexpr (CLUSTER) return dig_at[e] + br_pad((row << log_p) + j);
    else return dig + br_pad((row << (log_p + BR_CL_LOG)) + (e << log_p) + j);
}

// Step constants: the digits' rounding scale fl(2^(base_log·l) / q), fl(1/q), q as a double.
struct BrStep {
    double dec_scale, qd, qinv;
};

// The folded digits of X^e_rot·ACC − ACC (DIFF; else of ACC itself, the multi-bit step's) at
// points j + e·P of component c (row c·l + d holds
// digit d, most significant first, of coefficients p and p + N/2 as p + i·(p + N/2)), through
// the first BR_CL_LOG forward stages, stored at br_point. `poly`: the component's accumulator
// (this block's copy: in the cluster entry, the coefficients it owns; the others are read from
// their owners).
template <bool CLUSTER, bool DIFF>
__device__ __forceinline__ void br_digits_first_stages(const BrArgs& a, const BrStep& st,
                                                       const u64* poly, u32 c, u32 j, u32 e_rot,
                                                       double2* dig,
                                                       double2* const (&dig_at)[BR_CLUSTER],
                                                       const double2* __restrict__ tw) {
    const u32 n = 1u << a.log_n, two_n = 2 * n, mpts = n >> 1;
    const u32 log_p = a.log_n - 1 - BR_CL_LOG, pts = 1u << log_p;
    const u32 l = a.levels, bits = a.base_log * l;
    const u64 q = a.q, base = 1ull << a.base_log;
    const long long half_base = (long long)(base >> 1);
    u64 y[BR_CLUSTER][2];
    {
        // The rotated coefficients (p − e_rot) mod 2N, all loads first.
        u64 xs[BR_CLUSTER][2];
        if constexpr (DIFF) {
#pragma unroll
            for (u32 e = 0; e < BR_CLUSTER; e++) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const u32 ii = (j + e * pts + h * mpts - e_rot) & (two_n - 1);
                    const u32 src = ii < n ? ii : ii - n;
                    if constexpr (CLUSTER) xs[e][h] = *br_map(poly + src, br_owner(src, log_p));
                    else xs[e][h] = poly[src];
                }
            }
        }
#pragma unroll
        for (u32 e = 0; e < BR_CLUSTER; e++) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const u32 pp = j + e * pts + h * mpts;
                u64 v = poly[pp];  // this block's own coefficient
                if constexpr (DIFF) {
                    const u32 ii = (pp - e_rot) & (two_n - 1);
                    const u64 rot = ii < n ? xs[e][h] : mod_neg(xs[e][h], q);
                    v = mod_sub(rot, v, q);
                }
                y[e][h] = br_round_digits(v, bits, st.dec_scale, q);
            }
        }
    }
    u32 carry = 0;  // bit 2e + h: the carry into the next digit of y[e][h]
    for (int d = (int)l - 1; d >= 0; d--) {
        double2 x[BR_CLUSTER];
#pragma unroll
        for (u32 e = 0; e < BR_CLUSTER; e++) {
            double dv[2];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const u32 bit = 2 * e + h;
                long long v = (long long)(y[e][h] & (base - 1)) + ((carry >> bit) & 1);
                y[e][h] >>= a.base_log;
                carry &= ~(1u << bit);
                if (v >= half_base) {
                    v -= (long long)base;
                    carry |= 1u << bit;
                }
                dv[h] = (double)v;
            }
            x[e] = make_double2(dv[0], dv[1]);
        }
        br_fwd_stages<BR_CL_LOG>(x, tw, 0, 0, 0, 0);
#pragma unroll
        for (u32 e = 0; e < BR_CLUSTER; e++)
            *br_point<CLUSTER>(dig, dig_at, c * l + (u32)d, e, j, log_p) = x[e];
    }
}

// The last BR_CL_LOG inverse stages of points j + e·P of component c (row c of br_point), then
// each coefficient rounded, reduced exactly and added to the accumulator `poly` (coefficients
// j + e·P and j + e·P + N/2, this block's own).
template <bool CLUSTER>
__device__ __forceinline__ void br_last_stages_update(const BrArgs& a, const BrStep& st, u64* poly,
                                                      u32 c, u32 j, double2* dig,
                                                      double2* const (&dig_at)[BR_CLUSTER],
                                                      const double2* __restrict__ tw) {
    const u32 log_m = a.log_n - 1, mpts = 1u << log_m;
    const u32 log_p = log_m - BR_CL_LOG, pts = 1u << log_p;
    const u64 q = a.q;
    double2 x[BR_CLUSTER];
#pragma unroll
    for (u32 e = 0; e < BR_CLUSTER; e++) x[e] = *br_point<CLUSTER>(dig, dig_at, c, e, j, log_p);
    br_inv_stages<BR_CL_LOG>(x, tw, log_m, log_p, 0, 0, 0);
#pragma unroll
    for (u32 e = 0; e < BR_CLUSTER; e++) {
        const u32 p = j + e * pts;
        poly[p] = mod_add(poly[p], br_residue(x[e].x, q, st.qd, st.qinv), q);
        poly[p + mpts] = mod_add(poly[p + mpts], br_residue(x[e].y, q, st.qd, st.qinv), q);
    }
}

// Multiply-accumulate of the digit spectra (`rows` rows of `pts` points) with key t's spectra
// `kr` (rows r·(k+1) + c2 of `pts` points; global memory, or shared in the cluster entry), in
// fft.rs's order (keys, then rows, from the first product): the sums go to rows 0..k of `dig`
// (each thread reads all rows at its points before writing them) or, for the first key of a
// ternary pair, to `prod`.
template <bool SHARED_KEY>
__device__ __forceinline__ void br_key_product(double2* dig, double2* prod,
                                               const double2* __restrict__ kr, u32 pts, u32 k1,
                                               u32 rows, u32 t, bool last) {
    auto key = [&](u32 idx) {
        if constexpr (SHARED_KEY) return kr[idx];
        else return __ldg(kr + idx);
    };
    for (u32 p = threadIdx.x; p < pts; p += blockDim.x) {
        // Row by row, all components at once: the k + 1 key points of a row load together.
        double2 res[BR_MAX_K1];
        const double2 d0 = dig[br_pad(p)];
#pragma unroll
        for (u32 c2 = 0; c2 < BR_MAX_K1; c2++) {
            if (c2 >= k1) break;
            res[c2] = c_mul(d0, key(c2 * pts + p));
            if (t > 0) res[c2] = c_add(prod[br_pad(c2 * pts + p)], res[c2]);
        }
        for (u32 r = 1; r < rows; r++) {
            const double2 dr = dig[br_pad(r * pts + p)];
#pragma unroll
            for (u32 c2 = 0; c2 < BR_MAX_K1; c2++) {
                if (c2 >= k1) break;
                res[c2] = c_add(res[c2], c_mul(dr, key((r * k1 + c2) * pts + p)));
            }
        }
#pragma unroll
        for (u32 c2 = 0; c2 < BR_MAX_K1; c2++) {
            if (c2 >= k1) break;
            if (last) dig[br_pad(c2 * pts + p)] = res[c2];
            else prod[br_pad(c2 * pts + p)] = res[c2];
        }
    }
}

// m_j = ψ^{t_j·E mod 2N} − 1 (the table's real part minus 1.0) for the patterns j < `patterns`
// at global point p of N/2 (2^log_m), evaluated at ψ^E, E = 1 + 4·bitrev(p).
__device__ __forceinline__ void br_monomial_factors(const u32 (&t)[BR_MAX_PATTERNS], u32 patterns,
                                                    const double2* __restrict__ roots, u32 p,
                                                    u32 log_m, double2 (&m)[BR_MAX_PATTERNS]) {
    const u32 mask = (4u << log_m) - 1;  // 2N − 1
    const u32 ep = 1 + 4 * (__brev(p) >> (32 - log_m));
#pragma unroll
    for (u32 j = 0; j < BR_MAX_PATTERNS; j++) {
        if (j >= patterns) break;
        const double2 r = __ldg(roots + ((t[j] * ep) & mask));
        m[j] = make_double2(__dsub_rn(r.x, 1.0), r.y);
    }
}

// One point of the combined key: K = m_1·K_1, then K + m_j·K_j for j = 2 … (fft.rs's
// "Multi-bit key product"); `kr`: the group's first RGSW, the others `stride` points apart.
template <bool SHARED_KEY>
__device__ __forceinline__ double2 br_combined_key_point(const double2* __restrict__ kr,
                                                         size_t stride, size_t at,
                                                         const double2 (&m)[BR_MAX_PATTERNS],
                                                         u32 patterns) {
    auto key = [&](size_t idx) {
        if constexpr (SHARED_KEY) return kr[idx];
        else return __ldg(kr + idx);
    };
    double2 kc = c_mul(m[0], key(at));
#pragma unroll
    for (u32 j = 1; j < BR_MAX_PATTERNS; j++) {
        if (j >= patterns) break;
        kc = c_add(kc, c_mul(m[j], key(j * stride + at)));
    }
    return kc;
}

// The multi-bit key product of the batched entry: at each point p (of N/2), the factors of the
// group's patterns, then Σ_r D_r·K (from the first row) with K the combined key point of row r
// and component c2 (br_combined_key_point), in the order of fft.rs's "Multi-bit key product";
// the sums go to rows 0..k of `dig`. `kr`: the group's first RGSW (row r, component c2 at
// (r·(k+1) + c2)·N/2), the others `stride` points apart. `roots`: ψ^x for x < 2N.
__device__ __forceinline__ void br_key_product_multi_bit(
    double2* dig, const double2* __restrict__ kr, size_t stride, u32 mpts, u32 k1, u32 rows,
    u32 patterns, const u32 (&t)[BR_MAX_PATTERNS], const double2* __restrict__ roots,
    u32 log_m) {
    for (u32 p = threadIdx.x; p < mpts; p += blockDim.x) {
        double2 m[BR_MAX_PATTERNS];
        br_monomial_factors(t, patterns, roots, p, log_m, m);
        double2 res[BR_MAX_K1] = {};
        for (u32 r = 0; r < rows; r++) {
            const double2 dr = dig[br_pad(r * mpts + p)];
#pragma unroll
            for (u32 c2 = 0; c2 < BR_MAX_K1; c2++) {
                if (c2 >= k1) break;
                const size_t at = (size_t)(r * k1 + c2) * mpts + p;
                const double2 prod = c_mul(dr, br_combined_key_point<false>(kr, stride, at, m,
                                                                           patterns));
                res[c2] = r == 0 ? prod : c_add(res[c2], prod);
            }
        }
#pragma unroll
        for (u32 c2 = 0; c2 < BR_MAX_K1; c2++) {
            if (c2 >= k1) break;
            dig[br_pad(c2 * mpts + p)] = res[c2];
        }
    }
}

// Steps of a rotation: n, or n / g groups (multi-bit).
template <bool MULTI_BIT>
__device__ __forceinline__ u32 br_steps(const BrArgs& a) {
    return MULTI_BIT ? a.n_lwe / a.group : a.n_lwe;
}

// Whether step i changes the accumulator: ã_i ≠ 0, or (multi-bit) one of the group's ã ≠ 0.
// (X^0·ACC − ACC = 0 and X^0 − 1 = 0: the update of a skipped step is exactly 0.)
template <bool MULTI_BIT>
__device__ __forceinline__ bool br_step_active(const BrArgs& a, const u32* ex, u32 i) {
    if constexpr (!MULTI_BIT) return ex[i] != 0;
    for (u32 j = 0; j < a.group; j++)
        if (ex[i * a.group + j] != 0) return true;
    return false;
}

// The exponents t_j = Σ_{b: bit b of j + 1} ã_b mod 2N of a multi-bit group's patterns, from
// the group's exponents ã_0 … ã_{g−1}.
__device__ __forceinline__ void br_pattern_exponents_of(const BrArgs& a, const u32* group_ex,
                                                        u32 (&t)[BR_MAX_PATTERNS]) {
    const u32 mask = (2u << a.log_n) - 1;
#pragma unroll
    for (u32 j = 0; j < BR_MAX_PATTERNS; j++) {
        u32 sum = 0;
        for (u32 b = 0; b < a.group; b++)
            if (((j + 1) >> b) & 1) sum += group_ex[b];
        t[j] = sum & mask;
    }
}

// The modulus-switched exponents of ciphertext `b` into `ex`, then ACC = (0, …, 0, X^{-b̃}·v)
// (every coefficient; the cluster entry keeps all of them too).
__device__ __forceinline__ void br_start(const BrArgs& a, const u64* __restrict__ test_poly,
                                         const u64* __restrict__ lwe, u32 b, u64* acc, u32* ex) {
    const u32 n = 1u << a.log_n, two_n = 2 * n, k1 = a.k + 1;
    const u64* in = lwe + (size_t)b * (a.n_lwe + 1);
    for (u32 i = threadIdx.x; i <= a.n_lwe; i += blockDim.x)
        ex[i] = (u32)br_round_scaled(in[i], a.log_n + 1, a.ms_c, a.q);
    __syncthreads();
    const u32 shift = (two_n - ex[a.n_lwe]) & (two_n - 1);
    for (u32 idx = threadIdx.x; idx < k1 * n; idx += blockDim.x) {
        const u32 c = idx >> a.log_n, p = idx & (n - 1);
        acc[idx] = c < a.k ? 0 : br_rotated(test_poly, p, shift, n, a.q);
    }
}

__device__ __forceinline__ BrStep br_step_constants(const BrArgs& a) {
    BrStep st;
    st.qd = (double)a.q;
    st.qinv = __ddiv_rn(1.0, st.qd);
    st.dec_scale = __ddiv_rn(ldexp(1.0, (int)(a.base_log * a.levels)), st.qd);
    return st;
}

// Blind rotation and extraction of `count` LWE ciphertexts (`lwe`: n + 1 words each) into
// `out` (k·N + 1 words each). `key`: the bootstrapping key's spectra (fhe-math's `key_spectra`
// layout, N/2 points a polynomial); `tw`: the N/2 twiddles T of fft.rs; `test_poly`: N canonical
// words. One block per ciphertext; dynamic shared memory: (k+1)·N accumulator words,
// (k+1)·l·N/2 digit points (+ (k+1)·N/2 points for ternary keys), each array padded (br_pad),
// then (n+1) u32. A step: the decomposition fused with the first BR_CL_LOG forward stages, the
// other forward rounds, the key product, the inverse rounds but the last, the last BR_CL_LOG
// inverse stages fused with the rounding and the update; a barrier after each.
template <bool MULTI_BIT>
__device__ __forceinline__ void br_run(const BrArgs& a, const double2* __restrict__ key,
                                       const double2* __restrict__ tw,
                                       const double2* __restrict__ roots,
                                       const u64* __restrict__ test_poly,
                                       const u64* __restrict__ lwe, u64* __restrict__ out,
                                       u32 count) {
    extern __shared__ u64 sm[];
    pdl_wait();
    const u32 b = blockIdx.x;
    if (b >= count) return;
    const u32 n = 1u << a.log_n;
    const u32 two_n = 2 * n;
    const u32 log_m = a.log_n - 1;
    const u32 mpts = n >> 1;
    const u32 log_p = log_m - BR_CL_LOG;
    const u32 k1 = a.k + 1;
    const u32 rows = k1 * a.levels;
    const u64 q = a.q;

    u64* acc = sm;
    double2* dig = (double2*)(acc + (size_t)k1 * n);
    double2* prod = dig + br_pad(rows * mpts);
    u32* ex = (u32*)(prod + (a.kpc == 2 ? br_pad(k1 * mpts) : 0));
    br_start(a, test_poly, lwe, b, acc, ex);
    __syncthreads();

    const BrStep st = br_step_constants(a);
    double2* const no_seg[BR_CLUSTER] = {};
    const size_t rgsw_points = (size_t)rows * k1 * mpts;
    constexpr bool multi_bit = MULTI_BIT;
    const u32 per_step = multi_bit ? (1u << a.group) - 1 : a.kpc;  // RGSW a step
    for (u32 i = 0; i < br_steps<MULTI_BIT>(a); i++) {
        if (!br_step_active<MULTI_BIT>(a, ex, i)) continue;
        const double2* ki = key + (size_t)i * per_step * rgsw_points;
        // A CMux a key (ternary: two products into one spectral sum), or one multi-bit product.
        for (u32 t = 0; t < (multi_bit ? 1 : a.kpc); t++) {
            const u32 e_rot = multi_bit ? 0 : t == 0 ? ex[i] : two_n - ex[i];
            for (u32 g = threadIdx.x; g < k1 << log_p; g += blockDim.x)
                br_digits_first_stages<false, !MULTI_BIT>(a, st, acc + (size_t)(g >> log_p) * n,
                                                          g >> log_p, g & ((1u << log_p) - 1),
                                                          e_rot, dig, no_seg, tw);
            __syncthreads();
            br_forward(dig, rows, log_m, BR_CL_LOG, a.radix_log, tw, 0, 0);
            if constexpr (multi_bit) {
                u32 tp[BR_MAX_PATTERNS];
                br_pattern_exponents_of(a, ex + (size_t)i * a.group, tp);
                br_key_product_multi_bit(dig, ki, rgsw_points, mpts, k1, rows, per_step, tp,
                                         roots, log_m);
            } else {
                br_key_product<false>(dig, prod, ki + (size_t)t * rgsw_points, mpts, k1, rows, t,
                                      t + 1 == a.kpc);
            }
            __syncthreads();
        }
        br_inverse(dig, k1, log_m, log_p, a.radix_log, tw, 0, 0);
        for (u32 g = threadIdx.x; g < k1 << log_p; g += blockDim.x)
            br_last_stages_update<false>(a, st, acc + (size_t)(g >> log_p) * n, g >> log_p,
                                         g & ((1u << log_p) - 1), dig, no_seg, tw);
        __syncthreads();
    }

    // Sample extraction of coefficient 0.
    const u32 w_out = a.k * n + 1;
    u64* o = out + (size_t)b * w_out;
    for (u32 idx = threadIdx.x; idx < a.k * n; idx += blockDim.x) {
        const u32 c = idx >> a.log_n, j = idx & (n - 1);
        const u64* poly = acc + (size_t)c * n;
        o[idx] = j == 0 ? poly[0] : mod_neg(poly[n - j], q);
    }
    if (threadIdx.x == 0) o[a.k * n] = acc[(size_t)a.k * n];
}

// The two CMux entry points differ only in their register budget (the kernel needs about 130
// registers unbounded, which left one block per SM): `blind_rotate_run` for 8 points a thread
// (radix-8 rounds, at most 256 threads, three blocks an SM, 80 registers) and
// `blind_rotate_run_wide` for 4 points a thread (radix-4 rounds, at most 512 threads, two blocks
// an SM, 64 registers). `blind_rotate_run_multi_bit`: multi-bit keys (two blocks an SM, so that
// the group's factors and sums stay in registers).
// One batched entry point: its launch bounds and whether its keys are multi-bit.
#define BR_RUN_ENTRY(NAME, THREADS, BLOCKS, MULTI_BIT)                                       \
    extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS)                          \
        NAME(BrArgs a, const double2* __restrict__ key, const double2* __restrict__ tw,    \
             const double2* __restrict__ roots, const u64* __restrict__ test_poly,         \
             const u64* __restrict__ lwe, u64* __restrict__ out, u32 count) {              \
        br_run<MULTI_BIT>(a, key, tw, roots, test_poly, lwe, out, count);                  \
    }

BR_RUN_ENTRY(blind_rotate_run, 256, 3, false)
BR_RUN_ENTRY(blind_rotate_run_wide, 512, 2, false)
BR_RUN_ENTRY(blind_rotate_run_multi_bit, 256, 2, true)

// ---- One ciphertext on a cluster of BR_CLUSTER blocks (small batches) ----
//
// `blind_rotate_run_cluster`: the same steps, the same operations in the same order, spread
// over a cluster of 2^BR_CL_LOG blocks. Block `rank` owns the accumulator coefficients of its
// groups j (rank·P/4 ≤ j < (rank + 1)·P/4: coefficients j + e·P and j + e·P + N/2) and segment
// `rank` of every spectrum. A step: each block decomposes its groups through the first
// BR_CL_LOG forward stages (br_digits_first_stages: rotated coefficients read from their
// owners, point j + e·P stored into block e's segment); cluster barrier; the remaining forward
// stages, the key product (the block's key slice, fetched by asynchronous copies during the
// previous step) and the first inverse stages on the block's own segment; cluster barrier; the
// last BR_CL_LOG inverse stages on the block's groups read from every block, the exact
// rounding and the update of the block's own coefficients; cluster barrier.
//
// `blind_rotate_run_cluster_multi_bit`: the same for multi-bit keys, whose combined keys
// (one RGSW-shaped spectrum a step and ciphertext, `blind_rotate_combine_multi_bit`) are formed
// beforehand over the whole GPU: a step then reads and multiplies one key as a CMux does, the
// digits those of ACC itself.
//
// Dynamic shared memory: (k+1)·N accumulator words, the segment's digit spectra
// ((k+1)·l·P points), its ternary sum ((k+1)·P points), each padded (br_pad), two key slices
// (R·(k+1)·l·(k+1)·P points each, R = kpc RGSW a step, 1 for combined multi-bit keys: this
// step's and the next's), then (n+1) u32.
template <bool MULTI_BIT>
__device__ __forceinline__ void br_run_cluster(const BrArgs& a, const double2* __restrict__ key,
                                               const double2* __restrict__ tw,
                                               const u64* __restrict__ test_poly,
                                               const u64* __restrict__ lwe, u64* __restrict__ out,
                                               u32 count) {
    extern __shared__ u64 smc[];
    pdl_wait();
    u32 rank;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    const u32 b = blockIdx.x >> BR_CL_LOG;
    // The grid is count clusters: every block of a cluster takes the same path.
    if (b >= count) return;
    const u32 n = 1u << a.log_n;
    const u32 two_n = 2 * n;
    const u32 log_m = a.log_n - 1;
    const u32 mpts = n >> 1;
    const u32 log_p = log_m - BR_CL_LOG;  // points of a segment: P = 2^log_p
    const u32 pts = 1u << log_p;
    const u32 log_g = log_p - BR_CL_LOG;  // groups of a component in one block: 2^log_g
    const u32 k1 = a.k + 1;
    const u32 rows = k1 * a.levels;
    const u64 q = a.q;
    const u32 steps = br_steps<MULTI_BIT>(a);
    const u32 per_step = MULTI_BIT ? 1 : a.kpc;  // key spectra (RGSW-shaped) a step
    const size_t rgsw_points = (size_t)rows * k1 * mpts;
    // Multi-bit: this ciphertext's combined keys.
    if constexpr (MULTI_BIT) key += (size_t)b * steps * rgsw_points;

    u64* acc = smc;
    double2* dig = (double2*)(acc + (size_t)k1 * n);
    double2* prod = dig + br_pad(rows * pts);
    double2* ks = prod + (a.kpc == 2 ? br_pad(k1 * pts) : 0);
    const u32 slice = rows * k1 * pts;   // key points of one RGSW in this block
    const u32 kslice = per_step * slice;  // of one step
    u32* ex = (u32*)(ks + 2 * (size_t)kslice);
    br_start(a, test_poly, lwe, b, acc, ex);
    // Every block of the cluster runs before any reads or writes another's shared memory.
    br_cluster_sync();

    const BrStep st = br_step_constants(a);
    double2* dig_at[BR_CLUSTER];
#pragma unroll
    for (u32 e = 0; e < BR_CLUSTER; e++) dig_at[e] = br_map(dig, e);
    // Step i's key slice (rows (r, c2) of each RGSW, points rank·P .. rank·P + P − 1) into
    // buffer `buf`, one commit group (empty past the last step).
    auto fetch = [&](u32 i, u32 buf) {
        if (i < steps) {
            const double2* kr = key + (size_t)i * per_step * rgsw_points + (size_t)rank * pts;
            double2* dst = ks + (size_t)buf * kslice;
            for (u32 idx = threadIdx.x; idx < kslice; idx += blockDim.x)
                br_cp_async16(dst + idx, kr + (size_t)(idx >> log_p) * mpts + (idx & (pts - 1)));
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    };
    auto next_step = [&](u32 i) {
        while (i < steps && !br_step_active<MULTI_BIT>(a, ex, i)) i++;
        return i;
    };
    u32 buf = 0;
    u32 i = next_step(0);
    fetch(i, buf);
    while (i < steps) {
        const u32 i_next = next_step(i + 1);
        // The buffer's last readers (step i − 1's key product) passed the barriers since.
        fetch(i_next, buf ^ 1);
        for (u32 t = 0; t < per_step; t++) {
            const u32 e_rot = MULTI_BIT ? 0 : t == 0 ? ex[i] : two_n - ex[i];
            for (u32 g = threadIdx.x; g < k1 << log_g; g += blockDim.x) {
                const u32 c = g >> log_g;
                br_digits_first_stages<true, !MULTI_BIT>(
                    a, st, acc + (size_t)c * n, c, (rank << log_g) + (g & ((1u << log_g) - 1)),
                    e_rot, dig, dig_at, tw);
            }
            br_cluster_sync();
            br_forward(dig, rows, log_p, 0, 2, tw, BR_CL_LOG, rank);
            if (t == 0) {
                // This step's group done (the next step's may still be in flight).
                asm volatile("cp.async.wait_group 1;" ::: "memory");
                __syncthreads();
            }
            const bool last = t + 1 == per_step;
            br_key_product<true>(dig, prod, ks + (size_t)buf * kslice + (size_t)t * slice, pts,
                                 k1, rows, t, last);
            // Before the next external product's stores into this block's segment (t + 1) or
            // the inverse stages.
            if (last) __syncthreads();
            else br_cluster_sync();
        }
        br_inverse(dig, k1, log_p, log_p, 2, tw, BR_CL_LOG, rank);
        br_cluster_sync();
        for (u32 g = threadIdx.x; g < k1 << log_g; g += blockDim.x) {
            const u32 c = g >> log_g;
            br_last_stages_update<true>(a, st, acc + (size_t)c * n, c,
                                        (rank << log_g) + (g & ((1u << log_g) - 1)), dig, dig_at,
                                        tw);
        }
        br_cluster_sync();
        buf ^= 1;
        i = i_next;
    }
    asm volatile("cp.async.wait_all;" ::: "memory");

    // Sample extraction of coefficient 0: each block writes the words of the coefficients it
    // owns.
    const u32 w_out = a.k * n + 1;
    u64* o = out + (size_t)b * w_out;
    for (u32 idx = threadIdx.x; idx < a.k * n; idx += blockDim.x) {
        const u32 c = idx >> a.log_n, j = idx & (n - 1);
        const u32 src = j == 0 ? 0 : n - j;
        if (br_owner(src, log_p) != rank) continue;
        const u64* poly = acc + (size_t)c * n;
        o[idx] = j == 0 ? poly[0] : mod_neg(poly[src], q);
    }
    if (threadIdx.x == 0 && br_owner(0, log_p) == rank) o[a.k * n] = acc[(size_t)a.k * n];
}

extern "C" __global__ void __cluster_dims__(BR_CLUSTER, 1, 1) __launch_bounds__(256)
    blind_rotate_run_cluster(BrArgs a, const double2* __restrict__ key,
                             const double2* __restrict__ tw, const u64* __restrict__ test_poly,
                             const u64* __restrict__ lwe, u64* __restrict__ out, u32 count) {
    br_run_cluster<false>(a, key, tw, test_poly, lwe, out, count);
}

// `combined`: blind_rotate_combine_multi_bit's output.
extern "C" __global__ void __cluster_dims__(BR_CLUSTER, 1, 1) __launch_bounds__(256)
    blind_rotate_run_cluster_multi_bit(BrArgs a, const double2* __restrict__ combined,
                                       const double2* __restrict__ tw,
                                       const u64* __restrict__ test_poly,
                                       const u64* __restrict__ lwe, u64* __restrict__ out,
                                       u32 count) {
    br_run_cluster<true>(a, combined, tw, test_poly, lwe, out, count);
}

// The combined multi-bit keys Σ_j (X^{t_j} − 1)·BSK_j of every step of `count` ciphertexts,
// each formed as in br_key_product_multi_bit (the same operations, so the same words):
// `combined` gets, for ciphertext b and step i, one RGSW-shaped spectrum (rows r, components c2,
// N/2 points) at (b·steps + i)·(k+1)·l·(k+1)·N/2. Grid (steps, count); a thread a point. A step
// whose ã are all zero is left unwritten (the rotation skips it).
extern "C" __global__ void blind_rotate_combine_multi_bit(BrArgs a, const double2* __restrict__ key,
                                                          const double2* __restrict__ roots,
                                                          const u64* __restrict__ lwe,
                                                          double2* __restrict__ combined,
                                                          u32 count) {
    pdl_wait();
    const u32 i = blockIdx.x, b = blockIdx.y;
    if (b >= count) return;
    const u32 log_m = a.log_n - 1, mpts = 1u << log_m;
    const u32 k1 = a.k + 1, rows = k1 * a.levels, patterns = (1u << a.group) - 1;
    const size_t rgsw_points = (size_t)rows * k1 * mpts;
    const u64* in = lwe + (size_t)b * (a.n_lwe + 1);
    u32 ex[BR_MAX_PATTERNS];  // the group's ã (the first a.group used)
    bool active = false;
    for (u32 j = 0; j < a.group; j++) {
        ex[j] = (u32)br_round_scaled(in[i * a.group + j], a.log_n + 1, a.ms_c, a.q);
        active |= ex[j] != 0;
    }
    if (!active) return;
    u32 t[BR_MAX_PATTERNS];
    br_pattern_exponents_of(a, ex, t);
    const double2* kr = key + (size_t)i * patterns * rgsw_points;
    double2* dst = combined + ((size_t)b * gridDim.x + i) * rgsw_points;
    for (u32 p = threadIdx.x; p < mpts; p += blockDim.x) {
        double2 m[BR_MAX_PATTERNS];
        br_monomial_factors(t, patterns, roots, p, log_m, m);
        for (u32 rc = 0; rc < rows * k1; rc++) {
            const size_t at = (size_t)rc * mpts + p;
            dst[at] = br_combined_key_point<false>(kr, rgsw_points, at, m, patterns);
        }
    }
}

// Mirrors `KsArgs` in src/kernels/blind_rotate.rs (repr(C)).
struct KsArgs {
    u64 q;
    u64 bhi;
    u64 blo;
    u64 dec_c;     // floor(2^(64 + base_log·levels) / q)
    u32 n_in;      // input dimension
    u32 n_out;     // output dimension
    u32 levels;
    u32 base_log;
    u32 span;      // input coefficients of one grid slice (blockIdx.z), a multiple of KS_CHUNK
    u32 extracted; // 1: the input is extraction entries and the coefficient of each ciphertext
};

#define KS_TILE 16   // ciphertexts per block
#define KS_COLS 128  // output columns per block (= threads)
#define KS_CHUNK 64  // input coefficients decomposed per shared-memory chunk
#define KS_MAX_LEVELS 8

// a·b + c for 32-bit a, b and a 64-bit c (one multiply-add).
__device__ __forceinline__ long long br_mad_wide(int a, int b, long long c) {
    long long d;
    asm("mad.wide.s32 %0, %1, %2, %3;" : "=l"(d) : "r"(a), "r"(b), "l"(c));
    return d;
}

// Word i (mask i < n_in, body at n_in) of input ciphertext bb: the batch's own word, or, when
// extracted, that of the sample of coefficient k = coeffs[bb] read from the extraction entries
// in = [a | ā | b] (n_in words each; fhe-math's `ExtractionEntries`): mask word n_in + k − i,
// body 2·n_in + k.
__device__ __forceinline__ u64 ks_input(const KsArgs& a, const u64* __restrict__ in,
                                        const u32* __restrict__ coeffs, u32 bb, u32 i) {
    if (!a.extracted) return in[(size_t)bb * (a.n_in + 1) + i];
    const u32 k = coeffs[bb];
    return in[i < a.n_in ? a.n_in + k - i : 2 * a.n_in + k];
}

// out[col] of ciphertext bb from its sum s = Σ d·K (exact): −s mod q, or b − s for the last.
__device__ __forceinline__ void ks_finish(const KsArgs& a, __int128 s, const u64* __restrict__ in,
                                          const u32* __restrict__ coeffs, u64* __restrict__ out,
                                          u32 bb, u32 col) {
    Mod m;
    m.q = a.q;
    m.bhi = a.bhi;
    m.blo = a.blo;
    const u64 r = s >= 0 ? reduce_u128((u128)s, m) : mod_neg(reduce_u128((u128)(-s), m), a.q);
    out[(size_t)bb * (a.n_out + 1) + col] =
        col < a.n_out ? mod_neg(r, a.q) : mod_sub(ks_input(a, in, coeffs, bb, a.n_in), r, a.q);
}

// LWE key switching: out = (−Σ d_{i,j}·K_{i,j}.a, b − Σ d_{i,j}·K_{i,j}.b) with d_{i,j} the
// signed digits of a_i. Grid (column tiles, ciphertext tiles, input slices), KS_COLS threads.
// One slice (gridDim.z == 1) finishes the outputs; several (small batches) store each slice's
// two partial sums to `part` ([slice][ciphertext][column] pairs) for
// blind_rotate_key_switch_finish, which adds them: integer sums, so any split gives the same
// words. Each key word
// K < 2^53 splits as K = h·2^31 + w (w < 2^31, h < 2^22), and the sums Σ d·w and Σ d·h
// accumulate exactly in signed 64-bit words, one 32 × 32 → 64-bit multiply-add each (the host
// checks n_in · levels · 2^(base_log − 1) · 2^31 < 2^63); s = (Σ d·h)·2^31 + Σ d·w exactly.
extern "C" __global__ void blind_rotate_key_switch(KsArgs a, const u64* __restrict__ key,
                                                   const u64* __restrict__ in,
                                                   const u32* __restrict__ coeffs,
                                                   u64* __restrict__ out,
                                                   long long* __restrict__ part, u32 count) {
    // digits[r][t]: digit r (coefficient · levels + level) of the chunk for ciphertext t.
    __shared__ int4 digits[KS_CHUNK * KS_MAX_LEVELS][KS_TILE / 4];
    pdl_wait();
    const u32 col = blockIdx.x * KS_COLS + threadIdx.x;
    const u32 b0 = blockIdx.y * KS_TILE;
    const u32 l = a.levels;
    const u32 w_out = a.n_out + 1;
    const u32 bits = a.base_log * l;
    const u64 base = 1ull << a.base_log;
    const long long half_base = (long long)(base >> 1);
    long long acc_w[KS_TILE], acc_h[KS_TILE];
#pragma unroll
    for (int t = 0; t < KS_TILE; t++) acc_w[t] = acc_h[t] = 0;
    int* dflat = (int*)digits;
    const u32 i_end = min(a.n_in, (blockIdx.z + 1) * a.span);
    for (u32 i0 = blockIdx.z * a.span; i0 < i_end; i0 += KS_CHUNK) {
        const u32 len = min((u32)KS_CHUNK, i_end - i0);
        __syncthreads();
        for (u32 idx = threadIdx.x; idx < KS_TILE * KS_CHUNK; idx += blockDim.x) {
            const u32 t = idx / KS_CHUNK, i = idx % KS_CHUNK;
            const u32 bb = b0 + t;
            u64 y = 0;
            if (bb < count && i < len) y = br_round_scaled(ks_input(a, in, coeffs, bb, i0 + i), bits, a.dec_c, a.q);
            long long carry = 0;
            for (int j = (int)l - 1; j >= 0; j--) {
                long long d = (long long)(y & (base - 1)) + carry;
                y >>= a.base_log;
                if (d >= half_base) {
                    d -= (long long)base;
                    carry = 1;
                } else {
                    carry = 0;
                }
                dflat[(i * l + j) * KS_TILE + t] = (int)d;
            }
        }
        __syncthreads();
        if (col < w_out) {
            const u64* kp = key + (size_t)i0 * l * w_out + col;
            for (u32 r = 0; r < len * l; r++) {
                const u64 kv = __ldg(kp + (size_t)r * w_out);
                const int kw = (int)(kv & 0x7fffffffu), kh = (int)(kv >> 31);
#pragma unroll
                for (int t4 = 0; t4 < KS_TILE / 4; t4++) {
                    const int4 d = digits[r][t4];
                    acc_w[4 * t4 + 0] = br_mad_wide(kw, d.x, acc_w[4 * t4 + 0]);
                    acc_h[4 * t4 + 0] = br_mad_wide(kh, d.x, acc_h[4 * t4 + 0]);
                    acc_w[4 * t4 + 1] = br_mad_wide(kw, d.y, acc_w[4 * t4 + 1]);
                    acc_h[4 * t4 + 1] = br_mad_wide(kh, d.y, acc_h[4 * t4 + 1]);
                    acc_w[4 * t4 + 2] = br_mad_wide(kw, d.z, acc_w[4 * t4 + 2]);
                    acc_h[4 * t4 + 2] = br_mad_wide(kh, d.z, acc_h[4 * t4 + 2]);
                    acc_w[4 * t4 + 3] = br_mad_wide(kw, d.w, acc_w[4 * t4 + 3]);
                    acc_h[4 * t4 + 3] = br_mad_wide(kh, d.w, acc_h[4 * t4 + 3]);
                }
            }
        }
    }
    if (col >= w_out) return;
#pragma unroll
    for (int t = 0; t < KS_TILE; t++) {
        const u32 bb = b0 + t;
        if (bb >= count) break;
        if (gridDim.z == 1) {
            ks_finish(a, ((__int128)acc_h[t] << 31) + (__int128)acc_w[t], in, coeffs, out, bb, col);
        } else {
            long long* pp = part + 2 * (((size_t)blockIdx.z * count + bb) * w_out + col);
            pp[0] = acc_h[t];
            pp[1] = acc_w[t];
        }
    }
}

// The sums of `slices` partial key switches (blind_rotate_key_switch with gridDim.z = slices),
// one thread an output word.
extern "C" __global__ void blind_rotate_key_switch_finish(KsArgs a, const long long* __restrict__ part,
                                                          const u64* __restrict__ in,
                                                          const u32* __restrict__ coeffs,
                                                          u64* __restrict__ out, u32 count,
                                                          u32 slices) {
    pdl_wait();
    const u32 w_out = a.n_out + 1;
    const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (size_t)count * w_out) return;
    long long h = 0, w = 0;
    for (u32 z = 0; z < slices; z++) {
        const long long* pp = part + 2 * ((size_t)z * count * w_out + idx);
        h += pp[0];
        w += pp[1];
    }
    ks_finish(a, ((__int128)h << 31) + (__int128)w, in, coeffs, out, (u32)(idx / w_out),
              (u32)(idx % w_out));
}
