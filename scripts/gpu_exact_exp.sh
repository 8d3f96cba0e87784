# Register counts come from build logs, which a program loaded from the program cache on disk
# does not print (decision 63): every build here compiles from source.
export CLREDUCE_PROGRAM_CACHE=off
R=/tmp/res; mkdir -p $R; G="bash scripts/gpu.sh run cmd"
r() { tag=$1; ty=$2; shift 2; ( OUT=$R timeout 40 env "$@" $G .gpu/clreduce reduce --op sum --type $ty --n 268435456 --determinism exact --device NVIDIA > $R/$tag.txt 2>&1 ); echo "$tag $(grep -h 'device time' $R/$tag.txt | head -1) $(grep -h '^check' $R/$tag.txt | head -1)"; }
r f32u8 f32 X=1
r f32u4 f32 CLREDUCE_TUNE=unroll=4
r f32u2 f32 CLREDUCE_TUNE=unroll=2
r f32u8ni f32 CLREDUCE_EXTRA_OPTIONS="-D CLR_X_COLD_NOINLINE=1"
r f32u4ni f32 CLREDUCE_TUNE=unroll=4 CLREDUCE_EXTRA_OPTIONS="-D CLR_X_COLD_NOINLINE=1"
r f32u4nb f32 CLREDUCE_TUNE=unroll=4 CLREDUCE_EXTRA_OPTIONS="-D CLR_XB_BLOCKS=0"
r f64u4 f64 X=1
r f64u2 f64 CLREDUCE_TUNE=unroll=2
r f64u4ni f64 CLREDUCE_EXTRA_OPTIONS="-D CLR_X_COLD_NOINLINE=1"
r f32v f32 CLREDUCE_LOG=clreduce=debug CLREDUCE_EXTRA_OPTIONS=-cl-nv-verbose
r f64v f64 CLREDUCE_LOG=clreduce=debug CLREDUCE_EXTRA_OPTIONS=-cl-nv-verbose
grep -ho "ptxas info *: Used [0-9]* registers[^\"]*\|spill[^\"]*" $R/f32v.txt $R/f64v.txt | sort | uniq | head -20
( OUT=$R timeout 40 $G .gpu/clreduce reduce --op sum --type f32 --n 268435456 --device NVIDIA > $R/plain.txt 2>&1 ); echo "plain $(grep -h 'device time' $R/plain.txt)"
tar czf $OUT/expA.tgz -C $R .
