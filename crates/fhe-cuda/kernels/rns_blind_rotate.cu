// Batched blind rotation in an RNS ring at the full modulus (fhe-math's
// `backend::rns_blind_rotate`, CKKS bootstrapping by blind rotation). The accumulators of a
// whole batch stay on the device in NTT form through all steps; per step, over the batch:
//   mono       T = acc ⊙ (X^{a_e} − 1)                 (NTT form; step 0 only)
//   inverse NTTs   of T                                     (kernels/ntt.cu)
//   decompose  the RNS digits of T, exact, lifted to the limbs outside each digit's group
//   forward NTTs   of those digit limbs                     (kernels/ntt.cu)
//   mac        acc += Σ_{c,j} D_{c,j} ⊙ row(i, c, j); the own-group limb of each digit is
//                  (Q/Q_j)^{-1}·T in NTT form, formed here from acc; also writes the next
//                  step's T = acc' ⊙ (X^{a'_e} − 1)
// X^a in NTT form is the pointwise factor g^{a·exp[k]} (g = NTT(X)[0], exp[k] the discrete log of
// NTT(X)[k] to base g): table lookups, no transform. Layouts: acc and T [e][c][s][k] with `L`
// limbs a component; D [e][c][dtot][k] (digit j's limbs outside its group at dprefix_j).
// Every operation is exact modular arithmetic: the CPU reference's words.
#include "common.cuh"

#define RBR_MAXL 8
#define RBR_LIMB 0       // per limb, 8 words: w_dec, w_dec', crt_hat lo, hi, w_own, w_own', group
#define RBR_GROUP 64     // per group, 8 words: lo, hi, Q_j lo, Q_j hi, Q_j/2 lo, hi, dprefix
#define RBR_HAT 128      // [i][k] (crt_hat_i mod q_k, shoup)
#define RBR_QJ 256       // [j][k] Q_j mod q_k
#define RBR_POW 320      // [s][2N] g_s^j
// exp table at RBR_POW + L·2N: [s][N]

struct RbrShape {
    u32 n;      // ring degree
    u32 limbs;  // L
    u32 digits; // D
    u32 dtot;   // Σ_j (L − |G_j|)
    u32 count;  // batch size
};

// The factor X^a − 1 at evaluation point k of limb s.
__device__ __forceinline__ u64 rbr_mono_factor(const u64* tab, const RbrShape& sh, u32 s, u32 k,
                                               u64 a, u64 q) {
    const u64 two_n = 2 * (u64)sh.n;
    const u64* pw = tab + RBR_POW + (u64)s * two_n;
    const u64* ex = tab + RBR_POW + (u64)sh.limbs * two_n + (u64)s * sh.n;
    const u64 e = (a * ex[k]) & (two_n - 1);
    return mod_sub(pw[e], 1, q);
}

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

// T[e][c][s] = acc[e][c][s] ⊙ (X^{a_e} − 1), NTT form. Grid (count·2·L, n/B).
extern "C" __global__ void rns_blind_rotate_mono(u64* t, const u64* acc, const u32* a, const u64* tab,
                                    const u64* slots, RbrShape sh) {
    pdl_wait();
    const u32 x = blockIdx.x;
    const u32 per = 2 * sh.limbs;
    const u32 e = x / per, s = (x % per) % sh.limbs;
    const u32 k = blockIdx.y * blockDim.x + threadIdx.x;
    if (k >= sh.n) return;
    const Mod m = load_mod(slots, s);
    const u64 f = rbr_mono_factor(tab, sh, s, k, a[e], m.q);
    const u64 i = (u64)x * sh.n + k;
    t[i] = mod_mul(acc[i], f, m);
}

// The digits of T (coefficient form): for (e, c, j), the integer d = Σ_{i∈G_j} y_i·(Q_j/q_i) −
// β·Q_j in (−Q_j/2, Q_j/2], y_i = T_i·(Q/Q_j)^{-1}·(Q_j/q_i)^{-1} mod q_i, written mod every
// limb outside G_j. Grid (count·2·D, n/B).
extern "C" __global__ void rns_blind_rotate_decompose(u64* d, const u64* t, const u64* tab, const u64* slots,
                                         RbrShape sh) {
    pdl_wait();
    const u32 x = blockIdx.x;
    const u32 per = 2 * sh.digits;
    const u32 e = x / per, r = x % per, c = r / sh.digits, j = r % sh.digits;
    const u32 k = blockIdx.y * blockDim.x + threadIdx.x;
    if (k >= sh.n) return;
    const u64* grp = tab + RBR_GROUP + 8 * j;
    const u32 lo = (u32)grp[0], hi = (u32)grp[1];
    const u128 qj = (u128)grp[2] | ((u128)grp[3] << 64);
    const u128 half = (u128)grp[4] | ((u128)grp[5] << 64);
    const u32 dprefix = (u32)grp[6];
    u64 y[RBR_MAXL];
    u128 sum = 0;
    u32 beta = 0;
    for (u32 i = lo; i < hi; i++) {
        const u64* li = tab + RBR_LIMB + 8 * i;
        const u64 q = slots[i * SLOT_STRIDE];
        const u64 v = t[(((u64)e * 2 + c) * sh.limbs + i) * sh.n + k];
        y[i - lo] = mul_shoup(v, li[0], li[1], q);
        sum += (u128)y[i - lo] * ((u128)li[2] | ((u128)li[3] << 64));
        while (sum >= qj) {
            sum -= qj;
            beta++;
        }
    }
    if (sum > half) beta++;
    u64* out = d + (((u64)e * 2 + c) * sh.dtot + dprefix) * sh.n + k;
    u32 p = 0;
    for (u32 s = 0; s < sh.limbs; s++) {
        if (s >= lo && s < hi) continue;
        const u64 q = slots[s * SLOT_STRIDE];
        u64 acc = 0;
        for (u32 i = lo; i < hi; i++) {
            const u64* h = tab + RBR_HAT + 2 * (i * RBR_MAXL + s);
            acc = mod_add(acc, mul_shoup(y[i - lo], h[0], h[1], q), q);
        }
        const u64 qjs = tab[RBR_QJ + j * RBR_MAXL + s];
        for (u32 b = 0; b < beta; b++) acc = mod_sub(acc, qjs, q);
        out[(u64)p * sh.n] = acc;
        p++;
    }
}

// acc[e][·][s] += Σ_{c,j} D_{c,j}[s] ⊙ row(c, j)[·][s] (NTT form); then, when `a_next` is not
// null, T[e][c][s] = acc' ⊙ (X^{a_next_e} − 1) for the next step. `rows`: the 2·D row addresses of
// this step, each a [2][row_spc][n] buffer. Grid (count·L, n/B).
extern "C" __global__ void rns_blind_rotate_mac(u64* acc, u64* t, const u64* d, const u64* rows, u32 row_spc,
                                   const u32* a, const u32* a_next, const u64* tab,
                                   const u64* slots, RbrShape sh) {
    pdl_wait();
    const u32 x = blockIdx.x;
    const u32 e = x / sh.limbs, s = x % sh.limbs;
    const u32 k = blockIdx.y * blockDim.x + threadIdx.x;
    if (k >= sh.n) return;
    const Mod m = load_mod(slots, s);
    const u64* li = tab + RBR_LIMB + 8 * s;
    const u32 js = (u32)li[6];
    const u64 f = rbr_mono_factor(tab, sh, s, k, a[e], m.q);
    const u64 i0 = (((u64)e * 2 + 0) * sh.limbs + s) * sh.n + k;
    const u64 i1 = (((u64)e * 2 + 1) * sh.limbs + s) * sh.n + k;
    u64 cur[2] = {acc[i0], acc[i1]};
    u128 sum0 = 0, sum1 = 0;
    for (u32 c = 0; c < 2; c++) {
        const u64 tc = mod_mul(cur[c], f, m);
        for (u32 j = 0; j < sh.digits; j++) {
            u64 dv;
            if (j == js) {
                dv = mul_shoup(tc, li[4], li[5], m.q);
            } else {
                const u64* grp = tab + RBR_GROUP + 8 * j;
                const u32 lo = (u32)grp[0], hi = (u32)grp[1];
                const u32 p = (u32)grp[6] + (s < lo ? s : s - (hi - lo));
                dv = d[(((u64)e * 2 + c) * sh.dtot + p) * sh.n + k];
            }
            const u64* row = (const u64*)rows[c * sh.digits + j];
            sum0 += (u128)dv * row[((u64)0 * row_spc + s) * sh.n + k];
            sum1 += (u128)dv * row[((u64)1 * row_spc + s) * sh.n + k];
        }
    }
    const u64 n0 = mod_add(cur[0], reduce_u128(sum0, m), m.q);
    const u64 n1 = mod_add(cur[1], reduce_u128(sum1, m), m.q);
    acc[i0] = n0;
    acc[i1] = n1;
    if (a_next != nullptr) {
        const u64 g = rbr_mono_factor(tab, sh, s, k, a_next[e], m.q);
        t[i0] = mod_mul(n0, g, m);
        t[i1] = mod_mul(n1, g, m);
    }
}

// ---------------------------------------------------------------------------------------------
// The digits of one (sample, component, digit) in one block, through shared memory
// (`rns_blind_rotate_digits`, in place of the inverse NTTs of T, `decompose` and the forward
// NTTs of D): the group's limbs of T (NTT form) are loaded, inverse-transformed in shared
// memory, decomposed (y_i and β per coefficient), and each limb outside the group is formed,
// forward-transformed and stored to D in NTT form. An external product then moves 96 limbs
// through global memory instead of 240. Every modulus is below 2^42: the butterflies are
// `F64Arith`'s exact double-precision ones (ntt_arith.cuh states their ranges: forward values
// grow by below 0.52q a stage from canonical inputs, |x| < 8q after 13 stages; inverse rounds
// start from values reduced below 0.51q and double them at most twice). Same stages and
// twiddles as the CPU's negacyclic NTT (Cooley-Tukey forward from m = 1 with tw[m + i],
// Gentleman-Sande inverse with itw[h + i] and the n^-1 stage last), canonical outputs: the
// reference's words.
// Table after the exponents (words): at RBR_TW(sh) the forward twiddles of each limb as
// doubles [s][n], then the inverse ones [s][n], then [s][2] n^-1 and n^-1·ψ^(-n/2) as doubles.
#define RBR_TW(sh) (RBR_POW + 3 * (u64)(sh).limbs * (sh).n)

__device__ __forceinline__ void rbr_f64_fwd(double& x, double& y, double w, double q, double qi) {
    const double v = f64_mul_mod(y, w, q, qi);
    const double u = x;
    x = __dadd_rn(u, v);
    y = __dsub_rn(u, v);
}

__device__ __forceinline__ void rbr_f64_inv(double& x, double& y, double w, double q, double qi) {
    const double u = x, v = y;
    x = __dadd_rn(u, v);
    y = f64_mul_mod(__dsub_rn(u, v), w, q, qi);
}

// The forward NTT of `a` (n = 2^logn doubles, canonical residues) in shared memory; the caller
// synchronizes before (the inputs written) and the transform ends synchronized.
__device__ void rbr_smem_forward(double* a, const double* tw, u32 logn, double q, double qi) {
    const u32 n = 1u << logn;
    u32 s = 0;
    // Radix-4 rounds: stages s (tw[m + i]) and s + 1 (tw[2m + 2i], tw[2m + 2i + 1]).
    for (; s + 2 <= logn; s += 2) {
        const u32 m = 1u << s, lt = logn - s - 2, t = 1u << lt;
        for (u32 qd = threadIdx.x; qd < (n >> 2); qd += blockDim.x) {
            const u32 i = qd >> lt, j = (i << (lt + 2)) + (qd & (t - 1));
            double x0 = a[j], x1 = a[j + t], x2 = a[j + 2 * t], x3 = a[j + 3 * t];
            const double w = __ldg(tw + m + i);
            rbr_f64_fwd(x0, x2, w, q, qi);
            rbr_f64_fwd(x1, x3, w, q, qi);
            rbr_f64_fwd(x0, x1, __ldg(tw + 2 * m + 2 * i), q, qi);
            rbr_f64_fwd(x2, x3, __ldg(tw + 2 * m + 2 * i + 1), q, qi);
            a[j] = x0;
            a[j + t] = x1;
            a[j + 2 * t] = x2;
            a[j + 3 * t] = x3;
        }
        __syncthreads();
    }
    if (s < logn) {
        // The last stage alone (odd logn): pairs (j, j + 1), tw[n/2 + i].
        const u32 m = n >> 1;
        for (u32 p = threadIdx.x; p < m; p += blockDim.x) {
            double x = a[2 * p], y = a[2 * p + 1];
            rbr_f64_fwd(x, y, __ldg(tw + m + p), q, qi);
            a[2 * p] = x;
            a[2 * p + 1] = y;
        }
        __syncthreads();
    }
}

// The inverse NTT of `a` (values of magnitude below 2^46) in shared memory, n^-1 included
// (`c`: n^-1 and n^-1·ψ^(-n/2) as doubles); synchronized as `rbr_smem_forward`.
__device__ void rbr_smem_inverse(double* a, const double* itw, const double* c, u32 logn,
                                 double q, double qi) {
    const u32 n = 1u << logn;
    u32 lt = 0;
    // Radix-4 rounds: stage h = n/(2t) (itw[h + 2g], itw[h + 2g + 1]), then h/2 (itw[h/2 + g],
    // or the n^-1 stage when h/2 = 1).
    for (; lt + 2 <= logn; lt += 2) {
        const u32 t = 1u << lt, h = n >> (lt + 1);
        for (u32 qd = threadIdx.x; qd < (n >> 2); qd += blockDim.x) {
            const u32 g = qd >> lt, e = (g << (lt + 2)) + (qd & (t - 1));
            double x0 = f64_reduce(a[e], q, qi), x1 = f64_reduce(a[e + t], q, qi);
            double x2 = f64_reduce(a[e + 2 * t], q, qi), x3 = f64_reduce(a[e + 3 * t], q, qi);
            rbr_f64_inv(x0, x1, __ldg(itw + h + 2 * g), q, qi);
            rbr_f64_inv(x2, x3, __ldg(itw + h + 2 * g + 1), q, qi);
            if (h == 2) {
                double u = x0, v = x2;
                x0 = f64_mul_mod(__dadd_rn(u, v), c[0], q, qi);
                x2 = f64_mul_mod(__dsub_rn(u, v), c[1], q, qi);
                u = x1;
                v = x3;
                x1 = f64_mul_mod(__dadd_rn(u, v), c[0], q, qi);
                x3 = f64_mul_mod(__dsub_rn(u, v), c[1], q, qi);
            } else {
                const double w = __ldg(itw + (h >> 1) + g);
                rbr_f64_inv(x0, x2, w, q, qi);
                rbr_f64_inv(x1, x3, w, q, qi);
            }
            a[e] = x0;
            a[e + t] = x1;
            a[e + 2 * t] = x2;
            a[e + 3 * t] = x3;
        }
        __syncthreads();
    }
    if (lt < logn) {
        // The n^-1 stage alone (odd logn): pairs (e, e + n/2).
        const u32 t = n >> 1;
        for (u32 e = threadIdx.x; e < t; e += blockDim.x) {
            const double u = f64_reduce(a[e], q, qi), v = f64_reduce(a[e + t], q, qi);
            a[e] = f64_mul_mod(__dadd_rn(u, v), c[0], q, qi);
            a[e + t] = f64_mul_mod(__dsub_rn(u, v), c[1], q, qi);
        }
        __syncthreads();
    }
}

// Block x = (e, c, j): dynamic shared memory holds the group's |G_j| limbs and one target limb
// (n doubles each) and β (n bytes). Grid (count·2·D), any whole number of warps.
extern "C" __global__ void rns_blind_rotate_digits(u64* d, const u64* t, const u64* tab,
                                                   const u64* slots, RbrShape sh) {
    pdl_wait();
    extern __shared__ double rbr_sh[];
    const u32 x = blockIdx.x;
    const u32 per = 2 * sh.digits;
    const u32 e = x / per, r = x % per, c = r / sh.digits, j = r % sh.digits;
    const u32 n = sh.n, logn = 31 - __clz(n);
    const u64* grp = tab + RBR_GROUP + 8 * j;
    const u32 lo = (u32)grp[0], hi = (u32)grp[1], gl = hi - lo;
    const u128 qj = (u128)grp[2] | ((u128)grp[3] << 64);
    const u128 half = (u128)grp[4] | ((u128)grp[5] << 64);
    const u32 dprefix = (u32)grp[6];
    double* tgt = rbr_sh + (u64)gl * n;
    unsigned char* beta = (unsigned char*)(tgt + n);
    const double* fwd_tw = (const double*)(tab + RBR_TW(sh));
    const double* inv_tw = fwd_tw + (u64)sh.limbs * n;
    const double* consts = inv_tw + (u64)sh.limbs * n;
    const u64* tsrc = t + ((u64)e * 2 + c) * sh.limbs * n;

    // 1. The group's limbs of T, inverse-transformed.
    for (u32 i = 0; i < gl; i++)
        for (u32 k = threadIdx.x; k < n; k += blockDim.x)
            rbr_sh[(u64)i * n + k] = f64_from_u64(tsrc[(u64)(lo + i) * n + k]);
    __syncthreads();
    for (u32 i = 0; i < gl; i++) {
        const u32 s = lo + i;
        const double q = f64_from_u64(slots[s * SLOT_STRIDE]);
        const double qi = __longlong_as_double((long long)slots[s * SLOT_STRIDE + 3]);
        rbr_smem_inverse(rbr_sh + (u64)i * n, inv_tw + (u64)s * n, consts + 2 * s, logn, q, qi);
    }

    // 2. y_i = T_i·(Q/Q_j)^{-1}·(Q_j/q_i)^{-1} mod q_i (kept as words) and β per coefficient.
    for (u32 k = threadIdx.x; k < n; k += blockDim.x) {
        u128 sum = 0;
        u32 b = 0;
        for (u32 i = 0; i < gl; i++) {
            const u32 s = lo + i;
            const u64 qw = slots[s * SLOT_STRIDE];
            const double q = f64_from_u64(qw);
            const double qi = __longlong_as_double((long long)slots[s * SLOT_STRIDE + 3]);
            const u64* li = tab + RBR_LIMB + 8 * s;
            const u64 v = f64_canonical(rbr_sh[(u64)i * n + k], q, qi);
            const u64 y = mul_shoup(v, li[0], li[1], qw);
            sum += (u128)y * ((u128)li[2] | ((u128)li[3] << 64));
            while (sum >= qj) {
                sum -= qj;
                b++;
            }
            rbr_sh[(u64)i * n + k] = __longlong_as_double((long long)y);
        }
        if (sum > half) b++;
        beta[k] = (unsigned char)b;
    }
    __syncthreads();

    // 3. Each limb outside the group: the digit mod q_s, forward-transformed, stored.
    u64* out = d + (((u64)e * 2 + c) * sh.dtot + dprefix) * n;
    u32 p = 0;
    for (u32 s = 0; s < sh.limbs; s++) {
        if (s >= lo && s < hi) continue;
        const u64 qw = slots[s * SLOT_STRIDE];
        const double q = f64_from_u64(qw);
        const double qi = __longlong_as_double((long long)slots[s * SLOT_STRIDE + 3]);
        const u64 qjs = tab[RBR_QJ + j * RBR_MAXL + s];
        for (u32 k = threadIdx.x; k < n; k += blockDim.x) {
            u64 acc = 0;
            for (u32 i = lo; i < hi; i++) {
                const u64* h = tab + RBR_HAT + 2 * (i * RBR_MAXL + s);
                const u64 y = (u64)__double_as_longlong(rbr_sh[(u64)(i - lo) * n + k]);
                acc = mod_add(acc, mul_shoup(y, h[0], h[1], qw), qw);
            }
            for (u32 b = 0; b < beta[k]; b++) acc = mod_sub(acc, qjs, qw);
            tgt[k] = f64_from_u64(acc);
        }
        __syncthreads();
        rbr_smem_forward(tgt, fwd_tw + (u64)s * n, logn, q, qi);
        for (u32 k = threadIdx.x; k < n; k += blockDim.x)
            out[(u64)p * n + k] = f64_canonical(tgt[k], q, qi);
        __syncthreads();
        p++;
    }
}
