#!/bin/sh
# Layer rules (docs/architecture.md):
# - the kernel never includes lua.h or SDL.h; the renderer never includes kernel headers; only the
#   host creates Lua states and windows;
# - kernel folders: the foundations (core, math, mesh, geom, bvh) include no world, kind or contact
#   header; a body kind (cloth, rigid, ...) never includes another kind's headers: kinds meet only
#   in world/ and contact/.
status=0
bad() { echo "layer rule broken: $*"; status=1; }
KINDS="cloth rigid solid simplex"
for f in src/kernel/*/*.c src/kernel/*/*.h; do
  grep -nE '#include *[<"](lua|lauxlib|lualib|luajit|SDL)[^">]*[">]' "$f" && bad "$f includes Lua or SDL"
  dir=$(basename "$(dirname "$f")")
  case "$dir" in
  core | math | mesh | geom | bvh)
    grep -nE '#include *"(world|contact|cloth|rigid|solid|simplex)/' "$f" && bad "$f ($dir) includes a world, kind or contact header"
    ;;
  esac
  for k in $KINDS; do
    [ "$dir" = "$k" ] || continue
    for other in $KINDS; do
      [ "$other" = "$k" ] && continue
      grep -nE "#include *\"$other/" "$f" && bad "$f (kind $k) includes a header of kind $other"
    done
    grep -nE '#include *"contact/' "$f" && bad "$f (kind $k) includes a contact header"
  done
done
[ -z "$(ls src/kernel/*.c src/kernel/*.h 2>/dev/null)" ] || bad "kernel sources outside a concept folder: $(ls src/kernel/*.[ch])"
for f in src/render/*.c src/render/*.h; do
  grep -nE '#include *"\.\./kernel/' "$f" && bad "$f includes a kernel header"
  grep -nE '#include *[<"](lua|lauxlib|lualib|SDL)' "$f" && bad "$f includes Lua or SDL"
done
for f in src/kernel/*/*.c src/render/*.c lua/loom/*.lua; do
  grep -nE 'luaL_newstate|SDL_CreateWindow' "$f" && bad "$f creates a Lua state or a window outside src/host"
done
[ $status -eq 0 ] && echo "layer rules: ok"
exit $status
