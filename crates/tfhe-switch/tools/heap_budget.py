#!/usr/bin/env python3
"""Noise, failure, parameter and cost budget of CKKS bootstrapping by blind rotation (HEAP).

Computes every number quoted in crates/tfhe-switch/HEAP.md. Deterministic: no randomness, no
arguments; `python3 crates/tfhe-switch/tools/heap_budget.py` prints the tables.

Noise model (the one of crates/tfhe-switch/src/params.rs, extended to an RNS gadget):
  * V(B) = B(B+1)/3: variance of noise uniform in [-B, B]; discrete Gaussian sigma 3.2 -> 10.24.
  * a signed digit uniform in [-Q_j/2, Q_j/2) has mean square Q_j^2/12 (RNS digit of a group
    of limbs of product Q_j, exact basis extension), a base-2^b signed digit (2^2b + 2)/12.
  * external product with a binary selector: 2 * N * V_rgsw * sum_j D_j per CMux.
  * a modulus switch adds (1 + sum s_i^2)/12 in units of the target modulus.
  * Gaussian (central-limit) model; P(|X| >= t) <= exp(-t^2 / (2 sigma^2)) (erfc bound).
"""

import math

LN2 = math.log(2.0)
SIGMA_RING = 3.2  # fhe_math::sampler::GAUSSIAN_SIGMA
V_RING = SIGMA_RING**2
HE_STD_128 = {12: 109.0, 13: 218.0, 14: 438.0}  # fhe_math::security::max_log_qp_128
FP64_LIMB_BITS = 41  # exact FP64 NTT needs q < 2^42
THROUGHPUT = {  # butterflies/s on one H200 (crates/fhe-cuda/PERF.md, BENCHMARKS.md section 11)
    "64-bit Shoup": 695e9,
    "FP64 exact (q < 2^42)": 1723e9,
}
RATE_32BIT = 2656e9  # 32-bit limbs only (q < 2^31): not applicable to the chosen limbs
HBM = 4.262e12  # bytes/s, measured copy bandwidth

# The conventional bootstrap (BENCHMARKS.md section 10, H200, commit ab488e5).
CONVENTIONAL = dict(name="BOOT_N16", slots=32768, ms=62.8, bits=24.4, median=26.3, levels=9,
                    key_gb=10.6 + 0.44, plain_gb=2.21, floor_ms=3.44)


def log2_tail(t, sigma):
    """log2 of the bound exp(-t^2/(2 sigma^2)) on P(|X| >= t)."""
    if sigma == 0:
        return -math.inf
    return -(t * t) / (2 * sigma * sigma) / LN2


def digit_ms_pow2(b):
    return (4.0**b + 2.0) / 12.0


def uniform_var(bound):
    return bound * (bound + 1) / 3.0


# ---------------------------------------------------------------------------------------------
# 1. The LWE side: sample extraction, modulus switch M = K' q0 -> q_ks, key switch, switch -> 2N
# ---------------------------------------------------------------------------------------------

LWE_SETS = {
    # name: (n_t, E2(s_t), log2 q_ks, noise variance, ks base_log, ks levels, source)
    "T918 (chosen)": (918, 0.5, 22, uniform_var(8), 2, 7,
                      "tfhe-rs V1_0 classic LWE side, relative noise 2^45/2^64 kept: B = 8 at 2^22"),
    "T918 exact KS": (918, 0.5, 22, uniform_var(8), 1, 22, "same, base 2, 22 levels, no rounding"),
    "OpenFHE STD128 (n 503)": (503, 2.0 / 3.0, 14, 3.19**2, 1, 14,
                               "OpenFHE binfhe STD128: n 503, q_ks 2^14, sigma 3.19"),
    "OpenFHE LPF_STD128 (n 556)": (556, 2.0 / 3.0, 15, 3.19**2 * 4, 1, 15,
                                   "n 556, q_ks 2^15, sigma 3.19*2 relative kept (params.rs)"),
    "HE std n 1024 ternary": (1024, 2.0 / 3.0, 27, V_RING, 3, 9,
                              "HE standard N = 1024 row: 27 bits, ternary, sigma 3.2"),
}


def lwe_side(n_ring, h, lwe, k_prime, rho):
    """Noise of the blind-rotation input in Z_2N units, and the failure bounds.

    h: Hamming weight of the secret the LWE samples are extracted under (sum s_i^2 = h).
    k_prime: the virtual modulus M = k_prime * q0 of the first switch (the staircase has
    k_prime steps around the circle, k_prime/2 on the usable half).
    rho: bound on |m| / q0.
    """
    n_t, e2_t, log_qks, v_lwe, b_ks, l_ks, _ = lwe
    two_n = 2 * n_ring
    q_ks = 2.0**log_qks
    unit = q_ks / two_n  # one Z_2N unit in q_ks units
    ms1 = (1 + h) / 12.0 / unit**2
    kept = b_ks * l_ks
    ks_noise = n_ring * l_ks * digit_ms_pow2(b_ks) * v_lwe
    ks_round = h * q_ks**2 / (12.0 * 4.0**kept) if kept < log_qks else 0.0
    ks = (ks_noise + ks_round) / unit**2
    ms2 = (1 + n_t * e2_t) / 12.0 if unit > 1 else 0.0
    var_x = ms1 + ks + ms2
    w = two_n / k_prime  # step width in Z_2N units
    sigma_i = math.sqrt((1 + h) / 12.0)
    t_range = k_prime / 4.0 - 0.5 - rho
    p_range = log2_tail(t_range, sigma_i) if t_range > 0 else 0.0
    t_step = w * (0.5 - rho)
    p_step = log2_tail(t_step, math.sqrt(var_x))
    p_coef = math.log2(2.0**p_range + 2.0**p_step) if max(p_range, p_step) > -1000 else -1000
    return dict(ms1=ms1, ks=ks, ms2=ms2, var_x=var_x, sigma_x=math.sqrt(var_x), w=w,
                sigma_i=sigma_i, p_range=p_range, p_step=p_step, p_coef=p_coef,
                margin=t_step)


def best_k_prime(n_ring, h, lwe, rho):
    best = None
    for kp in [8, 16, 32, 48, 56, 64, 72, 80, 96, 128, 192, 256, 512, 1024, 2048]:
        r = lwe_side(n_ring, h, lwe, kp, rho)
        if best is None or r["p_coef"] < best[1]["p_coef"]:
            best = (kp, r)
    return best


# ---------------------------------------------------------------------------------------------
# 2. The ring side: blind rotation at Q_BR, packing, raise, subtract, rescale by R
# ---------------------------------------------------------------------------------------------


def ring_side(n_ring, limbs, n_user, n_r, group, n_t=918, c_sel=1, h=32, n_br=None):
    """limbs: bit sizes [q0, q1..q_user, r_1..r_nr]; digits: consecutive groups of `group`
    limbs. Returns the noise budget, precision and costs."""
    log_n = int(round(math.log2(n_ring)))
    if n_br is None:
        n_br = n_ring
    assert len(limbs) == 1 + n_user + n_r
    q_bits = sum(limbs)
    r_bits = sum(limbs[1 + n_user:])
    out_bits = sum(limbs[: 1 + n_user])
    big_l = len(limbs)
    digits = [sum(limbs[i:i + group]) for i in range(0, big_l, group)]
    digit_limbs = [len(limbs[i:i + group]) for i in range(0, big_l, group)]
    n_dig = len(digits)
    sum_d = sum(2.0 ** (2 * b) / 12.0 for b in digits)
    v_row = n_ring * V_RING * sum_d  # one decomposed polynomial times one key row set
    # key unrolling: per pair of LWE coefficients three key products of 2 decomposed
    # components, each times X^e - 1 (twice the variance)
    v_br = n_t // 2 * 3 * c_sel * 2 * v_row * 2
    v_pack = n_br**2 * v_br + (n_br**2 - 1) / 3.0 * v_row  # CDKS PackLWEs, target coefficient
    v_dense = v_row  # key switch s' -> s of the raised ciphertext (gadget form)
    v_corr = v_pack + v_dense
    e2_dense = 2.0 / 3.0
    v_rescale = (1 + n_ring * e2_dense) / 12.0
    sigma_corr = math.sqrt(v_corr) / 2.0**r_bits
    sigma_out = math.sqrt(v_corr / 4.0**r_bits + v_rescale)
    # input: the rescale into level 0 (dense s) and the to_sparse switch's rounding (weight h)
    sigma_in = math.sqrt(v_rescale + (1 + h) / 12.0)
    delta0 = 2.0 ** limbs[1] if n_user >= 1 else 2.0 ** (limbs[0] - 4)
    delta_out = 2.0 ** limbs[n_user] if n_user >= 1 else delta0
    rel2 = (sigma_in / delta0) ** 2 + (sigma_out / delta_out) ** 2
    slots = n_ring // 2
    sigma_part = math.sqrt(n_ring / 2.0 * rel2)
    t_max = math.sqrt(2 * math.log(slots / LN2))  # median of the max of `slots` Rayleigh
    t_med = math.sqrt(2 * LN2)
    prec_max = -math.log2(t_max * sigma_part)
    prec_med = -math.log2(t_med * sigma_part)
    ntt_per_ep = 2 * big_l + 2 * sum(big_l - g for g in digit_limbs)
    bfly_per_ntt = n_ring // 2 * log_n
    eps = n_br * n_t * c_sel  # CMuxes (external products of the binary key)
    ntt_br = eps // 2 * ntt_per_ep  # key unrolling: one decomposition a pair of CMuxes
    ks_ntt = big_l + sum(big_l - g for g in digit_limbs) + 2 * big_l
    trace_steps = int(round(math.log2(n_ring / n_br)))
    n_ks_ring = (n_br - 1) + trace_steps + 1  # packing, trace, s' -> s
    ntt_ring = n_ks_ring * ks_ntt
    bfly = (ntt_br + ntt_ring) * bfly_per_ntt
    word = 8
    rgsw_bytes = n_t // 2 * 3 * c_sel * 2 * n_dig * 2 * big_l * n_ring * word
    auto_keys = log_n  # tau_{2^j + 1}, j = 1..log N
    pack_bytes = (auto_keys + 1) * n_dig * 2 * big_l * n_ring * word
    return dict(q_bits=q_bits, r_bits=r_bits, out_bits=out_bits, digits=digits, n_dig=n_dig,
                sigma_br=math.sqrt(v_br), sigma_corr=sigma_corr, sigma_out=sigma_out,
                sigma_in=sigma_in, prec_max=prec_max, prec_med=prec_med, ntt_per_ep=ntt_per_ep,
                eps=eps, ntt_total=ntt_br + ntt_ring, bfly=bfly, rgsw_bytes=rgsw_bytes,
                pack_bytes=pack_bytes, n_ks_ring=n_ks_ring, levels_left=n_user,
                delta0=delta0, big_l=big_l)


def search(n_ring, bound, q0_bits=41, user_bits=37, max_limb=FP64_LIMB_BITS, n_br=None,
           target_ratio=1.0):
    """For each number of user levels and digit group size, the smallest consumed modulus R
    (limbs of at most max_limb bits) whose correction noise after the rescale is at most
    target_ratio times the rescale's own rounding, within the security bound."""
    rows = []
    floor_sigma = math.sqrt((1 + n_ring * 2.0 / 3.0) / 12.0)
    for n_user in range(1, 12):
        base = [q0_bits] + [user_bits] * n_user
        room = int(bound) - sum(base)
        if room <= 0:
            break
        for group in (1, 2, 3, 4, 6):
            found = None
            for n_r in range(1, 12):
                r_total = min(room, n_r * max_limb)
                if r_total < n_r * 20:
                    break
                size = r_total // n_r
                extra = r_total - size * n_r
                r_limbs = [size + (1 if i < extra else 0) for i in range(n_r)]
                limbs = base + r_limbs
                if sum(limbs) > bound:
                    continue
                # smallest R meeting the target with this many limbs: shrink while it holds
                best = None
                for shrink in range(0, size - 19):
                    trial = [b - shrink for b in r_limbs]
                    res = ring_side(n_ring, base + trial, n_user, n_r, group, n_br=n_br)
                    if res["sigma_corr"] <= target_ratio * floor_sigma:
                        best = (base + trial, res)
                    else:
                        break
                if best:
                    found = (n_r, best)
                    break
            if found:
                n_r, (limbs, res) = found
                rows.append((n_user, group, n_r, limbs, res))
    return rows


def fmt_limbs(limbs, n_user):
    q0 = limbs[0]
    user = limbs[1:1 + n_user]
    r = limbs[1 + n_user:]
    return f"{q0} | {'+'.join(map(str, user))} | {'+'.join(map(str, r))}"


def main():
    n13 = 2**13
    rho = math.sqrt(2.0) / 16.0  # |m| <= sqrt(2) Delta_0, q0 / Delta_0 = 2^4
    print("# heap_budget.py: the numbers of crates/tfhe-switch/HEAP.md\n")
    print(f"rho = max |m| / q0 = sqrt(2) / 2^4 = {rho:.4f}\n")

    # Table 1: LWE side
    print("## Table 1. Blind-rotation input noise (Z_2N units, N = 2^13) and failure per coefficient")
    print("| LWE set | secret weight h | K' | step w | sigma_I | ms1 var | KS var | ms2 var | "
          "sigma_x | margin | log2 P(range) | log2 P(step) | log2 P(coef) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, lwe in LWE_SETS.items():
        for h in (32, 64, 128, 5461):
            if name != "T918 (chosen)" and h not in (32, 5461):
                continue
            kp, r = best_k_prime(n13, h, lwe, rho)
            hname = "dense (5461)" if h == 5461 else str(h)
            print(f"| {name} | {hname} | {kp} | {r['w']:.1f} | {r['sigma_i']:.2f} | "
                  f"{r['ms1']:.3g} | {r['ks']:.4g} | {r['ms2']:.1f} | {r['sigma_x']:.2f} | "
                  f"{r['margin']:.1f} | {r['p_range']:.1f} | {r['p_step']:.1f} | "
                  f"{r['p_coef']:.1f} |")
    print("\nThe chosen LWE side (T918, h = 32) against K':")
    for kp in (56, 64, 72, 80, 88, 96):
        r = lwe_side(n13, 32, LWE_SETS["T918 (chosen)"], kp, rho)
        print(f"  K' = {kp}: step {r['w']:.1f}, log2 P(range) {r['p_range']:.1f}, "
              f"log2 P(step) {r['p_step']:.1f}, per coefficient {r['p_coef']:.1f}, per bootstrap"
              f" (8192) {r['p_coef'] + 13:.1f}, (512) {r['p_coef'] + 9:.1f}")
    chosen = lwe_side(n13, 32, LWE_SETS["T918 (chosen)"], 72, rho)
    print(f"Chosen K' = 72: sigma_x = {chosen['sigma_x']:.2f} (ms1 {chosen['ms1']:.2g} + KS "
          f"{chosen['ks']:.2f} + ms2 {chosen['ms2']:.2f}), margin {chosen['margin']:.1f}\n")

    # the identity-function variant (blind rotation outputs m itself)
    sx = chosen["sigma_x"]
    rel = sx / (2 * n13) * 16.0  # error / Delta_0 with q0 = 16 Delta_0, per coefficient
    sp = math.sqrt(n13 / 2.0) * rel
    print("## Identity variant (the blind rotation returns m at the resolution q0/2N)")
    print(f"coefficient error sigma = {sx:.2f} units of q0/2N = {rel:.4f} Delta_0; slot error "
          f"sigma per part {sp:.2f}: precision max {-math.log2(4.17 * sp):.1f} bits, median "
          f"{-math.log2(1.18 * sp):.1f} bits (with an ideal 1-unit resolution: "
          f"{-math.log2(4.17 * math.sqrt(n13 / 2) * 16 / (2 * n13) / math.sqrt(12)):.1f} bits)\n")

    # Table 2: ring side search at N = 2^13
    print("## Table 2. N = 2^13, log2 Q_BR <= 218: levels left vs digits (FP64 limbs <= 41 bits,"
          " q0 41 bits, user primes 37 bits, correction noise <= rescale rounding)")
    header = ("| levels left | digits l (limbs each) | limbs q0 / user / R (bits) | log2 Q_BR | "
              "log2 R | sigma_BR (log2) | corr. after rescale | sigma_out | precision max / median"
              " | NTT per ext. product | floor FP64, 4096 slots | floor FP64, 256 slots |")
    print(header)
    print("|" + "---|" * 12)
    rows13 = search(n13, HE_STD_128[13])
    picked = {}
    for n_user, group, n_r, limbs, res in rows13:
        if min(limbs[1 + n_user:]) < 30:
            continue
        t_full = res["bfly"] / THROUGHPUT["FP64 exact (q < 2^42)"]
        small = ring_side(n13, limbs, n_user, n_r, group, n_br=512)
        t_small = small["bfly"] / THROUGHPUT["FP64 exact (q < 2^42)"]
        print(f"| {n_user} | {res['n_dig']} ({group}) | {fmt_limbs(limbs, n_user)} | "
              f"{res['q_bits']} | {res['r_bits']} | {math.log2(res['sigma_br']):.1f} | "
              f"{res['sigma_corr']:.1f} | {res['sigma_out']:.1f} | "
              f"{res['prec_max']:.1f} / {res['prec_med']:.1f} | {res['ntt_per_ep']} | "
              f"{t_full:.1f} s | {t_small:.2f} s |")

    # the chosen set
    limbs = [41, 37, 37, 34, 34, 34]
    main_set = ring_side(n13, limbs, 2, 3, 2)
    print("\n## Chosen ring set HEAP_N13: limbs 41 | 37+37 | 34+34+34, digits {q0 q1}{q2 r1}{r2 r3}")
    ms = main_set
    print(f"log2 Q_BR = {ms['q_bits']} (<= 218), digits {ms['digits']} bits, log2 R = {ms['r_bits']}")
    print(f"sigma_BR = 2^{math.log2(ms['sigma_br']):.2f}, after packing x N and rescale by R: "
          f"{ms['sigma_corr']:.2f}; rescale rounding {math.sqrt((1 + n13 * 2 / 3) / 12):.2f}; "
          f"sigma_out = {ms['sigma_out']:.2f}; sigma_in = {ms['sigma_in']:.2f}")
    print(f"precision (4096 slots, inputs |z| <= 1): max {ms['prec_max']:.1f} bits, median "
          f"{ms['prec_med']:.1f} bits; levels left {ms['levels_left']} x 37 bits")
    small_q0 = ring_side(n13, [36, 32, 32, 34, 34, 34], 2, 3, 2)
    print(f"same shape with a 36-bit q0 and 32-bit scales (q0 / Delta_0 = 2^4): precision max "
          f"{small_q0['prec_max']:.1f}, median {small_q0['prec_med']:.1f} bits")
    print()

    # Table 3: cost
    print("## Table 3. Cost of HEAP_N13 per bootstrap")
    print("| slots | blind rotations | external products | NTTs (2^13 points) | butterflies | "
          "floor 64-bit Shoup | floor FP64 exact | ring key switches |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for slots, n_br in ((4096, 8192), (256, 512)):
        r = ring_side(n13, limbs, 2, 3, 2, n_br=n_br)
        times = [r["bfly"] / v for v in THROUGHPUT.values()]
        print(f"| {slots} | {n_br} | {r['eps'] / 1e6:.3f} M | {r['ntt_total'] / 1e6:.1f} M | "
              f"{r['bfly']:.3g} | {times[0]:.2f} s | {times[1]:.2f} s | "
              f"{r['n_ks_ring']} |")
    lwe = LWE_SETS["T918 (chosen)"]
    ks_macs = 8192 * n13 * lwe[5] * (lwe[0] + 1)
    ksk_bytes = n13 * lwe[5] * (lwe[0] + 1) * 4
    print(f"\nLWE key switch: {ks_macs:.3g} integer multiply-adds for 8192 samples "
          f"(mod 2^22 in 32-bit words); key {ksk_bytes / 1e6:.0f} MB")
    print(f"RGSW key: {ms['rgsw_bytes'] / 1e9:.2f} GB (8-byte words; half with seeded masks); "
          f"read once per bootstrap: {ms['rgsw_bytes'] / HBM * 1e3:.2f} ms at 4.26 TB/s; "
          f"packing + s'->s keys {ms['pack_bytes'] / 1e6:.0f} MB")
    full = ring_side(n13, limbs, 2, 3, 2)
    t_fp = full["bfly"] / THROUGHPUT["FP64 exact (q < 2^42)"]
    print(f"compute floor / key floor = {t_fp / (ms['rgsw_bytes'] / HBM):.0f}")
    print(f"batch state: 8192 accumulators x 2 x {ms['big_l']} limbs x 8192 x 8 B = "
          f"{8192 * 2 * ms['big_l'] * n13 * 8 / 1e9:.1f} GB")
    c = CONVENTIONAL
    print(f"\nConventional {c['name']}: {c['ms']} ms, {c['slots']} slots, {c['bits']} / "
          f"{c['median']} bits, {c['levels']} levels; per slot {c['ms'] / c['slots'] * 1e3:.2f} us")
    print(f"HEAP_N13 floor (FP64): {t_fp:.2f} s, 4096 slots, per slot {t_fp / 4096 * 1e6:.0f} us;"
          f" floor / conventional wall = {t_fp / (c['ms'] / 1e3):.0f}x; per slot "
          f"{(t_fp / 4096) / (c['ms'] / 1e3 / c['slots']):.0f}x")
    for gpus in (2, 4, 8):
        print(f"  {gpus} GPUs (blind rotations split, linear): {t_fp / gpus:.2f} s floor")
    print()

    # Table 4: HEAP's own shape under this model
    print("## Table 4. HEAP's published shape under this model (N 2^13, 6 x 36-bit limbs, "
          "n_t 500, d = 2 digits of 108 bits)")
    for n_r in (0, 1, 2, 3):
        lim = [36] * 6
        res = ring_side(n13, lim, 5 - n_r, n_r, 3, n_t=500) if n_r else None
        if n_r == 0:
            sum_d = 2 * 2.0 ** 216 / 12
            v_br = 500 * 2 * n13 * V_RING * sum_d
            print(f"no rescale (5 levels left): sigma_BR = 2^{0.5 * math.log2(v_br):.1f}, "
                  f"after packing x N: 2^{0.5 * math.log2(v_br) + 13:.1f} against a 36-bit scale")
        else:
            print(f"{n_r} limb(s) consumed ({5 - n_r} levels left): correction noise after "
                  f"rescale 2^{math.log2(res['sigma_corr']):.1f} against a 36-bit scale")
    heap_eps = 8192 * 500
    print(f"external products for 8192 coefficients at n_t = 500: {heap_eps / 1e6:.2f} M; "
          f"at 1.5 ms: {heap_eps / 1.5e-3:.3g} external products/s, i.e. "
          f"{heap_eps * 24 * (n13 // 2 * 13) / 1.5e-3:.3g} butterflies/s at the minimum of "
          f"24 NTTs each")
    print()

    # Table 5: N = 2^14
    print("## Table 5. N = 2^14, log2 Q_BR <= 438 (4096 slots: 8192 blind rotations after one "
          "trace step; FP64 limbs)")
    print("| levels left | digits l (limbs each) | limbs q0 / user / R | log2 Q_BR | "
          "precision max / median (4096 slots) | NTT per ext. product (2^14 points) | "
          "floor FP64, 4096 slots | floor FP64, 8192 slots | RGSW key |")
    print("|" + "---|" * 9)
    n14 = 2**14
    rows14 = search(n14, HE_STD_128[14], n_br=8192)
    cheapest = {}
    for row in rows14:
        if min(row[3][1 + row[0]:]) < 30:
            continue
        if row[0] not in cheapest or row[4]["bfly"] < cheapest[row[0]][4]["bfly"]:
            cheapest[row[0]] = row
    for n_user in sorted(cheapest):
        _, group, n_r, lim, res = cheapest[n_user]
        full14 = ring_side(n14, lim, n_user, n_r, group, n_br=n14)
        # precision for 4096 slots: sigma per part uses sqrt(N/2) with N = 2^14; max over 4096
        t_half = res["bfly"] / THROUGHPUT["FP64 exact (q < 2^42)"]
        t_full = full14["bfly"] / THROUGHPUT["FP64 exact (q < 2^42)"]
        print(f"| {n_user} | {res['n_dig']} ({group}) | {fmt_limbs(lim, n_user)} | "
              f"{res['q_bits']} | {res['prec_max']:.1f} / {res['prec_med']:.1f} | "
              f"{res['ntt_per_ep']} | {t_half:.1f} s | {t_full:.1f} s | "
              f"{res['rgsw_bytes'] / 1e9:.1f} GB |")
    lw14 = lwe_side(n14, 32, LWE_SETS["T918 (chosen)"], 64, rho)
    lw14d = best_k_prime(n14, 10923, LWE_SETS["T918 (chosen)"], rho)
    print(f"\nN = 2^14 LWE side: h = 32, K' = 64: step {lw14['w']:.0f}, sigma_x "
          f"{lw14['sigma_x']:.2f}, log2 P(coef) {lw14['p_coef']:.1f}; dense (10923): best K' "
          f"{lw14d[0]}, log2 P(coef) {lw14d[1]['p_coef']:.1f}")


if __name__ == "__main__":
    main()
