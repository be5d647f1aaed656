// Seeded samplers following fhe-math's randomness layout (sampler.rs, layout version 1):
// original ChaCha20 (20 rounds) with a 64-bit block counter (words 12, 13) and a 64-bit stream
// id (words 14, 15) = tag << 56 | poly_index << 16 | limb; keystream words little-endian.
#include "common.cuh"

struct ChachaKey {
    u32 k[8];
};

__device__ __forceinline__ u32 rotl32(u32 x, int r) { return (x << r) | (x >> (32 - r)); }

#define QR(a, b, c, d)                                                                            \
    x[a] += x[b]; x[d] = rotl32(x[d] ^ x[a], 16);                                               \
    x[c] += x[d]; x[b] = rotl32(x[b] ^ x[c], 12);                                               \
    x[a] += x[b]; x[d] = rotl32(x[d] ^ x[a], 8);                                                \
    x[c] += x[d]; x[b] = rotl32(x[b] ^ x[c], 7);

// One ChaCha20 block: out[0..16] = rounds(state) + state.
__device__ __forceinline__ void chacha20_block(const ChachaKey& key, u64 counter, u64 stream, u32 out[16]) {
    u32 st[16];
    st[0] = 0x61707865u; st[1] = 0x3320646eu; st[2] = 0x79622d32u; st[3] = 0x6b206574u;
    for (int i = 0; i < 8; i++) st[4 + i] = key.k[i];
    st[12] = (u32)counter; st[13] = (u32)(counter >> 32);
    st[14] = (u32)stream; st[15] = (u32)(stream >> 32);
    u32 x[16];
    for (int i = 0; i < 16; i++) x[i] = st[i];
    for (int r = 0; r < 10; r++) {
        QR(0, 4, 8, 12) QR(1, 5, 9, 13) QR(2, 6, 10, 14) QR(3, 7, 11, 15)
        QR(0, 5, 10, 15) QR(1, 6, 11, 12) QR(2, 7, 8, 13) QR(3, 4, 9, 14)
    }
    for (int i = 0; i < 16; i++) out[i] = x[i] + st[i];
}

__device__ __forceinline__ u64 stream_id(u32 tag, u32 poly_index, u32 limb) {
    return ((u64)tag << 56) | ((u64)poly_index << 16) | (u64)(limb & 0xffff);
}

// Uniform residues: coefficient i of limb (c, s) is the little-endian u128 of block i/4, words
// 4(i%4)..4(i%4)+4, of stream (tag, poly_index + c, s), reduced mod q_s (Barrett).
// Grid: x over blocks of 4 coefficients, y over the limbs of `out`.
extern "C" __global__ void sampler_uniform(LimbSet out, ChachaKey key, u32 tag, u32 poly_index, const u64* slots) {
    pdl_wait();
    u32 idx = blockIdx.y;
    u32 blk = blockIdx.x * blockDim.x + threadIdx.x;
    if (blk >= out.n / 4) return;
    u32 c = limbset_comp(out, idx);
    u32 s = limbset_slot(out, idx);
    u32 o[16];
    chacha20_block(key, blk, stream_id(tag, poly_index + c, s), o);
    Mod m = load_mod(slots, s);
    u64* dst = limbset_ptr(out, idx) + (u64)blk * 4;
    for (int r = 0; r < 4; r++) {
        u128 x = (u128)o[4 * r] | ((u128)o[4 * r + 1] << 32) | ((u128)o[4 * r + 2] << 64) | ((u128)o[4 * r + 3] << 96);
        dst[r] = reduce_u128(x, m);
    }
}

#define KIND_TERNARY 0
#define KIND_GAUSSIAN 1
#define GAUSSIAN_BOUND 19

// Small integers: coefficient i of component c uses the little-endian u64 x of block i/8,
// words 2(i%8), 2(i%8)+1, of stream (tag, poly_index + c, 0); ternary ((x*3) >> 64) - 1, or the
// constant-time CDT Gaussian with table cdt[0..19]; the integer is written into every limb of
// the component (v mod q_s). Grid: x over blocks of 8 coefficients, y over components.
extern "C" __global__ void sampler_small(LimbSet out, ChachaKey key, u32 tag, u32 poly_index, u32 kind,
                                         const u64* cdt, const u64* slots) {
    pdl_wait();
    u32 c = blockIdx.y;
    u32 blk = blockIdx.x * blockDim.x + threadIdx.x;
    if (blk >= out.n / 8) return;
    u32 o[16];
    chacha20_block(key, blk, stream_id(tag, poly_index + c, 0), o);
    long long vals[8];
    for (int r = 0; r < 8; r++) {
        u64 x = (u64)o[2 * r] | ((u64)o[2 * r + 1] << 32);
        long long v;
        if (kind == KIND_TERNARY) {
            v = (long long)(u64)(((u128)x * 3) >> 64) - 1;
        } else {
            u64 rr = x & 0x7fffffffffffffffull;
            long long sign = (long long)(x >> 63);
            u64 below = 0;
            for (int j = 0; j < GAUSSIAN_BOUND; j++) below += (rr - cdt[j]) >> 63;
            long long mag = (long long)(GAUSSIAN_BOUND - below);
            v = (mag ^ -sign) + sign;
        }
        vals[r] = v;
    }
    u32 per = out.q_cnt + out.p_cnt;
    for (u32 a = 0; a < per; a++) {
        u32 idx = (c - out.comp_lo) * per + a;
        u32 s = limbset_slot(out, idx);
        u64 q = slots[s * SLOT_STRIDE];
        u64* dst = limbset_ptr(out, idx) + (u64)blk * 8;
        for (int r = 0; r < 8; r++) {
            long long v = vals[r];
            dst[r] = v < 0 ? q - (u64)(-v) : (u64)v;
        }
    }
}
