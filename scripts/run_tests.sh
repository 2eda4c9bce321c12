#!/bin/sh
# Runs the C unit tests and the Lua scene tests of one build tree and prints the combined total as
# the last line: "N passed, M failed". Exit status 1 when anything failed.
# usage: sh scripts/run_tests.sh [BUILD_DIR]
build=${1:-build}
log_c=$(mktemp) log_l=$(mktemp) log_s=$(mktemp)
trap 'rm -f "$log_c" "$log_l" "$log_s"' EXIT

echo "== C unit tests ($build/test_kernel)"
"$build/test_kernel" --data tests/data >"$log_c" 2>&1
c_status=$?
cat "$log_c"

echo "== Lua tests ($build/loom test tests/lua)"
"$build/loom" test tests/lua >"$log_l" 2>&1
l_status=$?
cat "$log_l"

# loom sweep on a single-node Slurm (scripts/slurm-local.sh starts daemons: root or sudo needed)
sp=0; sf=0
if [ "${LOOM_SANITIZED:-}" = 1 ]; then
  echo "== Slurm tests: skipped under the sanitizers (they test the cluster, not memory)"
elif [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; then
  echo "== Slurm tests ($build/loom test tests/slurm)"
  "$build/loom" test tests/slurm >"$log_s" 2>&1
  s_status=$?
  cat "$log_s"
  sp=$(tail -n 1 "$log_s" | sed -n "s/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p")
  sf=$(tail -n 1 "$log_s" | sed -n "s/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p")
  [ -n "$sp" ] || { sp=0; sf=1; echo "Slurm tests did not finish (status $s_status)"; }
  [ "$s_status" -ne 0 ] && [ "$sf" -eq 0 ] && sf=1
else
  echo "== Slurm tests: skipped (they start munged, slurmctld and slurmd: run as root, or with passwordless sudo)"
fi

count() { tail -n 1 "$1" | sed -n "s/^\([0-9]*\) passed, \([0-9]*\) failed$/\\$2/p"; }
cp=$(count "$log_c" 1); cf=$(count "$log_c" 2)
lp=$(count "$log_l" 1); lf=$(count "$log_l" 2)
# a suite that crashed before printing its total counts as one failure
[ -n "$cp" ] || { cp=0; cf=1; echo "C unit tests did not finish (status $c_status)"; }
[ -n "$lp" ] || { lp=0; lf=1; echo "Lua tests did not finish (status $l_status)"; }
[ "$c_status" -ne 0 ] && [ "$cf" -eq 0 ] && cf=1
[ "$l_status" -ne 0 ] && [ "$lf" -eq 0 ] && lf=1
echo "$((cp + lp + sp)) passed, $((cf + lf + sf)) failed"
[ $((cf + lf + sf)) -eq 0 ]
