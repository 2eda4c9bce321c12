/* host_lua.c — creating Lua states for the host and calling into the Lua runtime safely: every
 * call goes through lua_pcall with a message handler, so a Lua error never unwinds through C. */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host.h"

double host_now(void) { return loom_clock(); }

void host_sleep(double seconds) {
  if (seconds <= 0) return;
  struct timespec ts;
  ts.tv_sec = (time_t)seconds;
  ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

int host_mkdir_p(const char *path, char *err, size_t cap) {
  char buf[PATH_MAX];
  if (!path || !*path) return 0;
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
    snprintf(err, cap, "cannot create directory '%s' (path too long)", path);
    return -1;
  }
  /* mkdir -p: create each missing component in turn; an existing directory is fine, an existing
   * file in the way is not */
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == 0) {
      char saved = *p;
      *p = 0;
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        snprintf(err, cap, "cannot create directory '%s' (%s)", buf, strerror(errno));
        return -1;
      }
      struct stat st;
      if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, cap, "cannot create directory '%s' (%s is not a directory)", path, buf);
        return -1;
      }
      *p = saved;
      if (saved == 0) break;
      while (p[1] == '/') p++;
    }
  }
  if (access(buf, W_OK) != 0) {
    snprintf(err, cap, "cannot write into directory '%s' (%s)", path, strerror(errno));
    return -1;
  }
  return 0;
}

static int file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

const char *host_find_lua_dir(const char *exe) {
  static char found[PATH_MAX];
  const char *env = getenv("LOOM_LUA_DIR");
  char probe[PATH_MAX + 64];
  if (env && *env) {
    snprintf(probe, sizeof probe, "%s/loom/init.lua", env);
    if (file_exists(probe)) {
      snprintf(found, sizeof found, "%s", env);
      return found;
    }
  }
  char buf[PATH_MAX];
  snprintf(buf, sizeof buf, "%s", exe);
  const char *dir = dirname(buf);
  const char *rel[] = {"../lua", "../share/loom/lua", "../../lua", "lua"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    snprintf(probe, sizeof probe, "%s/%s/loom/init.lua", dir, rel[i]);
    if (file_exists(probe)) {
      char tmp[PATH_MAX + 32];
      snprintf(tmp, sizeof tmp, "%s/%s", dir, rel[i]);
      if (!realpath(tmp, found)) {
        size_t n = strlen(tmp);
        if (n >= sizeof found) n = sizeof found - 1;
        memcpy(found, tmp, n);
        found[n] = 0;
      }
      return found;
    }
  }
  return NULL;
}

/* ---- the loom.host module ---------------------------------------------------------------------- */

static runner *runner_of(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "loom.runner");
  runner *r = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return r;
}

/* host.busy(label | nil): marks entry into / exit from a user callback for the watchdog. */
static int l_busy(lua_State *L) {
  runner *r = runner_of(L);
  if (!r) return 0;
  pthread_mutex_lock(&r->mu);
  if (lua_isstring(L, 1)) {
    r->busy = 1;
    r->busy_since = host_now();
    snprintf(r->busy_label, sizeof r->busy_label, "%s", lua_tostring(L, 1));
  } else {
    r->busy = 0;
    if (r->hook_set) {
      lua_sethook(L, NULL, 0, 0);
      r->hook_set = 0;
    }
  }
  pthread_mutex_unlock(&r->mu);
  return 0;
}

static int l_sleep(lua_State *L) {
  host_sleep(luaL_checknumber(L, 1));
  return 0;
}

static int l_isatty(lua_State *L) {
  lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
  return 1;
}

/* host.mkdir_p(dir) → true, or nil and a message naming the component that could not be made. */
static int l_mkdir_p(lua_State *L) {
  char err[PATH_MAX + 128];
  if (host_mkdir_p(luaL_checkstring(L, 1), err, sizeof err) != 0) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* host.realpath(path) → the absolute path, or the path unchanged when it cannot be resolved. */
static int l_realpath(lua_State *L) {
  const char *p = luaL_checkstring(L, 1);
  char buf[PATH_MAX];
  lua_pushstring(L, realpath(p, buf) ? buf : p);
  return 1;
}

static void watchdog_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  runner *r = runner_of(L);
  char label[160] = "a callback";
  if (r) {
    pthread_mutex_lock(&r->mu);
    snprintf(label, sizeof label, "%s", r->busy_label);
    r->hook_set = 0;
    pthread_mutex_unlock(&r->mu);
  }
  luaL_error(L, "%s did not return within %.0f s (stopped by the watchdog)", label, HOST_WATCHDOG_SECONDS);
}

void host_interrupt(runner *r) {
  /* lua_sethook is safe to call asynchronously (LuaJIT and PUC Lua both allow it from a signal
   * handler); it only takes effect in interpreted code, JIT-compiled loops do not check hooks. */
  pthread_mutex_lock(&r->mu);
  if (r->busy && !r->hook_set && r->L) {
    lua_sethook(r->L, watchdog_hook, LUA_MASKCOUNT, 1);
    r->hook_set = 1;
  }
  pthread_mutex_unlock(&r->mu);
}

static int open_host(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, l_busy);
  lua_setfield(L, -2, "busy");
  lua_pushcfunction(L, l_sleep);
  lua_setfield(L, -2, "sleep");
  lua_pushcfunction(L, l_isatty);
  lua_setfield(L, -2, "isatty");
  lua_pushcfunction(L, l_mkdir_p);
  lua_setfield(L, -2, "mkdir_p");
  lua_pushcfunction(L, l_realpath);
  lua_setfield(L, -2, "realpath");
  lua_getfield(L, LUA_REGISTRYINDEX, "loom.host.mode");
  lua_setfield(L, -2, "mode");
  lua_getfield(L, LUA_REGISTRYINDEX, "loom.host.exe");
  lua_setfield(L, -2, "executable");
  lua_getfield(L, LUA_REGISTRYINDEX, "loom.host.lua_dir");
  lua_setfield(L, -2, "lua_dir");
  return 1;
}

lua_State *host_new_state(runner *r, const char *mode, const char *scene_path) {
  lua_State *L = luaL_newstate();
  if (!L) return NULL;
  luaL_openlibs(L);
  lua_pushlightuserdata(L, r);
  lua_setfield(L, LUA_REGISTRYINDEX, "loom.runner");
  lua_pushstring(L, mode);
  lua_setfield(L, LUA_REGISTRYINDEX, "loom.host.mode");
  const char *exe = r ? r->exe : NULL;
  const char *lua_dir = r ? r->lua_dir : NULL;
  lua_pushstring(L, exe ? exe : "loom");
  lua_setfield(L, LUA_REGISTRYINDEX, "loom.host.exe");
  lua_pushstring(L, lua_dir ? lua_dir : "");
  lua_setfield(L, LUA_REGISTRYINDEX, "loom.host.lua_dir");

  /* package.path: Loom's modules, then the scene's own directory, then the defaults */
  char scene_dir[PATH_MAX] = ".";
  if (scene_path) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", scene_path);
    snprintf(scene_dir, sizeof scene_dir, "%s", dirname(tmp));
  }
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  const char *def = lua_tostring(L, -1);
  char path[3 * PATH_MAX + 256];
  snprintf(path, sizeof path, "%s/?.lua;%s/?/init.lua;%s/?.lua;%s", lua_dir ? lua_dir : ".", lua_dir ? lua_dir : ".",
           scene_dir, def ? def : "./?.lua");
  lua_pop(L, 1);
  lua_pushstring(L, path);
  lua_setfield(L, -2, "path");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, open_host);
  lua_setfield(L, -2, "loom.host");
  lua_pop(L, 2);
  return L;
}

static int message_handler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  if (getenv("LOOM_TRACEBACK")) {
    /* full traceback on request; by default users get the one-line message */
    lua_getglobal(L, "debug");
    lua_getfield(L, -1, "traceback");
    lua_pushstring(L, msg);
    lua_pushinteger(L, 2);
    lua_call(L, 2, 1);
    return 1;
  }
  lua_pushstring(L, msg);
  return 1;
}

int host_call_module(lua_State *L, const char *module, const char *fn, int nargs, int nres, char *err, size_t errcap) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base + 1);
  /* look up module[fn] under protection too: require can fail */
  lua_getglobal(L, "require");
  lua_pushstring(L, module);
  if (lua_pcall(L, 1, 1, base + 1) != 0) {
    snprintf(err, errcap, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
    lua_settop(L, base);
    return -1;
  }
  lua_getfield(L, -1, fn);
  lua_remove(L, -2);
  lua_insert(L, base + 2);
  if (lua_pcall(L, nargs, nres, base + 1) != 0) {
    snprintf(err, errcap, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
    lua_settop(L, base);
    return -1;
  }
  lua_remove(L, base + 1);
  return 0;
}

int host_call_app(lua_State *L, const char *fn, int nargs, int nres, char *err, size_t errcap) {
  return host_call_module(L, "loom.app", fn, nargs, nres, err, errcap);
}
