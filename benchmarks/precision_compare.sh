#!/usr/bin/env bash
# CKKS precision, ours beside OpenFHE, in one run at the same parameter sets (n13, cat,
# n11_insecure): bits = -log2(max slot error), real inputs in [-1, 1], public-key encryption,
# scale 2^40; the chain is 10 multiply-relinearize-rescale on unit-modulus complex inputs.
#   benchmarks/precision_compare.sh        (OPENFHE_PY: Python 3.10 with the openfhe wheel)
# Writes benchmarks/results/precision_<date>.json (ours) and precision_<date>_openfhe.json.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${OPENFHE_PY:-/work/venv-openfhe/bin/python}
tag=${TAG:-$(date +%F)}
out=benchmarks/results
cargo run --release --example precision_report > "$out/precision_${tag}.json"
OMP_NUM_THREADS=2 "$py" benchmarks/peers/openfhe_ckks_params.py n13 cat n11_insecure --reps 0 \
  --out "$out/precision_${tag}_openfhe.json" > /dev/null
echo "wrote $out/precision_${tag}.json and $out/precision_${tag}_openfhe.json"
