// Batched blind rotation in an RNS ring at the full modulus (fhe-math's
// `backend::rns_blind_rotate`, CKKS bootstrapping by blind rotation). The accumulators of a
// whole batch stay on the device in NTT form through all steps; a step is a pair p of LWE
// coefficients (key unrolling: three keys, exponents e_k), over the batch:
//   inverse NTTs   of T = acc                               (kernels/ntt.cu; T is written in
//                                                             coefficient form by init for p = 0)
//   decompose  the RNS digits of T, exact, lifted to the limbs outside each digit's group
//   forward NTT    first pass of those digit limbs            (kernels/ntt.cu)
//   mac        the last forward pass fused with
//                  acc += Σ_{c,j} D_{c,j} ⊙ Σ_k (X^{e_k} − 1)·row(p, k, c, j); the own-group
//                  limb of each digit is (Q/Q_j)^{-1}·acc in NTT form; also writes the next
//                  step's T = acc'                         (rbr_mac.cuh)
// X^a in NTT form is the pointwise factor g^{a·exp[k]} (g = NTT(X)[0], exp[k] the discrete log of
// NTT(X)[k] to base g): table lookups, no transform. Layouts: acc and T [e][c][s][k] with `L`
// limbs a component; D [e][c][dtot][k] (digit j's limbs outside its group at dprefix_j).
// Every operation is exact modular arithmetic: the CPU reference's words.
#include "rns_blind_rotate.cuh"

// acc[e][c][s] = X^{(2N − b_e) mod 2N} · test[c][s] (coefficient form). Grid (count·2·L, n/B).
extern "C" __global__ void rns_blind_rotate_init(u64* acc, const u64* test, u32 test_spc, const u32* b,
                                    const u64* slots, RbrShape sh) {
    pdl_wait();
    const u32 x = blockIdx.x;
    const u32 per = 2 * sh.limbs;
    const u32 e = x / per, r = x % per, c = r / sh.limbs, s = r % sh.limbs;
    const u32 k = blockIdx.y * blockDim.x + threadIdx.x;
    if (k >= sh.n) return;
    const u64 q = slots[s * SLOT_STRIDE];
    const u32 two_n = 2 * sh.n;
    const u32 t = (two_n - b[e]) & (two_n - 1);
    const u32 m = (k + two_n - t) & (two_n - 1);
    const u64* src = test + ((u64)c * test_spc + s) * sh.n;
    acc[(u64)x * sh.n + k] = m < sh.n ? src[m] : mod_neg(src[m - sh.n], q);
}

// The digits of T (coefficient form, [e][comps][L] limbs): for (e, c, j), the integer d = Σ_{i∈G_j} y_i·(Q_j/q_i) −
// β·Q_j in (−Q_j/2, Q_j/2], y_i = T_i·(Q/Q_j)^{-1}·(Q_j/q_i)^{-1} mod q_i, written mod every
// limb outside G_j, D laid out [e][comps][dtot]. Grid (count·comps·D, n/B).
// In double precision (every modulus below 2^42): y_i and the residues of d by `f64_mul_mod`
// (exact; common.cuh). β = floor(F + 1/2) for F = Σ y_i/q_i (no tie: Q_j is odd), from the
// double sum F' = Σ y_i·fl(1/q_i), within |G_j|·2^-51 of F; where F' + 1/2 lies within
// RBR_BETA_MARGIN of an integer, β comes from the exact 128-bit sum instead (`rbr_beta_exact`),
// so β, and every word, is the integer reference's.
#define RBR_BETA_MARGIN 0x1p-40

// β from the exact sum Σ y_i·(Q_j/q_i) (128 bits) compared with Q_j and Q_j/2.
template <int G>
__device__ __forceinline__ u32 rbr_beta_exact(const double (&y)[G], u32 lo, const u64* tab,
                                              u128 qj, u128 half) {
    u128 sum = 0;
    u32 beta = 0;
#pragma unroll
    for (int i = 0; i < G; i++) {
        const u64* li = tab + RBR_LIMB + 8 * (lo + i);
        sum += (u128)(u64)y[i] * ((u128)li[2] | ((u128)li[3] << 64));
        while (sum >= qj) {
            sum -= qj;
            beta++;
        }
    }
    return beta + (sum > half ? 1 : 0);
}

// Coefficients a decompose thread takes (RBR_DEC_COEFFS, `blockDim.x` apart): their loads go
// out together and the table words of each target limb serve them all.
#define RBR_DEC_COEFFS 4

// The digits of K coefficients (the first `valid` of them exist) for a group of G limbs
// [lo, lo + G) (compile-time constants, so the y_i stay in registers): coefficient u read at
// tsrc[s·n + u·stride], its digit limbs written at out[p·n + u·stride].
template <int G, int K>
__device__ __forceinline__ void rbr_decompose_coeffs(u64* __restrict__ out,
                                                     const u64* __restrict__ tsrc, const u64* grp,
                                                     u32 j, u32 lo, const u64* tab,
                                                     const u64* slots, const RbrShape& sh,
                                                     u32 stride, int valid) {
    double y[K][G];
#pragma unroll
    for (int u = 0; u < K; u++)
#pragma unroll
        for (int i = 0; i < G; i++)
            y[u][i] = u < valid ? f64_from_u64(tsrc[(u64)(lo + i) * sh.n + u * stride]) : 0.0;
    u32 beta[K];
    {
        double f[K];
#pragma unroll
        for (int u = 0; u < K; u++) f[u] = 0.5;
#pragma unroll
        for (int i = 0; i < G; i++) {
            const u32 s = lo + i;
            const double w = f64_from_u64(tab[RBR_LIMB + 8 * s]);
            const double q = f64_from_u64(slots[s * SLOT_STRIDE]);
            const double qi = __longlong_as_double((long long)slots[s * SLOT_STRIDE + 3]);
#pragma unroll
            for (int u = 0; u < K; u++) {
                double yi = f64_reduce(f64_mul_mod(y[u][i], w, q, qi), q, qi);
                yi = yi < 0.0 ? __dadd_rn(yi, q) : yi;
                y[u][i] = yi;
                f[u] = __fma_rn(yi, qi, f[u]);
            }
        }
#pragma unroll
        for (int u = 0; u < K; u++) {
            const double fb = floor(f[u]);
            beta[u] = (u32)fb;
            if (__dsub_rn(f[u], fb) < RBR_BETA_MARGIN ||
                __dsub_rn(__dadd_rn(fb, 1.0), f[u]) < RBR_BETA_MARGIN) {
                const u128 qj = (u128)grp[2] | ((u128)grp[3] << 64);
                const u128 half = (u128)grp[4] | ((u128)grp[5] << 64);
                beta[u] = rbr_beta_exact<G>(y[u], lo, tab, qj, half);
            }
        }
    }
    u32 p = 0;
    for (u32 s = 0; s < sh.limbs; s++) {
        if (s >= lo && s < lo + G) continue;
        const double q = f64_from_u64(slots[s * SLOT_STRIDE]);
        const double qi = __longlong_as_double((long long)slots[s * SLOT_STRIDE + 3]);
        const double qjs = f64_from_u64(tab[RBR_QJ + j * RBR_MAXL + s]);
        double h[G];
#pragma unroll
        for (int i = 0; i < G; i++) h[i] = f64_from_u64(tab[RBR_HAT + 2 * ((lo + i) * RBR_MAXL + s)]);
#pragma unroll
        for (int u = 0; u < K; u++) {
            double acc = __dmul_rn(-(double)beta[u], qjs);
#pragma unroll
            for (int i = 0; i < G; i++) acc = __dadd_rn(acc, f64_mul_mod(y[u][i], h[i], q, qi));
            if (u < valid) out[(u64)p * sh.n + u * stride] = f64_canonical(acc, q, qi);
        }
        p++;
    }
}

// The thread's RBR_DEC_COEFFS coefficients for a group of G limbs, K = 8/G (at most
// RBR_DEC_COEFFS, at least 1) at a time, so that no group holds more than 8 y_i in registers.
template <int G>
__device__ __forceinline__ void rbr_decompose_group(u64* out, const u64* tsrc, const u64* grp,
                                                    u32 j, u32 lo, const u64* tab,
                                                    const u64* slots, const RbrShape& sh,
                                                    u32 stride, u32 valid) {
    constexpr int K = 8 / G < 1 ? 1 : (8 / G > RBR_DEC_COEFFS ? RBR_DEC_COEFFS : 8 / G);
#pragma unroll 1
    for (int u0 = 0; u0 < RBR_DEC_COEFFS; u0 += K)
        rbr_decompose_coeffs<G, K>(out + u0 * stride, tsrc + u0 * stride, grp, j, lo, tab, slots,
                                   sh, stride, (int)valid - u0);
}

// Digit j (a group of G limbs) of every sample's components, one entry a group length
// (`rns_blind_rotate_decompose_G`, G = 1..=RBR_MAXL), each with its own register allocation (the
// y_i of the longest group would otherwise set every launch's). Grid (count·comps,
// ⌈n / (B·RBR_DEC_COEFFS)⌉), B threads: block row x is sample e and component c; thread t of
// block y takes coefficients y·B·RBR_DEC_COEFFS + t + u·B (u < RBR_DEC_COEFFS).
#define RBR_DECOMPOSE(G)                                                                         \
    extern "C" __global__ void rns_blind_rotate_decompose_##G(u64* d, const u64* t,             \
                                                             const u64* tab, const u64* slots,   \
                                                             RbrShape sh, u32 j) {               \
        pdl_wait();                                                                              \
        const u64 ec = blockIdx.x;                                                               \
        const u32 k = blockIdx.y * blockDim.x * RBR_DEC_COEFFS + threadIdx.x;                    \
        if (k >= sh.n) return;                                                                   \
        const u32 valid = min((u32)RBR_DEC_COEFFS, (sh.n - k + blockDim.x - 1) / blockDim.x);    \
        const u64* grp = tab + RBR_GROUP + 8 * j;                                                \
        const u32 lo = (u32)grp[0];                                                              \
        const u64* tsrc = t + ec * sh.limbs * sh.n + k;                                          \
        u64* out = d + (ec * sh.dtot + (u32)grp[6]) * sh.n + k;                                  \
        rbr_decompose_group<G>(out, tsrc, grp, j, lo, tab, slots, sh, blockDim.x, valid);        \
    }
RBR_DECOMPOSE(1)
RBR_DECOMPOSE(2)
RBR_DECOMPOSE(3)
RBR_DECOMPOSE(4)
RBR_DECOMPOSE(5)
RBR_DECOMPOSE(6)
RBR_DECOMPOSE(7)
RBR_DECOMPOSE(8)

// The multiply-accumulate of a step runs fused with the digit limbs' last forward NTT pass:
// `ntt_rbr_mac_r8_S` of rbr_mac.cuh (the `ntt` module, which holds the register-blocked pass).

// ---------------------------------------------------------------------------------------------
// PackLWEs (Chen–Dai–Kim–Song) of the accumulators P[e][2][L][n] (NTT form), one level a
// launch set: for r < half, e = P[r], o = P[r + half], P[r] ← e + X^{N/len}·o +
// Switch(τ_g(e − X^{N/len}·o)), g = len + 1, Switch(y) = (y_0, 0) + Σ_j d_j(y_1) ⊙ key_j:
//   rns_pack_diff   y = τ_g(e − X^{N/len}·o): T0 = y_0, T1 = y_1 (NTT form) and a copy of y_1
//                   for the inverse NTTs; τ_g in NTT form is the gather y[k] = x[perm[k]],
//                   perm[k] the point whose exponent is g·exp[k] mod 2N
//   inverse NTTs of the copy, `rns_blind_rotate_decompose` (comps = 1), forward NTTs of D
//   rns_pack_mac    P[r] ← e + X^{N/len}·o + (T0, 0) + Σ_j d_j ⊙ key_j, the own-group digit limbs
//                   (Q/Q_j)^{-1}·T1 formed in NTT form, as in the step's mac (rbr_mac.cuh)
// Each thread of rns_pack_mac reads and writes P[r] at its own k only, and P[r + half] is not
// written at this level, so no launch reads what another thread of it writes. Exact
// double-precision products as in the step's mac (every modulus below 2^42).

// A packing thread's pair r, limb s and coefficient k (grid (half·L, n/B)), with q_s and its
// reciprocal (from the slot table) in doubles; false past the last coefficient.
struct PackLane {
    u32 r, s, k;
    double q, qi;
};
__device__ __forceinline__ bool pack_lane(const u64* slots, const RbrShape& sh, PackLane& p) {
    p.r = blockIdx.x / sh.limbs;
    p.s = blockIdx.x % sh.limbs;
    p.k = blockIdx.y * blockDim.x + threadIdx.x;
    if (p.k >= sh.n) return false;
    p.q = f64_from_u64(slots[p.s * SLOT_STRIDE]);
    p.qi = __longlong_as_double((long long)slots[p.s * SLOT_STRIDE + 3]);
    return true;
}

// Grid (half·L, n/B).
extern "C" __global__ void rns_pack_diff(u64* t0, u64* t1, u64* t1c, const u64* p, u32 half,
                                         u32 shift, const u32* perm, const u64* tab,
                                         const u64* slots, RbrShape sh) {
    pdl_wait();
    PackLane lane;
    if (!pack_lane(slots, sh, lane)) return;
    const u32 r = lane.r, s = lane.s, k = lane.k;
    const double q = lane.q, qi = lane.qi;
    const u32 kk = perm[k];
    const double f = f64_from_u64(rbr_monomial(tab, sh, s, kk, shift));
    const u64 ln = (u64)sh.limbs * sh.n;
    const u64* e = p + (u64)r * 2 * ln + (u64)s * sh.n + kk;
    const u64* o = p + ((u64)r + half) * 2 * ln + (u64)s * sh.n + kk;
    const u64 out = (u64)r * ln + (u64)s * sh.n + k;
    t0[out] = f64_canonical(__dsub_rn(f64_from_u64(e[0]), f64_mul_mod(f64_from_u64(o[0]), f, q, qi)),
                            q, qi);
    const u64 y1 =
        f64_canonical(__dsub_rn(f64_from_u64(e[ln]), f64_mul_mod(f64_from_u64(o[ln]), f, q, qi)),
                      q, qi);
    t1[out] = y1;
    t1c[out] = y1;
}

// `rows`: the D addresses of the level's key rows, each a [2][row_spc][n] buffer. Grid
// (half·L, n/B).
extern "C" __global__ void rns_pack_mac(u64* p, const u64* t0, const u64* t1, const u64* d,
                                        const u64* rows, u32 row_spc, u32 half, u32 shift,
                                        const u64* tab, const u64* slots, RbrShape sh) {
    pdl_wait();
    PackLane lane;
    if (!pack_lane(slots, sh, lane)) return;
    const u32 r = lane.r, s = lane.s, k = lane.k;
    const double q = lane.q, qi = lane.qi;
    const u64* li = tab + RBR_LIMB + 8 * s;
    const u32 js = (u32)li[6];
    const double own = f64_from_u64(li[4]);
    const double f = f64_from_u64(rbr_monomial(tab, sh, s, k, shift));
    const u64 ln = (u64)sh.limbs * sh.n;
    const u64 ie = (u64)r * 2 * ln + (u64)s * sh.n + k;
    const u64 io = ((u64)r + half) * 2 * ln + (u64)s * sh.n + k;
    const u64 it = (u64)r * ln + (u64)s * sh.n + k;
    double sum0 = __dadd_rn(__dadd_rn(f64_from_u64(p[ie]), f64_mul_mod(f64_from_u64(p[io]), f, q, qi)),
                            f64_from_u64(t0[it]));
    double sum1 = __dadd_rn(f64_from_u64(p[ie + ln]), f64_mul_mod(f64_from_u64(p[io + ln]), f, q, qi));
    const u64* dr = d + (u64)r * sh.dtot * sh.n + k;
    for (u32 j = 0; j < sh.digits; j++) {
        double dv;
        if (j == js) {
            dv = f64_mul_mod(f64_from_u64(t1[it]), own, q, qi);
        } else {
            const u64* grp = tab + RBR_GROUP + 8 * j;
            const u32 lo = (u32)grp[0], hi = (u32)grp[1];
            const u32 pos = (u32)grp[6] + (s < lo ? s : s - (hi - lo));
            dv = f64_from_u64(dr[(u64)pos * sh.n]);
        }
        const u64* row = (const u64*)rows[j];
        sum0 = __dadd_rn(sum0, f64_mul_mod(dv, f64_from_u64(row[(u64)s * sh.n + k]), q, qi));
        sum1 = __dadd_rn(sum1, f64_mul_mod(dv, f64_from_u64(row[((u64)row_spc + s) * sh.n + k]), q, qi));
    }
    p[ie] = f64_canonical(sum0, q, qi);
    p[ie + ln] = f64_canonical(sum1, q, qi);
}
