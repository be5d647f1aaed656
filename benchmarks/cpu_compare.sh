#!/usr/bin/env bash
# CPU comparison, in one run: our criterion bench `ckks_cpu` (N13 and CAT) against OpenFHE
# (PyPI wheel, benchmarks/peers/openfhe_ckks_params.py, FIXEDMANUAL) at the same parameter sets.
#
# Writes benchmarks/results/<TAG>_cpu_<COMMIT>_ckks_vs_openfhe.json and .md
# (op | ours ms | OpenFHE ms | ratio), raw logs under $RAW_DIR (default target/cpu_compare/<TAG>).
#
# Usage (from anywhere in the repository):
#   benchmarks/cpu_compare.sh
# Environment:
#   TAG           output name prefix (default: today's date, YYYY-MM-DD)
#   RAW_DIR       where the raw logs go (default: $CARGO_TARGET_DIR/cpu_compare/<TAG>)
#   OPENFHE_PY    Python 3.10 with the openfhe wheel (default: python3.10 on the PATH)
#   OMP1          1 (default) also runs OpenFHE with OMP_NUM_THREADS=1; 0 skips it
#   SKIP_OURS     1 reuses the criterion estimates already on disk (no cargo bench)
#   SKIP_OPENFHE  1 reuses raw OpenFHE JSON already in the raw folder
#                 (both SKIP_* = 1: only rebuild the report from what is on disk)
#   REPS_N13, REPS_CAT, KEYGEN_REPS_N13, KEYGEN_REPS_CAT   OpenFHE repetitions (21, 9, 5, 3)
#   CKKS_BENCH_SETS  passed to the bench (default N13,CAT)
#   CARGO_TARGET_DIR as for cargo (criterion writes to $CARGO_TARGET_DIR/criterion)
# Our side runs with rayon's default pool (one thread per core); OpenFHE with OMP_NUM_THREADS=2
# to match on the 2-core development machine (set OMP_THREADS to change it).
set -euo pipefail

ROOT=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$ROOT"
TAG=${TAG:-$(date +%F)}
PY=${OPENFHE_PY:-python3.10}
OMP_THREADS=${OMP_THREADS:-2}
OMP1=${OMP1:-1}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
COMMIT=$(git rev-parse --short=7 HEAD)
RAW=$(realpath -m "${RAW_DIR:-$TARGET/cpu_compare/$TAG}")
OUT=benchmarks/results/${TAG}_cpu_${COMMIT}_ckks_vs_openfhe
mkdir -p "$RAW"
LOADS="$RAW/uptime.txt"
REPORT_ONLY=0
[[ "${SKIP_OURS:-0}" == 1 && "${SKIP_OPENFHE:-0}" == 1 ]] && REPORT_ONLY=1
stamp() { [[ $REPORT_ONLY == 1 ]] || echo "$1|$(date -u +%FT%TZ)|$(uptime)" | tee -a "$LOADS"; }
[[ $REPORT_ONLY == 1 ]] || : > "$LOADS"

stamp "start"
if [[ "${SKIP_OURS:-0}" != 1 ]]; then
    # Stale ids from earlier runs would otherwise be picked up.
    rm -rf "$TARGET"/criterion/ckks_N13 "$TARGET"/criterion/ckks_CAT
    cargo build --release --bench ckks_cpu 2>&1 | tail -n 3
    stamp "ours start"
    cargo bench --bench ckks_cpu -- --noplot 2>&1 | tee "$RAW/ours.log"
    stamp "ours end"
fi

run_openfhe() { # set threads reps keygen_reps
    local set=$1 threads=$2 reps=$3 kreps=$4
    local out="$RAW/openfhe_${set}_omp${threads}.json"
    stamp "openfhe $set omp$threads start"
    (cd benchmarks/peers && OMP_NUM_THREADS=$threads "$PY" openfhe_ckks_params.py "$set" \
        --tech FIXEDMANUAL --reps "$reps" --keygen-reps "$kreps" --chain 0 \
        --out "$out") > "$RAW/openfhe_${set}_omp${threads}.log" 2>&1 \
        || echo "openfhe $set omp$threads failed (see log)"
    stamp "openfhe $set omp$threads end"
}
if [[ "${SKIP_OPENFHE:-0}" != 1 ]]; then
    run_openfhe n13 "$OMP_THREADS" "${REPS_N13:-21}" "${KEYGEN_REPS_N13:-5}"
    run_openfhe cat "$OMP_THREADS" "${REPS_CAT:-9}" "${KEYGEN_REPS_CAT:-3}"
    if [[ "$OMP1" == 1 && "$OMP_THREADS" != 1 ]]; then
        run_openfhe n13 1 "${REPS_N13:-21}" "${KEYGEN_REPS_N13:-5}"
        run_openfhe cat 1 "${REPS_CAT:-9}" "${KEYGEN_REPS_CAT:-3}"
    fi
fi
stamp "end"

python3 benchmarks/cpu_compare_report.py --tag "$TAG" --criterion "$TARGET/criterion" \
    --raw "$RAW" --omp "$OMP_THREADS" --out-json "$OUT.json" --out-md "$OUT.md"
echo "wrote $OUT.json and $OUT.md"
