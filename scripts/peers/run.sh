#!/bin/sh
# scripts/peers/run.sh — Loom's cloth side by side with Bullet's soft-body cloth on this machine.
#
#   sh scripts/peers/run.sh [--runs R] [--steps S] [--cases "implicit 64,implicit 128"]
#                                   (defaults: 5 timed runs of 500 steps, every case below)
#
# Installs what it needs (libbullet-dev, g++, pkg-config; as root or through sudo, only if
# missing), compiles scripts/peers/bullet_cloth.cpp into build/peers/, builds Loom if needed, then
# runs both engines on free cloth N = 64, 128 and cloth on a sphere N = 32, 64, 128, then free cloth
# N = 64, 128 once more with Loom's implicit Baraff-Witkin cloth at dt = 1/60 (Bullet stays at its
# 1/240: the comparison is per simulated second, the same simulated time for both), and N = 128 with
# that cloth under a 1 % strain limit (case "limited"). The engines
# run case by case, back to back, the first one alternating, so that both see the same machine
# state. Prints a table (medians, Loom/Bullet ratio, quality figures) and keeps the raw JSON lines
# in build/peers/. Not part of `make test` or `make bench`: numbers on a shared 2-core machine are
# noisy, so compare the ratios of one run.
#
# LOOM=/path/to/loom measures another Loom binary (e.g. one built from a clean checkout) instead of
# this tree's build/loom, which is otherwise (re)built with `make` when out of date.
set -eu

cd "$(dirname "$0")/../.."
RUNS=5
STEPS=500
CASES="free 64,free 128,sphere 32,sphere 64,sphere 128,implicit 64,implicit 128,limited 128"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
    --steps) STEPS=${2:?--steps needs a number}; shift 2 ;;
    --cases) CASES=${2:?--cases needs a list such as "implicit 64,free 128"}; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

# ---- packages ----------------------------------------------------------------------------------
. scripts/peers/common.sh
need_packages libbullet-dev g++ pkg-config

# ---- builds ------------------------------------------------------------------------------------
OUT=build/peers
BULLET=$OUT/bullet_cloth
compile_bullet scripts/peers/bullet_cloth.cpp "$BULLET"
if [ -z "${LOOM:-}" ]; then
  build_loom run.sh
  loom_src="git $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  git diff --quiet HEAD -- src lua 2>/dev/null || loom_src="$loom_src + uncommitted changes in src/ or lua/"
else
  [ -x "$LOOM" ] || { echo "run.sh: LOOM=$LOOM is not an executable" >&2; exit 1; }
  loom_src="LOOM=$LOOM"
fi

# ---- runs --------------------------------------------------------------------------------------
STAMP=$(date +%Y%m%d-%H%M%S)
JSON=$OUT/cloth-$STAMP.jsonl
: >"$JSON"
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)
echo "machine: $cpu, $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo "bullet:  libbullet-dev $(dpkg-query -W -f='${Version}' libbullet-dev) (btScalar = float), $(g++ -dumpfullversion 2>/dev/null || g++ -dumpversion) -O2"
echo "loom:    $("$LOOM" --version 2>/dev/null | head -n 1) ($loom_src)"
echo "protocol: dt 1/240, $STEPS steps per run, 1 untimed run then $RUNS timed runs (fresh world each), median"
echo

run_engine() { # engine case n   (case "implicit": the free cloth, Loom with --implicit; "limited": the same with a 1 % strain limit)
  status=0
  scene=$2 flags=""
  if [ "$2" = implicit ]; then scene=free flags=--implicit; fi
  if [ "$2" = limited ]; then scene=free flags="--implicit --strain-limit 0.01"; fi
  if [ "$1" = bullet ]; then
    line=$("$BULLET" "$3" "$scene" --steps "$STEPS" --runs "$RUNS") || status=$?
  else
    # shellcheck disable=SC2086 # $flags is empty or a few words
    line=$("$LOOM" exec scripts/peers/loom_cloth.lua "$3" "$scene" --steps "$STEPS" --runs "$RUNS" $flags) || status=$?
  fi
  if [ -z "$line" ]; then
    line="{\"engine\":\"$1\",\"case\":\"$2\",\"n\":$3,\"failed\":true,\"status\":$status}"
  fi
  # the case key of the table: the implicit runs are their own rows
  [ "$2" = implicit ] && line=$(printf '%s' "$line" | sed 's/"case":"free"/"case":"implicit"/')
  [ "$2" = limited ] && line=$(printf '%s' "$line" | sed 's/"case":"free"/"case":"limited"/')
  echo "$line" >>"$JSON"
  echo "  $line"
}

k=0
IFS_SAVED=$IFS
IFS=,
# shellcheck disable=SC2086 # the list splits at commas
set -- $CASES
IFS=$IFS_SAVED
for c in "$@"; do
  case "$c" in
    "free "*|"sphere "*|"implicit "*|"limited "*) ;;
    *) echo "run.sh: unknown case '$c' (free N, sphere N, implicit N, limited N)" >&2; exit 2 ;;
  esac
done
for c in "$@"; do
  # shellcheck disable=SC2086 # $c is "case N"
  set -- $c
  echo "$1 N=$2"
  if [ $((k % 2)) -eq 0 ]; then run_engine bullet "$1" "$2"; run_engine loom "$1" "$2"
  else run_engine loom "$1" "$2"; run_engine bullet "$1" "$2"; fi
  k=$((k + 1))
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at end; raw results in $JSON"
echo

# ---- table -------------------------------------------------------------------------------------
awk '
function get(line, key,   m) {
  if (!match(line, "\"" key "\":[^,}]*")) return ""
  m = substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
  gsub(/"/, "", m)
  return m
}
function pct(v) { return v == "" || v == "null" ? "-" : sprintf("%.1f%%", 100 * v) }
function mm(v) { return v == "" || v == "null" ? "-" : sprintf("%.2f", v) }
function ms(e, k) {
  if (get(row[k, e], "failed") == "true") return "FAILED"
  return sprintf("%.2f (%.2f-%.2f)", get(row[k, e], "ms_per_step_median"), get(row[k, e], "min"), get(row[k, e], "max"))
}
function nan(e, k,   r) {
  r = row[k, e]
  if (get(r, "failed") == "true") return "crash"
  if (get(r, "nan") == "true") return "NaN@" get(r, "nan_step")
  return get(r, "frozen") == "true" ? "frozen" : "ok"
}
{
  k = get($0, "case") " " get($0, "n")
  if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
  row[k, get($0, "engine")] = $0
}
END {
  printf "%-12s %-22s %-22s %-9s %-13s %-17s %s\n", "case", "Bullet ms/step", "Loom ms/step", "Loom/Bul",
    "Loom substeps", "ms per sim. s B/L", "Bul/Loom per sim. s"
  for (i = 1; i <= nk; i++) {
    k = order[i]
    bm = get(row[k, "bullet"], "ms_per_step_median"); lm = get(row[k, "loom"], "ms_per_step_median")
    ratio = (bm + 0 > 0 && lm + 0 > 0) ? sprintf("%.2f", lm / bm) : "-"
    # per simulated second: Bullet always steps 1/240 s; Loom reports its dt
    ldt = get(row[k, "loom"], "dt"); if (ldt == "") ldt = 1 / 240
    bs = bm * 240; ls = (ldt + 0 > 0) ? lm / ldt : 0
    sim = (bs > 0 && ls > 0) ? sprintf("%.0f / %.0f", bs, ls) : "-"
    speed = (bs > 0 && ls > 0) ? sprintf("%.2f", bs / ls) : "-"
    printf "%-12s %-22s %-22s %-9s %-13s %-17s %s\n", k, ms("bullet", k), ms("loom", k), ratio,
      get(row[k, "loom"], "substeps"), sim, speed
  }
  print ""
  printf "%-11s %-17s %-17s %-17s %-17s %-17s %s\n", "quality B/L", "max strain", "p99 strain", "mean strain",
    "max pen. mm", "end gap mm", "finite"
  for (i = 1; i <= nk; i++) {
    k = order[i]; b = row[k, "bullet"]; l = row[k, "loom"]
    printf "%-11s %-17s %-17s %-17s %-17s %-17s %s\n", k, pct(get(b, "max_strain")) " / " pct(get(l, "max_strain")),
      pct(get(b, "p99_strain")) " / " pct(get(l, "p99_strain")), pct(get(b, "mean_strain")) " / " pct(get(l, "mean_strain")),
      mm(get(b, "max_penetration_mm")) " / " mm(get(l, "max_penetration_mm")),
      mm(get(b, "end_min_gap_mm")) " / " mm(get(l, "end_min_gap_mm")), nan("bullet", k) " / " nan("loom", k)
  }
  print ""
  print "ms/step: median (min-max) of the timed runs; Loom/Bul below 1 means Loom is faster. Bullet takes one"
  print "step per dt with 10 position iterations; Loom the substeps shown. The implicit rows: Loom steps"
  print "1/60 s (Baraff-Witkin, stretch 20 000 N/m), Bullet 1/240 s, over the same simulated time; compare"
  print "them per simulated second (Bul/Loom above 1 means Loom is that many times faster). The limited"
  print "rows: the same Loom cloth with strain_limit = 0.01."
  print "Quality (Bullet / Loom), from the untimed run: strain = |l/L - 1| over the triangle edges at the end (the max sits at the pinned"
  print "corners); max pen. = deepest vertex inside the sphere over the whole run; end gap = closest vertex"
  print "to the sphere surface at the end (Loom keeps its 4 mm thickness, Bullet 0.3 x grid spacing margin)."
}' "$JSON"
