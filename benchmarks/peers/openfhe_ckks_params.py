#!/usr/bin/env python3
"""OpenFHE (PyPI `openfhe` wheel, CPU) CKKS precision and timing at OUR parameter sets.

The wheel ships a cpython-310 extension only, so run it with Python 3.10:
  python3.10 -m venv "$VENV" && "$VENV/bin/pip" install openfhe numpy
  OMP_NUM_THREADS=2 "$VENV/bin/python" benchmarks/peers/openfhe_ckks_params.py n13 --out r.json

Parameter sets (scale 2^40 = scaling mod size 40, first modulus 60 bits, HYBRID key switching,
full slots N/2, public-key encryption, ternary secret as OpenFHE's default UNIFORM_TERNARY):
  n13           N=2^13, depth 2  (Q = 60 + 2*40),  dnum 3
  cat           N=2^15, depth 16 (Q = 60 + 16*40), dnum 6
  n11_insecure  N=2^11, depth 10 (Q = 60 + 10*40), dnum 3, HEStd_NotSet (chain precision only)
OpenFHE chooses the special primes P itself; the script reads them back out of a serialized
relinearization key (JSON), and tries HEStd_128_classic first, HEStd_NotSet if OpenFHE refuses.

Precision = -log2(max abs error over all slots) against the same computation in numpy.
Timing = time.perf_counter() around each Python call (includes the pybind11 crossing, a few us),
one warm-up, then the median of --reps runs, in ms.
"""
import argparse
import json
import math
import os
import re
import sys
import time
import traceback

import numpy as np
import openfhe as o

SETS = {
    "n13": dict(logn=13, depth=2, dnum=3),
    "cat": dict(logn=15, depth=16, dnum=6),
    "n11_insecure": dict(logn=11, depth=10, dnum=3, insecure=True),
}
TECHS = {"FLEXIBLEAUTO": o.FLEXIBLEAUTO, "FIXEDMANUAL": o.FIXEDMANUAL}
OUT = dict(results=[])


def log(kind, *parts):
    print(f"{kind} openfhe | " + " | ".join(str(p) for p in parts), flush=True)


def record(**kw):
    OUT["results"].append(kw)


def bits(err):
    err = float(err)
    return float("inf") if err == 0 else -math.log2(err)


def make_params(spec, tech, complex_data, security):
    p = o.CCParamsCKKSRNS()
    p.SetMultiplicativeDepth(spec["depth"])
    p.SetScalingModSize(40)
    p.SetFirstModSize(60)
    p.SetRingDim(1 << spec["logn"])
    p.SetBatchSize(1 << (spec["logn"] - 1))
    p.SetScalingTechnique(TECHS[tech])
    p.SetKeySwitchTechnique(o.HYBRID)
    p.SetNumLargeDigits(spec["dnum"])
    p.SetSecurityLevel(security)
    if complex_data:
        p.SetCKKSDataType(o.COMPLEX)
    return p


def build(spec, tech, complex_data=False):
    """Context at `spec`; 128-bit classic if OpenFHE accepts it (and the set is not marked insecure)."""
    levels = [o.HEStd_NotSet] if spec.get("insecure") else [o.HEStd_128_classic, o.HEStd_NotSet]
    notes = []
    for sl in levels:
        try:
            cc = o.GenCryptoContext(make_params(spec, tech, complex_data, sl))
        except Exception as e:
            notes.append(f"{str(sl).split('.')[-1]} rejected by OpenFHE: {str(e).split(':')[-1].strip()}")
            continue
        for f in (o.PKE, o.KEYSWITCH, o.LEVELEDSHE):
            cc.Enable(f)
        if cc.GetRingDimension() != 1 << spec["logn"]:
            raise RuntimeError(f"OpenFHE changed N to {cc.GetRingDimension()}")
        return cc, str(sl).split(".")[-1], notes
    raise RuntimeError("; ".join(notes))


def moduli_from_relin_key(spec, tech):
    """Bit sizes of Q and P primes, read from a JSON-serialized relinearization key.

    JSON of a real key at N=2^15 is hundreds of MB, so this uses an HEStd_NotSet probe context
    with the same depth/dnum/prime sizes at N = min(N, 2^11): the number and bit sizes of
    OpenFHE's primes do not depend on N (only the primes' values, which must be 1 mod 2N)."""
    probe = dict(spec, logn=min(spec["logn"], 11), insecure=True)
    clear_keys()  # SerializeEvalMultKeyString("") writes every key in the static map
    cc, _, _ = build(probe, tech)
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)
    s = o.SerializeEvalMultKeyString(o.JSON)
    clear_keys()
    mods = [int(m) for m in re.findall(r'"cm":\s*\{[^{}]*?"v":\s*(\d+)', s)]
    seen = []
    for m in mods:
        if m not in seen:
            seen.append(m)
    q_count = spec["depth"] + 1
    qb = [math.log2(m) for m in seen[:q_count]]
    pb = [math.log2(m) for m in seen[q_count:]]
    return qb, pb, probe["logn"]


def key_sizes(cc, keys, rot_map, conj_map, ct):
    out = {}
    for name, fn in [
        ("secret_key", lambda: o.Serialize(keys.secretKey, o.BINARY)),
        ("public_key", lambda: o.Serialize(keys.publicKey, o.BINARY)),
        ("relin_key", lambda: o.SerializeEvalMultKeyString(o.BINARY, keys.secretKey.GetKeyTag())),
        ("one_rotation_key", lambda: o.Serialize(rot_map, o.BINARY)),
        ("conjugation_key", lambda: o.Serialize(conj_map, o.BINARY)),
        ("fresh_ciphertext", lambda: o.Serialize(ct, o.BINARY)),
    ]:
        try:
            out[name] = len(fn())
        except Exception as e:
            out[name] = f"unavailable: {e!r}"
    return out


def max_err(pt, ref, n, complex_data=False):
    pt.SetLength(n)
    got = np.array(pt.GetCKKSPackedValue()) if complex_data else np.array(pt.GetRealPackedValue())
    return float(np.max(np.abs(got - ref)))


def precision(cfg, cc, keys, n, rot_map, conj_idx, conj_map, tech, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    y = rng.uniform(-1, 1, n)
    cx = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(x))
    cy = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(y))
    dec = lambda c: cc.Decrypt(c, keys.secretKey)
    prod = cc.EvalMult(cx, cy)
    if tech == "FIXEDMANUAL":
        prod = cc.Rescale(prod)
    steps = [
        ("fresh pk encrypt/decrypt", lambda: dec(cx), x),
        ("fresh sk encrypt/decrypt", lambda: dec(cc.Encrypt(keys.secretKey, cc.MakeCKKSPackedPlaintext(x))), x),
        ("add", lambda: dec(cc.EvalAdd(cx, cy)), x + y),
        ("multiply+relinearize+rescale", lambda: dec(prod), x * y),
        ("rotate 1", lambda: dec(cc.EvalRotate(cx, 1)), np.roll(x, -1)),
        ("conjugate (real input: identity)", lambda: dec(cc.EvalAutomorphism(cx, conj_idx, conj_map)), x),
    ]
    for name, fn, ref in steps:
        try:
            e = max_err(fn(), ref, n)
            log("PRECISION", cfg, name, f"max_abs_err {e:.3e}", f"{bits(e):.2f} bits")
            record(cfg=cfg, kind="precision", op=name, max_abs_err=e, bits=bits(e))
        except Exception as ex:
            log("ERROR", cfg, name, repr(ex))
            record(cfg=cfg, kind="precision", op=name, error=repr(ex))


def chain_precision(spec_name, spec, tech, chain, seed):
    """Complex inputs e^{i theta}: fresh, conjugate, then z1*z2*...*z_{chain+1} by a chain of
    `chain` multiply+relinearize(+rescale) steps; error after every step."""
    cc, sl, notes = build(spec, tech, complex_data=True)
    n = cc.GetRingDimension() // 2
    cfg = f"{spec_name} {tech} COMPLEX {sl} chain"
    for nt in notes:
        log("NOTE", cfg, nt)
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)
    m = 2 * cc.GetRingDimension()
    conj_map = cc.EvalAutomorphismKeyGen(keys.secretKey, [m - 1])
    rng = np.random.default_rng(seed)
    zs = [np.exp(1j * rng.uniform(0, 2 * np.pi, n)) for _ in range(chain + 1)]
    cts = [cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(z)) for z in zs]
    dec = lambda c: cc.Decrypt(c, keys.secretKey)
    e = max_err(dec(cts[0]), zs[0], n, True)
    log("PRECISION", cfg, "fresh pk encrypt/decrypt (complex)", f"max_abs_err {e:.3e}", f"{bits(e):.2f} bits")
    record(cfg=cfg, kind="precision", op="fresh pk encrypt/decrypt (complex)", max_abs_err=e, bits=bits(e))
    e = max_err(dec(cc.EvalAutomorphism(cts[0], m - 1, conj_map)), np.conj(zs[0]), n, True)
    log("PRECISION", cfg, "conjugate (complex)", f"max_abs_err {e:.3e}", f"{bits(e):.2f} bits")
    record(cfg=cfg, kind="precision", op="conjugate (complex)", max_abs_err=e, bits=bits(e))
    acc, ref = cts[0], zs[0]
    per_step = []
    for i in range(1, chain + 1):
        acc = cc.EvalMult(acc, cts[i])
        if tech == "FIXEDMANUAL":
            acc = cc.Rescale(acc)
            # the next factor must sit at the same level: drop it (FIXEDMANUAL does not align levels)
            for j in range(i + 1, chain + 1):
                cts[j] = cc.LevelReduce(cts[j], None, 1)
        ref = ref * zs[i]
        e = max_err(dec(acc), ref, n, True)
        per_step.append(bits(e))
        log("PRECISION", cfg, f"chain step {i}/{chain}", f"max_abs_err {e:.3e}", f"{bits(e):.2f} bits")
    record(cfg=cfg, kind="precision", op=f"chain of {chain} mult+relin+rescale (complex, |z|=1)",
           max_abs_err=2.0 ** -per_step[-1], bits=per_step[-1], bits_per_step=per_step)


def clear_keys():
    o.ClearEvalMultKeys()
    o.CryptoContext.ClearEvalAutomorphismKeys()


def bench(cfg, op, fn, reps, warm=1, setup=None):
    """setup (untimed) runs before every call, warm-up included."""
    try:
        for _ in range(warm):
            if setup:
                setup()
            fn()
        ts = []
        for _ in range(reps):
            if setup:
                setup()
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        a = np.sort(np.array(ts)) * 1e3
        s = dict(median_ms=float(np.median(a)), min_ms=float(a[0]), max_ms=float(a[-1]), n=len(a))
        log("TIME", cfg, op, f"median {s['median_ms']:.3f} ms", f"min {s['min_ms']:.3f}", f"max {s['max_ms']:.3f}",
            f"n={s['n']}")
        record(cfg=cfg, kind="time", op=op, **s)
    except Exception as e:
        log("ERROR", cfg, op, repr(e))
        record(cfg=cfg, kind="time", op=op, error=repr(e))


def run_set(name, tech, reps, keygen_reps, chain, seed):
    spec = SETS[name]
    clear_keys()
    cc, sl, notes = build(spec, tech)
    N = cc.GetRingDimension()
    n = N // 2
    qb, pb, probe_logn = moduli_from_relin_key(spec, tech)
    logq = sum(qb)
    logqp = logq + sum(pb)
    cfg = f"{name} {tech}"
    info = dict(cfg=cfg, N=N, slots=n, depth=spec["depth"], dnum=spec["dnum"], scale_bits=40, first_mod_bits=60,
                security=sl, security_notes=notes, q_bits=[round(b, 3) for b in qb], p_bits=[round(b, 3) for b in pb],
                log2_q=round(logq, 2), log2_p=round(sum(pb), 2), log2_qp=round(logqp, 2),
                moduli_read_from=f"JSON relin key of an N=2^{probe_logn} HEStd_NotSet probe with the same depth/dnum",
                log2_q_from_GetModulus=round(math.log2(cc.GetModulus()), 2) if math.isfinite(cc.GetModulus()) else None,
                key_switch="HYBRID", secret_dist="UNIFORM_TERNARY (OpenFHE default)", data_type="REAL")
    for nt in notes:
        log("NOTE", cfg, nt)
    log("PARAMS", cfg, json.dumps(info))
    record(kind="params", **info)

    rng = np.random.default_rng(seed)
    rand_step = int(rng.integers(2, n))
    rot_steps = [1, rand_step]
    m = 2 * N
    t0 = time.perf_counter()
    keys = cc.KeyGen()
    t_kg = time.perf_counter() - t0
    t0 = time.perf_counter()
    cc.EvalMultKeyGen(keys.secretKey)
    t_mk = time.perf_counter() - t0
    t0 = time.perf_counter()
    cc.EvalRotateKeyGen(keys.secretKey, rot_steps)
    t_rk = time.perf_counter() - t0
    conj_map = cc.EvalAutomorphismKeyGen(keys.secretKey, [m - 1])
    # one rotation key on its own, for its serialized size (step 3: not among rot_steps, whose keys
    # already exist, and EvalAutomorphismKeyGen returns only keys it newly made)
    rot_map = cc.EvalAutomorphismKeyGen(keys.secretKey, [cc.FindAutomorphismIndex(3)])
    log("SETUP", cfg, f"first KeyGen {t_kg * 1e3:.1f} ms", f"first EvalMultKeyGen {t_mk * 1e3:.1f} ms",
        f"first EvalRotateKeyGen({rot_steps}) {t_rk * 1e3:.1f} ms")

    precision(cfg, cc, keys, n, rot_map, m - 1, conj_map, tech, seed)
    if chain and spec["depth"] >= chain:
        try:
            chain_precision(name, spec, tech, chain, seed + 1)
        except Exception:
            traceback.print_exc()
    if reps <= 0:
        return

    x = rng.uniform(-1, 1, n)
    y = rng.uniform(-1, 1, n)
    px = cc.MakeCKKSPackedPlaintext(x)
    py = cc.MakeCKKSPackedPlaintext(y)
    cx = cc.Encrypt(keys.publicKey, px)
    cy = cc.Encrypt(keys.publicKey, py)
    dx = cc.Decrypt(cx, keys.secretKey)
    scale = cc.GetScalingFactorReal(0)
    bench(cfg, "encode (MakeCKKSPackedPlaintext, numpy float64)", lambda: cc.MakeCKKSPackedPlaintext(x), reps)
    bench(cfg, "decode (Plaintext.Decode of a decrypted plaintext)",
          lambda: dx.Decode(1, scale, TECHS[tech], o.EXEC_EVALUATION), reps)
    bench(cfg, "encrypt pk (Encrypt(publicKey, pt))", lambda: cc.Encrypt(keys.publicKey, px), reps)
    bench(cfg, "encrypt sk (Encrypt(secretKey, pt))", lambda: cc.Encrypt(keys.secretKey, px), reps)
    bench(cfg, "decrypt incl. decode (Decrypt)", lambda: cc.Decrypt(cx, keys.secretKey), reps)
    bench(cfg, "add (EvalAdd)", lambda: cc.EvalAdd(cx, cy), reps)
    bench(cfg, "multiply no relin (EvalMultNoRelin)", lambda: cc.EvalMultNoRelin(cx, cy), reps)
    bench(cfg, "multiply_plain (EvalMult(ct, pt))", lambda: cc.EvalMult(cx, py), reps)
    bench(cfg, "square+relin (EvalSquare)", lambda: cc.EvalSquare(cx), reps)
    c3 = cc.EvalMultNoRelin(cx, cy)
    bench(cfg, "relinearize (Relinearize of a 3-part ct)", lambda: cc.Relinearize(c3), reps)
    m2 = cc.EvalMult(cx, cy)
    bench(cfg, "rescale (Rescale)" + (" [no-op under FLEXIBLEAUTO]" if tech != "FIXEDMANUAL" else ""),
          lambda: cc.Rescale(m2), reps)
    bench(cfg, "multiply+relin (EvalMult)", lambda: cc.EvalMult(cx, cy), reps)
    if tech == "FIXEDMANUAL":
        bench(cfg, "multiply+relin+rescale (Rescale(EvalMult))", lambda: cc.Rescale(cc.EvalMult(cx, cy)), reps)
    else:
        # FLEXIBLEAUTO rescales lazily, inside the next EvalMult; time EvalMult of two degree-2 inputs
        bench(cfg, "multiply+relin of two products (EvalMult(m, m): includes both deferred rescales)",
              lambda: cc.EvalMult(m2, m2), reps)
    bench(cfg, "rotate 1 (EvalRotate)", lambda: cc.EvalRotate(cx, 1), reps)
    bench(cfg, f"rotate random step {rand_step} (EvalRotate)", lambda: cc.EvalRotate(cx, rand_step), reps)
    bench(cfg, "conjugate (EvalAutomorphism 2N-1)", lambda: cc.EvalAutomorphism(cx, m - 1, conj_map), reps)
    sizes = key_sizes(cc, keys, rot_map, conj_map, cx)
    log("SIZES", cfg, json.dumps(sizes))
    record(cfg=cfg, kind="sizes", serialization="OpenFHE BINARY (cereal), uncompressed, full a (no seed)", **sizes)
    # Key generation: OpenFHE skips rotation indices whose keys already exist, and keeps every key
    # in static maps, so the maps are cleared (untimed) before each call.
    kr = keygen_reps
    sk = keys.secretKey
    bench(cfg, "KeyGen", cc.KeyGen, kr, setup=clear_keys)
    bench(cfg, "EvalMultKeyGen", lambda: cc.EvalMultKeyGen(sk), kr, setup=clear_keys)
    bench(cfg, "EvalRotateKeyGen([1]) (1 key)", lambda: cc.EvalRotateKeyGen(sk, [1]), kr, setup=clear_keys)
    bench(cfg, "EvalRotateKeyGen([1, 2, 4, 8]) (4 keys)", lambda: cc.EvalRotateKeyGen(sk, [1, 2, 4, 8]), kr,
          setup=clear_keys)
    bench(cfg, "KeyGen+EvalMultKeyGen+EvalRotateKeyGen([1,2,4,8])", lambda: (
        lambda k: (cc.EvalMultKeyGen(k.secretKey), cc.EvalRotateKeyGen(k.secretKey, [1, 2, 4, 8])))(cc.KeyGen()), kr,
          setup=clear_keys)
    clear_keys()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sets", nargs="+", choices=list(SETS))
    ap.add_argument("--tech", nargs="+", default=["FLEXIBLEAUTO", "FIXEDMANUAL"], choices=list(TECHS))
    ap.add_argument("--reps", type=int, default=15, help="timed runs per op (0: precision only)")
    ap.add_argument("--keygen-reps", type=int, default=3)
    ap.add_argument("--chain", type=int, default=10)
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    OUT["meta"] = dict(library="openfhe (PyPI wheel)", version=o.__version__, native_int=o.get_native_int(),
                       python=sys.version.split()[0], OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS"),
                       cpus=os.cpu_count(), loadavg_start=os.getloadavg(), argv=sys.argv[1:],
                       date=time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    log("VERSION", OUT["meta"])
    for s in a.sets:
        for t in a.tech:
            try:
                run_set(s, t, a.reps, a.keygen_reps, a.chain, a.seed)
            except Exception:
                traceback.print_exc()
            OUT["meta"]["loadavg_end"] = os.getloadavg()
            if a.out:
                with open(a.out, "w") as f:
                    json.dump(OUT, f, indent=1)


if __name__ == "__main__":
    main()
