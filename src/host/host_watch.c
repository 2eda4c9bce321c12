/* host_watch.c — polls the modification time, size and inode of the files a scene loaded. Polling
 * a few stat() calls every 50 ms is cheaper than it sounds and works on every file system,
 * including editors that save by renaming a new file over the old one. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "host.h"

static void probe(watch_entry *e) {
  struct stat st;
  if (stat(e->path, &st) == 0) {
    e->exists = 1;
    e->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    e->size = (long long)st.st_size;
    e->inode = (long long)st.st_ino;
  } else {
    e->exists = 0;
    e->mtime_ns = e->size = e->inode = 0;
  }
}

void watch_set(runner *r, const char *const *paths, int n) {
  if (n > HOST_MAX_WATCH) n = HOST_MAX_WATCH;
  r->nwatch = n;
  for (int i = 0; i < n; i++) {
    snprintf(r->watch[i].path, sizeof r->watch[i].path, "%s", paths[i]);
    probe(&r->watch[i]);
  }
  pthread_mutex_lock(&r->mu);
  r->nwatch_copy = n;
  for (int i = 0; i < n; i++) snprintf(r->watch_copy[i], sizeof r->watch_copy[i], "%s", paths[i]);
  pthread_mutex_unlock(&r->mu);
}

int watch_changed(runner *r) {
  int changed = 0;
  for (int i = 0; i < r->nwatch; i++) {
    watch_entry old = r->watch[i];
    probe(&r->watch[i]);
    watch_entry *e = &r->watch[i];
    if (e->exists != old.exists || e->mtime_ns != old.mtime_ns || e->size != old.size || e->inode != old.inode) {
      /* a file being replaced may briefly not exist: wait for it to come back */
      if (e->exists) changed = 1;
    }
  }
  return changed;
}
