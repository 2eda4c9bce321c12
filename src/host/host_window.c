/* host_window.c — the SDL2 window. The main thread only pumps events, blits finished frames and
 * watches over the runner thread, so the window stays responsive (close, r) even when a user
 * callback never returns. The pixels come from the software renderer unchanged; F12 reads them
 * back from the SDL renderer and saves a PNG, so a screenshot shows exactly what the window shows. */
#define _GNU_SOURCE
#include <SDL.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"

static void key_name(SDL_Keycode sym, char *out, size_t cap) {
  const char *n = SDL_GetKeyName(sym);
  size_t i = 0;
  for (; n && n[i] && i + 1 < cap; i++) out[i] = (char)tolower((unsigned char)n[i]);
  out[i] = 0;
}

static runner *start_runner(const host_options *opt, const char *exe, const char *lua_dir, pthread_t *th) {
  runner *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  runner_init(r, opt, exe, lua_dir, 1);
  if (pthread_create(th, NULL, runner_main, r) != 0) {
    free(r);
    return NULL;
  }
  return r;
}

static int save_screenshot(SDL_Renderer *ren, int w, int h, const char *path) {
  loom_canvas *c = loom_canvas_create(w, h);
  if (!c) return -1;
  int rc = SDL_RenderReadPixels(ren, NULL, SDL_PIXELFORMAT_RGBA32, loom_canvas_pixels(c), w * 4);
  if (rc == 0) rc = loom_canvas_write_png(c, path);
  loom_canvas_destroy(c);
  return rc;
}

void host_draw_stuck_banner(loom_canvas *c, const char *label, double seconds) {
  int w = loom_canvas_width(c), h = loom_canvas_height(c);
  char msg[400];
  snprintf(msg, sizeof msg, "%s has not returned for %.0f s.\nIt cannot be interrupted (a compiled loop).\n"
                            "Press r or save a fix to restart the scene, Esc to quit.", label, seconds);
  loom_canvas_rect(c, 0, h / 2 - 40, w, 80, HOST_STUCK_BANNER_RGBA);
  loom_canvas_text(c, 16, h / 2 - 30, msg, 0xFFFFFFFF, 1.5);
}

/* Tells the runner's Lua side to show msg among the window's notes. */
static void note(runner *r, const char *msg) {
  host_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = EV_NOTE;
  size_t n = strlen(msg);
  if (n >= sizeof ev.text) n = sizeof ev.text - 1; /* a long path is cut, the terminal has it whole */
  memcpy(ev.text, msg, n);
  runner_push_event(r, &ev);
}

static long long newest_mtime(runner *r) {
  long long best = 0;
  pthread_mutex_lock(&r->mu);
  for (int i = 0; i < r->nwatch_copy; i++) {
    struct stat st;
    if (stat(r->watch_copy[i], &st) == 0) {
      long long t = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
      if (t > best) best = t;
    }
  }
  pthread_mutex_unlock(&r->mu);
  return best;
}

/* F12: the window's pixels as PNG (numbered with "%d" in --screenshot, else out/screenshot-NNN.png);
 * where it went is printed and shown in the window. */
static void take_screenshot(SDL_Renderer *ren, const host_options *opt, runner *r, int shots, double sim_time,
                            int paused) {
  char path[1024], err[1200] = "", dir[1024];
  const char *pct = opt->screenshot ? strstr(opt->screenshot, "%d") : NULL;
  if (pct) /* "%d" in the path numbers the screenshots (replaced by hand: no user format strings) */
    snprintf(path, sizeof path, "%.*s%d%s", (int)(pct - opt->screenshot), opt->screenshot, shots, pct + 2);
  else if (opt->screenshot)
    snprintf(path, sizeof path, "%s", opt->screenshot);
  else
    snprintf(path, sizeof path, "out/screenshot-%03d.png", shots);
  const char *slash = strrchr(path, '/');
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
  int ow, oh;
  SDL_GetRendererOutputSize(ren, &ow, &oh);
  if (host_mkdir_p(dir, err, sizeof err) == 0 && save_screenshot(ren, ow, oh, path) == 0) {
    char full[PATH_MAX], msg[PATH_MAX + 64];
    if (!realpath(path, full)) snprintf(full, sizeof full, "%s", path);
    printf("screenshot: %s (%dx%d, t = %.3f s, %s)\n", full, ow, oh, sim_time, paused ? "paused" : "running");
    snprintf(msg, sizeof msg, "screenshot saved to %s", full);
    note(r, msg);
  } else {
    char msg[2400];
    if (!err[0]) snprintf(err, sizeof err, "%s%s", SDL_GetError(), loom_last_error());
    snprintf(msg, sizeof msg, "screenshot %s failed: %s", path, err);
    fprintf(stderr, "loom: %s\n", msg);
    note(r, msg);
  }
  fflush(stdout);
}

/* SDL events into the runner's queue; Esc quits, F12 asks for a screenshot, r restarts a stuck
 * run. Mouse positions are scaled from window to frame pixels. */
static void pump_events(SDL_Window *win, runner *r, int tex_w, int tex_h, int *quit, int *shot_pending, int *stuck) {
SDL_Event e;
  while (SDL_PollEvent(&e)) {
    host_event ev;
    memset(&ev, 0, sizeof ev);
    int ww, wh;
    SDL_GetWindowSize(win, &ww, &wh);
    double sx = tex_w > 0 && ww > 0 ? (double)tex_w / ww : 1.0, sy = tex_h > 0 && wh > 0 ? (double)tex_h / wh : 1.0;
    switch (e.type) {
    case SDL_QUIT: *quit = 1; break;
    case SDL_KEYDOWN:
    case SDL_KEYUP:
      key_name(e.key.keysym.sym, ev.key, sizeof ev.key);
      if (e.type == SDL_KEYDOWN && !strcmp(ev.key, "escape")) {
        *quit = 1;
        break;
      }
      if (e.type == SDL_KEYDOWN && !strcmp(ev.key, "f12")) {
        *shot_pending = 1;
        break;
      }
      if (*stuck && e.type == SDL_KEYDOWN && !strcmp(ev.key, "r")) {
        *stuck = 2; /* restart below */
        break;
      }
      if (e.key.repeat && strcmp(ev.key, ".")) break;
      ev.type = EV_KEY;
      ev.down = e.type == SDL_KEYDOWN;
      runner_push_event(r, &ev);
      break;
    case SDL_MOUSEMOTION:
      ev.type = EV_MOVE;
      ev.x = e.motion.x * sx;
      ev.y = e.motion.y * sy;
      ev.dx = e.motion.xrel;
      ev.dy = e.motion.yrel;
      runner_push_event(r, &ev);
      break;
    case SDL_MOUSEBUTTONDOWN:
    case SDL_MOUSEBUTTONUP:
      ev.type = EV_BUTTON;
      ev.button = e.button.button;
      ev.down = e.type == SDL_MOUSEBUTTONDOWN;
      ev.x = e.button.x * sx;
      ev.y = e.button.y * sy;
      runner_push_event(r, &ev);
      break;
    case SDL_MOUSEWHEEL:
      ev.type = EV_WHEEL;
      ev.dy = e.wheel.y;
      runner_push_event(r, &ev);
      break;
    case SDL_JOYAXISMOTION:
      ev.type = EV_AXIS;
      ev.index = e.jaxis.axis + 1;
      ev.value = e.jaxis.value / 32767.0;
      runner_push_event(r, &ev);
      break;
    case SDL_WINDOWEVENT:
      if (e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED) {
        pthread_mutex_lock(&r->mu);
        r->want_w = e.window.data1 > 0 ? e.window.data1 : 1;
        r->want_h = e.window.data2 > 0 ? e.window.data2 : 1;
        pthread_mutex_unlock(&r->mu);
      }
      break;
    default: break;
    }
  }
}

int host_run_window(const host_options *opt, const char *exe, const char *lua_dir) {
  if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) return -2;
  if (SDL_Init(SDL_INIT_VIDEO) != 0) {
    fprintf(stderr, "loom: SDL: %s\n", SDL_GetError());
    return -2;
  }
  SDL_InitSubSystem(SDL_INIT_JOYSTICK);
  int W = opt->width > 0 ? opt->width : 1280, H = opt->height > 0 ? opt->height : 720;
  char title[512];
  snprintf(title, sizeof title, "%s — Loom", opt->scene);
  SDL_Window *win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, W, H, SDL_WINDOW_RESIZABLE);
  if (!win) {
    fprintf(stderr, "loom: SDL: cannot open a window: %s\n", SDL_GetError());
    SDL_Quit();
    return -2;
  }
  SDL_Renderer *ren = SDL_CreateRenderer(win, -1, SDL_RENDERER_ACCELERATED);
  if (!ren) ren = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
  if (!ren) {
    fprintf(stderr, "loom: SDL: no renderer: %s\n", SDL_GetError());
    SDL_DestroyWindow(win);
    SDL_Quit();
    return -2;
  }
  SDL_Joystick *joy = SDL_NumJoysticks() > 0 ? SDL_JoystickOpen(0) : NULL;

  pthread_t th;
  runner *r = start_runner(opt, exe, lua_dir, &th);
  if (!r) {
    fprintf(stderr, "loom: cannot start the simulation thread\n");
    return 1;
  }
  SDL_Texture *tex = NULL;
  int tex_w = 0, tex_h = 0;
  unsigned seen = 0;
  int shots = 0, shot_pending = 0, quit = 0, stuck = 0;
  double stuck_since_wall = 0;
  long long mtime_at_stuck = 0;
  loom_canvas *overlay = NULL;

  while (!quit) {
    pump_events(win, r, tex_w, tex_h, &quit, &shot_pending, &stuck);

    /* watchdog */
    double secs;
    char label[160];
    if (runner_stuck_seconds(r, &secs, label, sizeof label)) {
      if (secs > HOST_WATCHDOG_SECONDS) host_interrupt(r);
      if (secs > 2 * HOST_WATCHDOG_SECONDS && !stuck) {
        stuck = 1;
        stuck_since_wall = host_now();
        mtime_at_stuck = newest_mtime(r);
        fprintf(stderr, "loom: %s has not returned for %.0f s and cannot be interrupted (a compiled loop); press r to restart, Esc to quit\n",
                label, secs);
      }
    } else if (stuck == 1) {
      stuck = 0;
    }
    if (stuck == 1 && host_now() - stuck_since_wall > 0.2 && newest_mtime(r) > mtime_at_stuck) stuck = 2;
    if (stuck == 2) {
      /* abandon the stuck runner (its thread is left spinning) and start the scene afresh */
      pthread_mutex_lock(&r->mu);
      r->abandoned = 1;
      pthread_mutex_unlock(&r->mu);
      pthread_detach(th);
      fprintf(stderr, "loom: restarting %s from t = 0 (the previous run is stuck in %s)\n", opt->scene, label);
      r = start_runner(opt, exe, lua_dir, &th);
      if (!r) break;
      stuck = 0;
      seen = 0;
    }

    pthread_mutex_lock(&r->mu);
    /* A stuck runner publishes no frames, so the warning is drawn here over its last frame, and
     * redrawn every time round (the seconds count up). */
    if (r->front && (r->frame_seq != seen || stuck)) {
      if (!tex || tex_w != r->front_w || tex_h != r->front_h) {
        if (tex) SDL_DestroyTexture(tex);
        tex = SDL_CreateTexture(ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING, r->front_w, r->front_h);
        tex_w = r->front_w;
        tex_h = r->front_h;
      }
      if (tex) {
        if (stuck) {
          if (!overlay || loom_canvas_width(overlay) != tex_w || loom_canvas_height(overlay) != tex_h) {
            loom_canvas_destroy(overlay);
            overlay = loom_canvas_create(tex_w, tex_h);
          }
          if (overlay) {
            memcpy(loom_canvas_pixels(overlay), r->front, (size_t)tex_w * tex_h * 4);
            host_draw_stuck_banner(overlay, label, secs);
            SDL_UpdateTexture(tex, NULL, loom_canvas_pixels(overlay), tex_w * 4);
          }
        } else {
          SDL_UpdateTexture(tex, NULL, r->front, tex_w * 4);
        }
        seen = r->frame_seq;
      }
    }
    double sim_time = r->sim_time;
    int paused = r->paused;
    int finished = r->finished;
    pthread_mutex_unlock(&r->mu);

    SDL_SetRenderDrawColor(ren, 0, 0, 0, 255);
    SDL_RenderClear(ren);
    if (tex) SDL_RenderCopy(ren, tex, NULL, NULL);
    if (shot_pending && tex) {
      take_screenshot(ren, opt, r, shots++, sim_time, paused);
      shot_pending = 0;
    }
    SDL_RenderPresent(ren);
    if (finished) break;
    SDL_Delay(8);
  }

  pthread_mutex_lock(&r->mu);
  r->quit = 1;
  pthread_mutex_unlock(&r->mu);
  int code = 0;
  double t0 = host_now();
  int finished = 0;
  while (host_now() - t0 < 2.0) {
    pthread_mutex_lock(&r->mu);
    finished = r->finished;
    pthread_mutex_unlock(&r->mu);
    if (finished) break;
    host_sleep(0.01);
  }
  if (tex) SDL_DestroyTexture(tex);
  loom_canvas_destroy(overlay);
  if (joy) SDL_JoystickClose(joy);
  SDL_DestroyRenderer(ren);
  SDL_DestroyWindow(win);
  SDL_Quit();
  if (!finished) {
    /* the runner is stuck in a callback: leave without waiting for it */
    fflush(stdout);
    fflush(stderr);
    _exit(0);
  }
  pthread_join(th, NULL);
  code = r->exit_code;
  pthread_mutex_destroy(&r->mu);
  free(r->front);
  free(r);
  return code;
}
