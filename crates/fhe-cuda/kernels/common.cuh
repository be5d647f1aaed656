// Shared device helpers: modular arithmetic matching fhe-math's `Modulus` bit for bit, the
// table layout uploaded by `CudaBackend::new`, and the limb addressing of device buffers.
//
// Every function takes and returns canonical residues in [0, q) unless stated otherwise
// (q < 2^61). Compiled by NVRTC with --device-int128 (unsigned __int128 is available).
#pragma once

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned __int128 u128;

// Programmatic dependent launch (sm_90+): every kernel is launched with programmatic stream
// serialization (`launch_raw` in kernels/mod.rs), so it may be scheduled while the previous kernel
// of the stream drains. Each kernel calls this before touching memory that earlier kernels write
// (first thing, except where only tables are read before it): it waits until the
// previous grid has completed and its writes are visible (so stream order holds), then allows the
// next kernel to be launched, whose blocks take the SM room this grid's finished blocks free and
// wait in turn. What overlaps is the launch and block scheduling with this grid's tail. A no-op
// without programmatic launch or before sm_90. (Leaving the release to each block's exit, so
// that none of the next kernel's blocks wait on an SM, measured shorter back to back but longer
// from an idle GPU, where the early release hides the next launch's processing; PERF.md.)
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Loads of words that are not read again soon, evict-first (`ld.global.cs`), so that they do
// not push out of L2 what the next kernels read. `load_once`: a switching key's words, streamed
// through the key product (96 MiB a switch at N = 2^16, 25 + 7 limbs, dnum 3: more than L2
// holds). `load_last`: a scratch buffer's last read in a key switch (the raised digits in the key
// product, the accumulator and the converted limbs in mod_down's fused finish; hoisted rotations
// read the digits again for each key and measured faster with it too; both measured against
// plain loads in PERF.md).
template <class T>
__device__ __forceinline__ T load_once(const T* p) {
    return __ldcs(p);
}
template <class T>
__device__ __forceinline__ T load_last(const T* p) {
    return __ldcs(p);
}

// Per-slot constants of the ring, one row per slot (Q slots then P slots), 4 words each:
// [q, barrett_hi, barrett_lo, 1/q as an f64 (NTT FP64 butterflies)]. Built by tables.rs.
#define SLOT_STRIDE 4

struct Mod {
    u64 q;
    u64 bhi; // floor(2^128 / q) high word
    u64 blo; // low word
};

__device__ __forceinline__ Mod load_mod(const u64* slots, u32 s) {
    Mod m;
    m.q = slots[s * SLOT_STRIDE + 0];
    m.bhi = slots[s * SLOT_STRIDE + 1];
    m.blo = slots[s * SLOT_STRIDE + 2];
    return m;
}

// a - b if a >= b, else a, for a, b < 2^63 (every residue here is below 2^62): the sign bit
// of a - b decides, one 32-bit compare instead of a 64-bit one.
__device__ __forceinline__ u64 csub(u64 a, u64 b) {
    u64 d = a - b;
    return (long long)d < 0 ? a : d;
}

__device__ __forceinline__ u64 mod_add(u64 a, u64 b, u64 q) {
    return csub(a + b, q);
}

__device__ __forceinline__ u64 mod_sub(u64 a, u64 b, u64 q) {
    u64 d = a - b;
    return (long long)d < 0 ? d + q : d;
}

__device__ __forceinline__ u64 mod_neg(u64 a, u64 q) {
    return a == 0 ? 0 : q - a;
}

// x mod q for any 128-bit x: Barrett with the 128-bit constant m = floor(2^128 / q), the
// quotient estimate of `Modulus::reduce_u128` (floor(x·m / 2^128), exact from four partial
// products, of which only the low word is needed). m > 2^128/q - 1 and x < 2^128 put the
// estimate above x/q - 2, so r = x - quot·q < 2q and one conditional subtraction ends it.
__device__ __forceinline__ u64 reduce_u128(u128 x, const Mod& m) {
    u64 x_lo = (u64)x;
    u64 x_hi = (u64)(x >> 64);
    u64 lo_lo = __umul64hi(x_lo, m.blo);
    u128 mid1 = (u128)x_lo * m.bhi;
    u128 mid2 = (u128)x_hi * m.blo;
    u128 mid = (u128)lo_lo + (u128)(u64)mid1 + (u128)(u64)mid2;
    u64 quot = x_hi * m.bhi + (u64)(mid1 >> 64) + (u64)(mid2 >> 64) + (u64)(mid >> 64);
    return csub(x_lo - quot * m.q, m.q);
}

__device__ __forceinline__ u64 mod_reduce(u64 x, const Mod& m) {
    return reduce_u128((u128)x, m);
}

// x mod q for a 64-bit x, with the high word of the Barrett constant only: the quotient
// estimate floor(x·bhi / 2^64) is at most 2 below floor(x / q), so r < 3q < 2^63.
__device__ __forceinline__ u64 reduce_u64(u64 x, const Mod& m) {
    u64 r = x - __umul64hi(x, m.bhi) * m.q;
    return csub(csub(r, m.q), m.q);
}

__device__ __forceinline__ u64 mod_mul(u64 a, u64 b, const Mod& m) {
    return reduce_u128((u128)a * b, m);
}

// a * w mod q with w_shoup = floor(w * 2^64 / q): exact for any a < 2^64, canonical output.
__device__ __forceinline__ u64 mul_shoup(u64 a, u64 w, u64 w_shoup, u64 q) {
    u64 quot = __umul64hi(a, w_shoup);
    return csub(a * w - quot * q, q);
}

// Exact modular arithmetic in doubles, for moduli q < 2^42 (`F64Arith` in ntt.cu states the
// error bounds; its CPU model is tested in kernels/ntt.rs): integers held exactly (|x| < 2^52),
// every step a correctly rounded IEEE operation written as an intrinsic, so no contraction or
// reassociation can change a result. `qinv` is fl(1/q), the slot table's fourth word.
#define F64_MAGIC 6755399441055744.0   // 1.5 * 2^52: (x + MAGIC) - MAGIC = rint(x), |x| < 2^51
#define F64_TWO52 4503599627370496.0   // 2^52
#define F64_TWO52_BITS 0x4330000000000000ull
#define F64_MOD_BITS 42       // the helpers below are exact for q < 2^F64_MOD_BITS
#define F64_FACTOR_BITS 46    // ... and factors (sums) below 2^F64_FACTOR_BITS in magnitude

// x as a double, exact for x < 2^52: the bits of 2^52 + x, minus 2^52.
__device__ __forceinline__ double f64_from_u64(u64 x) {
    return __dadd_rn(__longlong_as_double((long long)(x | F64_TWO52_BITS)), -F64_TWO52);
}

// x - rint(x/q)·q: congruent to x, |result| < 0.51q for |x| < 2^46.
__device__ __forceinline__ double f64_reduce(double x, double q, double qinv) {
    const double quot = __dadd_rn(__fma_rn(x, qinv, F64_MAGIC), -F64_MAGIC);
    return __fma_rn(-quot, q, x);
}

// w·y mod q, signed: congruent to w·y, |result| < 0.52q for w < q and |y| < 2^46.
__device__ __forceinline__ double f64_mul_mod(double y, double w, double q, double qinv) {
    const double hi = __dmul_rn(w, y);
    const double lo = __fma_rn(w, y, -hi);
    const double quot = __dadd_rn(__fma_rn(hi, qinv, F64_MAGIC), -F64_MAGIC);
    return __dadd_rn(__fma_rn(-quot, q, hi), lo);
}

// The canonical residue of x (|x| < 2^46) as a word: reduce, add q to a negative value.
__device__ __forceinline__ u64 f64_canonical(double x, double q, double qinv) {
    double r = f64_reduce(x, q, qinv);
    r = r < 0.0 ? __dadd_rn(r, q) : r;
    return (u64)__double_as_longlong(__dadd_rn(r, F64_TWO52)) - F64_TWO52_BITS;
}

// A set of limbs of a device buffer laid out [component][slot][coeff] with `spc` slots per
// component: components comp_lo..comp_lo+comps, and per component the slots
// q_lo..q_lo+q_cnt followed by p_lo..p_lo+p_cnt. Mirrors `LimbSet` in Rust (repr(C)).
struct LimbSet {
    u64 ptr;
    u32 n;
    u32 spc;
    u32 comp_lo;
    u32 comps;
    u32 q_lo;
    u32 q_cnt;
    u32 p_lo;
    u32 p_cnt;
};

__device__ __forceinline__ u32 limbset_count(const LimbSet& ls) {
    return ls.comps * (ls.q_cnt + ls.p_cnt);
}

// The component and the slot of the idx-th limb of the set (component-major). idx is the
// block's grid index and the set a kernel parameter, so the values are block-uniform: the
// quotient by the limbs per component is found by subtraction (at most `comps` - 1 uniform
// steps) instead of an integer division (three float conversions and a reciprocal) per thread.
__device__ __forceinline__ void limbset_locate(const LimbSet& ls, u32 idx, u32& comp, u32& slot) {
    const u32 per = ls.q_cnt + ls.p_cnt;
    u32 c = 0, a = idx;
    while (per > 0 && a >= per) {
        a -= per;
        c++;
    }
    comp = ls.comp_lo + c;
    slot = a < ls.q_cnt ? ls.q_lo + a : ls.p_lo + (a - ls.q_cnt);
}

__device__ __forceinline__ u32 limbset_slot(const LimbSet& ls, u32 idx) {
    u32 c, s;
    limbset_locate(ls, idx, c, s);
    return s;
}

__device__ __forceinline__ u32 limbset_comp(const LimbSet& ls, u32 idx) {
    u32 c, s;
    limbset_locate(ls, idx, c, s);
    return c;
}

// Pointer to the first coefficient of the idx-th limb of the set.
__device__ __forceinline__ u64* limbset_ptr(const LimbSet& ls, u32 idx) {
    u32 c, s;
    limbset_locate(ls, idx, c, s);
    return (u64*)ls.ptr + ((u64)c * ls.spc + s) * ls.n;
}
