#!/bin/sh
# Layer rules (docs/architecture.md): the kernel never includes lua.h or SDL.h; the renderer never
# includes kernel headers; only the host creates Lua states and windows.
status=0
bad() { echo "layer rule broken: $*"; status=1; }
for f in src/kernel/*.c src/kernel/*.h; do
  grep -nE '#include *[<"](lua|lauxlib|lualib|luajit|SDL)[^">]*[">]' "$f" && bad "$f includes Lua or SDL"
done
for f in src/render/*.c src/render/*.h; do
  grep -nE '#include *"\.\./kernel/' "$f" && bad "$f includes a kernel header"
  grep -nE '#include *[<"](lua|lauxlib|lualib|SDL)' "$f" && bad "$f includes Lua or SDL"
done
for f in src/kernel/*.c src/render/*.c lua/loom/*.lua; do
  grep -nE 'luaL_newstate|SDL_CreateWindow' "$f" && bad "$f creates a Lua state or a window outside src/host"
done
[ $status -eq 0 ] && echo "layer rules: ok"
exit $status
