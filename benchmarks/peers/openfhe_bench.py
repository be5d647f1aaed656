#!/usr/bin/env python3
"""Peer benchmark: OpenFHE Python wheel (PyPI `openfhe`, CPU).

The PyPI wheel (1.6.1.0.22.4) ships a cpython-310 extension only, so run it with Python 3.10:
  python3.10 -m pip install openfhe numpy
  OMP_NUM_THREADS=2 python3.10 benchmarks/peers/openfhe_bench.py [sections...]
Sections: ckks15 ckks16 bgv15 bfv15 boot16 schswitch (default: all but boot16, which is slow).
Timing: time.perf_counter() around each call; warm-up, then median of --reps runs.
"""
import argparse
import json
import math
import os
import sys
import time
import traceback

import numpy as np
import openfhe as o

RESULTS = []


def stat(ts):
    a = np.sort(np.asarray(ts)) * 1e3
    return dict(median_ms=float(np.median(a)), min_ms=float(a[0]), max_ms=float(a[-1]), n=len(a))


def bench(cfg, op, fn, reps, warm=1):
    try:
        for _ in range(warm):
            fn()
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        s = stat(ts)
        s.update(cfg=cfg, op=op)
        RESULTS.append(s)
        print(f"RESULT openfhe | {cfg} | {op} | median {s['median_ms']:.2f} ms | min {s['min_ms']:.2f} | "
              f"max {s['max_ms']:.2f} | n={s['n']}", flush=True)
    except Exception as e:
        print(f"ERROR openfhe | {cfg} | {op} | {e!r}", flush=True)


def once(label, fn):
    t0 = time.perf_counter()
    r = fn()
    dt = time.perf_counter() - t0
    print(f"SETUP openfhe | {label} | {dt:.2f} s", flush=True)
    RESULTS.append(dict(cfg="setup", op=label, seconds=dt))
    return r


def gen_cc(params, label):
    for sl in (o.HEStd_128_classic, o.HEStd_NotSet):
        params.SetSecurityLevel(sl)
        try:
            cc = o.GenCryptoContext(params)
            return cc, str(sl).split(".")[-1]
        except Exception as e:
            print(f"NOTE openfhe | {label} | {sl} rejected: {str(e)[:200]}", flush=True)
    raise RuntimeError("no context")


def logq(cc, first=60, scale=50, depth=0):
    """log2 of the ciphertext modulus Q (GetModulus() is a double and overflows past 2^1024)."""
    v = cc.GetModulus()
    if math.isfinite(v) and v > 0:
        return f"{math.log2(v):.0f}"
    return f"~{first + depth * scale} (approx: first+depth*scale)"


def enable(cc, *feats):
    for f in feats:
        cc.Enable(f)


def ckks(logn, depth, reps):
    p = o.CCParamsCKKSRNS()
    p.SetMultiplicativeDepth(depth)
    p.SetScalingModSize(50)
    p.SetFirstModSize(60)
    p.SetRingDim(1 << logn)
    p.SetBatchSize(1 << (logn - 1))
    p.SetScalingTechnique(o.FIXEDMANUAL)  # so EvalMult (tensor+relin) and Rescale are timed separately
    p.SetKeySwitchTechnique(o.HYBRID)
    p.SetNumLargeDigits(3)
    cc, sl = gen_cc(p, f"CKKS logN={logn}")
    enable(cc, o.PKE, o.KEYSWITCH, o.LEVELEDSHE)
    N = cc.GetRingDimension()
    cfg = (f"CKKS N=2^{int(math.log2(N))} depth={depth} logQ={logq(cc, 60, 50, depth)} "
           f"scale=2^50 {sl} HYBRID dnum=3 FIXEDMANUAL")
    print("PARAMS openfhe |", cfg, flush=True)
    keys = once(f"{cfg} KeyGen", cc.KeyGen)
    once(f"{cfg} EvalMultKeyGen", lambda: cc.EvalMultKeyGen(keys.secretKey))
    once(f"{cfg} EvalRotateKeyGen([1])", lambda: cc.EvalRotateKeyGen(keys.secretKey, [1]))
    slots = N // 2
    rng = np.random.default_rng(1)
    x = list(rng.uniform(-1, 1, slots))
    y = list(rng.uniform(-1, 1, slots))
    px = cc.MakeCKKSPackedPlaintext(x)
    py = cc.MakeCKKSPackedPlaintext(y)
    cx = cc.Encrypt(keys.publicKey, px)
    cy = cc.Encrypt(keys.publicKey, py)
    bench(cfg, "encode (MakeCKKSPackedPlaintext)", lambda: cc.MakeCKKSPackedPlaintext(x), reps)
    bench(cfg, "encrypt_pk(plaintext)", lambda: cc.Encrypt(keys.publicKey, px), reps)
    bench(cfg, "decrypt+decode", lambda: cc.Decrypt(cx, keys.secretKey), reps)
    bench(cfg, "add", lambda: cc.EvalAdd(cx, cy), reps)
    bench(cfg, "multiply no relin (EvalMultNoRelin)", lambda: cc.EvalMultNoRelin(cx, cy), reps)
    bench(cfg, "multiply+relin (EvalMult)", lambda: cc.EvalMult(cx, cy), reps)
    m = cc.EvalMult(cx, cy)
    bench(cfg, "rescale", lambda: cc.Rescale(m), reps)
    bench(cfg, "multiply+relin+rescale", lambda: cc.Rescale(cc.EvalMult(cx, cy)), reps)
    bench(cfg, "rotate(1) (EvalRotate)", lambda: cc.EvalRotate(cx, 1), reps)
    r = cc.Decrypt(cc.Rescale(cc.EvalMult(cx, cy)), keys.secretKey)
    r.SetLength(slots)
    err = np.max(np.abs(np.array(r.GetRealPackedValue()) - np.array(x) * np.array(y)))
    print(f"CHECK openfhe | {cfg} | mult max_abs_err {err:.3g} (log2 {math.log2(err):.1f})", flush=True)


def intscheme(kind, logn, depth, reps):
    p = o.CCParamsBGVRNS() if kind == "BGV" else o.CCParamsBFVRNS()
    p.SetPlaintextModulus(65537)
    p.SetMultiplicativeDepth(depth)
    p.SetRingDim(1 << logn)
    p.SetBatchSize(1 << logn)
    p.SetKeySwitchTechnique(o.HYBRID)
    p.SetNumLargeDigits(3)
    if kind == "BGV":
        p.SetScalingTechnique(o.FIXEDMANUAL)
    cc, sl = gen_cc(p, f"{kind} logN={logn}")
    enable(cc, o.PKE, o.KEYSWITCH, o.LEVELEDSHE)
    N = cc.GetRingDimension()
    cfg = f"{kind} N=2^{int(math.log2(N))} depth={depth} t=65537 logQ={logq(cc)} {sl} HYBRID dnum=3"
    if kind == "BGV":
        cfg += " FIXEDMANUAL"
    print("PARAMS openfhe |", cfg, flush=True)
    keys = once(f"{cfg} KeyGen", cc.KeyGen)
    once(f"{cfg} EvalMultKeyGen", lambda: cc.EvalMultKeyGen(keys.secretKey))
    once(f"{cfg} EvalRotateKeyGen([1])", lambda: cc.EvalRotateKeyGen(keys.secretKey, [1]))
    rng = np.random.default_rng(2)
    x = [int(v) for v in rng.integers(0, 65537, N)]
    y = [int(v) for v in rng.integers(0, 65537, N)]
    px = cc.MakePackedPlaintext(x)
    py = cc.MakePackedPlaintext(y)
    cx = cc.Encrypt(keys.publicKey, px)
    cy = cc.Encrypt(keys.publicKey, py)
    bench(cfg, "encrypt_pk(plaintext)", lambda: cc.Encrypt(keys.publicKey, px), reps)
    bench(cfg, "add", lambda: cc.EvalAdd(cx, cy), reps)
    bench(cfg, "multiply+relin (EvalMult)", lambda: cc.EvalMult(cx, cy), reps)
    if kind == "BGV":
        m = cc.EvalMult(cx, cy)
        bench(cfg, "mod switch (ModReduce)", lambda: cc.ModReduce(m), reps)
    bench(cfg, "rotate(1) (EvalRotate)", lambda: cc.EvalRotate(cx, 1), reps)
    r = cc.Decrypt(cc.EvalMult(cx, cy), keys.secretKey)
    r.SetLength(N)
    got = np.array(r.GetPackedValue()) % 65537
    exp = (np.array(x, dtype=object) * np.array(y, dtype=object)) % 65537
    print(f"CHECK openfhe | {cfg} | mult wrong slots {int(np.sum(got != exp.astype(np.int64)))}", flush=True)


def boot16():
    p = o.CCParamsCKKSRNS()
    kd = o.UNIFORM_TERNARY
    p.SetSecretKeyDist(kd)
    p.SetRingDim(1 << 16)
    p.SetScalingModSize(59)
    p.SetFirstModSize(60)
    p.SetScalingTechnique(o.FLEXIBLEAUTO)
    lb = [4, 4]
    after = 10
    depth = after + o.CryptoContext.GetBootstrapDepth(lb, kd)
    p.SetMultiplicativeDepth(depth)
    p.SetBatchSize(1 << 15)
    cc, sl = gen_cc(p, "CKKS boot N=2^16")
    enable(cc, o.PKE, o.KEYSWITCH, o.LEVELEDSHE, o.ADVANCEDSHE, o.FHE)
    N = cc.GetRingDimension()
    slots = N // 2
    cfg = (f"CKKS-boot N=2^{int(math.log2(N))} slots={slots} depth={depth} levelBudget={lb} levels_after={after} "
           f"logQ={logq(cc, 60, 59, depth)} scale=2^59 UNIFORM_TERNARY FLEXIBLEAUTO {sl}")
    print("PARAMS openfhe |", cfg, flush=True)
    once(f"{cfg} EvalBootstrapSetup", lambda: cc.EvalBootstrapSetup(lb))
    keys = once(f"{cfg} KeyGen", cc.KeyGen)
    once(f"{cfg} EvalMultKeyGen", lambda: cc.EvalMultKeyGen(keys.secretKey))
    once(f"{cfg} EvalBootstrapKeyGen", lambda: cc.EvalBootstrapKeyGen(keys.secretKey, slots))
    rng = np.random.default_rng(4)
    x = list(rng.uniform(-1, 1, slots))
    pt = cc.MakeCKKSPackedPlaintext(x, 1, depth - 1)
    ct = cc.Encrypt(keys.publicKey, pt)
    ts = []
    for i in range(2):
        t0 = time.perf_counter()
        out = cc.EvalBootstrap(ct)
        ts.append(time.perf_counter() - t0)
        print(f"RESULT openfhe | {cfg} | EvalBootstrap run {i} | {ts[-1]:.2f} s", flush=True)
    r = cc.Decrypt(out, keys.secretKey)
    r.SetLength(slots)
    err = np.abs(np.array(r.GetRealPackedValue()) - np.array(x))
    left = depth - out.GetLevel() - (out.GetNoiseScaleDeg() - 1)
    print(f"CHECK openfhe | {cfg} | levels left after bootstrap {left} | max_abs_err {err.max():.3g} "
          f"(log2 {math.log2(err.max()):.1f}) | mean_abs_err {err.mean():.3g} (log2 {math.log2(err.mean()):.1f})", flush=True)
    RESULTS.append(dict(cfg=cfg, op="EvalBootstrap", seconds=ts, levels_left=left, max_abs_err=float(err.max())))


def schswitch(fhew_sec):
    # Port of openfhe-python examples/pke/scheme-switching.py ComparisonViaSchemeSwitching
    p = o.CCParamsCKKSRNS()
    p.SetMultiplicativeDepth(17)
    p.SetScalingModSize(50)
    p.SetFirstModSize(60)
    p.SetScalingTechnique(o.FIXEDAUTO)
    p.SetSecurityLevel(o.HEStd_NotSet)
    p.SetRingDim(8192)
    slots = 16
    p.SetBatchSize(slots)
    p.SetSecretKeyDist(o.UNIFORM_TERNARY)
    p.SetKeySwitchTechnique(o.HYBRID)
    p.SetNumLargeDigits(3)
    cc = o.GenCryptoContext(p)
    enable(cc, o.PKE, o.KEYSWITCH, o.LEVELEDSHE, o.ADVANCEDSHE, o.SCHEMESWITCH)
    keys = cc.KeyGen()
    sp = o.SchSwchParams()
    sp.SetSecurityLevelCKKS(o.HEStd_NotSet)
    sp.SetSecurityLevelFHEW(fhew_sec)
    logq = 25
    sp.SetCtxtModSizeFHEWLargePrec(logq)
    sp.SetNumSlotsCKKS(slots)
    sp.SetNumValues(slots)
    cfg = f"CKKS->FHEW compare: CKKS N=8192 depth 17 HEStd_NotSet, FHEW {str(fhew_sec).split('.')[-1]} logQ_LWE={logq}, {slots} values"
    sk_fhew = once(f"{cfg} EvalSchemeSwitchingSetup", lambda: cc.EvalSchemeSwitchingSetup(sp))
    lwe = cc.GetBinCCForSchemeSwitch()
    once(f"{cfg} EvalSchemeSwitchingKeyGen", lambda: cc.EvalSchemeSwitchingKeyGen(keys, sk_fhew))
    beta = lwe.GetBeta()
    plwe = int((1 << logq) / (2 * beta))
    cc.EvalCompareSwitchPrecompute(plwe, 1.0)
    x1 = [float(i) for i in range(slots)]
    x2 = [5.25] * slots
    c1 = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(x1, 1, 0, None, slots))
    c2 = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(x2, 1, 0, None, slots))
    print(f"PARAMS openfhe | {cfg} | LWE n={lwe.Getn()} q={lwe.Getq()}", flush=True)
    ts = []
    for i in range(2):
        t0 = time.perf_counter()
        res = cc.EvalCompareSchemeSwitching(c1, c2, slots, slots)
        ts.append(time.perf_counter() - t0)
    d = cc.Decrypt(keys.secretKey, res)
    d.SetLength(slots)
    got = [round(v) for v in d.GetRealPackedValue()]
    exp = [int(a < b) for a, b in zip(x1, x2)]
    print(f"RESULT openfhe | {cfg} | EvalCompareSchemeSwitching | runs {[round(t, 2) for t in ts]} s | "
          f"correct {sum(int(g == e) for g, e in zip(got, exp))}/{slots}", flush=True)
    RESULTS.append(dict(cfg=cfg, op="EvalCompareSchemeSwitching", seconds=ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sections", nargs="*", default=["ckks15", "bgv15", "bfv15", "ckks16", "schswitch"])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    print("VERSION openfhe", o.__version__, "native int", o.get_native_int(), "OMP_NUM_THREADS",
          os.environ.get("OMP_NUM_THREADS"), "cpus", os.cpu_count(), flush=True)
    for s in a.sections:
        try:
            if s == "ckks15":
                ckks(15, 15, a.reps)
            elif s == "ckks16":
                ckks(16, 24, max(3, a.reps // 2))
            elif s == "bgv15":
                intscheme("BGV", 15, 12, a.reps)
            elif s == "bfv15":
                intscheme("BFV", 15, 12, a.reps)
            elif s == "boot16":
                boot16()
            elif s == "schswitch":
                schswitch(o.TOY)
            elif s == "schswitch128":
                schswitch(o.STD128)
        except Exception:
            traceback.print_exc()
        if a.out:
            with open(a.out, "w") as f:
                json.dump(RESULTS, f, indent=1)


if __name__ == "__main__":
    main()
