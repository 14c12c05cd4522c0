#!/usr/bin/env bash
# Builds the folder tests/gpu/run_on_device.sh needs on a GPU host from a build made here:
# rgpud, the ICD, api_test, the matmul example, the overhead benchmark, clinfo and CLBlast's
# test programs, and every shared library they use that is not glibc's or libstdc++'s.
#
#   tests/gpu/make_integration_carry.sh CARRY [BUILD]     (BUILD: default build)
set -eu
C=$1
build=${2:-build}
rm -rf "$C" && mkdir -p "$C"/{server,client,icd,tests,examples,bench,bin,lib}
cp "$build/server/rgpud" "$C/server/" && cp "$build/client/librgpu-icd.so" "$C/client/"
cp "$build/tests/api_test" "$C/tests/" && cp "$build/examples/matmul" "$C/examples/"
cp "$build/bench/rgpu-bench-overhead" "$C/bench/"
cp /usr/bin/clinfo "$C/bin/"
for r in xgemm xgemv xaxpy xdot xnrm2 xtrsm xomatcopy xim2col; do cp "/usr/bin/clblast_test_$r" "$C/bin/"; done
strip "$C"/server/* "$C"/client/* "$C"/tests/* "$C"/examples/* "$C"/bench/*
for f in "$C"/server/* "$C"/client/* "$C"/tests/* "$C"/examples/* "$C"/bench/* "$C"/bin/*; do
  ldd "$f" | awk '/=> \// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
  xargs -r cp -L -t "$C/lib/"
git rev-parse --short HEAD >"$C/COMMIT"
du -sh "$C"
