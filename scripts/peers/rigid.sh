#!/bin/sh
# scripts/peers/rigid.sh — Loom's rigid stacks side by side with Bullet on this machine.
#
#   sh scripts/peers/rigid.sh [--runs R]        (default: 3 timed runs after a warm-up)
#
# The scenes of `loom bench tower_10 pyramid_210` (0.2 m cubes of 8 kg, friction 0.5, restitution
# 0; the pyramid's boxes 2 mm apart) in Bullet (scripts/peers/bullet_stack.cpp, its defaults: 10
# solver iterations, split impulse, one substep per step) and in Loom, at dt = 1/60 and 1/500,
# engines alternating case by case: ms per step over the first 2 s (median) and the largest
# distance a box moved from where it was placed after 10 s. Installs libbullet-dev, g++ and
# pkg-config when missing. Not part of `make test` or `make bench`; compare ratios of one run.
set -eu
cd "$(dirname "$0")/../.."
RUNS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "rigid.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
. scripts/peers/common.sh
need_packages libbullet-dev g++ pkg-config
BULLET=build/peers/bullet_stack
compile_bullet scripts/peers/bullet_stack.cpp "$BULLET"
make --no-print-directory deps >/dev/null
make --no-print-directory all >/dev/null
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)
echo "machine: $cpu, $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bullet:  libbullet-dev $(dpkg-query -W -f='${Version}' libbullet-dev)"
echo "loom:    $(build/loom --version 2>/dev/null | head -n 1) (git $(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo
k=0
for case in tower pyramid; do
  bench=$([ "$case" = tower ] && echo tower_10 || echo pyramid_210)
  if [ $((k % 2)) -eq 0 ]; then
    "$BULLET" "$case" 60 --runs "$RUNS"; "$BULLET" "$case" 500 --runs "$RUNS"
    build/loom bench "$bench" --runs "$RUNS" | tail -n 1
  else
    build/loom bench "$bench" --runs "$RUNS" | tail -n 1
    "$BULLET" "$case" 60 --runs "$RUNS"; "$BULLET" "$case" 500 --runs "$RUNS"
  fi
  k=$((k + 1))
done
