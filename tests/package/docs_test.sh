#!/usr/bin/env bash
# The snippets of docs/using.md, run as written against an installed Strata:
#   docs_test.sh find_package|pkg_config|python PREFIX SOURCE_DIR SCRATCH
# find_package: hello's CMake project; pkg_config: hello compiled with pkg-config's flags
# (both run hello on 1 and 2 ranks and check its sum); python: train.py trains mf,
# prints the held-out RMSE, the model's shapes and an option error; models.py resumes,
# loads and saves models and checkpoints; arrays.py makes and checkpoints a DistArray.
set -uo pipefail
way=$1
export STRATA_PREFIX=$2
src=$3
dir=$4
source "$(dirname "$0")/package_test_lib.sh"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
extract_snippets "$src/docs/using.md" . || { fail "no snippets in docs/using.md"; finish; }
[ -f "run/$way.sh" ] || { fail "docs/using.md has no '<!-- run: $way -->' block"; finish; }

# Compile through ccache when installed: Debian's ccache puts compiler names in /usr/lib/ccache.
if [ -d /usr/lib/ccache ]; then
  export PATH=/usr/lib/ccache:$PATH CCACHE_BASEDIR=$ccache_base CCACHE_NOHASHDIR=1
fi
bash -e "run/$way.sh" >out.txt 2>&1 || fail "the $way snippet: exit $? $(tail -30 out.txt)"
expect() { grep -q -- "$1" out.txt || fail "the $way snippet's output lacks '$1': $(tail -5 out.txt)"; }
case $way in
  python)
    expect "^held-out RMSE after 5 passes: [0-9]"
    expect "^model: {'H': (500, 16), 'W': (2000, 16)}$"
    expect "^strata.OptionError: --rank: 0 is outside the allowed range"
    expect "^checkpoint: \['GH', 'GW', 'H', 'W'\] same W: True$"
    expect "^model2: {'W': (2000, 16), 'bias': (2000,)}$"
    expect "^strata.IoError: no-such-model: no such directory$"
    expect "^sum: 660.0 rows here: \[0 1 2\]$"
    expect "^checkpointed x: True$"
    ;;
  *)
    for np in 1 2; do expect "^$np rank(s): sum of squares 332833500$"; done
    ;;
esac
finish
