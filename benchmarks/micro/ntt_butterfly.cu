// Microbenchmark behind the FP64 NTT butterflies (crates/fhe-cuda/kernels/ntt.cu, `F64Arith`):
// butterfly throughput of the 64-bit integer Shoup butterfly (`IntArith`, our kernels' arithmetic
// before) against the exact double-precision one, for a 41-bit modulus. Each thread holds 8
// values and runs ROUNDS radix-8 rounds (3 stages, 12 butterflies) in registers with twiddles
// read from a small L1-resident table, then stores canonical values; both variants must give the
// same words (checked). No shared memory, no global traffic inside the loop: this is the
// arithmetic ceiling, not an NTT.
//
// On a machine with an NVIDIA GPU and nvcc (no Rust needed):
//   nvcc -O3 -arch=sm_90 -o ntt_butterfly benchmarks/micro/ntt_butterfly.cu && ./ntt_butterfly
// Measured on an NVIDIA H200 (2026-11-23, benchmarks/results/2026-11-23_h200_6e8af07_ntt_butterfly_micro.txt):
// forward int 697.8 G butterflies/s, f64 1702.8; inverse int 686.9, f64 1498.7; 0 mismatches of
// 17.3 M words each way.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>
typedef unsigned long long u64;

// The integer butterfly as in crates/fhe-cuda/kernels/ntt.cu (`fwd_bf`, `inv_bf`), copied so
// that this file builds alone with nvcc.
__device__ __forceinline__ u64 csub(u64 a, u64 b) {
    u64 d = a - b;
    return (long long)d < 0 ? a : d;
}
__device__ __forceinline__ u64 mul_shoup_lazy(u64 a, u64 w, u64 ws, u64 q) {
    return a * w - __umul64hi(a, ws) * q;
}
__device__ __forceinline__ void fwd_bf(u64& x, u64& y, u64 w, u64 ws, u64 q, u64 two_q) {
    u64 u = csub(x, two_q);
    u64 v = mul_shoup_lazy(y, w, ws, q);
    x = u + v;
    y = u + two_q - v;
}
__device__ __forceinline__ void inv_bf(u64& x, u64& y, u64 w, u64 ws, u64 q, u64 two_q) {
    u64 u = x, v = y;
    x = csub(u + v, two_q);
    y = mul_shoup_lazy(u + two_q - v, w, ws, q);
}

#define MAGIC 6755399441055744.0 // 1.5 * 2^52
// w*y mod q, |result| < 0.52 q, for |y| < 2^46, q < 2^42 (two-product, FMA remainder).
__device__ __forceinline__ double fmulmod(double w, double y, double q, double qinv) {
    double hi = __dmul_rn(w, y);
    double lo = __fma_rn(w, y, -hi);
    double quot = __dadd_rn(__fma_rn(hi, qinv, MAGIC), -MAGIC);
    return __dadd_rn(__fma_rn(-quot, q, hi), lo);
}
__device__ __forceinline__ double freduce(double x, double q, double qinv) {
    double quot = __dadd_rn(__fma_rn(x, qinv, MAGIC), -MAGIC);
    return __fma_rn(-quot, q, x);
}
__device__ __forceinline__ void ffwd_bf(double& x, double& y, double w, double q, double qinv) {
    double v = fmulmod(w, y, q, qinv), u = x;
    x = __dadd_rn(u, v);
    y = __dsub_rn(u, v);
}
__device__ __forceinline__ void finv_bf(double& x, double& y, double w, double q, double qinv) {
    double u = x, v = y;
    x = __dadd_rn(u, v);
    y = fmulmod(w, __dsub_rn(u, v), q, qinv);
}
__device__ __forceinline__ double to_d(u64 x) {
    return __dadd_rn(__longlong_as_double(x | 0x4330000000000000ull), -4503599627370496.0);
}
__device__ __forceinline__ u64 to_u(double r, double q, double qinv) {
    r = freduce(r, q, qinv);
    r = r < 0 ? __dadd_rn(r, q) : r;
    return (u64)__double_as_longlong(__dadd_rn(r, 4503599627370496.0)) - 0x4330000000000000ull;
}

// The 12 butterflies of a radix-8 round on x[0..8): forward from the top bit, inverse from
// the bottom, with the round's 7 twiddles.
#define ROUND_FWD(BF, W1, W2, W3, W4, W5, W6, W7)                                               \
    BF(x[0], x[4], W1); BF(x[1], x[5], W1); BF(x[2], x[6], W1); BF(x[3], x[7], W1);            \
    BF(x[0], x[2], W2); BF(x[1], x[3], W2); BF(x[4], x[6], W3); BF(x[5], x[7], W3);            \
    BF(x[0], x[1], W4); BF(x[2], x[3], W5); BF(x[4], x[5], W6); BF(x[6], x[7], W7);
#define ROUND_INV(BF, W1, W2, W3, W4, W5, W6, W7)                                               \
    BF(x[0], x[1], W4); BF(x[2], x[3], W5); BF(x[4], x[5], W6); BF(x[6], x[7], W7);            \
    BF(x[0], x[2], W2); BF(x[1], x[3], W2); BF(x[4], x[6], W3); BF(x[5], x[7], W3);            \
    BF(x[0], x[4], W1); BF(x[1], x[5], W1); BF(x[2], x[6], W1); BF(x[3], x[7], W1);

template <bool INV>
__global__ void k_int(u64* data, const ulonglong2* tw, u64 q, int rounds) {
    u64 two_q = 2 * q;
    size_t base = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 8;
    u64 x[8];
#pragma unroll
    for (int i = 0; i < 8; i++) x[i] = data[base + i];
    unsigned t = threadIdx.x & 31;
    for (int r = 0; r < rounds; r++) {
        const ulonglong2* T = tw + ((r * 7 + t * 13) & 4095);
        ulonglong2 w[7];
#pragma unroll
        for (int i = 0; i < 7; i++) w[i] = __ldg(T + i);
#define IBF_F(a, b, w) fwd_bf(a, b, w.x, w.y, q, two_q)
#define IBF_I(a, b, w) inv_bf(a, b, w.x, w.y, q, two_q)
        if (!INV) {
            ROUND_FWD(IBF_F, w[0], w[1], w[2], w[3], w[4], w[5], w[6])
        } else {
            ROUND_INV(IBF_I, w[0], w[1], w[2], w[3], w[4], w[5], w[6])
        }
    }
#pragma unroll
    for (int i = 0; i < 8; i++) data[base + i] = csub(csub(x[i], two_q), q);
}

template <bool INV>
__global__ void k_f64(u64* data, const double* tw, double q, int rounds) {
    double qinv = 1.0 / q;
    size_t base = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 8;
    double x[8];
#pragma unroll
    for (int i = 0; i < 8; i++) x[i] = to_d(data[base + i]);
    unsigned t = threadIdx.x & 31;
    for (int r = 0; r < rounds; r++) {
        const double* T = tw + ((r * 7 + t * 13) & 4095);
        double w[7];
#pragma unroll
        for (int i = 0; i < 7; i++) w[i] = __ldg(T + i);
#define FBF_F(a, b, w) ffwd_bf(a, b, w, q, qinv)
#define FBF_I(a, b, w) finv_bf(a, b, w, q, qinv)
        if (!INV) {
            // The forward grows by < 0.51q per stage: reduce every 4 rounds (12 stages).
            if ((r & 3) == 0) {
#pragma unroll
                for (int i = 0; i < 8; i++) x[i] = freduce(x[i], q, qinv);
            }
            ROUND_FWD(FBF_F, w[0], w[1], w[2], w[3], w[4], w[5], w[6])
        } else {
            // The inverse's sums double per stage: reduce every round (as ntt.cu does).
#pragma unroll
            for (int i = 0; i < 8; i++) x[i] = freduce(x[i], q, qinv);
            ROUND_INV(FBF_I, w[0], w[1], w[2], w[3], w[4], w[5], w[6])
        }
    }
#pragma unroll
    for (int i = 0; i < 8; i++) data[base + i] = to_u(x[i], q, qinv);
}

int main() {
    const u64 q = 1099511922689ull; // a 41-bit prime (only the arithmetic matters here)
    const int threads = 256, blocks = 132 * 64, rounds = 64;
    const size_t n = (size_t)blocks * threads * 8;
    std::vector<u64> h(n), tw_int(2 * 4200);
    std::vector<double> tw_d(4200);
    uint64_t s = 88172645463325252ull;
    auto rnd = [&]() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    };
    for (auto& v : h) v = rnd() % q;
    for (int i = 0; i < 4200; i++) {
        u64 w = rnd() % q;
        tw_int[2 * i] = w;
        tw_int[2 * i + 1] = (u64)(((unsigned __int128)w << 64) / q);
        tw_d[i] = (double)w;
    }
    u64 *d1, *d2, *dti;
    double* dtd;
    cudaMalloc(&d1, n * 8);
    cudaMalloc(&d2, n * 8);
    cudaMalloc(&dti, tw_int.size() * 8);
    cudaMalloc(&dtd, tw_d.size() * 8);
    cudaMemcpy(dti, tw_int.data(), tw_int.size() * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(dtd, tw_d.data(), tw_d.size() * 8, cudaMemcpyHostToDevice);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const double butterflies = (double)blocks * threads * 12.0 * rounds;
    auto run = [&](bool inv, bool f64, u64* d) {
        const ulonglong2* ti = (const ulonglong2*)dti;
        if (f64) {
            if (inv) k_f64<true><<<blocks, threads>>>(d, dtd, (double)q, rounds);
            else k_f64<false><<<blocks, threads>>>(d, dtd, (double)q, rounds);
        } else {
            if (inv) k_int<true><<<blocks, threads>>>(d, ti, q, rounds);
            else k_int<false><<<blocks, threads>>>(d, ti, q, rounds);
        }
    };
    for (int inv = 0; inv < 2; inv++) {
        cudaMemcpy(d1, h.data(), n * 8, cudaMemcpyHostToDevice);
        cudaMemcpy(d2, h.data(), n * 8, cudaMemcpyHostToDevice);
        run(inv, false, d1);
        run(inv, true, d2);
        std::vector<u64> r1(n), r2(n);
        cudaMemcpy(r1.data(), d1, n * 8, cudaMemcpyDeviceToHost);
        cudaMemcpy(r2.data(), d2, n * 8, cudaMemcpyDeviceToHost);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += r1[i] != r2[i];
        printf("%s: int vs f64 mismatches %zu of %zu (%s)\n", inv ? "inverse" : "forward", bad, n,
               cudaGetErrorString(cudaGetLastError()));
        for (int f64 = 0; f64 < 2; f64++) {
            std::vector<float> ts;
            for (int it = 0; it < 25; it++) {
                cudaEventRecord(e0);
                run(inv, f64, f64 ? d2 : d1);
                cudaEventRecord(e1);
                cudaEventSynchronize(e1);
                float ms;
                cudaEventElapsedTime(&ms, e0, e1);
                if (it >= 5) ts.push_back(ms);
            }
            std::sort(ts.begin(), ts.end());
            float med = ts[ts.size() / 2];
            printf("  %s %s: %.3f ms, %.1f G butterflies/s\n", inv ? "inv" : "fwd",
                   f64 ? "f64" : "int", med, butterflies / (med * 1e-3) / 1e9);
        }
    }
    return 0;
}
