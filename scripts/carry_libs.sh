# carry_libs DEST FILE...: copies into DEST the shared libraries FILE... load that a GPU image
# may lack (all but glibc's and libstdc++'s), for bench/make_carry.sh and lab/tools/make_carry.sh.
carry_libs() {
  local dest=$1
  shift
  for f in "$@"; do ldd "$f" | awk '/=> \// {print $3}'; done | sort -u |
    grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' |
    xargs -r cp -L -t "$dest/"
}
