#!/usr/bin/env bash
# Strata's Debian packages (docs/using.md), from a fresh Debian 12 machine:
#   scripts/package.sh            builds build-pkg/ (Release, -Werror: library, apps, the
#                                 command and the Python module; no tests or benchmarks),
#                                 makes build-pkg/libstrata-dev_*.deb, strata_*.deb and
#                                 python3-strata_*.deb with CPack and checks their Depends
#                                 and contents
#   scripts/package.sh --install  then installs them with apt-get (root or sudo), builds
#                                 examples/ against /usr with find_package, runs it on 2
#                                 ranks, and runs docs/using.md's train.py (mf, held-out
#                                 RMSE) with Debian's python3. They stay installed;
#                                 apt-get purge strata libstrata-dev python3-strata
#                                 removes them.
#   STRATA_PKG_BUILD=build scripts/package.sh   packages an existing build folder as it is
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
strata_ensure_packages
strata_ccache_setup
install=0
[ "${1:-}" = "--install" ] && install=1

dir=${STRATA_PKG_BUILD:-}
if [ -z "$dir" ]; then
  dir=build-pkg
  echo "== build ($dir: Release, -Werror)"
  strata_build "$dir" -DCMAKE_BUILD_TYPE=Release -DSTRATA_WERROR=ON -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF
else
  cmake --build "$dir" -j "$(strata_jobs)" --target strata strata-cli strata_python
fi
echo "== packages"
rm -f "$dir"/*.deb
(cd "$dir" && cpack -G DEB >/dev/null)
dev=$(ls "$dir"/libstrata-dev_*.deb) cmd=$(ls "$dir"/strata_*.deb) py=$(ls "$dir"/python3-strata_*.deb)
for deb in "$dev" "$cmd" "$py"; do
  echo "-- $deb"
  dpkg-deb --field "$deb" Package Version Architecture Depends Recommends
done
# What each must hold, and what the command's Depends must name (from dpkg-shlibdeps).
contents=$(dpkg-deb --contents "$dev")
for f in /usr/lib/libstrata.a /usr/include/strata/strata.hpp /usr/include/strata/detail/ \
         /usr/lib/cmake/Strata/StrataConfig.cmake /usr/lib/cmake/Strata/StrataConfigVersion.cmake \
         /usr/lib/cmake/Strata/FindxxHash.cmake /usr/lib/pkgconfig/strata.pc; do
  grep -q " \.$f" <<<"$contents" || { echo "libstrata-dev lacks $f" >&2; exit 1; }
done
dpkg-deb --contents "$cmd" | grep -q ' \./usr/bin/strata$' || { echo "strata lacks /usr/bin/strata" >&2; exit 1; }
for lib in libopenmpi3 libfmt9 libxxhash0; do
  dpkg-deb --field "$cmd" Depends | grep -q "$lib" || { echo "strata's Depends lacks $lib" >&2; exit 1; }
done
dpkg-deb --contents "$py" | grep -q ' \./usr/lib/python3/dist-packages/strata\.cpython-.*\.so$' ||
  { echo "python3-strata lacks the module" >&2; exit 1; }
dpkg-deb --field "$py" Depends | grep -q "python3-numpy" || { echo "python3-strata's Depends lacks numpy" >&2; exit 1; }
[ "$install" -eq 1 ] || exit 0

echo "== apt-get install"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "./$dev" "./$cmd" "./$py"
echo "== examples/ against /usr (find_package), 2 ranks"
strata_mpi_env
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake -S examples -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
awk 'BEGIN { for (u = 0; u < 300; u++) for (i = u % 3; i < 40; i += 3)
              printf "%d %d %d\n", u, i, 1 + u % 3 + i % 3 }' >"$work/ratings.txt"
mpirun -np 2 "$work/build/rating-baseline" "$work/ratings.txt" --sweeps 3
strata --help | head -3
echo "== docs/using.md's train.py with /usr/bin/python3"
source tests/package/package_test_lib.sh
extract_snippets docs/using.md "$work"
(cd "$work" && /usr/bin/python3 train.py)
