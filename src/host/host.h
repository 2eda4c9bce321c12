/* host.h — the Loom host: CLI, Lua states, the runner thread (scene, hot reload, headless
 * output), the SDL window and the watchdog. The only layer that includes lua.h and SDL.h. */
#ifndef LOOM_HOST_H
#define LOOM_HOST_H

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <pthread.h>
#include <stdint.h>

#include "../loom.h"

#define HOST_MAX_PARAMS 64
#define HOST_MAX_WATCH 64
#define HOST_QUEUE 512
#define HOST_WATCHDOG_SECONDS 3.0

typedef struct host_options {
  const char *scene;
  int headless;     /* --headless */
  int watch;        /* --watch: hot reload (always on in the window) */
  int realtime;     /* pace simulated time to the wall clock (implied by --watch headless) */
  int quiet;
  double time;      /* --time (s); 0 = none */
  long steps;       /* --steps; 0 = none */
  int every;        /* --every N steps for frames/export; 0 = automatic */
  int width, height;
  const char *frames, *export_dir, *stats, *screenshot;
  const char *format;  /* --format obj | ply for --export; NULL = obj */
  const char *video;   /* --video FILE.mp4 (headless; through ffmpeg) */
  const char *record;  /* --record FILE: the session journal */
  const char *params[HOST_MAX_PARAMS];
  int nparams;
  const char *tracks[HOST_MAX_PARAMS]; /* --track body:index */
  int ntracks;
} host_options;

/* EV_NOTE: a message from the main thread (a screenshot was saved) for the window's notes.
 * EV_DEVICE: a gamepad or joystick was connected (down = 1, text = its name) or removed (down = 0). */
typedef enum host_event_type { EV_KEY = 1, EV_MOVE, EV_BUTTON, EV_WHEEL, EV_AXIS, EV_NOTE, EV_DEVICE } host_event_type;

typedef struct host_event {
  int type;
  char key[32];
  char text[512];
  int down, button, index;
  double x, y, dx, dy, value;
} host_event;

typedef struct watch_entry {
  char path[1024];
  long long mtime_ns, size, inode;
  int exists;
} watch_entry;

typedef struct runner {
  host_options opt;
  const char *exe, *lua_dir;
  int window; /* 1 = frames go to the SDL window */

  /* owned by the runner thread */
  lua_State *L;
  loom_canvas *canvas;
  watch_entry watch[HOST_MAX_WATCH];
  int nwatch;
  double last_watch;

  /* shared with the main thread, under mu */
  pthread_mutex_t mu;
  int busy;              /* inside a user callback */
  double busy_since;
  char busy_label[160];
  int hook_set;
  int abandoned;         /* main thread gave up on this runner */
  int finished;          /* thread has left its loop */
  int quit;              /* main thread asks to stop */
  int exit_code;
  uint8_t *front;        /* last finished frame, front_w x front_h RGBA */
  int front_w, front_h;
  unsigned frame_seq;
  int want_w, want_h;
  host_event queue[HOST_QUEUE];
  int nqueue;
  double sim_time;
  int paused;
  int errors;            /* script errors of the Lua state running at the end */
  int reload_failed;     /* the last reload failed: the file on disk is broken */
  char watch_copy[HOST_MAX_WATCH][1024]; /* the watch list, for the main thread */
  int nwatch_copy;
} runner;

/* host_lua.c */
/* A new Lua state with the standard libraries, package.path covering the Loom modules and the
 * scene's directory, and the `loom.host` module (busy marker for the watchdog, paths, mode). */
lua_State *host_new_state(runner *r, const char *mode, const char *scene_path);
/* Calls require("loom.app")[fn] with the values already on the stack (nargs) under a message
 * handler; returns 0 and leaves nres results, or -1 and copies the error into err. */
int host_call_app(lua_State *L, const char *fn, int nargs, int nres, char *err, size_t errcap);
/* Calls require(module)[fn](args...) with string arguments; returns 0/-1, results left on stack. */
int host_call_module(lua_State *L, const char *module, const char *fn, int nargs, int nres, char *err, size_t errcap);
/* Watchdog: asks the runner's Lua state to abort the callback it is stuck in. */
void host_interrupt(runner *r);
/* mkdir -p without a shell: creates path and its missing parents and checks that path is a
 * writable directory; returns 0, or -1 with a message naming the component that failed. */
int host_mkdir_p(const char *path, char *err, size_t cap);
double host_now(void);
void host_sleep(double seconds);
/* Directory with loom/init.lua, found from the executable's location or $LOOM_LUA_DIR. */
const char *host_find_lua_dir(const char *exe);

/* host_runner.c */
void runner_init(runner *r, const host_options *opt, const char *exe, const char *lua_dir, int window);
/* Thread entry: loads the scene and runs it until done or asked to quit. */
void *runner_main(void *arg);
/* Main-thread helpers */
int runner_stuck_seconds(runner *r, double *seconds, char *label, size_t cap);
void runner_push_event(runner *r, const host_event *e);

/* host_watch.c */
/* Replaces the watch list; records current mtimes. */
void watch_set(runner *r, const char *const *paths, int n);
/* 1 if any watched file changed since the last call (and updates the recorded state). */
int watch_changed(runner *r);

/* host_window.c */
/* Runs the scene in an SDL window; returns the exit status, or -2 when no display is available
 * (the caller falls back to headless). */
int host_run_window(const host_options *opt, const char *exe, const char *lua_dir);
/* Draws the "callback never returned" warning across the middle of canvas c (the window shows it
 * over the stuck runner's last frame). */
#define HOST_STUCK_BANNER_RGBA 0x8A1C1CF0u
void host_draw_stuck_banner(loom_canvas *c, const char *label, double seconds);
/* Headless run with the watchdog on the main thread; returns the exit status. */
int host_run_headless(const host_options *opt, const char *exe, const char *lua_dir);

#endif
