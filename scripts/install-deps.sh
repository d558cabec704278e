#!/usr/bin/env bash
# Installs the Debian 12 packages quiver needs, only those missing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config git liblz4-dev libzstd-dev libsnappy-dev libbrotli-dev libflatbuffers-dev
      flatbuffers-compiler libjemalloc-dev libmimalloc-dev zlib1g-dev nlohmann-json3-dev
      libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev binutils
      libthrift-dev thrift-compiler libboost-dev libcpp-httplib-dev libssl-dev
      libcurl4-openssl-dev curl libpg-query-dev libre2-dev libxxhash-dev ccache
      python3-dev python3-pybind11 pybind11-dev python3-numpy python3-pandas python3-pytest
      python3-setuptools python3-venv python3-pip
      clang libclang-rt-dev  # the fuzz preset: clang, libFuzzer and the ASan/UBSan runtimes
      clang-format)          # scripts/format.sh and the style test
# The objstore tests (ctest -L objstore): a one-node Ceph cluster with RGW
# (tests/objstore/rgw.sh) and HAProxy in front of three servers; installed
# without recommends (~90 packages, ~270 MiB; no systemd services start).
objstore_pkgs=(ceph-mon ceph-osd radosgw haproxy)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
missing=()
for p in "${objstore_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing (objstore tests): ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
