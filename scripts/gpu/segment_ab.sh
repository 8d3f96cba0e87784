#!/usr/bin/env bash
# A/B of the segmented plans on the GPU (issue 26, decision 48): each line is
#   VARIANT | CASE PLAN TIME us RATIOx plan ... GB/s in+out wrong N
# with RATIO the device time over the plain f32 sum of the same 2^LG elements in the same
# process (its own line per variant: "VARIANT | f32-sum plain ..."). Every result is checked
# against a float64 host reference (wrong N counts those out of bound).
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/segment_ab.sh        (carry .gpu)
# Env: DEV (NVIDIA), LG (28), REPS (20), ONLY (a grep -E on variant labels, to run a subset).
# Session 10 (decision 53): `cols-*` (the columns plan's loop forms, unroll and row chunks;
# stripes' unroll and reach) and `types-*` (f64 and i32 rows and columns, the same bytes as
# 2^28 f32): ONLY='^(cols|types)' runs just those.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT_NAME=segment_ab.txt
. scripts/gpu/seg_ab_lib.sh

ROWS_SHORT="rows-2^24x2^4 rows-2^26x2^2"
ROWS_MID="rows-2^20x2^8 rows-2^14x2^14"
ROWS_LONG="rows-2^8x2^20 rows-2^0x2^28"
COLS="cols-2^14x2^14 cols-2^20x2^8 cols-2^8x2^20 cols-2^24x2^4"
RAGGED="ragged-16 ragged-256 ragged-65536"

# 1. Every case: the automatic plan, the old ones and the new ones (forced).
v base-short SEGBENCH_PLANS=auto,item,tiles,staged,lanes -- $ROWS_SHORT
v base-mid SEGBENCH_PLANS=auto,group,lanes,staged -- $ROWS_MID
v base-long SEGBENCH_PLANS=auto,tiles,group -- $ROWS_LONG
v base-cols SEGBENCH_PLANS=auto,columns,stripes -- $COLS
v base-ragged SEGBENCH_PLANS=auto,tiles,lanes,staged -- $RAGGED

# 2. staged: elements per work-item, work-group size, work-groups per compute unit.
for e in 4 16 32; do v staged-e$e SEGBENCH_PLANS=staged CLREDUCE_SEGMENT_TUNE=per_item=$e -- $ROWS_SHORT; done
for l in 512; do v staged-l$l SEGBENCH_PLANS=staged CLREDUCE_SEGMENT_TUNE=local=$l -- $ROWS_SHORT; done
for g in 2 4 16; do v staged-g$g SEGBENCH_PLANS=staged CLREDUCE_SEGMENT_TUNE=groups_per_cu=$g -- $ROWS_SHORT; done
# staged over CSR offsets (stages of local x per_item elements, a second pass for the pieces).
for e in 4 16 32; do v staged-csr-e$e SEGBENCH_PLANS=staged CLREDUCE_SEGMENT_TUNE=per_item=$e -- ragged-16 ragged-256; done
for g in 2 4 16; do v staged-csr-g$g SEGBENCH_PLANS=staged CLREDUCE_SEGMENT_TUNE=groups_per_cu=$g -- ragged-16 ragged-256; done
v staged-csr-l512 SEGBENCH_PLANS=staged CLREDUCE_SEGMENT_TUNE=local=512 -- ragged-16 ragged-256

# 3. lanes: work-items per segment, work-groups per compute unit (rows of 256, CSR).
for s in 8 16 64 128; do v lanes-s$s SEGBENCH_PLANS=lanes CLREDUCE_SEGMENT_TUNE=lanes=$s -- rows-2^20x2^8 ragged-256; done
for s in 2 4 8; do v lanes-short-s$s SEGBENCH_PLANS=lanes CLREDUCE_SEGMENT_TUNE=lanes=$s -- $ROWS_SHORT ragged-16; done
for g in 2 4 16; do v lanes-g$g SEGBENCH_PLANS=lanes CLREDUCE_SEGMENT_TUNE=groups_per_cu=$g -- rows-2^20x2^8 ragged-256; done
v lanes-l512 SEGBENCH_PLANS=lanes CLREDUCE_SEGMENT_TUNE=local=512 -- rows-2^20x2^8

# 4. stripes and columns: work-group size and work-groups per compute unit.
for l in 128 512 1024; do v stripes-l$l SEGBENCH_PLANS=stripes CLREDUCE_SEGMENT_TUNE=local=$l -- cols-2^24x2^4 cols-2^20x2^8; done
for g in 4 16 32; do v stripes-g$g SEGBENCH_PLANS=stripes CLREDUCE_SEGMENT_TUNE=groups_per_cu=$g -- cols-2^24x2^4 cols-2^20x2^8; done
for g in 4 16 32; do v columns-g$g SEGBENCH_PLANS=columns CLREDUCE_SEGMENT_TUNE=groups_per_cu=$g -- cols-2^14x2^14 cols-2^20x2^8; done
v columns-l128 SEGBENCH_PLANS=columns CLREDUCE_SEGMENT_TUNE=local=128 -- cols-2^14x2^14 cols-2^20x2^8

# 5. group (rows of 16384) and tiles (long rows, CSR): work-groups per compute unit.
v group-g16 SEGBENCH_PLANS=group CLREDUCE_SEGMENT_TUNE=groups_per_cu=16 -- rows-2^14x2^14
for g in 4 16 32; do v tiles-g$g SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=groups_per_cu=$g -- rows-2^8x2^20 ragged-16 ragged-256; done
# 6. Accumulators per work-item in the strided loops (second run: unroll; CSR staged).
for u in 1 4 8 16; do v unroll-u$u SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=unroll=$u -- rows-2^20x2^8 rows-2^14x2^14 rows-2^8x2^20 cols-2^14x2^14 cols-2^20x2^8 cols-2^24x2^4; done
for u in 4 8; do v unroll-stripes-u$u SEGBENCH_PLANS=stripes,columns CLREDUCE_SEGMENT_TUNE=unroll=$u -- cols-2^20x2^8 cols-2^24x2^4; done
for u in 1 8; do v unroll-columns-g16-u$u SEGBENCH_PLANS=columns CLREDUCE_SEGMENT_TUNE=groups_per_cu=16,unroll=$u -- cols-2^14x2^14 cols-2^20x2^8; done
# 7. CSR offsets (issue 26's ragged cases, decision 54): merge path against tiles, then
# merge's items per work-item around the default (128 x 16 on GPUs). ONLY='^csr' runs just
# these. (Session 10's runs 1 and 2 also swept work-groups per compute unit (2-16, no gain)
# and work-group sizes 64-512 (128 best): design/bench/2026-11-24-h200-session10-segcsr.txt.)
v csr-base SEGBENCH_PLANS=auto,tiles,merge -- $RAGGED ragged-1024
for e in 8 12 24; do v csr-merge-e$e SEGBENCH_PLANS=merge CLREDUCE_SEGMENT_TUNE=per_item=$e -- ragged-16 ragged-256; done

# 8. Session 10 (decision 53). The columns first pass's accumulators (unroll; 1 is session 8's
# loop) on the three many-column shapes, with the rule's row chunks. (The run of record,
# commit 4722d20, also compared the loop forms through a CLR_SEG_CLOOP define since removed:
# design/bench/2026-11-24-h200-session10-segcols.txt.)
CMANY="cols-2^14x2^14 cols-2^20x2^8 cols-2^8x2^20"
for u in 1 2 4 8; do
  v cols-u$u SEGBENCH_PLANS=columns CLREDUCE_SEGMENT_TUNE=unroll=$u -- $CMANY
done
# Row chunks on 16384 x 16384 (64 column blocks; 16 = 1024 work-groups fill one round of 8 per
# SM; session 9's rule gave 17 = 1088) and work-groups per SM.
for c in 16 17 32 64; do
  for u in 4 8; do
    v cols-chunks$c-u$u SEGBENCH_PLANS=columns CLREDUCE_SEGMENT_TUNE=chunks=$c,unroll=$u -- cols-2^14x2^14
  done
done
for g in 16; do
  for u in 1 4 8; do
    v cols-g$g-u$u SEGBENCH_PLANS=columns CLREDUCE_SEGMENT_TUNE=groups_per_cu=$g,unroll=$u -- cols-2^14x2^14
  done
done
# stripes: accumulators (4 is now its default) and reach (columns of 16..256, where columns
# idles work-items or folds many chunks).
CFEW="cols-2^24x2^4 cols-2^22x2^6 cols-2^21x2^7 cols-2^20x2^8"
for u in 2 4 8; do v cols-stripes-u$u SEGBENCH_PLANS=stripes,columns CLREDUCE_SEGMENT_TUNE=unroll=$u -- $CFEW; done
for g in 4 16; do v cols-stripes-g$g SEGBENCH_PLANS=stripes CLREDUCE_SEGMENT_TUNE=groups_per_cu=$g -- cols-2^24x2^4 cols-2^20x2^8; done
# The automatic plans of every column shape.
v cols-auto SEGBENCH_PLANS=auto -- $COLS cols-2^22x2^6
# Register counts and spills of the columns first pass (NVIDIA's build log through the CLI at
# debug level; 4096 x 4096 runs the columns plan).
for u in 1 4 8; do
  label=cols-regs-u$u
  if echo "$label" | grep -Eq "$ONLY"; then
    CLREDUCE_LOG=debug CLREDUCE_EXTRA_OPTIONS=-cl-nv-verbose CLREDUCE_SEGMENT_TUNE=unroll=$u \
      timeout 60 .gpu/clreduce reduce --rows 4096 --cols 4096 --axis 0 --device "$DEV" 2>&1 |
      grep -ioE "(function properties for clr_[a-z]+|[0-9]+ bytes stack frame[^\\]*|used [0-9]+ registers[^\\]*)" | sed "s/^/$label | /" | tee -a "$out"
  fi
done

# 9. f64 and i32, the same bytes as 2^28 f32 (f64: 2^27 elements, half the columns or rows).
LG64=$((LG - 1))
half() { local r=$1 c=$2; echo "$3-2^${r}x2^${c}"; }
T64_COLS="$(half $((LG64 / 2)) $((LG64 - LG64 / 2)) cols) $(half $((LG64 - 8)) 8 cols) $(half 8 $((LG64 - 8)) cols) $(half $((LG64 - 4)) 4 cols)"
T64_ROWS="$(half $((LG64 / 2)) $((LG64 - LG64 / 2)) rows) $(half $((LG64 - 8)) 8 rows) $(half 8 $((LG64 - 8)) rows) $(half $((LG64 - 4)) 4 rows) $(half $((LG64 - 2)) 2 rows) $(half 0 $LG64 rows)"
LG=$LG64 v types-f64-cols SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto,columns,stripes -- $T64_COLS
LG=$LG64 v types-f64-rows SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- $T64_ROWS ragged-16 ragged-256 ragged-65536
v types-i32-cols SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto,columns,stripes -- $COLS
v types-i32-rows SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto -- $ROWS_SHORT $ROWS_MID $ROWS_LONG $RAGGED
# 10. Session 11 (decision 58). ONLY='^s11' runs these (about 2 minutes).
# Long rows and one row: tiles (4 tiles per work-group, 64-bit strided loop) against group
# split over several work-groups per segment (2 fill / segments of them, each the plain sum's
# grid-stride loop in CLR_IDX, a second pass per segment), its split, unroll and fill; tiles'
# tiles per work-group (rounds).
LONG="rows-2^8x2^20 rows-2^0x2^28 rows-2^4x2^24 rows-2^10x2^18"
v s11-long SEGBENCH_PLANS=auto,tiles,group -- $LONG
for sp in 2 8; do v s11-split$sp SEGBENCH_PLANS=group CLREDUCE_SEGMENT_TUNE=split=$sp -- rows-2^8x2^20; done
for u in 4 16; do v s11-group-u$u SEGBENCH_PLANS=group CLREDUCE_SEGMENT_TUNE=unroll=$u -- rows-2^8x2^20 rows-2^0x2^28; done
for g in 16; do v s11-group-g$g SEGBENCH_PLANS=group CLREDUCE_SEGMENT_TUNE=groups_per_cu=$g -- rows-2^8x2^20 rows-2^0x2^28; done
for r in 1 2 8; do v s11-tiles-r$r SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=rounds=$r -- rows-2^8x2^20 rows-2^0x2^28 ragged-65536; done
# (Run 1 of record, design/bench/2026-11-24-h200-session11-segrows.txt, also compared staged
# with two stage buffers and a register prefetch, the plain sum's loop in tiles' pieces
# (CLR_SEG_PLAIN) and merge's deferred stores (CLR_MERGE_DEFER): none gained, all removed.)
SHORT="rows-2^24x2^4 rows-2^26x2^2 rows-2^23x2^5"
v s11-staged SEGBENCH_PLANS=auto,staged -- $SHORT
v s11-staged-l256 SEGBENCH_PLANS=staged CLREDUCE_SEGMENT_TUNE=local=256 -- $SHORT
# CSR mean 65536 (4096 segments, heavy-tailed): tiles against a work-group per segment.
v s11-csr SEGBENCH_PLANS=auto,tiles,group,merge -- ragged-65536 ragged-4096
# 11. Session 11, round 2 (decision 58): the new automatic plans. ONLY='^s11b' (about 40 s).
# Uniform rows on GPUs: group split into two rounds of work-groups below fill segments, a
# work-group per row from fill on, against tiles.
v s11b-rows SEGBENCH_PLANS=auto,tiles -- rows-2^8x2^20 rows-2^0x2^28 rows-2^4x2^24 rows-2^9x2^19 rows-2^10x2^18 rows-2^11x2^17
v s11b-rows-split1 SEGBENCH_PLANS=group CLREDUCE_SEGMENT_TUNE=split=1 -- rows-2^10x2^18
# CSR through tiles: 2 tiles per work-group (auto), 1 and 4. (Run 2 of record also ran the
# boundary searches of 32 tiles at once, CLR_TILES_BATCH, since reverted: 440 against 323 us.)
v s11b-csr SEGBENCH_PLANS=auto,tiles -- ragged-65536 ragged-4096 ragged-1024
for r in 1 4; do v s11b-csr-r$r SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=rounds=$r -- ragged-65536 ragged-4096; done
# Rows of 4..32: staged with 128 work-items (now the GPU default) against 256.
v s11b-staged-l256 SEGBENCH_PLANS=auto,staged CLREDUCE_SEGMENT_TUNE=local=256 -- rows-2^24x2^4 rows-2^26x2^2 rows-2^23x2^5
# 12. Session 12 (decision 62). ONLY='^s12' runs these. Rows of 2..32: item with vector
# loads (a work-item per row, `vec` elements per load where the body reads x[i], `unroll`
# rows per work-item at a stride of the launch's work-items) against staged (the rule).
SH12="rows-2^24x2^4 rows-2^26x2^2 rows-2^23x2^5 rows-2^25x2^3 rows-2^27x2^1"
v s12-rows SEGBENCH_PLANS=auto,item -- $SH12
for w in 1 2 8; do v s12-vec$w SEGBENCH_PLANS=item CLREDUCE_SEGMENT_TUNE=vec=$w -- rows-2^24x2^4 rows-2^26x2^2; done
for u in 1 2 4 8; do v s12-u$u SEGBENCH_PLANS=item CLREDUCE_SEGMENT_TUNE=unroll=$u -- rows-2^24x2^4 rows-2^26x2^2 rows-2^23x2^5; done
for l in 128 512; do v s12-l$l SEGBENCH_PLANS=item CLREDUCE_SEGMENT_TUNE=local=$l -- rows-2^24x2^4 rows-2^26x2^2; done
# The same bytes in f64 (2^27 elements) and i32: item (double2 / int4 loads) against staged.
LG=$((LG - 1)) v s12-f64 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto,item -- rows-2^23x2^4 rows-2^25x2^2
LG=$((LG - 1)) v s12-f64-vec4 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=item CLREDUCE_SEGMENT_TUNE=vec=4 -- rows-2^23x2^4 rows-2^25x2^2
v s12-i32 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto,item -- rows-2^24x2^4 rows-2^26x2^2
# CSR: runs (fixed runs of elements per work-item in registers, vector loads, starts from a
# local bit mask) against merge (the rule up to mean 256) and tiles; its run length, work-group
# size, vector width and fill.
RAG12="ragged-16 ragged-256 ragged-1024 ragged-4096 ragged-65536"
v s12-runs SEGBENCH_PLANS=auto,merge,runs -- $RAG12
for e in 8 32; do v s12-runs-e$e SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=per_item=$e -- ragged-16 ragged-256; done
for l in 128 512; do v s12-runs-l$l SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=local=$l -- ragged-16 ragged-256; done
v s12-runs-vec1 SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=vec=1 -- ragged-16 ragged-256
for g in 4 16; do v s12-runs-g$g SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=groups_per_cu=$g -- ragged-16 ragged-256; done
LG=$((LG - 1)) v s12-runs-f64 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto,runs -- ragged-16 ragged-256
v s12-runs-i32 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto,runs -- ragged-16 ragged-256
# CSR mean 65536 (4096 heavy-tailed segments, the longest 5.3 M): group split over several
# work-groups per segment (the tail still lands on split work-groups) against tiles (auto).
v s12-csr SEGBENCH_PLANS=auto -- ragged-65536
for sp in 2 8 32; do v s12-csr-split$sp SEGBENCH_PLANS=group CLREDUCE_SEGMENT_TUNE=split=$sp -- ragged-65536; done
# 13. Session 12, round 2 (decision 62): the new automatic plans (item with vector loads on
# rows of at most 64 bytes, runs on CSR up to mean 4096 with 128 work-items). ONLY='^s12b'.
v s12b-rows SEGBENCH_PLANS=auto,staged -- rows-2^24x2^4 rows-2^26x2^2 rows-2^25x2^3 rows-2^27x2^1 rows-2^23x2^5
for u in 1 2; do v s12b-rows-u$u SEGBENCH_PLANS=item CLREDUCE_SEGMENT_TUNE=unroll=$u -- rows-2^27x2^1 rows-2^25x2^3; done
v s12b-csr SEGBENCH_PLANS=auto,tiles -- ragged-16 ragged-256 ragged-1024 ragged-4096 ragged-16384 ragged-65536
v s12b-csr-runs SEGBENCH_PLANS=runs -- ragged-16384 ragged-65536
v s12b-csr-merge SEGBENCH_PLANS=merge -- ragged-16 ragged-256
for l in 64 256; do v s12b-runs-l$l SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=local=$l -- ragged-16 ragged-256 ragged-4096; done
v s12b-runs-nosplit SEGBENCH_PLANS=runs CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SPLIT=0 -- ragged-16 ragged-256
# f64 (2^27, the same bytes): rows (item on rows of 4, staged on rows of 16: 128 bytes) and
# runs of 8 (64 bytes, the default) against 16 and merge; i32.
LG=$((LG - 1)) v s12b-f64 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- rows-2^23x2^4 rows-2^25x2^2 ragged-16 ragged-256
LG=$((LG - 1)) v s12b-f64-merge SEGBENCH_TYPE=f64 SEGBENCH_PLANS=merge -- ragged-16 ragged-256
LG=$((LG - 1)) v s12b-f64-e16 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=per_item=16 -- ragged-16 ragged-256
v s12b-i32 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto -- rows-2^24x2^4 rows-2^26x2^2 ragged-16 ragged-256 ragged-4096
echo "written: $out"
