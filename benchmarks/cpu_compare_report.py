#!/usr/bin/env python3
"""Builds the CPU comparison (JSON + markdown) from criterion estimates and OpenFHE's JSON.

Called by benchmarks/cpu_compare.sh; standard library only. Ours: the median point estimate of
`<criterion>/<group>/<bench>/new/estimates.json` (ids from `new/benchmark.json`), in ms.
OpenFHE: the median of `openfhe_ckks_params.py` (FIXEDMANUAL), in ms.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import time

SETS = [("N13", "n13"), ("CAT", "cat")]

# (row label, our bench id (or a '+'-joined sum), OpenFHE op prefix or None, note)
ROWS = [
    ("encode", "encode", "encode (", ""),
    ("decode", "decode", "decode (", "not like for like: OpenFHE's Decrypt already CRT-composed the "
     "plaintext, our decode does the CRT composition; compare decrypt + decode"),
    ("encrypt (public key)", "encrypt_pk", "encrypt pk", ""),
    ("encrypt (secret key)", "encrypt_sk", "encrypt sk", ""),
    ("decrypt (no decode)", "decrypt", None, "OpenFHE's Decrypt always decodes"),
    ("decrypt + decode", "decrypt_decode", "decrypt incl. decode", ""),
    ("add", "add", "add (", ""),
    ("multiply (tensor, no relin)", "multiply", "multiply no relin", ""),
    ("multiply_plain", "multiply_plain", "multiply_plain", ""),
    ("square (no relin)", "square", None, "OpenFHE's EvalSquare relinearizes"),
    ("square + relin", "square_relin", "square+relin", ""),
    ("relinearize", "relinearize", "relinearize", ""),
    ("rescale", "rescale", "rescale (", ""),
    ("multiply + relin", "mul_relin", "multiply+relin (", ""),
    ("multiply + relin + rescale", "mul_relin_rescale", "multiply+relin+rescale", ""),
    ("rotate 1", "rotate_1", "rotate 1", ""),
    ("rotate random (exact key)", "rotate_random", "rotate random", ""),
    ("conjugate", "conjugate", "conjugate", ""),
    ("rotate hoisted, 8 steps", "rotate_hoisted_8", None, "not in the OpenFHE script"),
    ("keygen: secret", "keygen_secret", None, ""),
    ("keygen: public", "keygen_public", None, ""),
    ("keygen: secret + public", "keygen_secret+keygen_public", "KeyGen", "OpenFHE KeyGen makes both"),
    ("keygen: relinearization", "keygen_relin", "EvalMultKeyGen", ""),
    ("keygen: one Galois key", "keygen_galois_1", "EvalRotateKeyGen([1])", ""),
]


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def criterion_medians(root):
    out = {}
    for bj in glob.glob(os.path.join(root, "**", "new", "benchmark.json"), recursive=True):
        with open(bj) as f:
            full_id = json.load(f).get("full_id")
        est = os.path.join(os.path.dirname(bj), "estimates.json")
        if not full_id or not os.path.exists(est):
            continue
        with open(est) as f:
            e = json.load(f)
        med = e["median"]
        out[full_id] = dict(
            median_ms=med["point_estimate"] / 1e6,
            median_ci_ms=[med["confidence_interval"]["lower_bound"] / 1e6,
                          med["confidence_interval"]["upper_bound"] / 1e6],
            mean_ms=e["mean"]["point_estimate"] / 1e6,
        )
    return out


def openfhe(raw, set_name, threads):
    path = os.path.join(raw, f"openfhe_{set_name}_omp{threads}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def openfhe_time(data, prefix):
    if data is None or prefix is None:
        return None
    for r in data["results"]:
        if r.get("kind") == "time" and r.get("cfg", "").endswith("FIXEDMANUAL") and r["op"].startswith(prefix):
            return r.get("median_ms")
    return None


def ours_time(crit, set_name, ids):
    total = 0.0
    for i in ids.split("+"):
        r = crit.get(f"ckks/{set_name}/{i}")
        if r is None:
            return None
        total += r["median_ms"]
    return total


def fmt(v):
    if v is None:
        return "—"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}" if v < 1000 else f"{v:.0f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def fmt_ratio(r):
    if r is None:
        return "—"
    s = f"{r:.2f}×"
    return f"**{s}**" if r > 2 else s


def parse_ours_log(raw):
    sizes, info = {}, []
    path = os.path.join(raw, "ours.log")
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("SIZE|"):
                _, bid, what, nbytes, how = line.rstrip("\n").split("|", 4)
                sizes.setdefault(bid.split("/")[1], {})[what] = dict(bytes=int(nbytes), how=how)
            elif line.startswith("INFO|"):
                info.append(line.strip()[5:])
    return sizes, info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tag", required=True)
    ap.add_argument("--criterion", required=True)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--omp", default="2")
    ap.add_argument("--out-json", required=True)
    ap.add_argument("--out-md", required=True)
    a = ap.parse_args()

    crit = criterion_medians(a.criterion)
    sizes, info = parse_ours_log(a.raw)
    loads = open(os.path.join(a.raw, "uptime.txt")).read().splitlines() if os.path.exists(
        os.path.join(a.raw, "uptime.txt")) else []
    model = re.sub(r"^Model name:\s*", "", sh("lscpu | grep -m1 'Model name'"))
    machine = dict(cpu_model=model, cpus=sh("nproc"), lscpu_cores_per_socket=sh(
        "lscpu | grep -m1 'Core(s) per socket' | awk -F: '{print $2}' | xargs"), kernel=sh("uname -sr"),
        rustc=sh("rustc -V"), memory=sh("free -g | awk '/Mem:/{print $2\" GiB\"}'"))
    commit = sh("git rev-parse HEAD")
    dirty = bool(sh("git status --porcelain --untracked-files=no"))
    # The run's date: the last `uptime` stamp of the run (the report may be rebuilt later).
    stamps = [l.split("|")[1] for l in loads if l.count("|") >= 2]
    run_date = stamps[-1] if stamps else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    doc = dict(tag=a.tag, date=run_date, report_built=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               git_commit=commit,
               git_dirty=dirty, machine=machine, uptime=loads, ours_info=info,
               ours_method="criterion 0.8, median point estimate of new/estimates.json, rayon default pool",
               openfhe_method=f"openfhe_ckks_params.py FIXEDMANUAL, median, OMP_NUM_THREADS={a.omp} (and 1)",
               sets={})
    md = [f"# CPU comparison: ours (CPU backend) vs OpenFHE {a.tag}", "",
          f"- date (end of run): {doc['date']}; commit `{commit[:12]}`{' (dirty tree)' if dirty else ''}",
          f"- machine: {model}, {machine['cpus']} CPUs, {machine['memory']}, {machine['kernel']}; {machine['rustc']}",
          f"- ours: criterion median, rayon pool of {machine['cpus']} threads; OpenFHE: PyPI wheel through Python "
          f"(perf_counter around each call), FIXEDMANUAL, median, OMP_NUM_THREADS={a.omp} (and =1 where run)",
          "- ratio = ours / OpenFHE (> 1: we are slower); **bold** where we are more than 2× slower",
          "- load (`uptime` at each phase):", ""]
    md += [f"    {l}" for l in loads]
    md.append("")
    for ours_name, peer_name in SETS:
        o2 = openfhe(a.raw, peer_name, a.omp)
        o1 = openfhe(a.raw, peer_name, "1") if a.omp != "1" else None
        peer_ver = (o2 or o1 or {}).get("meta", {}).get("version")
        rows = []
        for label, ids, prefix, note in ROWS:
            ours = ours_time(crit, ours_name, ids)
            p2 = openfhe_time(o2, prefix)
            p1 = openfhe_time(o1, prefix)
            rows.append(dict(op=label, ours_ids=ids, ours_ms=ours, openfhe_op=prefix,
                             openfhe_ms=p2, ratio=ratio(ours, p2), openfhe_omp1_ms=p1,
                             ratio_omp1=ratio(ours, p1), note=note))
        ps = [r for r in (o2 or {}).get("results", []) if r.get("kind") == "params"]
        psz = [r for r in (o2 or o1 or {}).get("results", []) if r.get("kind") == "sizes"]
        doc["sets"][ours_name] = dict(openfhe_set=peer_name, openfhe_version=peer_ver,
                                      openfhe_params=ps[0] if ps else None, rows=rows,
                                      ours_sizes=sizes.get(ours_name, {}),
                                      openfhe_sizes=psz[0] if psz else None,
                                      openfhe_load=dict(omp2=(o2 or {}).get("meta", {}).get("loadavg_start"),
                                                        omp1=(o1 or {}).get("meta", {}).get("loadavg_start")))
        if not any(r["ours_ms"] is not None for r in rows):
            continue
        md += [f"## {ours_name} (OpenFHE set `{peer_name}`)", ""]
        if ps:
            p = ps[0]
            md.append(f"OpenFHE {peer_ver}: N={p['N']}, log2 Q {p['log2_q']}, P bits {p['p_bits']}, "
                      f"log2 QP {p['log2_qp']}, dnum {p['dnum']}, security {p['security']}.")
            md.append("")
        md += [f"| op | ours ms | OpenFHE ms (OMP={a.omp}) | ratio | OpenFHE ms (OMP=1) | ratio vs OMP=1 | note |",
               "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for r in rows:
            md.append(f"| {r['op']} | {fmt(r['ours_ms'])} | {fmt(r['openfhe_ms'])} | {fmt_ratio(r['ratio'])} | "
                      f"{fmt(r['openfhe_omp1_ms'])} | {fmt_ratio(r['ratio_omp1'])} | {r['note']} |")
        md.append("")
        osz = sizes.get(ours_name, {})
        if osz:
            peer_sz = psz[0] if psz else {}
            pairs = [("secret_key", "secret_key"), ("public_key", "public_key"), ("relin_key", "relin_key"),
                     ("galois_key", "one_rotation_key"), ("ciphertext", "fresh_ciphertext"),
                     ("ciphertext_sk_seeded", None)]
            md += ["Sizes in bytes: ours are serialized blob lengths (`Context::*_to_bytes`, bincode, seeded "
                   "`a`), with the size computed from the parameters in the last column; OpenFHE's are "
                   "serialized BINARY lengths (full `a`).", "",
                   "| object | ours (serialized) | OpenFHE (serialized) | ours: computed estimate |",
                   "| --- | ---: | ---: | --- |"]
            for ours_k, peer_k in pairs:
                if ours_k in osz:
                    pv = peer_sz.get(peer_k) if peer_k else None
                    md.append(f"| {ours_k} | {osz[ours_k]['bytes']:,} | "
                              f"{f'{pv:,}' if isinstance(pv, int) else '—'} | {osz[ours_k]['how']} |")
            md.append("")
    slow = [(s, r["op"], r["ratio"]) for s, d in doc["sets"].items() for r in d["rows"]
            if r["ratio"] is not None and r["ratio"] > 2]
    doc["slower_than_2x"] = [dict(set=s, op=o, ratio=x) for s, o, x in slow]
    md += ["## More than 2× slower than OpenFHE (OMP=%s)" % a.omp, ""]
    md += [f"- {s} {o}: {x:.2f}×" for s, o, x in sorted(slow, key=lambda t: -t[2])] or ["- none"]
    md.append("")
    with open(a.out_json, "w") as f:
        json.dump(doc, f, indent=1)
    with open(a.out_md, "w") as f:
        f.write("\n".join(md))


if __name__ == "__main__":
    main()
