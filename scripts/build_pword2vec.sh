#!/bin/sh
# Build Intel Labs' pWord2Vec (https://github.com/IntelLabs/pWord2Vec), the HogBatch
# skip-gram NS trainer scripts/bench.py measures w2v against, without Intel's compiler
# and MKL: g++ and OpenBLAS for its USE_MKL path (each window's update as sgemm calls),
# and its plain-loop build beside it.
#
#   apt-get install g++ libopenblas-dev
#   git clone https://github.com/IntelLabs/pWord2Vec
#   sh scripts/build_pword2vec.sh pWord2Vec bin     # writes bin/pWord2Vec and bin/pWord2Vec-loops
#   python scripts/bench.py --systems w2v,pword2vec --combos sg-ns --pword2vec bin/pWord2Vec
#
# The source takes four changes: OpenBLAS's cblas.h for mkl.h, openblas_set_num_threads
# for mkl_set_num_threads (one BLAS thread inside each OpenMP thread), and the headers
# g++ does not bring in by itself (mm_malloc.h, cstdio, cstdlib).
set -eu
source_dir=${1:?usage: build_pword2vec.sh PWORD2VEC_SOURCE_FOLDER [OUTPUT_FOLDER]}
out=${2:-.}
mkdir -p "$out"
patched="$out/pWord2Vec-openblas.cpp"
sed -e 's|#include "mkl.h"|#include <cblas.h>|' \
    -e 's|mkl_set_num_threads(1)|openblas_set_num_threads(1)|' \
    -e '0,/#include <cstring>/s||#include <mm_malloc.h>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>|' \
    "$source_dir/pWord2Vec.cpp" > "$patched"
for needed in '<cblas.h>' 'openblas_set_num_threads(1)' '<mm_malloc.h>'; do
    grep -qF "$needed" "$patched" || { echo "build_pword2vec: $needed not patched in: has the source changed?" >&2; exit 1; }
done
flags="-std=c++11 -O3 -march=native -fopenmp"
g++ $flags -D USE_MKL "$patched" -o "$out/pWord2Vec" -lopenblas
g++ $flags "$patched" -o "$out/pWord2Vec-loops"
echo "build_pword2vec: wrote $out/pWord2Vec (OpenBLAS) and $out/pWord2Vec-loops (plain loops)"
