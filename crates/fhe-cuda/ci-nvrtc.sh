#!/usr/bin/env bash
# Compiles every CUDA kernel module with NVRTC for sm_90, without a GPU: installs the NVRTC wheel
# (nvidia-cuda-nvrtc==13.0.88, which ships nvidia/cu13/lib/libnvrtc.so.13) into a local folder,
# points LD_LIBRARY_PATH at it and runs the #[ignore]d nvrtc_* tests of fhe-cuda.
#   crates/fhe-cuda/ci-nvrtc.sh            (from anywhere inside the workspace)
# NVRTC_DIR overrides the install folder (default: target/nvrtc-wheel under the workspace).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${NVRTC_DIR:-${CARGO_TARGET_DIR:-$root/target}/nvrtc-wheel}
if ! ls "$dir"/nvidia/cu13/lib/libnvrtc.so.* >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dir" nvidia-cuda-nvrtc==13.0.88
fi
lib=$(dirname "$(find "$dir" -name 'libnvrtc.so*' -path '*nvidia/cu13/lib/*' | head -1)")
[ -d "$lib" ] || { echo "ci-nvrtc: libnvrtc not found under $dir" >&2; exit 1; }
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$root"
cargo test --release -p fhe-cuda nvrtc_ -- --ignored
