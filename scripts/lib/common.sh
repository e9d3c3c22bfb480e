# Shared by the scripts: installs missing Debian packages and sets up Open MPI.
# Source it; do not run it.

# Debian 12 packages Strata builds and runs with: python3-dev to python3-numpy for the
# Python module (python/), built for Debian's /usr/bin/python3; clang-16 and its
# libFuzzer for the fuzz harnesses (fuzz/; clang 14 cannot compile libstdc++ 12's
# <source_location>); liblinear-tools, whose train and predict the slr tests check
# model files against.
STRATA_PACKAGES=(build-essential cmake ninja-build ccache pkg-config openmpi-bin libopenmpi-dev
                 libgtest-dev libfmt-dev libxxhash-dev python3-dev pybind11-dev python3-pybind11 python3-numpy
                 clang-16 libclang-rt-16-dev libfuzzer-16-dev liblinear-tools)

# How scripts/test.sh and scripts/fuzz.sh configure the fuzz build (build-fuzz/).
STRATA_FUZZ_CMAKE_ARGS=(-DSTRATA_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-16 -DSTRATA_WERROR=ON)

strata_ensure_packages() {
  local missing=()
  for p in "${STRATA_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "strata: installing missing packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Open MPI refuses to run as root unless told twice; containers often lack the
# ptrace rights its single-copy shared-memory path needs; tests start more ranks
# than there are cores. The scripts run every rank on this host: ranks talk through
# shared memory only (btl self,vader), so none listens on a TCP port, and mpirun's
# own channel stays on the loopback interface (docs/security.md, multi-host runs).
strata_mpi_env() {
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  export OMPI_MCA_rmaps_base_oversubscribe=1
}

strata_jobs() { nproc 2>/dev/null || echo 2; }

# ccache (CMake compiles through it when installed, see CMakeLists.txt) keeps its cache
# outside the tree, in ~/.cache/ccache unless CCACHE_DIR says otherwise; the test suite
# fills it with two build flavours, so it needs a few GB. Raises a smaller limit to 5 GB.
strata_ccache_setup() {
  command -v ccache >/dev/null 2>&1 || return 0
  local max
  max=$(ccache -k max_size 2>/dev/null) || return 0
  # "5.0G", "500.0M", "0" (no limit); ccache may also write "GiB" or "GB".
  if awk -v m="$max" 'BEGIN {
        n = m + 0; u = m; sub(/^[0-9.]+ */, "", u); u = toupper(substr(u, 1, 1))
        if (u == "T") n *= 1024; else if (u == "M") n /= 1024; else if (u == "K") n /= 1048576
        exit !(n > 0 && n < 5) }'; then
    echo "strata: raising ccache's size limit from $max to 5G"
    ccache -M 5G >/dev/null
  fi
}

# strata_build DIR [cmake args...]: configure (once) and build everything. With
# STRATA_BUILD_TARGET set, builds that target only.
strata_build() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$(strata_jobs)" ${STRATA_BUILD_TARGET:+--target "$STRATA_BUILD_TARGET"}
}
