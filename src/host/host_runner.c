/* host_runner.c — the runner thread: one scene in one Lua state at a time. It steps and draws
 * frames through loom.app, watches the files the scene loaded and hot-reloads: the new version is
 * built in a fresh Lua state; if that fails the old one keeps running and shows the error; if it
 * succeeds the old world's state is transplanted and the old state is closed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"

void runner_init(runner *r, const host_options *opt, const char *exe, const char *lua_dir, int window) {
  memset(r, 0, sizeof *r);
  r->opt = *opt;
  r->exe = exe;
  r->lua_dir = lua_dir;
  r->window = window;
  pthread_mutex_init(&r->mu, NULL);
  r->want_w = opt->width > 0 ? opt->width : 1280;
  r->want_h = opt->height > 0 ? opt->height : 720;
}

static void set_str(lua_State *L, const char *k, const char *v) {
  if (!v) return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}
static void set_num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}
static void set_bool(lua_State *L, const char *k, int v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, k);
}

static void push_options(lua_State *L, runner *r, const char *carry) {
  const host_options *o = &r->opt;
  lua_newtable(L);
  set_str(L, "scene", o->scene);
  set_str(L, "mode", r->window ? "window" : "headless");
  lua_pushlightuserdata(L, r->canvas);
  lua_setfield(L, -2, "canvas");
  if (o->time > 0) set_num(L, "time", o->time);
  if (o->steps > 0) set_num(L, "steps", (double)o->steps);
  if (o->every > 0) set_num(L, "every", o->every);
  set_str(L, "frames", o->frames);
  set_str(L, "export", o->export_dir);
  set_str(L, "stats", o->stats);
  set_str(L, "video", o->video);
  set_str(L, "record", o->record);
  set_str(L, "format", o->format);
  if (o->ntracks > 0) {
    lua_createtable(L, o->ntracks, 0);
    for (int i = 0; i < o->ntracks; i++) {
      lua_pushstring(L, o->tracks[i]);
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "tracks");
  }
  set_bool(L, "watch", o->watch || r->window);
  set_bool(L, "realtime", o->realtime);
  set_bool(L, "quiet", o->quiet);
  set_bool(L, "progress", !r->window && !o->quiet && isatty(2));
  if (carry) set_str(L, "carry", carry);
  if (o->nparams > 0) {
    lua_newtable(L);
    for (int i = 0; i < o->nparams; i++) {
      const char *eq = strchr(o->params[i], '=');
      if (!eq) continue;
      lua_pushlstring(L, o->params[i], (size_t)(eq - o->params[i]));
      lua_pushstring(L, eq + 1);
      lua_settable(L, -3);
    }
    lua_setfield(L, -2, "params");
  }
}

/* Returns 0, -1 for a script error, or -2 when init refused an option (a --track naming no such
 * body, say): that is a bad option, status 2. */
static int load_state(runner *r, const char *carry, lua_State **out, char *err, size_t cap) {
  lua_State *L = host_new_state(r, r->window ? "window" : "headless", r->opt.scene);
  if (!L) {
    snprintf(err, cap, "cannot create a Lua state (out of memory)");
    return -1;
  }
  push_options(L, r, carry);
  if (host_call_app(L, "init", 1, 1, err, cap) != 0) {
    lua_close(L);
    return -1;
  }
  if (lua_isstring(L, -1)) {
    snprintf(err, cap, "%s", lua_tostring(L, -1));
    lua_close(L);
    return -2;
  }
  lua_pop(L, 1);
  *out = L;
  return 0;
}

static void refresh_watch(runner *r) {
  char err[512];
  lua_State *L = r->L;
  if (host_call_app(L, "watched", 0, 1, err, sizeof err) != 0) return;
  const char *paths[HOST_MAX_WATCH];
  int n = 0;
  int len = (int)lua_objlen(L, -1);
  for (int i = 1; i <= len && n < HOST_MAX_WATCH; i++) {
    lua_rawgeti(L, -1, i);
    if (lua_isstring(L, -1)) paths[n++] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  watch_set(r, paths, n); /* copies the strings before they are popped */
  lua_pop(L, 1);
}

static int app_error_count(lua_State *L) {
  char err[256];
  if (host_call_app(L, "error_count", 0, 1, err, sizeof err) != 0) return 0;
  int n = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return n;
}

static void reload(runner *r) {
  char err[4096];
  char *carry = NULL;
  if (host_call_app(r->L, "export", 0, 1, err, sizeof err) == 0) {
    const char *s = lua_tostring(r->L, -1);
    carry = s ? strdup(s) : NULL;
    lua_pop(r->L, 1);
  }
  lua_State *L2 = NULL;
  if (load_state(r, carry, &L2, err, sizeof err) != 0) {
    /* the old scene keeps running and shows what is wrong */
    fprintf(stderr, "loom: %s\n", err);
    fflush(stderr);
    lua_pushstring(r->L, err);
    char e2[256];
    host_call_app(r->L, "show_error", 1, 0, e2, sizeof e2);
    r->reload_failed = 1;
    free(carry);
    return;
  }
  /* the exit status reflects the version running at the end: a fixed file clears earlier errors */
  r->reload_failed = 0;
  free(carry);
  double addr = 0;
  if (host_call_app(r->L, "world_address", 0, 1, err, sizeof err) == 0) {
    addr = lua_tonumber(r->L, -1);
    lua_pop(r->L, 1);
  }
  lua_pushnumber(L2, addr);
  if (host_call_app(L2, "adopt", 1, 0, err, sizeof err) != 0) fprintf(stderr, "loom: reload: %s\n", err);
  pthread_mutex_lock(&r->mu);
  lua_State *old = r->L;
  r->L = L2;
  pthread_mutex_unlock(&r->mu);
  char e3[256];
  host_call_app(old, "close", 0, 0, e3, sizeof e3);
  lua_close(old);
  refresh_watch(r);
}

static void publish_frame(runner *r) {
  int w = loom_canvas_width(r->canvas), h = loom_canvas_height(r->canvas);
  size_t bytes = (size_t)w * (size_t)h * 4;
  pthread_mutex_lock(&r->mu);
  if (r->front_w != w || r->front_h != h || !r->front) {
    uint8_t *nb = realloc(r->front, bytes);
    if (!nb) {
      pthread_mutex_unlock(&r->mu);
      return;
    }
    r->front = nb;
    r->front_w = w;
    r->front_h = h;
  }
  memcpy(r->front, loom_canvas_pixels(r->canvas), bytes);
  r->frame_seq++;
  pthread_mutex_unlock(&r->mu);
}

static void push_events(runner *r, lua_State *L) {
  host_event evs[HOST_QUEUE];
  pthread_mutex_lock(&r->mu);
  int n = r->nqueue;
  memcpy(evs, r->queue, sizeof(host_event) * (size_t)n);
  r->nqueue = 0;
  pthread_mutex_unlock(&r->mu);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    const host_event *e = &evs[i];
    lua_createtable(L, 0, 6);
    switch (e->type) {
    case EV_KEY:
      set_str(L, "type", "key");
      set_str(L, "key", e->key);
      set_bool(L, "down", e->down);
      break;
    case EV_MOVE:
      set_str(L, "type", "mouse_move");
      set_num(L, "x", e->x);
      set_num(L, "y", e->y);
      set_num(L, "dx", e->dx);
      set_num(L, "dy", e->dy);
      break;
    case EV_BUTTON:
      set_str(L, "type", "mouse_button");
      set_num(L, "button", e->button);
      set_bool(L, "down", e->down);
      set_num(L, "x", e->x);
      set_num(L, "y", e->y);
      break;
    case EV_WHEEL:
      set_str(L, "type", "wheel");
      set_num(L, "dy", e->dy);
      break;
    case EV_AXIS:
      set_str(L, "type", "axis");
      set_num(L, "index", e->index);
      set_num(L, "value", e->value);
      break;
    case EV_NOTE:
      set_str(L, "type", "note");
      set_str(L, "text", e->text);
      break;
    case EV_DEVICE:
      set_str(L, "type", "device");
      set_str(L, "text", e->text);
      set_bool(L, "down", e->down);
      break;
    }
    lua_rawseti(L, -2, i + 1);
  }
}

static void publish_status(runner *r) {
  char err[256];
  double t = 0;
  int paused = 0;
  if (host_call_app(r->L, "time", 0, 1, err, sizeof err) == 0) {
    t = lua_tonumber(r->L, -1);
    lua_pop(r->L, 1);
  }
  if (host_call_app(r->L, "paused", 0, 1, err, sizeof err) == 0) {
    paused = lua_toboolean(r->L, -1);
    lua_pop(r->L, 1);
  }
  pthread_mutex_lock(&r->mu);
  r->sim_time = t;
  r->paused = paused;
  pthread_mutex_unlock(&r->mu);
}

/* Window mode when the scene cannot be loaded at all: show the error and wait for a fix. */
static int wait_for_fix(runner *r, const char *msg) {
  const char *paths[1] = {r->opt.scene};
  watch_set(r, paths, 1);
  for (;;) {
    pthread_mutex_lock(&r->mu);
    int stop = r->quit || r->abandoned;
    pthread_mutex_unlock(&r->mu);
    if (stop) return -1;
    loom_canvas_clear(r->canvas, 0x2A2E35FF);
    loom_canvas_rect(r->canvas, 0, 0, loom_canvas_width(r->canvas), 90, 0x8A1C1CE0);
    loom_canvas_text(r->canvas, 12, 12, msg, 0xFFFFFFFF, 1.5);
    loom_canvas_text(r->canvas, 12, 60, "fix the file and save it: it will be loaded again", 0xFFD0D0FF, 1.5);
    publish_frame(r);
    host_sleep(0.05);
    if (watch_changed(r)) return 0;
  }
}

void *runner_main(void *arg) {
  runner *r = arg;
  char err[4096];
  r->canvas = loom_canvas_create(r->want_w, r->want_h);
  if (!r->canvas) {
    fprintf(stderr, "loom: cannot create a %dx%d canvas: %s\n", r->want_w, r->want_h, loom_last_error());
    r->exit_code = 1;
    goto done;
  }
  int lrc;
  while ((lrc = load_state(r, NULL, &r->L, err, sizeof err)) != 0) {
    fprintf(stderr, "loom: %s\n", err);
    fflush(stderr);
    if (!r->window || lrc == -2) {
      r->exit_code = lrc == -2 ? 2 : 1;
      goto done;
    }
    if (wait_for_fix(r, err) != 0) goto done;
  }
  refresh_watch(r);

  double last = host_now();
  for (;;) {
    pthread_mutex_lock(&r->mu);
    int stop = r->quit || r->abandoned;
    int ww = r->want_w, wh = r->want_h;
    pthread_mutex_unlock(&r->mu);
    if (stop) break;
    if (r->window && (ww != loom_canvas_width(r->canvas) || wh != loom_canvas_height(r->canvas)))
      loom_canvas_resize(r->canvas, ww, wh);
    double frame_start = host_now();
    double wall_dt = frame_start - last;
    last = frame_start;
    lua_pushnumber(r->L, wall_dt);
    push_events(r, r->L);
    if (host_call_app(r->L, "frame", 2, 1, err, sizeof err) != 0) {
      fprintf(stderr, "loom: %s\n", err);
      r->exit_code = 1;
      break;
    }
    int done = lua_isstring(r->L, -1) && !strcmp(lua_tostring(r->L, -1), "done");
    lua_pop(r->L, 1);
    publish_status(r);
    if (r->window) publish_frame(r);
    if (done) break;
    double now = host_now();
    if ((r->window || r->opt.watch) && now - r->last_watch > 0.05) {
      r->last_watch = now;
      if (watch_changed(r)) reload(r);
    }
    if (r->window) {
      host_sleep(1.0 / 60 - (host_now() - frame_start));
    } else if (r->opt.realtime) {
      host_sleep(1.0 / 240 - (host_now() - frame_start));
    }
  }
  if (r->L) {
    pthread_mutex_lock(&r->mu);
    int abandoned = r->abandoned;
    pthread_mutex_unlock(&r->mu);
    if (!abandoned && !r->window && !r->opt.quiet && host_call_app(r->L, "summary", 0, 1, err, sizeof err) == 0) {
      printf("%s\n", lua_tostring(r->L, -1));
      fflush(stdout);
      lua_pop(r->L, 1);
    }
    r->errors += app_error_count(r->L);
    host_call_app(r->L, "close", 0, 0, err, sizeof err);
    pthread_mutex_lock(&r->mu);
    lua_State *L = r->L;
    r->L = NULL;
    pthread_mutex_unlock(&r->mu);
    lua_close(L);
  }
  if (r->exit_code == 0 && (r->errors > 0 || r->reload_failed)) r->exit_code = 1;
done:
  loom_canvas_destroy(r->canvas);
  r->canvas = NULL;
  pthread_mutex_lock(&r->mu);
  r->finished = 1;
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

int runner_stuck_seconds(runner *r, double *seconds, char *label, size_t cap) {
  pthread_mutex_lock(&r->mu);
  int busy = r->busy;
  double since = r->busy_since;
  if (label) snprintf(label, cap, "%s", r->busy_label);
  pthread_mutex_unlock(&r->mu);
  *seconds = busy ? host_now() - since : 0;
  return busy;
}

void runner_push_event(runner *r, const host_event *e) {
  pthread_mutex_lock(&r->mu);
  if (r->nqueue < HOST_QUEUE) r->queue[r->nqueue++] = *e;
  pthread_mutex_unlock(&r->mu);
}

/* ---- headless ------------------------------------------------------------------------------------ */

int host_run_headless(const host_options *opt, const char *exe, const char *lua_dir) {
  runner *r = calloc(1, sizeof *r);
  if (!r) return 1;
  runner_init(r, opt, exe, lua_dir, 0);
  pthread_t th;
  if (pthread_create(&th, NULL, runner_main, r) != 0) {
    fprintf(stderr, "loom: cannot start the simulation thread\n");
    return 1;
  }
  /* The main thread is the watchdog: a callback that does not return is interrupted after
   * HOST_WATCHDOG_SECONDS; if it cannot be (a JIT-compiled loop ignores hooks), the run stops. */
  for (;;) {
    pthread_mutex_lock(&r->mu);
    int finished = r->finished;
    pthread_mutex_unlock(&r->mu);
    if (finished) break;
    double secs;
    char label[160];
    if (runner_stuck_seconds(r, &secs, label, sizeof label)) {
      if (secs > HOST_WATCHDOG_SECONDS) host_interrupt(r);
      if (secs > 2 * HOST_WATCHDOG_SECONDS) {
        fprintf(stderr, "loom: %s did not return within %.0f s and cannot be interrupted (a compiled loop); stopping\n",
                label, 2 * HOST_WATCHDOG_SECONDS);
        fflush(stderr);
        _exit(3);
      }
    }
    host_sleep(0.02);
  }
  pthread_join(th, NULL);
  int code = r->exit_code;
  pthread_mutex_destroy(&r->mu);
  free(r->front);
  free(r);
  return code;
}
