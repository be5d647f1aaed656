#!/bin/bash
# Old binary (8c79c7e) with the experiment switches: default vs each switch flipped, small shapes.
B=$(dirname "$0")/gpu_bench
export FHE_KERNEL_CACHE=/tmp/kc
NTT="ntt:11x1x256,ntt:11x1x2048,ntt:12x3x64,ntt:13x6x16"
KS="N13,bgv:N13"
BFV="bfv:N13"
ALL="$NTT,$KS,$BFV"
T0=$(date +%s)
R=/tmp/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/device.txt 2>&1
run() { # name presets [env...]
  local name=$1 presets=$2; shift 2
  local el=$(( $(date +%s) - T0 ))
  if [ $el -gt 280 ]; then echo "SKIP $name (elapsed $el)"; return; fi
  echo "== $name ($*) at ${el}s"
  env "$@" timeout ${TO:-45} $B --presets "$presets" --reps 30 --warm 5 --copy-mib 64 --json $R/$name.json > $R/$name.log 2>&1 || echo "FAIL $name rc=$?" | tee -a $R/FAILS
  tar czf $OUT/switches_small_shapes.tgz -C $R .
}
TO=150 run default "$ALL"
run NTT_R8_0 "$NTT,$KS" FHE_NTT_R8=0
run NTT_SORT_0 "$NTT,$KS" FHE_NTT_SORT=0
run PDL_0 "$ALL" FHE_PDL=0
run R8_SHAPE_6_3 "$NTT,$KS" FHE_NTT_R8_LOG_THREADS=6 FHE_NTT_R8_LOG_C=3
run R8_SHAPE_4_1 "$NTT,$KS" FHE_NTT_R8_LOG_THREADS=4 FHE_NTT_R8_LOG_C=1
run NTT_LIFT_0 "$KS" FHE_NTT_LIFT=0
run KEYPROD_FUSED_0 "$KS" FHE_KEYPROD_FUSED=0
run EARLY_UNFUSED_1 "$KS" FHE_EARLY_UNFUSED=1
run FINISH_FUSED_0 "$KS" FHE_FINISH_FUSED=0
run TENSOR_ON_LOAD_0 "$KS,$BFV" FHE_TENSOR_ON_LOAD=0
run TOP_ON_LOAD_0 "$KS" FHE_TOP_ON_LOAD=0
run MODDOWN_OVERLAP_0 "$KS,$BFV" FHE_MODDOWN_OVERLAP=0
run PRODUCT_IN_KEYPROD_1 "$KS" FHE_PRODUCT_IN_KEYPROD=1
run PRODUCT_IN_KEYPROD_0 "$KS" FHE_PRODUCT_IN_KEYPROD=0
run C2_ON_LOAD_0 "$KS" FHE_C2_ON_LOAD=0
run MODDOWN_EARLY_FIRST_0 "$KS" FHE_MODDOWN_EARLY_FIRST=0
run MODDOWN_INV_PDL_0 "$KS" FHE_MODDOWN_INV_PDL=0
run MODDOWN_CONVERT_LOADS_0 "$KS" FHE_MODDOWN_CONVERT_LOADS=0
run default1b "$ALL"
run LATE_FIRST_0 "$KS" FHE_LATE_FIRST=0
run SPLIT_FIRST_1 "$KS" FHE_SPLIT_FIRST=1
run OWN_COPY_BATCHED_0 "$KS" FHE_OWN_COPY_BATCHED=0
run CONVERT_UNROLLED_0 "$KS,$BFV" FHE_CONVERT_UNROLLED=0
run CONVERT_MMA_0 "$KS,$BFV" FHE_CONVERT_MMA=0
run BFV_FUSED_ROUND_0 "$BFV" FHE_BFV_FUSED_ROUND=0
run BFV_MMA_0 "$BFV" FHE_BFV_MMA=0
run NTT_CONVERT_0 "$KS" FHE_NTT_CONVERT=0
run default3 "$ALL"
run default2 "$ALL"
# CUDA A/B defines (recompile the module)
run CU_NTT_VEC_IO_0 "$NTT,$KS" FHE_NVRTC_OPTS_NTT=-DNTT_VEC_IO=0
run CU_NTT_F64_BITS_0 "$NTT,$KS" FHE_NVRTC_OPTS_NTT=-DNTT_F64_BITS=0
run CU_PDL_RELEASE_EARLY_0 "$NTT,$KS" FHE_NVRTC_OPTS_NTT=-DPDL_RELEASE_EARLY=0 FHE_NVRTC_OPTS_ELEMENTWISE=-DPDL_RELEASE_EARLY=0 FHE_NVRTC_OPTS_KEYSWITCH=-DPDL_RELEASE_EARLY=0
run CU_HINTS_0 "$KS" "FHE_NVRTC_OPTS_NTT=-DLOAD_ONCE_HINT=0 -DSCRATCH_LAST_HINT=0" "FHE_NVRTC_OPTS_KEYSWITCH=-DLOAD_ONCE_HINT=0 -DSCRATCH_LAST_HINT=0"
run CU_NTT_LIFT_LAZY_0 "$KS" FHE_NVRTC_OPTS_NTT=-DNTT_LIFT_LAZY=0
run CU_NTT_F64_WIDE_0 "bgv:N13,bfv:N13" FHE_NVRTC_OPTS_NTT=-DNTT_F64_WIDE_BITS=0
run CU_CONVERT_F64_0 "$KS,$BFV" FHE_NVRTC_OPTS_KEYSWITCH=-DCONVERT_F64=0
echo "total $(( $(date +%s) - T0 ))s"
