/* core_par.c — a world's helper thread for two-way data-parallel loops (core.h: core_par_run).
 *
 * A loop is split into two parts by the caller; part 0 runs on the calling thread and part 1 on
 * the helper. The parts write disjoint outputs and each part's arithmetic does not depend on which
 * thread runs it, so the results are bit-identical with and without the helper (a world with
 * threads = 1 runs part 0 then part 1 inline).
 *
 * The parts of one step are short (tens to hundreds of microseconds), so waking a sleeping thread
 * for each would cost as much as it saves: the helper spins for a while after each part (a step's
 * next loop usually comes within that), then sleeps on a condition variable; the caller spins
 * while it waits for part 1, yielding the processor after a while (valgrind serialises threads).
 * Part 1 goes to whoever claims it first: when the helper has not started it by the time the
 * caller is through part 0 (its core is busy with another process), the caller runs it itself,
 * so a loaded machine costs no more than running inline. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "core/core.h"

enum {
  PAR_SPIN = 20000, /* helper: polls of the job counter before sleeping (about 0.5 ms) */
  PAR_YIELD = 2000  /* caller: polls of the done counter between yields (about 50 us) */
};

struct core_par {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  atomic_uint posted;  /* jobs posted */
  atomic_uint claimed; /* the last job whose part 1 someone took (the helper, or the caller) */
  atomic_uint done;    /* the last job whose part 1 the helper finished */
  atomic_int quit;
  core_par_fn fn;
  void *ctx;
};

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void *helper_main(void *arg) {
  core_par *p = arg;
  unsigned seen = 0;
  for (;;) {
    unsigned now = atomic_load_explicit(&p->posted, memory_order_acquire);
    for (int k = 0; now == seen && k < PAR_SPIN && !atomic_load_explicit(&p->quit, memory_order_relaxed); k++) {
      relax();
      now = atomic_load_explicit(&p->posted, memory_order_acquire);
    }
    if (now == seen) {
      pthread_mutex_lock(&p->mu);
      while ((now = atomic_load_explicit(&p->posted, memory_order_acquire)) == seen &&
             !atomic_load_explicit(&p->quit, memory_order_relaxed))
        pthread_cond_wait(&p->cv, &p->mu);
      pthread_mutex_unlock(&p->mu);
    }
    if (atomic_load_explicit(&p->quit, memory_order_acquire)) break;
    seen = now;
    unsigned expect = now - 1;
    if (!atomic_compare_exchange_strong_explicit(&p->claimed, &expect, now, memory_order_acq_rel, memory_order_acquire))
      continue; /* the caller took it */
    p->fn(p->ctx, 1);
    atomic_store_explicit(&p->done, seen, memory_order_release);
  }
  return NULL;
}

core_par *core_par_create(void) {
  core_par *p = core_calloc(1, sizeof *p);
  if (!p) return NULL;
  atomic_init(&p->posted, 0);
  atomic_init(&p->claimed, 0);
  atomic_init(&p->done, 0);
  atomic_init(&p->quit, 0);
  if (pthread_mutex_init(&p->mu, NULL) != 0) {
    core_free(p);
    return NULL;
  }
  if (pthread_cond_init(&p->cv, NULL) != 0) {
    pthread_mutex_destroy(&p->mu);
    core_free(p);
    return NULL;
  }
  if (pthread_create(&p->thread, NULL, helper_main, p) != 0) {
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    core_free(p);
    return NULL;
  }
  return p;
}

void core_par_destroy(core_par *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  atomic_store_explicit(&p->quit, 1, memory_order_release);
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  core_free(p);
}

void core_par_run(core_par *p, core_par_fn fn, void *ctx) {
  if (!p) {
    fn(ctx, 0);
    fn(ctx, 1);
    return;
  }
  p->fn = fn;
  p->ctx = ctx;
  pthread_mutex_lock(&p->mu);
  const unsigned job = atomic_load_explicit(&p->posted, memory_order_relaxed) + 1;
  atomic_store_explicit(&p->posted, job, memory_order_release);
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  fn(ctx, 0);
  unsigned expect = job - 1;
  if (atomic_compare_exchange_strong_explicit(&p->claimed, &expect, job, memory_order_acq_rel, memory_order_acquire)) {
    fn(ctx, 1); /* the helper has not started it: done here */
    return;
  }
  for (int k = 1; atomic_load_explicit(&p->done, memory_order_acquire) != job; k++) {
    relax();
    if (k % PAR_YIELD == 0) sched_yield();
  }
}

typedef struct rows_job {
  core_rows_fn fn;
  void *ctx;
  int n;
} rows_job;

static void rows_half(void *ctx, int part) {
  const rows_job *j = ctx;
  const int mid = j->n / 2;
  j->fn(j->ctx, part ? mid : 0, part ? j->n : mid, part);
}

void core_par_rows(core_par *p, int n, core_rows_fn fn, void *ctx) {
  rows_job j = {fn, ctx, n};
  core_par_run(p, rows_half, &j);
}
