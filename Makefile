# Loom — build, test, bench, install. `make run` and `make test` work on a fresh Debian 12 machine:
# they install what is missing (as root or through sudo) before building.

PREFIX  ?= /usr/local
BUILD   ?= build
CC      ?= cc
SAN     ?=
OPT     ?= -O2

# Debian packages: LuaJIT with headers, SDL2, stb, pkg-config; xvfb/xauth/xdotool for the window test.
DEB_PACKAGES = luajit libluajit-5.1-dev libsdl2-dev libstb-dev pkg-config xvfb xauth xdotool parallel

WARN     = -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
CFLAGS_K = -std=c11 $(OPT) -g $(WARN) -ffp-contract=off -fPIC -fvisibility=hidden -pthread -MMD -MP $(SAN)
LUA_INC  = $(shell pkg-config --cflags luajit 2>/dev/null || echo -I/usr/include/luajit-2.1)
LUA_LIB  = $(shell pkg-config --libs luajit 2>/dev/null || echo -lluajit-5.1)
SDL_INC  = $(shell pkg-config --cflags sdl2 2>/dev/null || echo -I/usr/include/SDL2)
SDL_LIB  = $(shell pkg-config --libs sdl2 2>/dev/null || echo -lSDL2)

KERNEL_SRC = $(sort $(wildcard src/kernel/*/*.c))
RENDER_SRC = $(sort $(wildcard src/render/*.c))
HOST_SRC   = $(sort $(wildcard src/host/*.c))
TEST_SRC   = $(sort $(wildcard tests/c/*.c))

KERNEL_OBJ = $(KERNEL_SRC:%.c=$(BUILD)/obj/%.o)
RENDER_OBJ = $(RENDER_SRC:%.c=$(BUILD)/obj/%.o)
HOST_OBJ   = $(HOST_SRC:%.c=$(BUILD)/obj/%.o)
TEST_OBJ   = $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
LIB_OBJ    = $(KERNEL_OBJ) $(RENDER_OBJ)

WRAP = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc

.PHONY: all deps deps-video run test test-only test-slurm bench asan check install uninstall clean cdef valgrind help fuzz

all: $(BUILD)/loom $(BUILD)/libloom.so $(BUILD)/test_kernel

help:
	@echo "make deps | all | run | test | bench | asan | valgrind | check | cdef | install PREFIX=... | clean"

# ---- dependencies ----------------------------------------------------------------------------
deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if ! command -v apt-get >/dev/null 2>&1; then \
	    echo "make deps: missing packages:$$missing (no apt-get here: install them by hand)"; exit 1; fi; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
	  else echo "make deps: need root or sudo to install:$$missing"; exit 1; fi; \
	  echo "make deps: installing$$missing"; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing >/dev/null 2>&1 || \
	  { $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; } || exit 1; \
	fi; \
	for p in $(OPTIONAL_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" && continue; \
	  command -v apt-get >/dev/null 2>&1 || continue; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO=sudo; else continue; fi; \
	  echo "make deps: installing optional $$p"; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$p >/dev/null 2>&1 || \
	  { $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 && \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$p >/dev/null 2>&1; } || \
	    echo "make deps: optional $$p could not be installed (loom run --video will say so)"; \
	done

# --video's encoder, optional: make deps installs it when it can and goes on without it (loom run
# --video then says what to install); make deps-video insists
OPTIONAL_PACKAGES = ffmpeg
deps-video:
	@command -v ffmpeg >/dev/null 2>&1 || { echo "make deps-video: installing ffmpeg"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ffmpeg >/dev/null; }

# ---- build -------------------------------------------------------------------------------------
$(BUILD)/obj/src/kernel/%.o: src/kernel/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_K) -Isrc -Isrc/kernel -c $< -o $@

$(BUILD)/obj/src/render/%.o: src/render/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_K) -c $< -o $@

$(BUILD)/obj/src/host/%.o: src/host/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_K) $(LUA_INC) $(SDL_INC) -c $< -o $@

$(BUILD)/obj/tests/c/%.o: tests/c/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_K) -fvisibility=default -Isrc -Isrc/kernel -c $< -o $@

$(BUILD)/libloom.so: $(LIB_OBJ)
	$(CC) -shared $(SAN) -pthread -o $@ $(LIB_OBJ) -lm

# The host links the kernel statically and exports its symbols (-Wl,-E) so that FFI finds them.
$(BUILD)/loom: $(LIB_OBJ) $(HOST_OBJ)
	$(CC) $(SAN) -pthread -Wl,-E -o $@ $(HOST_OBJ) $(LIB_OBJ) $(LUA_LIB) $(SDL_LIB) -lm -ldl

$(BUILD)/test_kernel: $(LIB_OBJ) $(TEST_OBJ)
	$(CC) $(SAN) -pthread $(WRAP) -o $@ $(TEST_OBJ) $(LIB_OBJ) -lm

-include $(LIB_OBJ:.o=.d) $(HOST_OBJ:.o=.d) $(TEST_OBJ:.o=.d)

# ---- run, test, bench ---------------------------------------------------------------------------
run: deps
	@$(MAKE) --no-print-directory all
	./$(BUILD)/loom scenes/hello_cloth.lua

test: deps
	@$(MAKE) --no-print-directory test-only

test-only: all
	@sh scripts/run_tests.sh $(BUILD)

# loom sweep on a single-node Slurm alone (make test runs it too when it can start the daemons)
test-slurm: deps
	@$(MAKE) --no-print-directory all
	./$(BUILD)/loom test tests/slurm

bench: deps
	@$(MAKE) --no-print-directory all
	./$(BUILD)/loom bench

# Tests under AddressSanitizer + UndefinedBehaviorSanitizer (separate build tree); internal
# invariants (LOOM_ASSERT) are checked there too.
asan: deps
	@$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -DLOOM_CHECKED" all
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LOOM_SANITIZED=1 sh scripts/run_tests.sh build/asan

# The C suite, the in-process Lua API tests and a short headless run of every scene under valgrind
# (the CLI tests spawn subprocesses and time them, so they stay out of it).
VALGRIND = valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite
valgrind: deps
	@command -v valgrind >/dev/null || { echo "installing valgrind"; apt-get install -y -q valgrind >/dev/null; }
	@$(MAKE) --no-print-directory all
	$(VALGRIND) ./$(BUILD)/test_kernel --data tests/data
	LOOM_VALGRIND=1 $(VALGRIND) ./$(BUILD)/loom test tests/lua/api_test.lua
	@for s in scenes/*.lua; do echo "valgrind: $$s"; \
	  $(VALGRIND) ./$(BUILD)/loom run $$s --headless --time 0.05 --quiet || exit 1; done

# libFuzzer targets (clang from Debian): every tests/fuzz/fuzz_NAME.c is a target, run for
# FUZZ_SECONDS on a scratch corpus seeded from tests/fuzz/corpus/fuzz_NAME. Adding a target is
# adding one file (and its seeds). Findings are written to build/fuzz/ as crash-*/leak-* files.
FUZZ_SECONDS ?= 90
# Per-target libFuzzer flags: the checkpoint target's inputs are whole 4 kB states, for which the
# entropic scheduler's bookkeeping costs more than the target (nearly twice the executions without it).
FUZZ_CHECKPOINT_FLAGS = -entropic=0
FUZZ_SRC     = $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN     = $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_CFLAGS  = -std=c11 -O1 -g -fno-omit-frame-pointer -ffp-contract=off -Isrc -Isrc/kernel -DLOOM_CHECKED -fsanitize-coverage-ignorelist=tests/fuzz/coverage_ignore.txt
FUZZ_OBJ     = $(KERNEL_SRC:%.c=$(BUILD)/fuzz/obj/%.o)

.SECONDARY: $(FUZZ_OBJ)

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_mesh.h tests/fuzz/coverage_ignore.txt $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined $< $(FUZZ_OBJ) -lm -o $@

fuzz: deps
	@# clang's libFuzzer runtime is only a recommended package on Debian 12: name it
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="clang libclang-rt-14-dev"
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
	@for b in $(FUZZ_BIN); do n=$$(basename $$b); mkdir -p $(BUILD)/fuzz/corpus/$$n; \
	  echo "== $$n ($(FUZZ_SECONDS) s)"; flags=""; [ $$n = fuzz_checkpoint ] && flags="$(FUZZ_CHECKPOINT_FLAGS)"; \
	  (cd $(BUILD)/fuzz && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ./$$n -max_total_time=$(FUZZ_SECONDS) $$flags \
	    -print_final_stats=1 -max_len=65536 corpus/$$n ../../tests/fuzz/corpus/$$n >$$n.log 2>&1); \
	  grep -E "stat::number_of_executed_units|stat::average_exec_per_sec" $(BUILD)/fuzz/$$n.log; \
	  if grep -qE "ERROR|SUMMARY|Test unit written" $(BUILD)/fuzz/$$n.log; then \
	    grep -E "ERROR|SUMMARY|Test unit written" $(BUILD)/fuzz/$$n.log; echo "fuzz: $$n found a problem (build/fuzz/$$n.log)"; exit 1; fi; \
	done

# Layer rules and FFI declarations in sync.
check: all
	@sh scripts/check_layers.sh
	@luajit scripts/gen_cdef.lua --check src/loom.h lua/loom/cdef.lua
	@./$(BUILD)/loom exec scripts/gen_param_docs.lua --check

# Regenerates lua/loom/cdef.lua from the FFI block of src/loom.h.
cdef:
	luajit scripts/gen_cdef.lua src/loom.h lua/loom/cdef.lua

# ---- install ------------------------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/share/loom/lua/loom $(DESTDIR)$(PREFIX)/share/loom/scenes
	install -m 755 $(BUILD)/loom $(DESTDIR)$(PREFIX)/bin/loom
	install -m 644 $(BUILD)/libloom.so $(DESTDIR)$(PREFIX)/lib/libloom.so
	install -m 644 src/loom.h $(DESTDIR)$(PREFIX)/include/loom.h
	install -m 644 lua/loom/*.lua $(DESTDIR)$(PREFIX)/share/loom/lua/loom/
	cp -R scenes/. $(DESTDIR)$(PREFIX)/share/loom/scenes/
	@# scenes/dpo_cloth_on_table.lua reads document 000's scene folder from ../tests/data/dpo
	install -d $(DESTDIR)$(PREFIX)/share/loom/tests/data
	cp -R tests/data/dpo $(DESTDIR)$(PREFIX)/share/loom/tests/data/

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/bin/loom $(DESTDIR)$(PREFIX)/lib/libloom.so \
	  $(DESTDIR)$(PREFIX)/include/loom.h $(DESTDIR)$(PREFIX)/share/loom

clean:
	rm -rf build out
