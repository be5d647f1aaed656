#!/usr/bin/env bash
# Runs the staged tfhe-rs 1.8.2 CUDA peer benchmark on the GPU machine and prints JSON lines.
# Staged by build.sh into <repo>/.peers/tfhe-rs/ (binary + libcudart.so.13 + libgomp.so.1 + this
# script); call from anywhere: `bash .peers/tfhe-rs/run.sh [extra args]`. JSON lines go to
# stdout (and to $OUT/tfhe-rs.jsonl when $OUT is set); progress goes to stderr.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-16}"
device="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0 2>/dev/null | head -1 | sed 's/, / (driver /; s/$/)/')"
[ -n "$device" ] || device="unknown"
echo "device: $device" >&2
ldd "$here/tfhe-rs-peer-bench" | grep -E "not found|cudart|gomp|stdc" >&2
dest="${OUT:-}"
if [ -n "$dest" ]; then
  "$here/tfhe-rs-peer-bench" --device "$device" "$@" | tee "$dest/tfhe-rs.jsonl"
else
  "$here/tfhe-rs-peer-bench" --device "$device" "$@"
fi
