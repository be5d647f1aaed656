// Fused linear combination of RNS buffers with per-limb scalar coefficients
// (`RingBackend::linear_combination`): out_j[c][s][k] = Σ_i w_{j,i,s'} · in_i[c][s][k] mod q_s,
// s' the position of slot s among the active limbs. Grid: x over coefficients (blockDim.x each),
// y over the active limbs of one buffer (component-major, as a LimbSet), z over tiles of
// LINCOMB_TILE outputs. Each thread reads its coefficient of every input once per tile and keeps
// the tile's sums in registers.
#include "common.cuh"

// Outputs per thread: their 128-bit sums stay in registers and each input word read serves all
// of them (with at most this many outputs every input is read exactly once).
#define LINCOMB_TILE 4
// Products summed between reductions: each is below (2^61)^2 = 2^122, so a residue (< 2^61)
// plus 32 of them stays below 2^128 (any count up to 63 would).
#define LINCOMB_CHUNK 32

// Reads k inputs and writes `outputs` buffers over the set's limbs: 8·N·limbs·(k + outputs)
// bytes when outputs <= LINCOMB_TILE (each further tile reads the inputs again), the floor.
// `shape` gives the limbs (its `ptr` is unused); `ptrs` holds the k input then the `outputs`
// output base addresses, all laid out like `shape`; `coeffs[(j·k + i)·a + s']` is output j's
// canonical coefficient of input i at the s'-th active limb (a = q_cnt + p_cnt).
extern "C" __global__ void lincomb_apply(LimbSet shape, const u64* ptrs, const u64* coeffs, u32 k,
                                         u32 outputs, const u64* slots) {
    pdl_wait();
    const u32 idx = blockIdx.y;
    const u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= shape.n) return;
    u32 comp, slot;
    limbset_locate(shape, idx, comp, slot);
    const u32 a = shape.q_cnt + shape.p_cnt;
    const u32 pos = idx - (comp - shape.comp_lo) * a;
    const u64 off = ((u64)comp * shape.spc + slot) * shape.n + x;
    const Mod m = load_mod(slots, slot);
    const u32 j0 = blockIdx.z * LINCOMB_TILE;
    const u32 jn = min(outputs - j0, (u32)LINCOMB_TILE);
    // Coefficient (j0 + t, i) of this limb: w[t][i·a], the rows k·a words apart.
    const u64* w = coeffs + (u64)j0 * k * a + pos;
    const u64 row = (u64)k * a;

    u64 res[LINCOMB_TILE];
#pragma unroll
    for (u32 t = 0; t < LINCOMB_TILE; t++) res[t] = 0;
    for (u32 i0 = 0; i0 < k; i0 += LINCOMB_CHUNK) {
        u128 acc[LINCOMB_TILE];
#pragma unroll
        for (u32 t = 0; t < LINCOMB_TILE; t++) acc[t] = res[t];
        const u32 i1 = min(k, i0 + LINCOMB_CHUNK);
        for (u32 i = i0; i < i1; i++) {
            const u64 v = ((const u64*)ptrs[i])[off];
            const u64* wi = w + (u64)i * a;
#pragma unroll
            for (u32 t = 0; t < LINCOMB_TILE; t++) {
                if (t < jn) acc[t] += (u128)__ldg(wi + t * row) * v;
            }
        }
#pragma unroll
        for (u32 t = 0; t < LINCOMB_TILE; t++) res[t] = reduce_u128(acc[t], m);
    }
#pragma unroll
    for (u32 t = 0; t < LINCOMB_TILE; t++) {
        if (t < jn) ((u64*)ptrs[k + j0 + t])[off] = res[t];
    }
}
