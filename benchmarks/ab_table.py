#!/usr/bin/env python3
"""Before/after table of gpu_bench runs alternated in one device call (`benchmarks/gpu_ab.sh`):
event-time medians per op for each round, change of the mean, flag > max(3%, 1 us).
Argument: the folder of ab_{old,new}_{round}.json files, or a combined results file with
"runs": {"old_1": {"rows": [...]}, ...} (as kept under benchmarks/results/)."""
import json, sys, os, glob
d = sys.argv[1]
def load(path):
    j = json.load(open(path))
    return {(row["scheme"] + ":" + row["preset"].split(":")[-1], row["op"]): (row["median_us"], row["wall_us"]) for row in j["results"]}
def rows(results):
    return {(row["scheme"] + ":" + row["preset"].split(":")[-1], row["op"]): (row["median_us"], row["wall_us"]) for row in results}
if d.endswith(".json"):
    combined = json.load(open(d))["runs"]
    rounds = sorted({int(k.split("_")[1]) for k in combined})
    runs = {(w, r): rows(combined[f"{w}_{r}"]["rows"]) for w in ("old", "new") for r in rounds}
else:
    rounds = sorted({int(p.rsplit("_", 1)[1].split(".")[0]) for p in glob.glob(os.path.join(d, "ab_old_*.json"))})
    runs = {(w, r): load(os.path.join(d, f"ab_{w}_{r}.json")) for w in ("old", "new") for r in rounds}
keys = list(runs[("old", rounds[0])].keys())
print("| scheme:preset | op | old event (per round) | new event (per round) | change | old wall | new wall |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
bad = []
for k in keys:
    try:
        oe = [runs[("old", r)][k][0] for r in rounds]; ne = [runs[("new", r)][k][0] for r in rounds]
        ow = [runs[("old", r)][k][1] for r in rounds]; nw = [runs[("new", r)][k][1] for r in rounds]
    except KeyError:
        continue
    o = sum(oe) / len(oe); n = sum(ne) / len(ne)
    ch = (n - o) / o * 100 if o else 0.0
    flag = n - o > max(0.03 * o, 1.0)
    if flag: bad.append(f"{k[0]} {k[1]} {o:.1f} -> {n:.1f}")
    f = lambda v: ", ".join(f"{x:.1f}" for x in v)
    print(f"| {k[0]} | {k[1]} | {f(oe)} | {f(ne)} | {ch:+.1f}%{' **' if flag else ''} | {sum(ow)/len(ow):.1f} | {sum(nw)/len(nw):.1f} |")
print()
print("slower by more than max(3%, 1 us) (mean of the rounds' event medians):", "; ".join(bad) if bad else "none")
