#!/bin/sh
# scripts/peers/fold.sh — self-collision side by side: Loom and Bullet's soft-body cloth on a cloth
# folded in two and dropped on a floor (scripts/peers/loom_fold.lua describes the scene).
#
#   sh scripts/peers/fold.sh [--runs R] [--seconds T] [--cases "self 32,self 64,noself 64"]
#                                   (defaults: 3 timed runs of 1 simulated second, the cases shown)
#
# Cases: "self N" — Bullet with cluster self-collision (one cluster per triangle; bullet_fold.cpp
# says why it needs a small world subclass in Bullet 3.24), "noself N" — Bullet as it comes (no
# self-collision). Loom is the same in both: Baraff-Witkin cloth, implicit at dt = 1/100, its
# self-collision on (the default). Bullet steps 1/240 s with 10 position iterations; the two are
# compared per simulated second. Crossings are counted by one exact test for both engines: Loom's
# world:interpenetrations() (triangle pairs of the cloth that intersect, and cloth triangles through
# the floor), after every Loom step and on Bullet's state every 10 steps and at the end (Bullet
# writes its states, loom_fold.lua --check reads them into the same cloth).
#
# Installs what it needs (libbullet-dev, g++, pkg-config; as root or through sudo, only if missing),
# compiles scripts/peers/bullet_fold.cpp into build/peers/ and builds Loom if needed. Prints a table
# and keeps the raw JSON lines in build/peers/. Not part of `make test` or `make bench`.
# LOOM=/path/to/loom measures another Loom binary.
set -eu

cd "$(dirname "$0")/../.."
RUNS=3
SECONDS_SIM=1
CASES="self 32,self 64,noself 64"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
    --seconds) SECONDS_SIM=${2:?--seconds needs a number}; shift 2 ;;
    --cases) CASES=${2:?--cases needs a list such as "self 32,noself 64"}; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fold.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

. scripts/peers/common.sh
need_packages libbullet-dev g++ pkg-config

OUT=build/peers
BULLET=$OUT/bullet_fold
compile_bullet scripts/peers/bullet_fold.cpp "$BULLET"
build_loom fold.sh
[ -x "$LOOM" ] || { echo "fold.sh: $LOOM is not an executable" >&2; exit 1; }

STAMP=$(date +%Y%m%d-%H%M%S)
JSON=$OUT/fold-$STAMP.jsonl
: >"$JSON"
echo "machine: $(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bullet:  libbullet-dev $(dpkg-query -W -f='${Version}' libbullet-dev) (btScalar = float); loom: $("$LOOM" --version 2>/dev/null | head -n 1)"
echo "protocol: $SECONDS_SIM simulated s, 1 untimed run (crossings) then $RUNS timed runs (fresh world each), median"
echo

IFS_SAVED=$IFS
IFS=,
# shellcheck disable=SC2086 # the list splits at commas
set -- $CASES
IFS=$IFS_SAVED
for c in "$@"; do
  case "$c" in
    "self "*|"noself "*) ;;
    *) echo "fold.sh: unknown case '$c' (self N, noself N)" >&2; exit 2 ;;
  esac
done
k=0
for c in "$@"; do
  # shellcheck disable=SC2086 # $c is "case N"
  set -- $c
  mesh=$OUT/fold-mesh-$2.txt states=$OUT/fold-states-$1-$2.txt
  "$LOOM" exec scripts/peers/loom_fold.lua "$2" --export "$mesh"
  flag=""
  [ "$1" = noself ] && flag=--no-self
  echo "$1 N=$2"
  run_bullet() {
    status=0
    # shellcheck disable=SC2086 # $flag is empty or one word
    b=$("$BULLET" "$mesh" --seconds "$SECONDS_SIM" --runs "$RUNS" --dump "$states" $flag) || status=$?
    [ -n "$b" ] || b="{\"engine\":\"bullet\",\"failed\":true,\"status\":$status}"
    chk=$("$LOOM" exec scripts/peers/loom_fold.lua "$2" --check "$states" 2>/dev/null) || chk="{}"
    line=$(printf '%s' "$b" | sed "s/^{/{\"case\":\"$1 $2\",/; s/}\$/,\"check\":$chk}/")
    echo "$line" >>"$JSON"
    echo "  $line"
  }
  run_loom() {
    status=0
    l=$("$LOOM" exec scripts/peers/loom_fold.lua "$2" --seconds "$SECONDS_SIM" --runs "$RUNS") || status=$?
    [ -n "$l" ] || l="{\"engine\":\"loom\",\"failed\":true,\"status\":$status}"
    line=$(printf '%s' "$l" | sed "s/^{/{\"case\":\"$1 $2\",/")
    echo "$line" >>"$JSON"
    echo "  $line"
  }
  if [ $((k % 2)) -eq 0 ]; then run_bullet "$1" "$2"; run_loom "$1" "$2"
  else run_loom "$1" "$2"; run_bullet "$1" "$2"; fi
  k=$((k + 1))
done
echo "raw results in $JSON"
echo

awk '
function get(line, key,   m) {
  if (!match(line, "\"" key "\":[^,}]*")) return ""
  m = substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
  gsub(/"/, "", m)
  return m
}
{
  k = get($0, "case")
  if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
  row[k, get($0, "engine")] = $0
}
END {
  printf "%-10s %-18s %-18s %-20s %-14s %-16s %s\n", "case", "Bullet ms/step", "Loom ms/step", "ms per sim. s B/L",
    "Bul/Loom time", "crossings B/L", "below twin B/L"
  for (i = 1; i <= nk; i++) {
    k = order[i]; b = row[k, "bullet"]; l = row[k, "loom"]
    bm = get(b, "ms_per_step_median"); lm = get(l, "ms_per_step_median")
    bs = get(b, "ms_per_simulated_s"); ls = get(l, "ms_per_simulated_s")
    bms = get(b, "failed") == "true" ? "FAILED" : (get(b, "nan") == "true" ? "NaN@" get(b, "nan_step") : sprintf("%.2f", bm))
    lms = get(l, "failed") == "true" ? "FAILED" : sprintf("%.2f", lm)
    ratio = (bs + 0 > 0 && ls + 0 > 0) ? sprintf("%.2f", bs / ls) : "-"
    # Bullet: the check object follows its own fields; its crossings_max is the last match in the line
    bc = b; sub(/.*"check":/, "", bc)
    printf "%-10s %-18s %-18s %-20s %-14s %-16s %s\n", k, bms, lms, sprintf("%s / %s", bs == "" ? "-" : bs, ls == "" ? "-" : ls),
      ratio, sprintf("%s / %s", get(bc, "crossings_max"), get(l, "crossings_max")),
      sprintf("%s / %s", get(bc, "below_twin_end"), get(l, "below_twin_end"))
  }
  print ""
  print "Bullet steps 1/240 s (10 position iterations), Loom 1/100 s (implicit); Bul/Loom time above 1 means Loom"
  print "takes that many times less time per simulated second. Crossings: the largest number of intersecting"
  print "triangle pairs (Loom'"'"'s exact test) over Loom'"'"'s steps and over Bullet'"'"'s saved states; below twin: upper-layer"
  print "vertices that end under their twin in the lower layer."
}' "$JSON"
