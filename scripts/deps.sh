#!/usr/bin/env bash
# Installs what rgpu needs to build and test, from Debian's archive (skips what is there).
set -eu
pkgs=(cmake ninja-build g++ pkg-config opencl-headers ocl-icd-opencl-dev pocl-opencl-icd clinfo
      clblast-tests libgtest-dev libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
      libtomlplusplus-dev python3-pyopencl python3-numpy python3-matplotlib
      qemu-user g++-s390x-linux-gnu libssl-dev openssl prometheus-cpp-dev prometheus
      clang-14 clang-tidy-14 clang-format-14 libclang-rt-14-dev curl libcurl4-openssl-dev etcd-server dpkg-dev
      clpeak hashcat python3-opencv libopencv-core-dev libopencv-imgproc-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "installing: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
