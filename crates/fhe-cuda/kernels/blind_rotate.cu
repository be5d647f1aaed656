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
// rounds, reduces and adds the result to the accumulator. At the end the block writes the
// extracted LWE (coefficient 0).
//
// `blind_rotate_key_switch`: LWE key switching; a block owns 128 output columns of KS_TILE
// ciphertexts, so each key word read serves KS_TILE ciphertexts.
#include "ntt_arith.cuh"

// Mirrors `BrArgs` in src/kernels/blind_rotate.rs (repr(C)).
struct BrArgs {
    u64 q;
    u64 bhi;       // floor(2^128 / q), high word
    u64 blo;       // low word
    u64 ms_c;      // floor(2^(64 + log2(2N)) / q): the modulus switch
    u32 n_lwe;     // LWE dimension n
    u32 log_n;     // log2 N
    u32 k;         // GLWE dimension
    u32 levels;    // gadget levels l
    u32 base_log;  // gadget base log
    u32 kpc;       // RGSW per LWE coefficient (1 binary, 2 ternary)
    u32 radix_log; // butterfly stages per shared-memory round (1..3)
    u32 pad;
};

#define BR_MAX_K1 4  // k + 1 <= 4 (checked on the host)

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

// One round of S forward (Cooley-Tukey) stages over `polys` spectra of 2^log_m points at
// `base`, starting at stage `st0`: each thread loads groups of 2^S points, applies the S stages
// in registers and stores them back. Butterfly (fft.rs): t = v·T[m + b], (u + t, u − t).
template <int S>
__device__ __forceinline__ void br_fwd_round(double2* base, u32 polys, u32 log_m, u32 st0,
                                             const double2* __restrict__ tw) {
    const u32 mpts = 1u << log_m;
    const u32 log_u = log_m - st0 - S;  // element stride 2^log_u
    const u32 per = mpts >> S;
    const u32 total = polys * per;
    for (u32 g = threadIdx.x; g < total; g += blockDim.x) {
        const u32 pb = (g >> (log_m - S)) << log_m;
        const u32 gg = g & (per - 1);
        const u32 b = gg >> log_u, j = gg & ((1u << log_u) - 1);
        const u32 start = (b << (log_u + S)) + j;
        double2 x[1 << S];
#pragma unroll
        for (int e = 0; e < (1 << S); e++) x[e] = base[br_pad(pb + start + (e << log_u))];
#pragma unroll
        for (int s = 0; s < S; s++) {
            // Block of point start + (e << log_u) at this stage: (b << s) + (e >> (S − s)).
            const u32 half = 1u << (S - 1 - s);
            const double2* ws = tw + (1u << (st0 + s)) + (b << s);
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
#pragma unroll
        for (int e = 0; e < (1 << S); e++) base[br_pad(pb + start + (e << log_u))] = x[e];
    }
}

// One round of S inverse (Gentleman-Sande) stages starting at stage `st0` (half-size 2^st0).
// Butterfly (fft.rs): (A + B, (A − B)·conj(T[m + b])).
template <int S>
__device__ __forceinline__ void br_inv_round(double2* base, u32 polys, u32 log_m, u32 st0,
                                             const double2* __restrict__ tw) {
    const u32 mpts = 1u << log_m;
    const u32 per = mpts >> S;
    const u32 total = polys * per;
    for (u32 g = threadIdx.x; g < total; g += blockDim.x) {
        const u32 pb = (g >> (log_m - S)) << log_m;
        const u32 gg = g & (per - 1);
        const u32 b = gg >> st0, j = gg & ((1u << st0) - 1);
        const u32 start = (b << (st0 + S)) + j;
        double2 x[1 << S];
#pragma unroll
        for (int e = 0; e < (1 << S); e++) x[e] = base[br_pad(pb + start + (e << st0))];
#pragma unroll
        for (int s = 0; s < S; s++) {
            // Block of point start + (e << st0) at this stage: (b << (S − s − 1)) + (e >> (s + 1)).
            const u32 half = 1u << s;
            const double2* ws = tw + (mpts >> (st0 + s + 1)) + (b << (S - s - 1));
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
#pragma unroll
        for (int e = 0; e < (1 << S); e++) base[br_pad(pb + start + (e << st0))] = x[e];
    }
}

__device__ __forceinline__ void br_forward(double2* base, u32 polys, u32 log_m, u32 radix,
                                           const double2* tw) {
    for (u32 st = 0; st < log_m;) {
        const u32 s = min(radix, log_m - st);
        if (s == 3) br_fwd_round<3>(base, polys, log_m, st, tw);
        else if (s == 2) br_fwd_round<2>(base, polys, log_m, st, tw);
        else br_fwd_round<1>(base, polys, log_m, st, tw);
        st += s;
        __syncthreads();
    }
}

__device__ __forceinline__ void br_inverse(double2* base, u32 polys, u32 log_m, u32 radix,
                                           const double2* tw) {
    for (u32 st = 0; st < log_m;) {
        const u32 s = min(radix, log_m - st);
        if (s == 3) br_inv_round<3>(base, polys, log_m, st, tw);
        else if (s == 2) br_inv_round<2>(base, polys, log_m, st, tw);
        else br_inv_round<1>(base, polys, log_m, st, tw);
        st += s;
        __syncthreads();
    }
}

// Blind rotation and extraction of `count` LWE ciphertexts (`lwe`: n + 1 words each) into
// `out` (k·N + 1 words each). `key`: the bootstrapping key's spectra (fhe-math's `key_spectra`
// layout, N/2 points a polynomial); `tw`: the N/2 twiddles T of fft.rs; `test_poly`: N canonical
// words. One block per ciphertext; dynamic shared memory: (k+1)·N accumulator words,
// (k+1)·l·N/2 digit points (+ (k+1)·N/2 points for ternary keys), each array padded (br_pad),
// then (n+1) u32.
__device__ __forceinline__ void br_run(const BrArgs& a, const double2* __restrict__ key,
                                       const double2* __restrict__ tw,
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
    const u32 k1 = a.k + 1;
    const u32 l = a.levels;
    const u32 rows = k1 * l;
    const u64 q = a.q;

    u64* acc = sm;
    double2* dig = (double2*)(acc + (size_t)k1 * n);
    double2* prod = dig + br_pad(rows * mpts);
    u32* ex = (u32*)(prod + (a.kpc == 2 ? br_pad(k1 * mpts) : 0));

    const u64* in = lwe + (size_t)b * (a.n_lwe + 1);
    const u32 ms_bits = a.log_n + 1;
    for (u32 i = threadIdx.x; i <= a.n_lwe; i += blockDim.x)
        ex[i] = (u32)br_round_scaled(in[i], ms_bits, a.ms_c, q);
    __syncthreads();

    // ACC = (0, …, 0, X^{-b̃} · v).
    const u32 shift = (two_n - ex[a.n_lwe]) & (two_n - 1);
    for (u32 idx = threadIdx.x; idx < k1 * n; idx += blockDim.x) {
        const u32 c = idx >> a.log_n, p = idx & (n - 1);
        acc[idx] = c < a.k ? 0 : br_rotated(test_poly, p, shift, n, q);
    }
    __syncthreads();

    const u32 bits = a.base_log * l;
    const u64 base = 1ull << a.base_log;
    const long long half_base = (long long)(base >> 1);
    const double qd = (double)q;
    const double qinv = __ddiv_rn(1.0, qd);
    const double dec_scale = __ddiv_rn(ldexp(1.0, (int)bits), qd);
    const size_t rgsw_points = (size_t)rows * k1 * mpts;
    for (u32 i = 0; i < a.n_lwe; i++) {
        const u32 ai = ex[i];
        if (ai == 0) continue;  // X^0·ACC − ACC = 0: the step adds exactly 0
        for (u32 t = 0; t < a.kpc; t++) {
            const u32 e = t == 0 ? ai : two_n - ai;
            // Folded digits of X^e·ACC − ACC: row c·l + j, point p holds digit j (most
            // significant first) of coefficients p and p + N/2.
            for (u32 idx = threadIdx.x; idx < k1 * mpts; idx += blockDim.x) {
                const u32 c = idx >> log_m, p = idx & (mpts - 1);
                const u64* poly = acc + (size_t)c * n;
                u64 y[2];
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const u32 pp = p + h * mpts;
                    const u64 x = mod_sub(br_rotated(poly, pp, e, n, q), poly[pp], q);
                    y[h] = br_round_digits(x, bits, dec_scale, q);
                }
                long long carry[2] = {0, 0};
                for (int j = (int)l - 1; j >= 0; j--) {
                    double dv[2];
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        long long d = (long long)(y[h] & (base - 1)) + carry[h];
                        y[h] >>= a.base_log;
                        if (d >= half_base) {
                            d -= (long long)base;
                            carry[h] = 1;
                        } else {
                            carry[h] = 0;
                        }
                        dv[h] = (double)d;
                    }
                    dig[br_pad((c * l + j) * mpts + p)] = make_double2(dv[0], dv[1]);
                }
            }
            __syncthreads();
            br_forward(dig, rows, log_m, a.radix_log, tw);
            // Multiply-accumulate with the key's spectra (fft.rs order: keys, then rows, from
            // the first product); the sums go to rows 0..k of `dig` (each thread reads all rows
            // at its points before writing them) or, for the first key of a ternary pair, to
            // `prod`.
            const double2* kr = key + ((size_t)i * a.kpc + t) * rgsw_points;
            const bool last = t + 1 == a.kpc;
            for (u32 p = threadIdx.x; p < mpts; p += blockDim.x) {
                double2 res[BR_MAX_K1];
#pragma unroll
                for (u32 c2 = 0; c2 < BR_MAX_K1; c2++) {
                    if (c2 >= k1) break;
                    double2 sum = c_mul(dig[br_pad(p)], __ldg(kr + (size_t)c2 * mpts + p));
                    if (t > 0) sum = c_add(prod[br_pad(c2 * mpts + p)], sum);
                    for (u32 r = 1; r < rows; r++)
                        sum = c_add(sum, c_mul(dig[br_pad(r * mpts + p)],
                                               __ldg(kr + ((size_t)r * k1 + c2) * mpts + p)));
                    res[c2] = sum;
                }
#pragma unroll
                for (u32 c2 = 0; c2 < BR_MAX_K1; c2++) {
                    if (c2 >= k1) break;
                    if (last) dig[br_pad(c2 * mpts + p)] = res[c2];
                    else prod[br_pad(c2 * mpts + p)] = res[c2];
                }
            }
            __syncthreads();
        }
        br_inverse(dig, k1, log_m, a.radix_log, tw);
        for (u32 idx = threadIdx.x; idx < k1 * mpts; idx += blockDim.x) {
            const u32 c = idx >> log_m, p = idx & (mpts - 1);
            const double2 z = dig[br_pad(idx)];
            u64* poly = acc + (size_t)c * n;
            poly[p] = mod_add(poly[p], br_residue(z.x, q, qd, qinv), q);
            poly[p + mpts] = mod_add(poly[p + mpts], br_residue(z.y, q, qd, qinv), q);
        }
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

// The two entry points differ only in their register budget (the kernel needs about 130
// registers unbounded, which left one block per SM): `blind_rotate_run` for 8 points a thread
// (radix-8 rounds, at most 256 threads, three blocks an SM, 80 registers) and
// `blind_rotate_run_wide` for 4 points a thread (radix-4 rounds, at most 512 threads, two blocks
// an SM, 64 registers).
extern "C" __global__ void __launch_bounds__(256, 3)
    blind_rotate_run(BrArgs a, const double2* __restrict__ key, const double2* __restrict__ tw,
                     const u64* __restrict__ test_poly, const u64* __restrict__ lwe,
                     u64* __restrict__ out, u32 count) {
    br_run(a, key, tw, test_poly, lwe, out, count);
}

extern "C" __global__ void __launch_bounds__(512, 2)
    blind_rotate_run_wide(BrArgs a, const double2* __restrict__ key,
                          const double2* __restrict__ tw, const u64* __restrict__ test_poly,
                          const u64* __restrict__ lwe, u64* __restrict__ out, u32 count) {
    br_run(a, key, tw, test_poly, lwe, out, count);
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
};

#define KS_TILE 16   // ciphertexts per block
#define KS_COLS 128  // output columns per block (= threads)
#define KS_CHUNK 64  // input coefficients decomposed per shared-memory chunk
#define KS_MAX_LEVELS 8

// LWE key switching: out = (−Σ d_{i,j}·K_{i,j}.a, b − Σ d_{i,j}·K_{i,j}.b) with d_{i,j} the
// signed digits of a_i. Grid (column tiles, ciphertext tiles), KS_COLS threads. The products
// |d|·K < 2^63 (checked on the host) accumulate exactly in signed 128-bit sums.
extern "C" __global__ void blind_rotate_key_switch(KsArgs a, const u64* __restrict__ key,
                                                   const u64* __restrict__ in,
                                                   u64* __restrict__ out, u32 count) {
    __shared__ int digits[KS_TILE][KS_CHUNK * KS_MAX_LEVELS];
    pdl_wait();
    const u32 col = blockIdx.x * KS_COLS + threadIdx.x;
    const u32 b0 = blockIdx.y * KS_TILE;
    const u32 l = a.levels;
    const u32 w_in = a.n_in + 1, w_out = a.n_out + 1;
    const u32 bits = a.base_log * l;
    const u64 base = 1ull << a.base_log;
    const long long half_base = (long long)(base >> 1);
    __int128 acc[KS_TILE];
#pragma unroll
    for (int t = 0; t < KS_TILE; t++) acc[t] = 0;
    for (u32 i0 = 0; i0 < a.n_in; i0 += KS_CHUNK) {
        const u32 len = min((u32)KS_CHUNK, a.n_in - i0);
        __syncthreads();
        for (u32 idx = threadIdx.x; idx < KS_TILE * KS_CHUNK; idx += blockDim.x) {
            const u32 t = idx / KS_CHUNK, i = idx % KS_CHUNK;
            const u32 bb = b0 + t;
            u64 y = 0;
            if (bb < count && i < len) y = br_round_scaled(in[(size_t)bb * w_in + i0 + i], bits, a.dec_c, a.q);
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
                digits[t][i * l + j] = (int)d;
            }
        }
        __syncthreads();
        if (col < w_out) {
            const u64* kp = key + (size_t)i0 * l * w_out + col;
            for (u32 r = 0; r < len * l; r++) {
                const long long kv = (long long)__ldg(kp + (size_t)r * w_out);
#pragma unroll
                for (int t = 0; t < KS_TILE; t++) acc[t] += (__int128)(kv * (long long)digits[t][r]);
            }
        }
    }
    if (col >= w_out) return;
    Mod m;
    m.q = a.q;
    m.bhi = a.bhi;
    m.blo = a.blo;
#pragma unroll
    for (int t = 0; t < KS_TILE; t++) {
        const u32 bb = b0 + t;
        if (bb >= count) break;
        const __int128 s = acc[t];
        // r = s mod q, canonical.
        u64 r = s >= 0 ? reduce_u128((u128)s, m) : mod_neg(reduce_u128((u128)(-s), m), a.q);
        u64 v;
        if (col < a.n_out) {
            v = mod_neg(r, a.q);
        } else {
            v = mod_sub(in[(size_t)bb * w_in + a.n_in], r, a.q);
        }
        out[(size_t)bb * w_out + col] = v;
    }
}
