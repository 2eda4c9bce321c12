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
/* Tells the runner's Lua side that a device came (name) or went (NULL). */
static void device_event(runner *r, const char *name) {
  host_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = EV_DEVICE;
  ev.down = name != NULL;
  if (name) snprintf(ev.text, sizeof ev.text, "%s", name);
  runner_push_event(r, &ev);
}

static void pump_events(SDL_Window *win, runner *r, int tex_w, int tex_h, int *quit, int *shot_pending, int *stuck,
                        SDL_Joystick **joy) {
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
    case SDL_JOYDEVICEADDED:
      if (!*joy) {
        *joy = SDL_JoystickOpen(e.jdevice.which);
        if (*joy) device_event(r, SDL_JoystickName(*joy) ? SDL_JoystickName(*joy) : "joystick");
      }
      break;
    case SDL_JOYDEVICEREMOVED:
      if (*joy && SDL_JoystickInstanceID(*joy) == e.jdevice.which) {
        SDL_JoystickClose(*joy);
        *joy = NULL;
        device_event(r, NULL);
      }
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

/* The window loop's state: SDL objects, the texture the runner's frames go to, and the watchdog's
 * view of the runner. */
typedef struct host_win {
  const host_options *opt;
  const char *exe, *lua_dir;
  SDL_Window *win;
  SDL_Renderer *ren;
  SDL_Joystick *joy;
  SDL_Texture *tex;
  int tex_w, tex_h;
  loom_canvas *overlay; /* the last frame with the "stuck" banner drawn over it */
  runner *r;
  pthread_t th;
  unsigned seen; /* frame_seq of the frame in tex */
  int shots, shot_pending, quit;
  int stuck; /* 0 running; 1 a callback has not returned (banner shown); 2 restart it */
  double stuck_since_wall, stuck_secs;
  long long mtime_at_stuck;
  char label[160]; /* what the runner is stuck in */
} host_win;

/* SDL, a resizable window, a renderer (accelerated, else software) and the first joystick.
 * -2 when there is no display to open it on (the caller then runs headless). */
static int window_open(host_win *hw) {
  const host_options *opt = hw->opt;
  if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) return -2;
  if (SDL_Init(SDL_INIT_VIDEO) != 0) {
    fprintf(stderr, "loom: SDL: %s\n", SDL_GetError());
    return -2;
  }
  SDL_InitSubSystem(SDL_INIT_JOYSTICK);
  int W = opt->width > 0 ? opt->width : 1280, H = opt->height > 0 ? opt->height : 720;
  char title[512];
  snprintf(title, sizeof title, "%s — Loom", opt->scene);
  hw->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, W, H, SDL_WINDOW_RESIZABLE);
  if (!hw->win) {
    fprintf(stderr, "loom: SDL: cannot open a window: %s\n", SDL_GetError());
    SDL_Quit();
    return -2;
  }
  hw->ren = SDL_CreateRenderer(hw->win, -1, SDL_RENDERER_ACCELERATED);
  if (!hw->ren) hw->ren = SDL_CreateRenderer(hw->win, -1, SDL_RENDERER_SOFTWARE);
  if (!hw->ren) {
    fprintf(stderr, "loom: SDL: no renderer: %s\n", SDL_GetError());
    SDL_DestroyWindow(hw->win);
    SDL_Quit();
    return -2;
  }
  hw->joy = NULL; /* SDL reports attached devices as SDL_JOYDEVICEADDED events (pump_events opens one) */
  return 0;
}

static void window_close(host_win *hw) {
  if (hw->tex) SDL_DestroyTexture(hw->tex);
  loom_canvas_destroy(hw->overlay);
  if (hw->joy) SDL_JoystickClose(hw->joy);
  SDL_DestroyRenderer(hw->ren);
  SDL_DestroyWindow(hw->win);
  SDL_Quit();
}

/* Watchdog: interrupt a callback that has not returned for HOST_WATCHDOG_SECONDS; past twice that
 * (a compiled loop ignores the interrupt) show the banner, and once a script file changes abandon
 * the stuck runner and start the scene afresh. Returns -1 if the new runner cannot start. */
static int watch_runner(host_win *hw) {
  if (runner_stuck_seconds(hw->r, &hw->stuck_secs, hw->label, sizeof hw->label)) {
    if (hw->stuck_secs > HOST_WATCHDOG_SECONDS) host_interrupt(hw->r);
    if (hw->stuck_secs > 2 * HOST_WATCHDOG_SECONDS && !hw->stuck) {
      hw->stuck = 1;
      hw->stuck_since_wall = host_now();
      hw->mtime_at_stuck = newest_mtime(hw->r);
      fprintf(stderr, "loom: %s has not returned for %.0f s and cannot be interrupted (a compiled loop); press r to restart, Esc to quit\n",
              hw->label, hw->stuck_secs);
    }
  } else if (hw->stuck == 1) {
    hw->stuck = 0;
  }
  if (hw->stuck == 1 && host_now() - hw->stuck_since_wall > 0.2 && newest_mtime(hw->r) > hw->mtime_at_stuck)
    hw->stuck = 2;
  if (hw->stuck != 2) return 0;
  /* abandon the stuck runner (its thread is left spinning) and start the scene afresh */
  pthread_mutex_lock(&hw->r->mu);
  hw->r->abandoned = 1;
  pthread_mutex_unlock(&hw->r->mu);
  pthread_detach(hw->th);
  fprintf(stderr, "loom: restarting %s from t = 0 (the previous run is stuck in %s)\n", hw->opt->scene, hw->label);
  hw->r = start_runner(hw->opt, hw->exe, hw->lua_dir, &hw->th);
  if (!hw->r) return -1;
  hw->stuck = 0;
  hw->seen = 0;
  return 0;
}

/* Copies the runner's newest frame into the texture (or, while the runner is stuck, its last frame
 * with the banner over it, redrawn every time round so the seconds count up). Call with r->mu held. */
static void upload_frame(host_win *hw) {
  runner *r = hw->r;
  if (!r->front || (r->frame_seq == hw->seen && !hw->stuck)) return;
  if (!hw->tex || hw->tex_w != r->front_w || hw->tex_h != r->front_h) {
    if (hw->tex) SDL_DestroyTexture(hw->tex);
    hw->tex = SDL_CreateTexture(hw->ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING, r->front_w, r->front_h);
    hw->tex_w = r->front_w;
    hw->tex_h = r->front_h;
  }
  if (!hw->tex) return;
  if (hw->stuck) {
    if (!hw->overlay || loom_canvas_width(hw->overlay) != hw->tex_w || loom_canvas_height(hw->overlay) != hw->tex_h) {
      loom_canvas_destroy(hw->overlay);
      hw->overlay = loom_canvas_create(hw->tex_w, hw->tex_h);
    }
    if (hw->overlay) {
      memcpy(loom_canvas_pixels(hw->overlay), r->front, (size_t)hw->tex_w * hw->tex_h * 4);
      host_draw_stuck_banner(hw->overlay, hw->label, hw->stuck_secs);
      SDL_UpdateTexture(hw->tex, NULL, loom_canvas_pixels(hw->overlay), hw->tex_w * 4);
    }
  } else {
    SDL_UpdateTexture(hw->tex, NULL, r->front, hw->tex_w * 4);
  }
  hw->seen = r->frame_seq;
}

/* One frame of the window: events, watchdog, the newest frame, a screenshot if asked. Returns 0 to
 * go on, 1 when the loop ends (quit, the runner finished, or it could not restart). */
static int window_frame(host_win *hw) {
  pump_events(hw->win, hw->r, hw->tex_w, hw->tex_h, &hw->quit, &hw->shot_pending, &hw->stuck, &hw->joy);
  if (watch_runner(hw) != 0) return 1;
  pthread_mutex_lock(&hw->r->mu);
  upload_frame(hw);
  const double sim_time = hw->r->sim_time;
  const int paused = hw->r->paused, finished = hw->r->finished;
  pthread_mutex_unlock(&hw->r->mu);
  SDL_SetRenderDrawColor(hw->ren, 0, 0, 0, 255);
  SDL_RenderClear(hw->ren);
  if (hw->tex) SDL_RenderCopy(hw->ren, hw->tex, NULL, NULL);
  if (hw->shot_pending && hw->tex) {
    take_screenshot(hw->ren, hw->opt, hw->r, hw->shots++, sim_time, paused);
    hw->shot_pending = 0;
  }
  SDL_RenderPresent(hw->ren);
  if (finished || hw->quit) return 1;
  SDL_Delay(8);
  return 0;
}

/* Asks the runner to quit and waits up to 2 s for it. 1 if it finished. */
static int stop_runner(runner *r) {
  pthread_mutex_lock(&r->mu);
  r->quit = 1;
  pthread_mutex_unlock(&r->mu);
  const double t0 = host_now();
  int finished = 0;
  while (host_now() - t0 < 2.0) {
    pthread_mutex_lock(&r->mu);
    finished = r->finished;
    pthread_mutex_unlock(&r->mu);
    if (finished) break;
    host_sleep(0.01);
  }
  return finished;
}

int host_run_window(const host_options *opt, const char *exe, const char *lua_dir) {
  host_win hw = {.opt = opt, .exe = exe, .lua_dir = lua_dir};
  const int rc = window_open(&hw);
  if (rc != 0) return rc;
  hw.r = start_runner(opt, exe, lua_dir, &hw.th);
  if (!hw.r) {
    fprintf(stderr, "loom: cannot start the simulation thread\n");
    window_close(&hw);
    return 1;
  }
  while (window_frame(&hw) == 0) {
  }
  if (!hw.r) { /* a restart failed: nothing to wait for */
    window_close(&hw);
    return 1;
  }
  const int finished = stop_runner(hw.r);
  window_close(&hw);
  if (!finished) {
    /* the runner is stuck in a callback: leave without waiting for it */
    fflush(stdout);
    fflush(stderr);
    _exit(0);
  }
  pthread_join(hw.th, NULL);
  runner *r = hw.r;
  const int code = r->exit_code;
  pthread_mutex_destroy(&r->mu);
  free(r->front);
  free(r);
  return code;
}
