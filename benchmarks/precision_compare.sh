#!/usr/bin/env bash
# CKKS precision, ours beside OpenFHE, in one run at the same parameter sets (n13, cat,
# n11_insecure): bits = -log2(max slot error), real inputs in [-1, 1], public-key encryption,
# scale 2^40; the chain is 10 multiply-relinearize-rescale on unit-modulus complex inputs.
#   benchmarks/precision_compare.sh        (OPENFHE_PY: Python 3.10 with the openfhe wheel)
# Writes benchmarks/results/<date>_cpu_<commit>_precision.json (ours) and ..._precision_openfhe.json.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${OPENFHE_PY:-python3.10}
tag=${TAG:-$(date +%F)}
out=benchmarks/results/${tag}_cpu_$(git rev-parse --short=7 HEAD)_precision
cargo run --release --example precision_report > "$out.json"
OMP_NUM_THREADS=2 "$py" benchmarks/peers/openfhe_ckks_params.py n13 cat n11_insecure --reps 0 \
  --out "${out}_openfhe.json" > /dev/null
echo "wrote $out.json and ${out}_openfhe.json"
