#!/usr/bin/env bash
# Builds the tfhe-rs 1.8.2 CUDA peer benchmark on a machine WITHOUT a GPU and stages it for the
# GPU machine under <repo>/.peers/tfhe-rs/ (binary, libcudart.so.13, libgomp.so.1, run.sh).
#
# Toolchain: CUDA 13.0.88 nvcc/runtime/CCCL from the PyPI wheels and CMake 3.31.6 from PyPI,
# unpacked into $CUDA_PREFIX (default /work/cuda13; outside the repo). Architecture pinned to
# sm_90 (H100/H200) through tools/nvcc-sm90. Builds are niced and limited to 2 jobs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
CUDA_PREFIX="${CUDA_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/gpufhe/cuda13}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"

# 1. CUDA 13.0 toolkit pieces and CMake from PyPI (skipped when already unpacked).
if [ ! -x "$CUDA_PREFIX/root/nvidia/cu13/bin/nvcc" ]; then
  mkdir -p "$CUDA_PREFIX/whl" "$CUDA_PREFIX/root"
  python3 -m pip download --no-deps --only-binary=:all: \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_12_x86_64 --platform manylinux2010_x86_64 \
    --python-version 3.11 -d "$CUDA_PREFIX/whl" \
    nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.88 nvidia-cuda-cccl==13.0.85 \
    nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 cmake==3.31.6
  for w in "$CUDA_PREFIX"/whl/*.whl; do unzip -qo "$w" -d "$CUDA_PREFIX/root"; done
fi
CUDA_HOME="$CUDA_PREFIX/root/nvidia/cu13"
# Unversioned link name for -lcudart, and the lib64 name CMake's CUDA detection looks for.
ln -sf libcudart.so.13 "$CUDA_HOME/lib/libcudart.so"
[ -e "$CUDA_HOME/lib64" ] || ln -s lib "$CUDA_HOME/lib64"
chmod +x "$CUDA_PREFIX"/root/cmake/data/bin/* "$CUDA_HOME"/bin/* "$CUDA_HOME"/nvvm/bin/*

export PATH="$CUDA_PREFIX/root/cmake/data/bin:$CUDA_HOME/bin:$PATH"
export CUDA_HOME CUDA_PATH="$CUDA_HOME"
export TFHE_PEER_REAL_NVCC="$CUDA_HOME/bin/nvcc"
export CUDACXX="$here/tools/nvcc-sm90"
export CUDAARCHS=90
export LIBRARY_PATH="$CUDA_HOME/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
export RUSTFLAGS="${RUSTFLAGS:-} -L native=$CUDA_HOME/lib -C link-arg=-Wl,-rpath,\$ORIGIN"

# 2. The one bench binary (tfhe-cuda-backend's CMake build runs inside cargo).
cd "$here"
nice -n 19 cargo build --release --locked --bin tfhe-rs-peer-bench

# 3. Stage for the GPU machine: <repo>/.peers/tfhe-rs/ (ignored; `run` carries ".peers").
stage="$repo/.peers/tfhe-rs"
mkdir -p "$stage"
cp "$here/target/release/tfhe-rs-peer-bench" "$stage/"
strip "$stage/tfhe-rs-peer-bench"
cp -L "$CUDA_HOME/lib/libcudart.so.13" "$stage/"
cp -L "$(gcc -print-file-name=libgomp.so.1)" "$stage/"
cp "$here/run.sh" "$stage/"
ls -la "$stage"
du -sh "$stage"
