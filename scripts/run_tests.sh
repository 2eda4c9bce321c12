#!/bin/sh
# Runs the C unit tests and the Lua scene tests of one build tree and prints the combined total as
# the last line: "N passed, M failed". Exit status 1 when anything failed.
# usage: sh scripts/run_tests.sh [BUILD_DIR]
#
# The C suite and each Lua test file are separate jobs run LOOM_TEST_JOBS at a time (default: the
# number of processors), the longest known ones first; each job's output is printed whole, in the
# order of the job list, once all have finished. The Slurm tests run alone afterwards.
build=${1:-build}
jobs=${LOOM_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
# jobs sharing the cores: each world on one thread (the same bits as two; a spinning helper thread
# would only take time from the other job), unless LOOM_THREADS says otherwise
[ "$jobs" -gt 1 ] && [ -z "${LOOM_THREADS:-}" ] && export LOOM_THREADS=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# the jobs that took longest when last measured, longest first (C: the C suite; a scheduling hint
# only: every file runs)
slow="collide_test scenes_test flag_test golden_test C checkpoint_test integrators_test"
list="$dir/jobs"
: >"$list"
for name in $slow; do
  if [ "$name" = C ]; then echo "C" >>"$list"; elif [ -f "tests/lua/$name.lua" ]; then echo "tests/lua/$name.lua" >>"$list"; fi
done
case " $slow " in *" C "*) ;; *) echo "C" >>"$list" ;; esac
for f in tests/lua/*.lua; do
  base=$(basename "$f" .lua)
  case " $slow " in *" $base "*) continue ;; esac
  echo "$f" >>"$list"
done

# one job: its output into $dir/N.log, its exit status into $dir/N.status
cat >"$dir/job.sh" <<'EOF'
build=$1 dir=$2 n=$3 job=$4
start=$(date +%s)
if [ "$job" = C ]; then
  "$build/test_kernel" --data tests/data >"$dir/$n.log" 2>&1
else
  "$build/loom" test "$job" >"$dir/$n.log" 2>&1
fi
st=$?
echo $(($(date +%s) - start)) >"$dir/$n.time"
echo $st >"$dir/$n.status"
EOF
awk '{print NR " " $0}' "$list" | xargs -P "$jobs" -n 2 sh "$dir/job.sh" "$build" "$dir"

count() { tail -n 1 "$1" | sed -n "s/^\([0-9]*\) passed, \([0-9]*\) failed$/\\$2/p"; }
tp=0 tf=0
n=0
while read -r job; do
  n=$((n + 1))
  secs=$(cat "$dir/$n.time" 2>/dev/null || echo "?")
  if [ "$job" = C ]; then echo "== C unit tests ($build/test_kernel, $secs s)"; else echo "== $job ($secs s)"; fi
  log="$dir/$n.log"
  [ -f "$log" ] && cat "$log"
  p=$( [ -f "$log" ] && count "$log" 1 ) f=$( [ -f "$log" ] && count "$log" 2 )
  st=$(cat "$dir/$n.status" 2>/dev/null || echo 1)
  # a job that crashed before printing its total counts as one failure
  if [ -z "$p" ]; then p=0 f=1; echo "$job did not finish (status $st)"; fi
  [ "$st" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  tp=$((tp + p)) tf=$((tf + f))
done <"$list"

# loom sweep on a single-node Slurm (scripts/slurm-local.sh starts daemons: root or sudo needed)
if [ "${LOOM_SANITIZED:-}" = 1 ]; then
  echo "== Slurm tests: skipped under the sanitizers (they test the cluster, not memory)"
elif [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; then
  echo "== Slurm tests ($build/loom test tests/slurm)"
  log="$dir/slurm.log"
  "$build/loom" test tests/slurm >"$log" 2>&1
  st=$?
  cat "$log"
  p=$(count "$log" 1) f=$(count "$log" 2)
  if [ -z "$p" ]; then p=0 f=1; echo "Slurm tests did not finish (status $st)"; fi
  [ "$st" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  tp=$((tp + p)) tf=$((tf + f))
else
  echo "== Slurm tests: skipped (they start munged, slurmctld and slurmd: run as root, or with passwordless sudo)"
fi

echo "$tp passed, $tf failed"
[ "$tf" -eq 0 ]
