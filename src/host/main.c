/* main.c — the loom command line: run (window or headless), test, exec, bench, --help, --version. */
#define _GNU_SOURCE
#include <SDL.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <luajit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"

static const char *usage =
    "usage:\n"
    "  loom SCENE.lua                 run a scene: window if a display is available, else headless\n"
    "  loom run SCENE.lua [options]   run a scene\n"
    "      --headless                 no window\n"
    "      --time T                   stop after T simulated seconds\n"
    "      --steps N                  stop after N steps\n"
    "      --frames DIR               write PNG frames to DIR (frame 0 is t = 0)\n"
    "      --every N                  a frame (and exported mesh) every N steps\n"
    "      --size WxH                 canvas / window size (default 1280x720)\n"
    "      --export DIR               write each cloth as a mesh per frame: DIR/NAME_00000.obj, ...\n"
    "      --format obj|ply           mesh format for --export; ply adds per-vertex velocity\n"
    "      --track BODY:INDEX         one vertex's position and velocity every step, in\n"
    "                                 DIR/BODY_track.csv of --export (repeatable)\n"
    "      --stats FILE.csv           per-step statistics (first row: t = 0)\n"
    "      --video FILE.mp4           headless: the frames (every N steps) as a video, through ffmpeg\n"
    "      --record FILE              journal the session (input, UI, grabs, reloads) for loom replay\n"
    "      --param name=value         set a scene parameter (repeatable)\n"
    "      --watch                    hot reload headless runs too (paced in real time)\n"
    "      --realtime                 pace a headless run to the wall clock\n"
    "      --screenshot FILE.png      where F12 saves the window's picture (%d numbers them)\n"
    "      --quiet                    no progress line and no summary\n"
    "  loom new NAME                  write a starter scene NAME.lua and its test NAME_test.lua\n"
    "  loom test [PATH ...]           run Lua test files (default tests/lua); last line \"N passed, M failed\"\n"
    "  loom exec FILE.lua [ARGS ...]  run a Lua program with require \"loom\" available\n"
    "  loom bench [CASE ...] [--json] [--runs N] [--threads 1|2]\n"
    "                                run the benchmark suite (median of N runs after a warm-up;\n"
    "                                --list: the cases and what each measures; loom bench --help)\n"
    "  loom sweep SCENE.lua --param name=a,b --seeds 1..N [--on local|parallel|slurm] ...\n"
    "                                run a scene over parameter lists and seeds (loom sweep --help)\n"
    "  loom plot results.csv --x NAME --y NAME [--out FILE.png]   plot two columns of a sweep\n"
    "  loom replay FILE [--headless] [--frames DIR] [--every N] [--size WxH]\n"
    "                                replay a journal of --record bit for bit (final hash checked)\n"
    "  loom --help | --version\n"
    "\n"
    "Output directories are created (with their parents) before the run; one that cannot be made\n"
    "or written stops the run at once.\n"
    "\n"
    "exit status:\n"
    "  0  success\n"
    "  1  script error: the scene does not load or build, a callback raised an error, a test failed.\n"
    "     With --watch (and in the window) it is the state at the end that counts: an error in a\n"
    "     version that was later fixed and reloaded does not; a file still broken at the end does.\n"
    "  2  bad option: unknown option or value, an output that cannot be written, a --track that\n"
    "     names no such body or vertex\n"
    "  3  a callback never returned and could not be interrupted (headless)\n";

static const char *exe_path(void) {
  static char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "loom";
  buf[n] = 0;
  return buf;
}

static int bad_option(const char *fmt, const char *a) {
  fprintf(stderr, "loom: ");
  fprintf(stderr, fmt, a);
  fprintf(stderr, " (see loom --help)\n");
  return 2;
}

static int parse_number(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v == v)) return -1;
  *out = v;
  return 0;
}

static int parse_run(int argc, char **argv, int i, host_options *o) {
  memset(o, 0, sizeof *o);
  for (; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_ARG()                                                     \
  if (!next) return bad_option("option '%s' needs a value", a);       \
  i++
    double v;
    if (!strcmp(a, "--headless")) o->headless = 1;
    else if (!strcmp(a, "--watch")) o->watch = 1;
    else if (!strcmp(a, "--realtime")) o->realtime = 1;
    else if (!strcmp(a, "--quiet")) o->quiet = 1;
    else if (!strcmp(a, "--time")) {
      NEED_ARG();
      if (parse_number(next, &v) || !(v > 0) || v > 1e9) return bad_option("--time needs a positive number of seconds, got '%s'", next);
      o->time = v;
    } else if (!strcmp(a, "--steps")) {
      NEED_ARG();
      if (parse_number(next, &v) || v < 1 || v != (long)v || v > 1e12) return bad_option("--steps needs a positive whole number, got '%s'", next);
      o->steps = (long)v;
    } else if (!strcmp(a, "--every")) {
      NEED_ARG();
      if (parse_number(next, &v) || v < 1 || v != (int)v || v > 1e9) return bad_option("--every needs a positive whole number, got '%s'", next);
      o->every = (int)v;
    } else if (!strcmp(a, "--size")) {
      NEED_ARG();
      int w, h;
      char extra;
      if (sscanf(next, "%dx%d%c", &w, &h, &extra) != 2 || w < 16 || h < 16 || w > 8192 || h > 8192)
        return bad_option("--size needs WxH between 16x16 and 8192x8192, got '%s'", next);
      o->width = w;
      o->height = h;
    } else if (!strcmp(a, "--frames")) {
      NEED_ARG();
      o->frames = next;
    } else if (!strcmp(a, "--export")) {
      NEED_ARG();
      o->export_dir = next;
    } else if (!strcmp(a, "--format")) {
      NEED_ARG();
      if (strcmp(next, "obj") && strcmp(next, "ply")) return bad_option("--format needs obj or ply, got '%s'", next);
      o->format = next;
    } else if (!strcmp(a, "--track")) {
      NEED_ARG();
      const char *colon = strrchr(next, ':');
      if (!colon || colon == next || parse_number(colon + 1, &v) || v < 0 || v != (long)v)
        return bad_option("--track needs body:index (a vertex index >= 0), got '%s'", next);
      if (o->ntracks >= HOST_MAX_PARAMS) return bad_option("too many --track options (%s)", "64 at most");
      o->tracks[o->ntracks++] = next;
    } else if (!strcmp(a, "--stats")) {
      NEED_ARG();
      o->stats = next;
    } else if (!strcmp(a, "--video")) {
      NEED_ARG();
      o->video = next;
    } else if (!strcmp(a, "--record")) {
      NEED_ARG();
      o->record = next;
    } else if (!strcmp(a, "--screenshot")) {
      NEED_ARG();
      o->screenshot = next;
    } else if (!strcmp(a, "--param")) {
      NEED_ARG();
      const char *eq = strchr(next, '=');
      if (!eq || eq == next) return bad_option("--param needs name=value, got '%s'", next);
      if (o->nparams >= HOST_MAX_PARAMS) return bad_option("too many --param options (%s)", "64 at most");
      o->params[o->nparams++] = next;
    } else if (a[0] == '-' && a[1] == '-') {
      return bad_option("unknown option '%s'", a);
    } else if (!o->scene) {
      o->scene = a;
    } else {
      return bad_option("unexpected argument '%s'", a);
    }
#undef NEED_ARG
  }
  if (!o->scene) return bad_option("%s", "no scene file given");
  if (o->watch && o->headless) o->realtime = 1;
  if (o->format && !o->export_dir) return bad_option("--format %s needs --export DIR", o->format);
  if (o->ntracks > 0 && !o->export_dir) return bad_option("--track %s needs --export DIR (the CSV goes there)", o->tracks[0]);
  return 0;
}

/* The directory part of path ("." when there is none). */
static void dir_of(const char *path, char *out, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(out, cap, ".");
  else if (slash == path) snprintf(out, cap, "/");
  else snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

/* Every output place is made and checked once, before the scene runs: a run that cannot write its
 * results stops here with one message instead of failing on every frame. */
static int prepare_outputs(const host_options *o) {
  char err[PATH_MAX + 160], dir[PATH_MAX];
  const struct {
    const char *opt, *path;
    int is_file;
  } outs[] = {{"--frames", o->frames, 0}, {"--export", o->export_dir, 0}, {"--stats", o->stats, 1}, {"--screenshot", o->screenshot, 1},
                   {"--video", o->video, 1}, {"--record", o->record, 1}};
  for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
    if (!outs[i].path) continue;
    if (outs[i].is_file) dir_of(outs[i].path, dir, sizeof dir);
    else snprintf(dir, sizeof dir, "%s", outs[i].path);
    if (host_mkdir_p(dir, err, sizeof err) != 0) {
      fprintf(stderr, "loom: %s %s: %s\n", outs[i].opt, outs[i].path, err);
      return 2;
    }
  }
  if (o->stats) {
    struct stat st;
    int existed = stat(o->stats, &st) == 0;
    FILE *f = existed && S_ISDIR(st.st_mode) ? NULL : fopen(o->stats, "a");
    if (!f) {
      fprintf(stderr, "loom: --stats %s: cannot write the file (%s)\n", o->stats,
              existed && S_ISDIR(st.st_mode) ? "it is a directory" : strerror(errno));
      return 2;
    }
    fclose(f);
    if (!existed) remove(o->stats);
  }
  return 0;
}

static int cmd_run(const host_options *opt, const char *exe, const char *lua_dir) {
  struct stat st;
  if (stat(opt->scene, &st) != 0 || !S_ISREG(st.st_mode)) {
    fprintf(stderr, "loom: cannot open '%s' (%s)\n", opt->scene, errno ? strerror(errno) : "not a file");
    return 1;
  }
  int prc = prepare_outputs(opt);
  if (prc) return prc;
  if (!opt->headless) {
    int rc = host_run_window(opt, exe, lua_dir);
    if (rc != -2) return rc;
    /* no display: run headless and say what happens instead */
    host_options h = *opt;
    h.headless = 1;
    static char dir[PATH_MAX];
    if (!h.frames) {
      const char *base = strrchr(opt->scene, '/');
      base = base ? base + 1 : opt->scene;
      snprintf(dir, sizeof dir, "out/%.*s", (int)(strcspn(base, ".")), base);
      h.frames = dir;
    }
    if (h.time <= 0 && h.steps <= 0) h.time = 5.0;
    fprintf(stderr, "loom: no display available; running headless for %.1f s and writing PNG frames to %s/\n",
            h.time > 0 ? h.time : 0.0, h.frames);
    int hrc = prepare_outputs(&h);
    if (hrc) return hrc;
    return host_run_headless(&h, exe, lua_dir);
  }
  return host_run_headless(opt, exe, lua_dir);
}

static int has_suffix(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmd_test(int argc, char **argv, int i, const char *exe, const char *lua_dir) {
  char *files[1024];
  int nf = 0;
  const char *defaults[] = {"tests/lua"};
  const char **paths = (const char **)(argv + i);
  int np = argc - i;
  if (np == 0) {
    paths = defaults;
    np = 1;
  }
  for (int p = 0; p < np; p++) {
    struct stat st;
    if (stat(paths[p], &st) != 0) {
      if (paths == defaults) {
        /* no path given: say where the default was looked for and how to name tests */
        char cwd[PATH_MAX];
        fprintf(stderr,
                "loom test: no test path given and no '%s' directory in %s\n"
                "  give test files or directories: loom test PATH [PATH ...]  (e.g. loom test my_test.lua tests/)\n",
                paths[p], getcwd(cwd, sizeof cwd) ? cwd : "the current directory");
        return 1;
      }
      fprintf(stderr, "loom test: cannot open '%s' (%s)\n", paths[p], strerror(errno));
      return 1;
    }
    if (S_ISDIR(st.st_mode)) {
      DIR *d = opendir(paths[p]);
      struct dirent *de;
      char *found[1024];
      int nfound = 0;
      while (d && (de = readdir(d)) && nfound < 1024) {
        if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".lua")) continue;
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", paths[p], de->d_name);
        found[nfound++] = strdup(full);
      }
      if (d) closedir(d);
      qsort(found, (size_t)nfound, sizeof found[0], cmp_str);
      for (int k = 0; k < nfound && nf < 1024; k++) files[nf++] = found[k];
    } else if (nf < 1024) {
      files[nf++] = strdup(paths[p]);
    }
  }
  if (nf == 0) {
    fprintf(stderr, "loom test: no test files\n");
    printf("0 passed, 0 failed\n");
    return 1;
  }
  runner dummy;
  host_options none;
  memset(&none, 0, sizeof none);
  runner_init(&dummy, &none, exe, lua_dir, 0);
  long passed = 0, failed = 0;
  for (int f = 0; f < nf; f++) {
    lua_State *L = host_new_state(&dummy, "test", files[f]);
    char err[4096];
    lua_pushstring(L, files[f]);
    if (host_call_module(L, "loom.test", "run_file", 1, 2, err, sizeof err) != 0) {
      fprintf(stderr, "FAIL %s: %s\n", files[f], err);
      failed++;
    } else {
      passed += (long)lua_tonumber(L, -2);
      failed += (long)lua_tonumber(L, -1);
      lua_pop(L, 2);
    }
    lua_close(L);
    free(files[f]);
  }
  printf("%ld passed, %ld failed\n", passed, failed);
  return failed ? 1 : 0;
}

static int cmd_exec(int argc, char **argv, int i, const char *exe, const char *lua_dir) {
  if (i >= argc) return bad_option("%s", "exec needs a Lua file");
  runner dummy;
  host_options none;
  memset(&none, 0, sizeof none);
  runner_init(&dummy, &none, exe, lua_dir, 0);
  lua_State *L = host_new_state(&dummy, "exec", argv[i]);
  lua_createtable(L, argc - i, 1);
  for (int k = i; k < argc; k++) {
    lua_pushstring(L, argv[k]);
    lua_rawseti(L, -2, k - i);
  }
  lua_setglobal(L, "arg");
  char err[4096];
  if (luaL_loadfile(L, argv[i]) != 0) {
    fprintf(stderr, "loom: %s\n", lua_tostring(L, -1));
    lua_close(L);
    return 1;
  }
  int base = lua_gettop(L); /* the chunk */
  for (int k = i + 1; k < argc; k++) lua_pushstring(L, argv[k]);
  int nargs = argc - i - 1;
  lua_getglobal(L, "debug");
  lua_getfield(L, -1, "traceback");
  lua_remove(L, -2);
  lua_insert(L, base); /* message handler below the chunk */
  int rc = lua_pcall(L, nargs, 0, base);
  if (rc != 0) {
    const char *msg = lua_tostring(L, -1);
    if (!getenv("LOOM_TRACEBACK") && msg) {
      /* one line by default */
      snprintf(err, sizeof err, "%s", msg);
      char *nl = strchr(err, '\n');
      if (nl) *nl = 0;
      msg = err;
    }
    fprintf(stderr, "loom: %s\n", msg ? msg : "error");
  }
  lua_close(L);
  return rc ? 1 : 0;
}

static int cmd_new(int argc, char **argv, int i, const char *exe, const char *lua_dir) {
  if (argc - i != 1) return bad_option("%s", "new needs exactly one NAME (loom new NAME)");
  runner dummy;
  host_options none;
  memset(&none, 0, sizeof none);
  runner_init(&dummy, &none, exe, lua_dir, 0);
  lua_State *L = host_new_state(&dummy, "new", NULL);
  lua_pushstring(L, argv[i]);
  char err[4096];
  int code = 1;
  if (host_call_module(L, "loom.new", "main", 1, 1, err, sizeof err) != 0)
    fprintf(stderr, "loom new: %s\n", err);
  else
    code = (int)lua_tonumber(L, -1);
  lua_close(L);
  return code;
}

/* A subcommand written in Lua: module.main(args) returns the exit status. */
static int cmd_module(int argc, char **argv, int i, const char *exe, const char *lua_dir, const char *name,
                      const char *module) {
  runner dummy;
  host_options none;
  memset(&none, 0, sizeof none);
  runner_init(&dummy, &none, exe, lua_dir, 0);
  lua_State *L = host_new_state(&dummy, name, NULL);
  lua_newtable(L);
  for (int k = i; k < argc; k++) {
    lua_pushstring(L, argv[k]);
    lua_rawseti(L, -2, k - i + 1);
  }
  char err[4096];
  int code = 1;
  if (host_call_module(L, module, "main", 1, 1, err, sizeof err) != 0)
    fprintf(stderr, "loom %s: %s\n", name, err);
  else
    code = (int)lua_tonumber(L, -1);
  lua_close(L);
  return code;
}

int main(int argc, char **argv) {
  const char *exe = exe_path();
  if (argc < 2) {
    fputs(usage, stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    fputs(usage, stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version")) {
    SDL_version v;
    SDL_GetVersion(&v);
    printf("loom %s (%s, SDL %d.%d.%d)\n", loom_version(), LUAJIT_VERSION, v.major, v.minor, v.patch);
    return 0;
  }
  const char *lua_dir = host_find_lua_dir(exe);
  if (!lua_dir) {
    fprintf(stderr, "loom: cannot find the Loom Lua modules next to %s (set LOOM_LUA_DIR)\n", exe);
    return 1;
  }
  if (!strcmp(cmd, "test")) return cmd_test(argc, argv, 2, exe, lua_dir);
  if (!strcmp(cmd, "exec")) return cmd_exec(argc, argv, 2, exe, lua_dir);
  if (!strcmp(cmd, "bench")) return cmd_module(argc, argv, 2, exe, lua_dir, "bench", "loom.bench");
  if (!strcmp(cmd, "sweep")) return cmd_module(argc, argv, 2, exe, lua_dir, "sweep", "loom.sweep");
  if (!strcmp(cmd, "plot")) return cmd_module(argc, argv, 2, exe, lua_dir, "plot", "loom.plot");
  if (!strcmp(cmd, "replay")) return cmd_module(argc, argv, 2, exe, lua_dir, "replay", "loom.replay");
  if (!strcmp(cmd, "new")) return cmd_new(argc, argv, 2, exe, lua_dir);
  host_options opt;
  int rc = !strcmp(cmd, "run") ? parse_run(argc, argv, 2, &opt) : parse_run(argc, argv, 1, &opt);
  if (rc) return rc;
  return cmd_run(&opt, exe, lua_dir);
}
