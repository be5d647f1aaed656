// Negacyclic NTT over all limbs of a limb set (fhe-math `NttTable` contract: forward takes
// natural-order coefficients to bit-reversed evaluations, inverse is its exact inverse with
// the n^-1 scaling). Butterflies keep canonical values, so the output bits are those of the
// CPU's lazy implementation.
//
// Tables (by slot s, n entries each): fwd[s*n + k] = psi^brv(k), with Shoup companions;
// inv likewise for psi^-1; `consts[4*s..]` = n^-1, its Shoup companion, n^-1 * psi^(-n/2), its
// Shoup companion.
//
// Stages whose butterflies span more than one tile run as one launch each over global memory
// (ntt_forward_stage / ntt_inverse_stage); the stages inside a tile of `tile` contiguous
// coefficients run in one launch in shared memory (ntt_forward_tail / ntt_inverse_head), one
// block per tile and limb, tile/2 threads each.
#include "common.cuh"

// Forward (Cooley-Tukey) stage m over global memory: groups i < m of span t = n / (2m).
// Grid: x over the n/2 butterflies, y over limbs.
extern "C" __global__ void ntt_forward_stage(LimbSet ls, const u64* slots, const u64* tw,
                                             const u64* tw_shoup, u32 m, u32 t) {
    u32 idx = blockIdx.y;
    u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    u32 n = ls.n;
    if (b >= n / 2) return;
    u32 s = limbset_slot(ls, idx);
    u64* a = limbset_ptr(ls, idx);
    u64 q = slots[s * SLOT_STRIDE];
    u32 i = b / t;
    u32 j = 2 * i * t + (b % t);
    u64 w = tw[(u64)s * n + m + i], ws = tw_shoup[(u64)s * n + m + i];
    u64 u = a[j];
    u64 v = mul_shoup(a[j + t], w, ws, q);
    a[j] = mod_add(u, v, q);
    a[j + t] = mod_sub(u, v, q);
}

// All forward stages with span t < tile, in shared memory. Block: tile/2 threads, tile words of
// dynamic shared memory. Grid: x over tiles (n / tile), y over limbs.
extern "C" __global__ void ntt_forward_tail(LimbSet ls, const u64* slots, const u64* tw,
                                            const u64* tw_shoup, u32 tile) {
    extern __shared__ u64 sh[];
    u32 idx = blockIdx.y;
    u32 n = ls.n;
    u32 s = limbset_slot(ls, idx);
    u64* a = limbset_ptr(ls, idx) + (u64)blockIdx.x * tile;
    u64 q = slots[s * SLOT_STRIDE];
    const u64* w_tab = tw + (u64)s * n;
    const u64* ws_tab = tw_shoup + (u64)s * n;
    for (u32 e = threadIdx.x; e < tile; e += blockDim.x) sh[e] = a[e];
    __syncthreads();
    // First stage handled here has span tile/2: m = n / tile groups before this tile's.
    for (u32 t = tile / 2, m = n / tile; t >= 1; t >>= 1, m <<= 1) {
        for (u32 b = threadIdx.x; b < tile / 2; b += blockDim.x) {
            u32 gi = b / t;
            u32 j = 2 * gi * t + (b % t);
            u32 group = blockIdx.x * (tile / (2 * t)) + gi;
            u64 w = w_tab[m + group], ws = ws_tab[m + group];
            u64 u = sh[j];
            u64 v = mul_shoup(sh[j + t], w, ws, q);
            sh[j] = mod_add(u, v, q);
            sh[j + t] = mod_sub(u, v, q);
        }
        __syncthreads();
    }
    for (u32 e = threadIdx.x; e < tile; e += blockDim.x) a[e] = sh[e];
}

// Inverse (Gentleman-Sande) stages with span t < tile, in shared memory (the first stages of the
// inverse). When tile == n this includes the last stage with the n^-1 scaling.
extern "C" __global__ void ntt_inverse_head(LimbSet ls, const u64* slots, const u64* itw,
                                            const u64* itw_shoup, const u64* consts, u32 tile) {
    extern __shared__ u64 sh[];
    u32 idx = blockIdx.y;
    u32 n = ls.n;
    u32 s = limbset_slot(ls, idx);
    u64* a = limbset_ptr(ls, idx) + (u64)blockIdx.x * tile;
    u64 q = slots[s * SLOT_STRIDE];
    const u64* w_tab = itw + (u64)s * n;
    const u64* ws_tab = itw_shoup + (u64)s * n;
    for (u32 e = threadIdx.x; e < tile; e += blockDim.x) sh[e] = a[e];
    __syncthreads();
    for (u32 t = 1, h = n / 2; t < tile; t <<= 1, h >>= 1) {
        bool last = (h == 1);
        for (u32 b = threadIdx.x; b < tile / 2; b += blockDim.x) {
            u32 gi = b / t;
            u32 j = 2 * gi * t + (b % t);
            u64 u = sh[j], v = sh[j + t];
            if (last) {
                sh[j] = mul_shoup(mod_add(u, v, q), consts[4 * s], consts[4 * s + 1], q);
                sh[j + t] = mul_shoup(mod_sub(u, v, q), consts[4 * s + 2], consts[4 * s + 3], q);
            } else {
                u32 group = blockIdx.x * (tile / (2 * t)) + gi;
                sh[j] = mod_add(u, v, q);
                sh[j + t] = mul_shoup(mod_sub(u, v, q), w_tab[h + group], ws_tab[h + group], q);
            }
        }
        __syncthreads();
    }
    for (u32 e = threadIdx.x; e < tile; e += blockDim.x) a[e] = sh[e];
}

// Inverse stage h over global memory (span t = n / (2h)); h == 1 is the last stage with the
// scaling folded in.
extern "C" __global__ void ntt_inverse_stage(LimbSet ls, const u64* slots, const u64* itw,
                                             const u64* itw_shoup, const u64* consts, u32 h, u32 t) {
    u32 idx = blockIdx.y;
    u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    u32 n = ls.n;
    if (b >= n / 2) return;
    u32 s = limbset_slot(ls, idx);
    u64* a = limbset_ptr(ls, idx);
    u64 q = slots[s * SLOT_STRIDE];
    u32 i = b / t;
    u32 j = 2 * i * t + (b % t);
    u64 u = a[j], v = a[j + t];
    if (h == 1) {
        a[j] = mul_shoup(mod_add(u, v, q), consts[4 * s], consts[4 * s + 1], q);
        a[j + t] = mul_shoup(mod_sub(u, v, q), consts[4 * s + 2], consts[4 * s + 3], q);
    } else {
        a[j] = mod_add(u, v, q);
        a[j + t] = mul_shoup(mod_sub(u, v, q), itw[(u64)s * n + h + i], itw_shoup[(u64)s * n + h + i], q);
    }
}
