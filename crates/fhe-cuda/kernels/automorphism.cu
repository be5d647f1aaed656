// Galois automorphism in NTT form: a permutation of the evaluation points,
// out[k] = a[map[k]] with the index map of `RingContext::galois_map`.
#include "common.cuh"

extern "C" __global__ void automorphism_apply(LimbSet out, LimbSet a, const u32* map) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= out.n) return;
    limbset_ptr(out, idx)[k] = limbset_ptr(a, idx)[map[k]];
}
