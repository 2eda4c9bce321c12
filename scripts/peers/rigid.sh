#!/bin/sh
# scripts/peers/rigid.sh — Loom's rigid stacks side by side with Bullet, ODE and MuJoCo.
#
#   sh scripts/peers/rigid.sh [--runs R] [--mujoco-runs M]   (defaults: 3 and 1 timed runs after a warm-up)
#
# The scenes of `loom bench tower_10 pyramid_210` (0.2 m cubes of 8 kg, friction 0.5, restitution
# 0; the pyramid's boxes 2 mm apart) in Bullet (bullet_stack.cpp: 10 solver iterations, split
# impulse, one substep per step), ODE (ode_stack.c: quickstep, 20 iterations, auto-disable on) and
# MuJoCo (mujoco_stack.c: Newton solver, no sleeping; its pyramid at dt = 1/500 takes minutes,
# hence its own run count) and in Loom, at dt = 1/60 and 1/500, engines alternating case by case:
# ms per step over the first 2 s (median) and the largest distance a box moved from where it was
# placed after 10 s. Then `loom bench terrain_60` (60 boxes, cylinders and rocks on a 3 200-triangle
# mesh terrain) beside Bullet's (bullet_terrain.cpp): ms per step over the first 2 s, bodies still
# awake after 20 s. Then the piles of `loom bench rain_500 hull_pile_200` (500 spheres, 200 convex
# hulls into a bin), exported by export_scene.lua and built body for body by bullet_scene.cpp,
# ode_scene.c and mujoco_scene.c, at dt = 1/60 and 1/500: ms per step over the first 2 s, and after
# 10 s the largest distance a body moved in the last second and the bodies still awake (MuJoCo,
# which does not sleep: moving faster than 1 cm/s; MuJoCo only at 1/60 and only the timed 2 s, its
# piles take minutes per simulated second). Installs libbullet-dev, libode-dev,
# libmujoco-dev, g++ and pkg-config when missing. Not part of `make test` or `make bench`; compare
# ratios of one run.
set -eu
cd "$(dirname "$0")/../.."
RUNS=3
MRUNS=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
    --mujoco-runs) MRUNS=${2:?--mujoco-runs needs a number}; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "rigid.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
. scripts/peers/common.sh
need_packages libbullet-dev libode-dev libmujoco-dev g++ pkg-config
BULLET=build/peers/bullet_stack
ODE=build/peers/ode_stack
MUJOCO=build/peers/mujoco_stack
compile_bullet scripts/peers/bullet_stack.cpp "$BULLET"
compile_bullet scripts/peers/bullet_terrain.cpp build/peers/bullet_terrain
compile_bullet scripts/peers/bullet_scene.cpp build/peers/bullet_scene
compile_c scripts/peers/ode_scene.c build/peers/ode_scene "$(pkg-config --cflags ode)" "$(pkg-config --libs ode) -lm"
compile_c scripts/peers/mujoco_scene.c build/peers/mujoco_scene "" "-lmujoco -lm"
compile_c scripts/peers/ode_stack.c "$ODE" "$(pkg-config --cflags ode)" "$(pkg-config --libs ode) -lm"
compile_c scripts/peers/mujoco_stack.c "$MUJOCO" "" "-lmujoco -lm"
make --no-print-directory deps >/dev/null
make --no-print-directory all >/dev/null
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)
echo "machine: $cpu, $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bullet:  libbullet-dev $(dpkg-query -W -f='${Version}' libbullet-dev)"
echo "ode:     libode-dev $(dpkg-query -W -f='${Version}' libode-dev)"
echo "mujoco:  libmujoco-dev $(dpkg-query -W -f='${Version}' libmujoco-dev)"
echo "loom:    $(build/loom --version 2>/dev/null | head -n 1) (git $(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo
peers() {
  for dt in 60 500; do
    "$BULLET" "$1" "$dt" --runs "$RUNS"
    "$ODE" "$1" "$dt" --runs "$RUNS"
    "$MUJOCO" "$1" "$dt" --runs "$MRUNS"
  done
}
k=0
for case in tower pyramid; do
  bench=$([ "$case" = tower ] && echo tower_10 || echo pyramid_210)
  if [ $((k % 2)) -eq 0 ]; then
    peers "$case"
    build/loom bench "$bench" --runs "$RUNS" | tail -n 1
  else
    build/loom bench "$bench" --runs "$RUNS" | tail -n 1
    peers "$case"
  fi
  k=$((k + 1))
done
build/peers/bullet_terrain --runs "$RUNS"
build/loom bench terrain_60 --runs "$RUNS" | tail -n 1
# the piles: scenes/rain.lua and scenes/hull_pile.lua exported as bodies, in each peer at both steps
for case in rain_500:scenes/rain.lua hull_pile_200:scenes/hull_pile.lua; do
  name=${case%%:*}
  file=${case#*:}
  build/loom exec scripts/peers/export_scene.lua "$file" "build/peers/$name.txt" >/dev/null
  for dt in 60 500; do
    build/peers/bullet_scene "build/peers/$name.txt" "$dt" --runs "$RUNS" --name "$name"
    build/peers/ode_scene "build/peers/$name.txt" "$dt" --runs "$RUNS" --name "$name"
    [ "$dt" = 60 ] && build/peers/mujoco_scene "build/peers/$name.txt" "$dt" --runs "$MRUNS" --name "$name" --settle 0
  done
  build/loom bench "$name" --runs "$RUNS" | tail -n 1
done
