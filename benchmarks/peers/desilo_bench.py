#!/usr/bin/env python3
"""Peer benchmark: DESILO FHE (desilofhe / desilofhe-cu130), CKKS.

On a machine with an NVIDIA GPU (the wheel downloaded into .whl/, or `pip install desilofhe-cu130==1.17.0`):
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/desilofhe_cu130-*.whl
  PYTHONPATH=/tmp/site python3 benchmarks/peers/desilo_bench.py --mode gpu --out $OUT/desilo.json
Faster engine mode (DESILO's 'async gpu'):
  PYTHONPATH=/tmp/site python3 benchmarks/peers/desilo_bench.py --mode 'async gpu' --no-small-boot --out $OUT/desilo_async.json
CPU smoke test:  python3 benchmarks/peers/desilo_bench.py --mode cpu --quick

Timing: each op is bracketed by a device synchronize (torch.cuda.synchronize()) and
timed with time.perf_counter(); warm-up runs first, then the median (and min/p10/p90/max)
of --reps runs is reported. 'pipelined' rows launch --reps ops back to back and synchronize
once (per-op average), i.e. the throughput view when host overhead overlaps GPU work.
"""
import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

RESULTS = []
SYNC = lambda: None


def stats(ts):
    a = np.sort(np.asarray(ts)) * 1e6
    return dict(median_us=float(np.median(a)), min_us=float(a[0]), p10_us=float(np.percentile(a, 10)),
                p90_us=float(np.percentile(a, 90)), max_us=float(a[-1]), n=len(a))


def record(cfg, op, ts, **extra):
    s = stats(ts)
    s.update(cfg=cfg, op=op, **extra)
    RESULTS.append(s)
    print(f"RESULT desilo | {cfg} | {op} | median {s['median_us']:.1f} us | min {s['min_us']:.1f} | "
          f"p10 {s['p10_us']:.1f} | p90 {s['p90_us']:.1f} | max {s['max_us']:.1f} | n={s['n']}", flush=True)


def bench(cfg, op, fn, prep=None, reps=30, warm=3):
    try:
        ts = []
        for i in range(warm + reps):
            arg = prep() if prep else None
            SYNC()
            t0 = time.perf_counter()
            r = fn(arg) if prep else fn()
            SYNC()
            t1 = time.perf_counter()
            del r
            if i >= warm:
                ts.append(t1 - t0)
        record(cfg, op, ts)
    except Exception as e:  # keep going: one failure must not lose the other numbers
        print(f"ERROR desilo | {cfg} | {op} | {e!r}", flush=True)
        traceback.print_exc()


def pipelined(cfg, op, fn, reps=30):
    try:
        fn()
        SYNC()
        t0 = time.perf_counter()
        outs = [fn() for _ in range(reps)]
        SYNC()
        t1 = time.perf_counter()
        del outs
        dt = (t1 - t0) / reps * 1e6
        RESULTS.append(dict(cfg=cfg, op=op + " [pipelined avg]", median_us=dt, n=reps))
        print(f"RESULT desilo | {cfg} | {op} [pipelined avg of {reps}] | {dt:.1f} us", flush=True)
    except Exception as e:
        print(f"ERROR desilo | {cfg} | {op} pipelined | {e!r}", flush=True)


def chained(cfg, op, e, sk, c0, step, k=40):
    """Dependent chain of k ops ending in a blocking decrypt to a host array, minus a standalone
    decrypt: a timing that does not depend on seeing the library's streams."""
    try:
        def run():
            c = c0
            for _ in range(k):
                c = step(c)
            return e.decrypt(c, sk)
        run()
        ts, td = [], []
        for _ in range(5):
            SYNC(); t0 = time.perf_counter(); run(); SYNC(); ts.append(time.perf_counter() - t0)
            SYNC(); t0 = time.perf_counter(); e.decrypt(c0, sk); SYNC(); td.append(time.perf_counter() - t0)
        dt = (np.median(ts) - np.median(td)) / k * 1e6
        RESULTS.append(dict(cfg=cfg, op=op + f" [chain of {k} + blocking decrypt]", median_us=float(dt), n=5))
        print(f"RESULT desilo | {cfg} | {op} [chain of {k} + blocking decrypt, minus decrypt] | {dt:.1f} us", flush=True)
    except Exception as ex:
        print(f"ERROR desilo | {cfg} | {op} chain | {ex!r}", flush=True)


def timed_once(label, fn):
    SYNC()
    t0 = time.perf_counter()
    r = fn()
    SYNC()
    dt = time.perf_counter() - t0
    nb = getattr(r, "nbytes", None)
    print(f"SETUP desilo | {label} | {dt:.3f} s | nbytes={nb}", flush=True)
    RESULTS.append(dict(cfg="setup", op=label, seconds=dt, nbytes=nb))
    return r


def ops_at_level(cfg, e, sk, pk, rlk, rk, frk, level, reps):
    n = e.slot_count
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, n)
    y = rng.uniform(-1, 1, n)
    cx = e.encrypt(x, pk, level)
    cy = e.encrypt(y, pk, level)
    pt = e.encode(x)
    c = f"{cfg} level={cx.level}"
    bench(c, "encode(host array)", lambda: e.encode(x), reps=reps)
    bench(c, "encrypt_pk(host array)", lambda: e.encrypt(x, pk, level), reps=reps)
    bench(c, "encrypt_sk(host array)", lambda: e.encrypt(x, sk, level), reps=reps)
    if level == e.max_level:
        bench(c, "encrypt_pk(plaintext)", lambda: e.encrypt(pt, pk), reps=reps)
    bench(c, "decrypt(to host array)", lambda: e.decrypt(cx, sk), reps=reps)
    bench(c, "decrypt_to_plaintext", lambda: e.decrypt_to_plaintext(cx, sk), reps=reps)
    bench(c, "add", lambda: e.add(cx, cy), reps=reps)
    bench(c, "multiply(no relin)", lambda: e.multiply(cx, cy), reps=reps)
    bench(c, "relinearize", lambda m: e.relinearize(m, rlk), prep=lambda: e.multiply(cx, cy), reps=reps)
    bench(c, "multiply+relin", lambda: e.multiply(cx, cy, rlk), reps=reps)
    bench(c, "rescale", lambda m: e.rescale(m), prep=lambda: e.multiply(cx, cy, rlk), reps=reps)
    bench(c, "multiply+relin+rescale", lambda: e.rescale(e.multiply(cx, cy, rlk)), reps=reps)
    bench(c, "rotate(1) RotationKey", lambda: e.rotate(cx, rk, 1), reps=reps)
    bench(c, "rotate(1) FixedRotationKey", lambda: e.rotate(cx, frk), reps=reps)
    pipelined(c, "add", lambda: e.add(cx, cy), reps=reps)
    pipelined(c, "multiply+relin", lambda: e.multiply(cx, cy, rlk), reps=reps)
    pipelined(c, "rotate(1) FixedRotationKey", lambda: e.rotate(cx, frk), reps=reps)
    chained(c, "add", e, sk, cx, lambda t: e.add(t, cy))
    chained(c, "rotate(1) FixedRotationKey", e, sk, cx, lambda t: e.rotate(t, frk))
    # correctness spot checks
    m = e.rescale(e.multiply(cx, cy, rlk))
    err = np.max(np.abs(e.decrypt(m, sk) - x * y))
    r = e.decrypt(e.rotate(cx, frk), sk)
    rerr = min(np.max(np.abs(r - np.roll(x, 1))), np.max(np.abs(r - np.roll(x, -1))))
    print(f"CHECK desilo | {c} | mult level {cx.level}->{m.level} max_abs_err={err:.3g} (log2 {np.log2(err):.1f}); "
          f"rotate max_abs_err={rerr:.3g}; ct nbytes={cx.nbytes}", flush=True)
    RESULTS.append(dict(cfg=c, op="check", mult_err=float(err), rot_err=float(rerr), ct_nbytes=cx.nbytes))


def boot_section(e, sk, pk, rlk, ck, rk, reps, quick, e_mode="gpu", small=True):
    cfg = f"CKKS logN={int(np.log2(e.slot_count)) + 1} bootstrappable(max_level={e.max_level}) mode={e_mode}"
    n = e.slot_count
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, n)
    variants = [("bootstrap(BootstrapKey medium, stage_count=3)", "bk", 0)]
    if not quick:
        variants += [("lossy_bootstrap(LossyBootstrapKey medium, stage_count=3)", "lossy", 3)]
        if small:
            variants += [("bootstrap(RotationKey+SmallBootstrapKey, stage_count=3)", "small", 0)]
    for name, kind, lvl in variants:
        try:
            if kind == "bk":
                key = timed_once("create_bootstrap_key(stage_count=3, medium)", lambda: e.create_bootstrap_key(sk))
                f = lambda c: e.bootstrap(c, rlk, ck, key)
            elif kind == "lossy":
                key = timed_once("create_lossy_bootstrap_key(stage_count=3, medium)", lambda: e.create_lossy_bootstrap_key(sk))
                f = lambda c: e.lossy_bootstrap(c, rlk, ck, key)
            else:
                key = timed_once("create_small_bootstrap_key", lambda: e.create_small_bootstrap_key(sk))
                f = lambda c: e.bootstrap(c, rlk, ck, rk, key)
            ct = e.encrypt(x, pk, lvl)
            out = f(ct)
            d = np.real(e.decrypt(out, sk))
            err = np.abs(d - x)
            print(f"CHECK desilo | {cfg} | {name} | in level {ct.level} -> out level {out.level} | max_abs_err {err.max():.3g} "
                  f"(log2 {np.log2(err.max()):.1f}) | mean_abs_err {err.mean():.3g} (log2 {np.log2(err.mean()):.1f})", flush=True)
            RESULTS.append(dict(cfg=cfg, op=name + " check", in_level=ct.level, out_level=out.level,
                                max_abs_err=float(err.max()), mean_abs_err=float(err.mean())))
            bench(cfg, name, f, prep=lambda: e.encrypt(x, pk, lvl), reps=reps, warm=2)
            del key
        except Exception as ex:
            print(f"ERROR desilo | {cfg} | {name} | {ex!r}", flush=True)
            traceback.print_exc()


def main():
    global SYNC
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="gpu")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--boot-reps", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="CPU smoke test: N=2^15 only, few reps")
    ap.add_argument("--skip16", action="store_true")
    ap.add_argument("--no-small-boot", action="store_true", help="skip the slow RotationKey+SmallBootstrapKey variant")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.mode != "cpu":
        import torch
        torch.cuda.init()
        SYNC = torch.cuda.synchronize
        print("DEVICE", torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0), flush=True)
    import desilofhe
    from desilofhe import Engine
    try:
        from importlib.metadata import version
        v = [f"{p}=={version(p)}" for p in ("desilofhe-cu130", "desilofhe") if _has(p)]
    except Exception:
        v = []
    print("VERSION", v, getattr(desilofhe, "__version__", None), flush=True)
    reps = 3 if a.quick else a.reps

    # ---- N=2^15, 16 levels (no bootstrap) ----
    t0 = time.perf_counter()
    e = Engine(max_level=16, mode=a.mode)
    cfg = f"CKKS logN=15 max_level=16 slots={e.slot_count} mode={a.mode}"
    print("ENGINE", cfg, "build_hash", e.build_hash, f"{time.perf_counter() - t0:.2f}s", flush=True)
    sk = e.create_secret_key()
    pk = timed_once("N15 create_public_key", lambda: e.create_public_key(sk))
    rlk = timed_once("N15 create_relinearization_key", lambda: e.create_relinearization_key(sk))
    rk = timed_once("N15 create_rotation_key", lambda: e.create_rotation_key(sk))
    frk = timed_once("N15 create_fixed_rotation_key(1)", lambda: e.create_fixed_rotation_key(sk, 1))
    ops_at_level(cfg, e, sk, pk, rlk, rk, frk, e.max_level, reps)
    del e, sk, pk, rlk, rk, frk

    if not a.quick and not a.skip16:
        t0 = time.perf_counter()
        e = Engine(use_bootstrap=True, mode=a.mode)
        cfg = f"CKKS logN=16 use_bootstrap max_level={e.max_level} slots={e.slot_count} mode={a.mode}"
        print("ENGINE", cfg, f"{time.perf_counter() - t0:.2f}s", flush=True)
        sk = e.create_secret_key()
        pk = timed_once("N16 create_public_key", lambda: e.create_public_key(sk))
        rlk = timed_once("N16 create_relinearization_key", lambda: e.create_relinearization_key(sk))
        ck = timed_once("N16 create_conjugation_key", lambda: e.create_conjugation_key(sk))
        rk = timed_once("N16 create_rotation_key", lambda: e.create_rotation_key(sk))
        frk = timed_once("N16 create_fixed_rotation_key(1)", lambda: e.create_fixed_rotation_key(sk, 1))
        ops_at_level(cfg, e, sk, pk, rlk, rk, frk, e.max_level, reps)
        boot_section(e, sk, pk, rlk, ck, rk, a.boot_reps, a.quick, a.mode, not a.no_small_boot)
        ops_at_level(cfg, e, sk, pk, rlk, rk, frk, 13, reps)

    if a.out:
        with open(a.out, "w") as f:
            json.dump(RESULTS, f, indent=1)


def _has(p):
    try:
        from importlib.metadata import version
        version(p)
        return True
    except Exception:
        return False


if __name__ == "__main__":
    main()
