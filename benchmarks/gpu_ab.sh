#!/usr/bin/env bash
# Before/after gpu_bench on the GPU machine: an old and a new gpu_bench binary alternately, three
# rounds each, in one call; then `python3 benchmarks/ab_table.py DIR` makes the table.
#   OLD=path/to/old/gpu_bench NEW=path/to/new/gpu_bench OUT=dir bash benchmarks/gpu_ab.sh
set -u
: "${OLD:?path of the old gpu_bench}" "${NEW:?path of the new gpu_bench}" "${OUT:?output folder}"
P=${PRESETS:-CAT,CAT_COMPAT,N16_L24_D3,PHANTOM_N16,bgv:CAT_COMPAT,bgv:PHANTOM_INT,bfv:CAT_COMPAT,bfv:PHANTOM_INT,bgv:N13,ntt:11x1x256,ntt:11x1x4096}
mkdir -p "$OUT"
for round in 1 2 3; do
  for which in old new; do
    if [ $which = old ]; then b=$OLD; else b=$NEW; fi
    echo "== round $round $which" >&2
    "$b" --presets "$P" --reps "${REPS:-30}" --json "$OUT/ab_${which}_$round.json" > "$OUT/ab_${which}_$round.txt" 2> "$OUT/ab_${which}_$round.err" || echo "FAILED $which $round" >&2
  done
done
