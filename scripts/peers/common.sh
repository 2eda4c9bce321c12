# scripts/peers/common.sh — sourced by the peer benchmark scripts: installs the Debian packages
# given in $PACKAGES when missing (as root or through sudo) and compiles a C++ peer program.
#   need_packages libbullet-dev g++ pkg-config
#   compile_bullet SRC OUT
#   compile_c SRC OUT CFLAGS LIBS
#   build_loom NAME

need_packages() {
  missing=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  command -v apt-get >/dev/null 2>&1 || { echo "peers: missing$missing and no apt-get: install them by hand" >&2; exit 1; }
  if [ "$(id -u)" = 0 ]; then SUDO=""
  elif command -v sudo >/dev/null 2>&1; then SUDO=sudo
  else echo "peers: need root or sudo to install:$missing" >&2; exit 1; fi
  echo "peers: installing$missing"
  # shellcheck disable=SC2086 # $missing is a list of package names
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 ||
    { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null &&
      $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing; }
}

# compile_bullet SRC OUT: when OUT is missing or older than SRC. Bullet's own headers are not
# -Wextra clean: they are included as system headers.
compile_bullet() {
  if [ ! -x "$2" ] || [ -n "$(find "$1" -newer "$2")" ]; then
    mkdir -p "$(dirname "$2")"
    echo "peers: compiling $2"
    # shellcheck disable=SC2046 # compiler flags are lists of words
    g++ -std=c++17 -O2 -Wall -Wextra $(pkg-config --cflags-only-I bullet | sed 's/-I/-isystem /g') "$1" -o "$2" \
      $(pkg-config --libs bullet)
  fi
}

# compile_c SRC OUT CFLAGS LIBS: a C peer program, when OUT is missing or older than SRC or the
# headers beside it.
compile_c() {
  if [ ! -x "$2" ] || [ -n "$(find "$1" "$(dirname "$1")"/*.h -newer "$2")" ]; then
    mkdir -p "$(dirname "$2")"
    echo "peers: compiling $2"
    # shellcheck disable=SC2086 # compiler flags are lists of words
    gcc -std=c11 -O2 -Wall -Wextra $3 "$1" -o "$2" $4
  fi
}

# build_loom NAME: unless LOOM already names a Loom binary, LOOM=build/loom, built with its
# dependencies when out of date (NAME says who is building).
build_loom() {
  [ -n "${LOOM:-}" ] && return 0
  LOOM=build/loom
  if ! make -q all >/dev/null 2>&1; then
    echo "$1: building Loom"
    make --no-print-directory deps >/dev/null
    make --no-print-directory all >/dev/null
  fi
}
