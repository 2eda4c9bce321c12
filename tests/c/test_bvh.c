/* test_bvh.c — bounding-volume hierarchy: box and segment queries return exactly the brute-force
 * sets (random boxes, n = 0, 1, 2, 1000, heavy duplication), refit, early exit, zero allocation
 * in queries, determinism, structural invariants (depth bound, leaf sizes, containment), nearest
 * triangle against brute force, and input validation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_rng.h"
#include "bvh/bvh.h"
#include "geom/geom.h"


/* Box families: random sizes; few distinct values (many exact duplicates); all identical. */
static void random_boxes(rng *r, int kind, int n, vec3 *lo, vec3 *hi) {
  for (int i = 0; i < n; i++) {
    vec3 c, e;
    if (kind == 1) {
      int k = rng_int(r, 7);
      c = v3(k * 0.5 - 1.5, (k % 3) * 0.25, 0);
      e = v3(0.1, 0.2, 0.3);
    } else if (kind == 2) {
      c = v3(0.25, -0.5, 1);
      e = v3(0.1, 0.1, 0.1);
    } else {
      c = rng_vec(r, -2, 2);
      e = v3(rng_range(r, 0, 0.3), rng_range(r, 0, 0.3), rng_range(r, 0, 0.3));
      if (i % 10 == 0) e = v3(0, 0, 0); /* points */
    }
    lo[i] = v3_sub(c, e);
    hi[i] = v3_add(c, e);
  }
}

typedef struct hits {
  unsigned char *seen;
  int count, dup, stop_after;
} hits;

static int collect(int item, void *ctx) {
  hits *h = ctx;
  if (h->seen[item]) h->dup++;
  h->seen[item] = 1;
  h->count++;
  return h->stop_after > 0 && h->count >= h->stop_after ? 7 : 0;
}

/* Compares one box query and one segment query with the brute-force sets. */
static void check_queries(const bvh *t, const vec3 *lo, const vec3 *hi, int n, rng *r, unsigned char *seen) {
  for (int q = 0; q < 50; q++) {
    vec3 c = rng_vec(r, -2.5, 2.5), e = v3(rng_range(r, 0, 1), rng_range(r, 0, 1), rng_range(r, 0, 1));
    if (q % 5 == 0) e = v3(0, 0, 0);
    if (q % 7 == 0 && n > 0) { /* query exactly touching an item box */
      int k = rng_int(r, n);
      c = v3(hi[k].x + 0.5, (lo[k].y + hi[k].y) / 2, (lo[k].z + hi[k].z) / 2);
      e = v3(0.5, 0.01, 0.01);
    }
    vec3 qlo = v3_sub(c, e), qhi = v3_add(c, e);
    memset(seen, 0, (size_t)(n > 0 ? n : 1));
    hits h = {seen, 0, 0, 0};
    CHECK_EQ_INT(bvh_query_box(t, qlo, qhi, collect, &h), 0);
    int want = 0;
    for (int i = 0; i < n; i++) {
      int ov = bvh_box_overlap(lo[i], hi[i], qlo, qhi);
      want += ov;
      if (ov != seen[i])
        harness_fail(__FILE__, __LINE__, "box query: item %d reported %d, brute force %d", i, seen[i], ov);
    }
    CHECK_EQ_INT(h.count, want);
    CHECK_EQ_INT(h.dup, 0);

    vec3 p0 = rng_vec(r, -3, 3), p1 = rng_vec(r, -3, 3);
    if (q % 4 == 1) p1 = v3(p0.x, p0.y, p1.z); /* axis-parallel: zero direction components */
    if (q % 4 == 2) p1 = p0;                   /* a point */
    if (q % 6 == 3 && n > 0) {                 /* through an item box corner exactly */
      int k = rng_int(r, n);
      p0 = v3_sub(lo[k], v3(1, 0, 0));
      p1 = v3_add(lo[k], v3(1, 0, 0));
    }
    memset(seen, 0, (size_t)(n > 0 ? n : 1));
    hits g = {seen, 0, 0, 0};
    CHECK_EQ_INT(bvh_query_segment(t, p0, p1, collect, &g), 0);
    want = 0;
    for (int i = 0; i < n; i++) {
      int ov = bvh_segment_box(p0, p1, lo[i], hi[i]);
      want += ov;
      if (ov != seen[i])
        harness_fail(__FILE__, __LINE__, "segment query: item %d reported %d, brute force %d", i, seen[i], ov);
    }
    CHECK_EQ_INT(g.count, want);
    CHECK_EQ_INT(g.dup, 0);
  }
}

/* Every item exactly once, leaves within leaf_size, boxes contain children and items, left child
 * follows its parent, depth <= ceil(log2 n). Returns the depth. */
static int check_structure(const bvh *t, const vec3 *lo, const vec3 *hi, int n, int leaf_size) {
  if (n == 0) {
    CHECK_EQ_INT(t->node_count, 0);
    return 0;
  }
  unsigned char *seen = calloc((size_t)n, 1);
  int depth_of[4096] = {0}, max_depth = 0, leaves = 0;
  CHECK(t->node_count <= 2 * n - 1 && t->node_count < 4096);
  CHECK_EQ_INT(t->item_count, n);
  for (int id = 0; id < t->node_count; id++) {
    const bvh_node *nd = &t->nodes[id];
    if (depth_of[id] > max_depth) max_depth = depth_of[id];
    if (nd->left < 0) {
      leaves++;
      CHECK(nd->count >= 1 && nd->count <= leaf_size);
      for (int i = nd->right; i < nd->right + nd->count; i++) {
        int it = t->items[i];
        CHECK(it >= 0 && it < n && !seen[it]);
        seen[it] = 1;
        CHECK(t->item_lo[i].x == lo[it].x && t->item_hi[i].z == hi[it].z);
        CHECK(nd->lo.x <= lo[it].x && nd->lo.y <= lo[it].y && nd->lo.z <= lo[it].z);
        CHECK(nd->hi.x >= hi[it].x && nd->hi.y >= hi[it].y && nd->hi.z >= hi[it].z);
      }
    } else {
      CHECK_EQ_INT(nd->left, id + 1);
      CHECK(nd->right > nd->left && nd->right < t->node_count && nd->count == 0);
      for (int c = 0; c < 2; c++) {
        const bvh_node *ch = &t->nodes[c ? nd->right : nd->left];
        CHECK(nd->lo.x <= ch->lo.x && nd->lo.y <= ch->lo.y && nd->lo.z <= ch->lo.z);
        CHECK(nd->hi.x >= ch->hi.x && nd->hi.y >= ch->hi.y && nd->hi.z >= ch->hi.z);
        depth_of[c ? nd->right : nd->left] = depth_of[id] + 1;
      }
    }
  }
  for (int i = 0; i < n; i++) CHECK(seen[i]);
  CHECK_EQ_INT(t->node_count, 2 * leaves - 1);
  int bound = 0;
  while ((1 << bound) < n) bound++;
  CHECK_MSG(max_depth <= bound, "depth %d > ceil(log2 %d) = %d", max_depth, n, bound);
  free(seen);
  return max_depth;
}

TEST(bvh_queries_match_brute_force) {
  static vec3 lo[1000], hi[1000];
  static unsigned char seen[1000];
  rng r = {21};
  const int sizes[] = {0, 1, 2, 3, 17, 1000};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    int n = sizes[si];
    for (int kind = 0; kind < 3; kind++) {
      for (int leaf = 1; leaf <= 8; leaf *= 2) {
        random_boxes(&r, kind, n, lo, hi);
        bvh t;
        CHECK_EQ_INT(bvh_build(&t, lo, hi, n, leaf), 0);
        check_structure(&t, lo, hi, n, leaf);
        check_queries(&t, lo, hi, n, &r, seen);
        bvh_free(&t);
      }
    }
  }
}

TEST(bvh_refit_after_motion) {
  static vec3 lo[1000], hi[1000];
  static unsigned char seen[1000];
  rng r = {22};
  random_boxes(&r, 0, 1000, lo, hi);
  bvh t;
  CHECK_EQ_INT(bvh_build(&t, lo, hi, 1000, 4), 0);
  for (int step = 0; step < 3; step++) {
    /* move every box: small drift for most, big jumps for some, boxes change size */
    for (int i = 0; i < 1000; i++) {
      vec3 d = i % 13 == 0 ? rng_vec(&r, -2, 2) : rng_vec(&r, -0.1, 0.1);
      lo[i] = v3_add(lo[i], d);
      hi[i] = v3_add(hi[i], v3_add(d, v3(rng_range(&r, 0, 0.05), 0, 0)));
    }
    bvh_refit(&t, lo, hi);
    check_structure(&t, lo, hi, 1000, 4);
    check_queries(&t, lo, hi, 1000, &r, seen);
  }
  bvh_free(&t);
}

TEST(bvh_early_exit_and_no_allocation) {
  static vec3 lo[1000], hi[1000];
  static unsigned char seen[1000];
  rng r = {23};
  random_boxes(&r, 0, 1000, lo, hi);
  bvh t;
  CHECK_EQ_INT(bvh_build(&t, lo, hi, 1000, 4), 0);
  /* a query box covering everything: stop after exactly k callbacks, return the callback's value */
  for (int k = 1; k <= 5; k++) {
    memset(seen, 0, sizeof seen);
    hits h = {seen, 0, 0, k};
    CHECK_EQ_INT(bvh_query_box(&t, v3(-9, -9, -9), v3(9, 9, 9), collect, &h), 7);
    CHECK_EQ_INT(h.count, k);
    memset(seen, 0, sizeof seen);
    hits g = {seen, 0, 0, k};
    CHECK_EQ_INT(bvh_query_segment(&t, v3(-9, 0, 0), v3(9, 0.1, 0.2), collect, &g), 7);
    CHECK_EQ_INT(g.count, k);
  }
  long before = harness_alloc_count();
  int total = 0;
  for (int q = 0; q < 2000; q++) {
    vec3 c = rng_vec(&r, -2, 2);
    memset(seen, 0, sizeof seen);
    hits h = {seen, 0, 0, 0};
    bvh_query_box(&t, v3_sub(c, v3(0.3, 0.3, 0.3)), v3_add(c, v3(0.3, 0.3, 0.3)), collect, &h);
    bvh_query_segment(&t, c, rng_vec(&r, -2, 2), collect, &h);
    total += h.count;
  }
  bvh_refit(&t, lo, hi);
  CHECK_EQ_INT(harness_alloc_count(), before);
  CHECK(total > 0);
  /* empty tree, NULL tree, non-finite segment */
  hits h = {seen, 0, 0, 0};
  CHECK_EQ_INT(bvh_query_segment(&t, v3(NAN, 0, 0), v3(1, 1, 1), collect, &h), 0);
  CHECK_EQ_INT(bvh_query_segment(&t, v3(0, 0, 0), v3(INFINITY, 1, 1), collect, &h), 0);
  CHECK_EQ_INT(bvh_query_box(NULL, v3(0, 0, 0), v3(1, 1, 1), collect, &h), 0);
  CHECK_EQ_INT(h.count, 0);
  bvh_free(&t);
  bvh_free(&t); /* freeing twice is harmless: the struct was cleared */
}

TEST(bvh_deterministic_and_depth_bounded) {
  static vec3 lo[1000], hi[1000];
  rng r = {24};
  for (int kind = 0; kind < 3; kind++) {
    random_boxes(&r, kind, 1000, lo, hi);
    bvh a, b;
    CHECK_EQ_INT(bvh_build(&a, lo, hi, 1000, 2), 0);
    CHECK_EQ_INT(bvh_build(&b, lo, hi, 1000, 2), 0);
    CHECK_EQ_INT(a.node_count, b.node_count);
    CHECK(memcmp(a.nodes, b.nodes, sizeof(bvh_node) * (size_t)a.node_count) == 0);
    CHECK(memcmp(a.items, b.items, sizeof(int32_t) * 1000) == 0);
    int depth = check_structure(&a, lo, hi, 1000, 2);
    CHECK(depth <= 10 && depth < BVH_MAX_DEPTH);
    bvh_free(&a);
    bvh_free(&b);
  }
  /* identical boxes, leaf size 1: a perfectly balanced split by index, no runaway recursion */
  for (int i = 0; i < 1000; i++) {
    lo[i] = v3(1, 1, 1);
    hi[i] = v3(1, 1, 1);
  }
  bvh t;
  CHECK_EQ_INT(bvh_build(&t, lo, hi, 1000, 1), 0);
  CHECK_EQ_INT(t.node_count, 1999);
  CHECK_EQ_INT(check_structure(&t, lo, hi, 1000, 1), 10);
  for (int i = 0; i < 1000; i++) CHECK_EQ_INT(t.items[i], i); /* ties broken by index */
  bvh_free(&t);
}

TEST(bvh_rejects_bad_input) {
  vec3 lo[2] = {{0, 0, 0}, {NAN, 0, 0}}, hi[2] = {{1, 1, 1}, {1, 1, 1}};
  bvh t;
  CHECK_EQ_INT(bvh_build(&t, lo, hi, 2, 4), -1);
  CHECK_STR_CONTAINS(loom_last_error(), "box 1");
  CHECK(t.nodes == NULL && t.node_count == 0);
  CHECK_EQ_INT(bvh_build(&t, lo, hi, 1, 0), -1);
  CHECK_STR_CONTAINS(loom_last_error(), "leaf_size");
  CHECK_EQ_INT(bvh_build(&t, lo, hi, -1, 4), -1);
  CHECK_EQ_INT(bvh_build(&t, NULL, NULL, 3, 4), -1);
  CHECK_EQ_INT(bvh_build(&t, NULL, NULL, 0, 4), 0);
  CHECK_EQ_INT(t.node_count, 0);
  bvh_free(&t);
}

TEST(bvh_segment_box_and_overlap_predicates) {
  vec3 lo = v3(0, 0, 0), hi = v3(1, 1, 1);
  CHECK(bvh_segment_box(v3(-1, 0.5, 0.5), v3(2, 0.5, 0.5), lo, hi));     /* through */
  CHECK(bvh_segment_box(v3(0.2, 0.5, 0.5), v3(0.3, 0.5, 0.5), lo, hi));  /* inside */
  CHECK(!bvh_segment_box(v3(-1, 0.5, 0.5), v3(-0.1, 0.5, 0.5), lo, hi)); /* short */
  CHECK(bvh_segment_box(v3(-1, 1, 0.5), v3(2, 1, 0.5), lo, hi));         /* along a face: closed */
  CHECK(!bvh_segment_box(v3(-1, 1.01, 0.5), v3(2, 1.01, 0.5), lo, hi));
  CHECK(bvh_segment_box(v3(-1, -1, 0.5), v3(0, 0, 0.5), lo, hi));      /* ends at an edge */
  CHECK(!bvh_segment_box(v3(-1, -0.9, 0.5), v3(0.5, 2, 0.5), lo, hi)); /* passes the corner */
  CHECK(!bvh_segment_box(v3(2, 0, 0), v3(0, 2, 0), v3(0, 0, 0), v3(0.9, 0.9, 1)));
  CHECK(bvh_segment_box(v3(-1, 0, 0.5), v3(1, 2, 0.5), lo, hi)); /* grazes the corner (0,1) */
  CHECK(bvh_segment_box(v3(1, 2, 0.5), v3(-1, 0, 0.5), lo, hi));
  CHECK(!bvh_segment_box(v3(-1, 0.01, 0.5), v3(1, 2.01, 0.5), lo, hi));
  CHECK(bvh_segment_box(v3(-2, 0.5, 0.5), v3(0, 0.5, 0.5), lo, hi));    /* ends on a face */
  CHECK(bvh_segment_box(v3(1, 0.5, 0.5), v3(3, 0.5, 0.5), lo, hi));     /* starts on a face */
  CHECK(bvh_segment_box(v3(0.5, 0.5, 0.5), v3(0.5, 0.5, 0.5), lo, hi)); /* a point */
  CHECK(!bvh_segment_box(v3(NAN, 0.5, 0.5), v3(0.5, 0.5, 0.5), lo, hi));
  CHECK(bvh_box_overlap(lo, hi, v3(1, 1, 1), v3(2, 2, 2))); /* touching corner counts */
  CHECK(!bvh_box_overlap(lo, hi, v3(1, 1, 1.0000001), v3(2, 2, 2)));
  /* against dense sampling of the segment */
  rng r = {25};
  for (int it = 0; it < 20000; it++) {
    vec3 p0 = rng_vec(&r, -2, 3), p1 = rng_vec(&r, -2, 3);
    int sampled = 0;
    for (int k = 0; k <= 200 && !sampled; k++) {
      vec3 p = v3_lerp(p0, p1, k / 200.0);
      sampled = p.x >= 0 && p.x <= 1 && p.y >= 0 && p.y <= 1 && p.z >= 0 && p.z <= 1;
    }
    int got = bvh_segment_box(p0, p1, lo, hi);
    if (sampled) CHECK_MSG(got, "it %d: a sample lies in the box but the slab test misses", it);
    /* shrink the box by the sample spacing: if the segment meets the shrunk box, samples would find it */
    double h = v3_dist(p0, p1) / 200.0;
    if (bvh_segment_box(p0, p1, v3(h, h, h), v3(1 - h, 1 - h, 1 - h))) CHECK(sampled);
  }
}

/* Nearest triangle of a random soup and of a closed cube mesh against brute force. */
TEST(bvh_closest_triangle_matches_brute_force) {
  static vec3 v[3000], lo[1000], hi[1000];
  static int32_t tri[3000];
  rng r = {26};
  int nt = 1000;
  for (int i = 0; i < nt; i++) {
    vec3 c = rng_vec(&r, -2, 2);
    for (int k = 0; k < 3; k++) {
      v[3 * i + k] = v3_add(c, rng_vec(&r, -0.2, 0.2));
      tri[3 * i + k] = 3 * i + k;
    }
    lo[i] = v3_min(v[3 * i], v3_min(v[3 * i + 1], v[3 * i + 2]));
    hi[i] = v3_max(v[3 * i], v3_max(v[3 * i + 1], v[3 * i + 2]));
  }
  bvh t;
  CHECK_EQ_INT(bvh_build(&t, lo, hi, nt, 4), 0);
  long before = harness_alloc_count();
  for (int q = 0; q < 500; q++) {
    vec3 p = rng_vec(&r, -3, 3);
    double best = INFINITY;
    int bi = -1;
    for (int i = 0; i < nt; i++) {
      double d = v3_dist(p, geom_closest_on_triangle(p, v[3 * i], v[3 * i + 1], v[3 * i + 2], NULL));
      if (d < best) {
        best = d;
        bi = i;
      }
    }
    double d, w[3];
    vec3 cq;
    int got = bvh_closest_triangle(&t, v, tri, p, INFINITY, &d, &cq, w, NULL);
    CHECK_EQ_INT(got, bi);
    CHECK_NEAR(d, best, 1e-15);
    CHECK_NEAR(v3_dist(cq, p), d, 1e-14);
    CHECK_NEAR(w[0] + w[1] + w[2], 1, 1e-12);
    /* limited search radius */
    int lim = bvh_closest_triangle(&t, v, tri, p, best * 0.99, &d, NULL, NULL, NULL);
    CHECK_EQ_INT(lim, -1);
    CHECK(isinf(d));
    CHECK_EQ_INT(bvh_closest_triangle(&t, v, tri, p, best * 1.01, NULL, NULL, NULL, NULL), bi);
  }
  CHECK_EQ_INT(harness_alloc_count(), before);
  bvh_free(&t);
  bvh empty;
  CHECK_EQ_INT(bvh_build(&empty, NULL, NULL, 0, 4), 0);
  CHECK_EQ_INT(bvh_closest_triangle(&empty, v, tri, v3(0, 0, 0), INFINITY, NULL, NULL, NULL, NULL), -1);
}

/* The scan of every triangle (the brute-force reference of the obstacle queries) gives the tree's
 * answer, and the counters say what each tested: the scan all nt, the tree far fewer on a fine
 * mesh (a 10 000-triangle soup: queries near the surface, where the obstacle passes ask). */
TEST(bvh_closest_triangle_scan_and_test_counts) {
  enum { NT = 10000 };
  static vec3 v[3 * NT], lo[NT], hi[NT];
  static int32_t tri[3 * NT];
  rng r = {27};
  for (int i = 0; i < NT; i++) {
    vec3 c = rng_vec(&r, -1, 1);
    for (int k = 0; k < 3; k++) {
      v[3 * i + k] = v3_add(c, rng_vec(&r, -0.02, 0.02));
      tri[3 * i + k] = 3 * i + k;
    }
    lo[i] = v3_min(v[3 * i], v3_min(v[3 * i + 1], v[3 * i + 2]));
    hi[i] = v3_max(v[3 * i], v3_max(v[3 * i + 1], v[3 * i + 2]));
  }
  bvh t;
  CHECK_EQ_INT(bvh_build(&t, lo, hi, NT, 4), 0);
  double tree_tests = 0, scan_tests = 0;
  for (int q = 0; q < 200; q++) {
    /* a point near a triangle's corner, within a search radius as the vertex pass uses */
    const int near = rng_int(&r, NT);
    const vec3 p = v3_add(v[3 * near], rng_vec(&r, -0.01, 0.01));
    for (int lim = 0; lim < 2; lim++) {
      const double max_dist = lim ? 0.01 : INFINITY;
      double d0, d1, w0[3], w1[3];
      vec3 q0, q1;
      const double before = tree_tests;
      int a = bvh_closest_triangle(&t, v, tri, p, max_dist, &d0, &q0, w0, &tree_tests);
      int b = bvh_closest_triangle_scan(NT, v, tri, p, max_dist, &d1, &q1, w1, &scan_tests);
      CHECK_EQ_INT(a, b);
      CHECK(d0 == d1 || (isinf(d0) && isinf(d1)));
      CHECK(v3_dist(q0, q1) == 0);
      CHECK(w0[0] == w1[0] && w0[1] == w1[1] && w0[2] == w1[2]);
      if (!lim) CHECK(tree_tests > before); /* at least the leaf holding the nearest */
    }
  }
  CHECK_EQ_INT((int)scan_tests, 400 * NT);
  CHECK_MSG(scan_tests >= 100 * tree_tests, "tree %.0f tests, scan %.0f", tree_tests, scan_tests);
  /* a point farther than max_dist from everything: nothing, and the scan still counts nt */
  double none = 0;
  CHECK_EQ_INT(bvh_closest_triangle_scan(NT, v, tri, v3(5, 5, 5), 0.1, NULL, NULL, NULL, &none), -1);
  CHECK_EQ_INT((int)none, NT);
  bvh_free(&t);
}

/* Pair and self traversal record each reported pair in an n_a x n_b matrix of counts. */
typedef struct pair_hits {
  unsigned char *seen; /* na x nb */
  int nb, count, dup, misordered, stop_after;
} pair_hits;

static int collect_pair(int i, int j, void *ctx) {
  pair_hits *h = ctx;
  unsigned char *s = &h->seen[(size_t)i * (size_t)h->nb + (size_t)j];
  if (*s) h->dup++;
  *s = 1;
  h->count++;
  return h->stop_after > 0 && h->count >= h->stop_after ? 9 : 0;
}

static int collect_self(int i, int j, void *ctx) {
  pair_hits *h = ctx;
  if (i >= j) h->misordered++;
  return collect_pair(i, j, ctx);
}

/* Pairs (i, j) whose boxes overlap but are not marked in seen, or marked but do not overlap
 * (self: i < j only). */
static int overlap_mismatches(const unsigned char *seen, int stride, const vec3 *alo, const vec3 *ahi, int na,
                              const vec3 *blo, const vec3 *bhi, int nb, int self) {
  int bad = 0;
  for (int i = 0; i < na; i++)
    for (int j = self ? i + 1 : 0; j < nb; j++)
      bad += bvh_box_overlap(alo[i], ahi[i], blo[j], bhi[j]) != seen[(size_t)i * (size_t)stride + (size_t)j];
  return bad;
}

TEST(bvh_pair_and_self_traversal_match_brute_force) {
  enum { NA = 600, NB = 450 };
  static vec3 alo[NA], ahi[NA], blo[NB], bhi[NB];
  static unsigned char seen[NA * NA];
  rng r = {31};
  for (int kind = 0; kind < 3; kind++) {
    int sizes[][2] = {{0, 5}, {1, 1}, {2, 3}, {NA, NB}, {NA, 1}, {7, NB}};
    for (int si = 0; si < 6; si++) {
      int na = sizes[si][0], nb = sizes[si][1];
      random_boxes(&r, kind, na, alo, ahi);
      random_boxes(&r, kind == 2 ? 2 : 0, nb, blo, bhi);
      for (int leaf = 1; leaf <= 8; leaf *= 2) {
        bvh a, b;
        CHECK_EQ_INT(bvh_build(&a, alo, ahi, na, leaf), 0);
        CHECK_EQ_INT(bvh_build(&b, blo, bhi, nb, leaf + 1), 0);
        /* a against b */
        memset(seen, 0, sizeof seen);
        pair_hits h = {seen, nb > 0 ? nb : 1, 0, 0, 0, 0};
        CHECK_EQ_INT(bvh_query_pairs(&a, &b, collect_pair, &h), 0);
        int expect = 0, missing = 0, extra = 0;
        for (int i = 0; i < na; i++)
          for (int j = 0; j < nb; j++) {
            int ov = bvh_box_overlap(alo[i], ahi[i], blo[j], bhi[j]);
            expect += ov;
            int got = seen[(size_t)i * (size_t)h.nb + (size_t)j];
            missing += ov && !got;
            extra += !ov && got;
          }
        CHECK_EQ_INT(h.dup, 0);
        CHECK_EQ_INT(missing, 0);
        CHECK_EQ_INT(extra, 0);
        CHECK_EQ_INT(h.count, expect);
        /* the same pairs in two parts (for two threads): each once, in one part or the other */
        memset(seen, 0, sizeof seen);
        pair_hits h2 = {seen, h.nb, 0, 0, 0, 0};
        CHECK_EQ_INT(bvh_query_pairs_part(&a, &b, 0, collect_pair, &h2), 0);
        CHECK_EQ_INT(bvh_query_pairs_part(&a, &b, 1, collect_pair, &h2), 0);
        CHECK_EQ_INT(h2.dup, 0);
        CHECK_EQ_INT(h2.count, expect);
        CHECK_EQ_INT(overlap_mismatches(seen, h.nb, alo, ahi, na, blo, bhi, nb, 0), 0);
        /* a with itself: unordered pairs i < j, each once */
        memset(seen, 0, sizeof seen);
        pair_hits s = {seen, na > 0 ? na : 1, 0, 0, 0, 0};
        CHECK_EQ_INT(bvh_query_self(&a, collect_self, &s), 0);
        expect = missing = extra = 0;
        for (int i = 0; i < na; i++)
          for (int j = i + 1; j < na; j++) {
            int ov = bvh_box_overlap(alo[i], ahi[i], alo[j], ahi[j]);
            expect += ov;
            int got = seen[(size_t)i * (size_t)s.nb + (size_t)j];
            missing += ov && !got;
            extra += !ov && got;
          }
        CHECK_EQ_INT(s.misordered, 0);
        CHECK_EQ_INT(s.dup, 0);
        CHECK_EQ_INT(missing, 0);
        CHECK_EQ_INT(extra, 0);
        CHECK_EQ_INT(s.count, expect);
        memset(seen, 0, sizeof seen);
        pair_hits s2 = {seen, s.nb, 0, 0, 0, 0};
        CHECK_EQ_INT(bvh_query_self_part(&a, 0, collect_self, &s2), 0);
        int first = s2.count;
        CHECK_EQ_INT(bvh_query_self_part(&a, 1, collect_self, &s2), 0);
        CHECK_EQ_INT(s2.misordered, 0);
        CHECK_EQ_INT(s2.dup, 0);
        CHECK_EQ_INT(s2.count, expect);
        CHECK_EQ_INT(overlap_mismatches(seen, s.nb, alo, ahi, na, alo, ahi, na, 1), 0);
        if (na >= 200 && leaf == 1) CHECK(first > 0 && first < expect); /* both parts have work */
        bvh_free(&a);
        bvh_free(&b);
      }
    }
  }
}

TEST(bvh_pair_traversal_early_exit_deterministic_no_allocation) {
  enum { N = 1000 };
  static vec3 lo[N], hi[N];
  static unsigned char seen[N * N];
  rng r = {32};
  random_boxes(&r, 1, N, lo, hi); /* heavy duplication: very many overlapping pairs */
  bvh t;
  CHECK_EQ_INT(bvh_build(&t, lo, hi, N, 4), 0);
  for (int k = 1; k <= 4; k++) {
    memset(seen, 0, sizeof seen);
    pair_hits h = {seen, N, 0, 0, 0, k};
    CHECK_EQ_INT(bvh_query_self(&t, collect_self, &h), 9);
    CHECK_EQ_INT(h.count, k);
    memset(seen, 0, sizeof seen);
    pair_hits g = {seen, N, 0, 0, 0, k};
    CHECK_EQ_INT(bvh_query_pairs(&t, &t, collect_pair, &g), 9);
    CHECK_EQ_INT(g.count, k);
  }
  /* a tree against itself by pair traversal reports every overlapping ordered pair, (i, i) too */
  long before = harness_alloc_count();
  memset(seen, 0, sizeof seen);
  pair_hits all = {seen, N, 0, 0, 0, 0};
  bvh_query_pairs(&t, &t, collect_pair, &all);
  pair_hits self = {seen, N, 0, 0, 0, 0};
  memset(seen, 0, sizeof seen);
  bvh_query_self(&t, collect_self, &self);
  CHECK_EQ_INT(harness_alloc_count(), before);
  CHECK_EQ_INT(all.count, 2 * self.count + N);
  CHECK(self.count > 10000);
  /* NULL and empty trees */
  bvh empty;
  CHECK_EQ_INT(bvh_build(&empty, lo, hi, 0, 4), 0);
  pair_hits z = {seen, N, 0, 0, 0, 0};
  CHECK_EQ_INT(bvh_query_pairs(&t, &empty, collect_pair, &z), 0);
  CHECK_EQ_INT(bvh_query_pairs(NULL, &t, collect_pair, &z), 0);
  CHECK_EQ_INT(bvh_query_self(&empty, collect_self, &z), 0);
  CHECK_EQ_INT(bvh_query_self(NULL, collect_self, &z), 0);
  CHECK_EQ_INT(z.count, 0);
  bvh_free(&empty);
  bvh_free(&t);
}

/* ---- trees over moving items (bvh_motion_overlap) ------------------------------------------------ */

/* Two segments (or a point and a triangle) whose nodes move on straight paths from s to e: the
 * motion test on their start and end boxes, each inflated by R, holds whenever the features come
 * within 2 R of each other along every axis at some time (sampled), and it rejects features that
 * move together far apart, where their swept boxes overlap. */
TEST(bvh_motion_overlap_holds_whenever_features_meet) {
  rng r = {41};
  const double R = 0.05;
  int met = 0, rejected_swept = 0;
  for (int trial = 0; trial < 4000; trial++) {
    const int na = 1 + rng_int(&r, 3); /* nodes of the first side (of 4): point-triangle, edge-edge, triangle-point */
    vec3 s[4], e[4];
    const vec3 common = rng_vec(&r, -3, 3); /* a motion shared by everything (any frame) */
    for (int k = 0; k < 4; k++) {
      s[k] = rng_vec(&r, -0.4, 0.4);
      e[k] = v3_add(v3_add(s[k], common), trial % 3 ? rng_vec(&r, -0.3, 0.3) : v3(0, 0, 0));
    }
    vec3 box[2][4]; /* per side: start lo, hi, end lo, hi (inflated by R) */
    for (int side = 0; side < 2; side++) {
      const int k0 = side ? na : 0, k1 = side ? 4 : na;
      vec3 slo = s[k0], shi = s[k0], elo = e[k0], ehi = e[k0];
      for (int k = k0 + 1; k < k1; k++) {
        slo = v3_min(slo, s[k]), shi = v3_max(shi, s[k]);
        elo = v3_min(elo, e[k]), ehi = v3_max(ehi, e[k]);
      }
      const vec3 re = v3(R, R, R);
      box[side][0] = v3_sub(slo, re), box[side][1] = v3_add(shi, re);
      box[side][2] = v3_sub(elo, re), box[side][3] = v3_add(ehi, re);
    }
    const int pass = bvh_motion_overlap(box[0][0], box[0][1], box[0][2], box[0][3], box[1][0], box[1][1], box[1][2], box[1][3]);
    /* sampled points of the two features over the motion */
    int close = 0;
    for (int q = 0; q < 200 && !close; q++) {
      const double t = q % 50 == 0 ? (q / 50) % 2 : rng_unit(&r);
      vec3 p[2];
      for (int side = 0; side < 2; side++) {
        const int k0 = side ? na : 0, k1 = side ? 4 : na;
        double w[4], sum = 0;
        for (int k = k0; k < k1; k++) sum += w[k] = rng_unit(&r) + 1e-3;
        p[side] = v3(0, 0, 0);
        for (int k = k0; k < k1; k++) p[side] = v3_madd(p[side], v3_add(v3_scale(s[k], 1 - t), v3_scale(e[k], t)), w[k] / sum);
      }
      const vec3 d = v3_sub(p[0], p[1]);
      close = fabs(d.x) <= 2 * R && fabs(d.y) <= 2 * R && fabs(d.z) <= 2 * R;
    }
    met += close;
    if (close) CHECK(pass);
    /* the swept boxes of the two sides */
    const int swept = bvh_box_overlap(v3_min(box[0][0], box[0][2]), v3_max(box[0][1], box[0][3]), v3_min(box[1][0], box[1][2]),
                                      v3_max(box[1][1], box[1][3]));
    if (pass) CHECK(swept); /* never looser than the swept boxes */
    rejected_swept += swept && !pass;
  }
  CHECK(met > 100);
  CHECK(rejected_swept > 500); /* and much tighter when things move together */
  /* two points 1 m apart moving 10 m together along the line between them: their swept boxes
   * overlap, the motion test does not */
  const vec3 z = v3(0, 0, 0);
  CHECK(!bvh_motion_overlap(z, z, v3(10, 0, 0), v3(10, 0, 0), v3(1, 0, 0), v3(1, 0, 0), v3(11, 0, 0), v3(11, 0, 0)));
  CHECK(bvh_box_overlap(z, v3(10, 0, 0), v3(1, 0, 0), v3(11, 0, 0)));
  /* crossing paths meet in the middle: neither their starts nor their ends are near */
  CHECK(bvh_motion_overlap(z, z, v3(2, 0, 0), v3(2, 0, 0), v3(2, 0, 0), v3(2, 0, 0), z, z));
}

/* The queries and traversals of trees with end boxes report exactly the pairs the motion test
 * takes (brute force), in two parts as in one; trees whose end boxes are their start boxes report
 * what box queries report. */
static void moving_boxes(rng *r, int kind, int n, vec3 *lo, vec3 *hi, vec3 *elo, vec3 *ehi) {
  random_boxes(r, kind, n, lo, hi);
  for (int i = 0; i < n; i++) {
    const vec3 d = i % 4 == 0 ? v3(0, 0, 0) : rng_vec(r, -1.5, 1.5);
    elo[i] = v3_add(lo[i], d);
    ehi[i] = v3_add(hi[i], d);
  }
}

TEST(bvh_motion_queries_match_brute_force) {
  enum { NA = 500, NB = 300 };
  static vec3 alo[NA], ahi[NA], aelo[NA], aehi[NA], blo[NB], bhi[NB], belo[NB], behi[NB];
  static unsigned char seen[NA * NA];
  rng r = {43};
  for (int kind = 0; kind < 3; kind++) {
    const int sizes[][2] = {{1, 1}, {3, 2}, {NA, NB}, {NA, 1}};
    for (int si = 0; si < 4; si++) {
      const int na = sizes[si][0], nb = sizes[si][1];
      moving_boxes(&r, kind, na, alo, ahi, aelo, aehi);
      moving_boxes(&r, 0, nb, blo, bhi, belo, behi);
      bvh a, b;
      CHECK_EQ_INT(bvh_build(&a, alo, ahi, na, 4), 0);
      CHECK_EQ_INT(bvh_build(&b, blo, bhi, nb, 3), 0);
      CHECK_EQ_INT(bvh_enable_ends(&a), 0);
      CHECK_EQ_INT(bvh_enable_ends(&b), 0);
      bvh_refit_ends(&a, aelo, aehi);
      bvh_refit_ends(&b, belo, behi);
      /* one moving box against b */
      for (int q = 0; q < 40; q++) {
        const int k = rng_int(&r, na);
        memset(seen, 0, sizeof seen);
        hits h = {seen, 0, 0, 0};
        CHECK_EQ_INT(bvh_query_motion(&b, alo[k], ahi[k], aelo[k], aehi[k], collect, &h), 0);
        int bad = 0;
        for (int j = 0; j < nb; j++)
          bad += bvh_motion_overlap(alo[k], ahi[k], aelo[k], aehi[k], blo[j], bhi[j], belo[j], behi[j]) != seen[j];
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(h.dup, 0);
      }
      /* a against b, in one traversal and in two parts */
      for (int parts = 0; parts < 2; parts++) {
        memset(seen, 0, sizeof seen);
        pair_hits h = {seen, nb, 0, 0, 0, 0};
        if (parts) {
          CHECK_EQ_INT(bvh_query_pairs_part(&a, &b, 0, collect_pair, &h), 0);
          CHECK_EQ_INT(bvh_query_pairs_part(&a, &b, 1, collect_pair, &h), 0);
        } else {
          CHECK_EQ_INT(bvh_query_pairs(&a, &b, collect_pair, &h), 0);
        }
        int bad = 0;
        for (int i = 0; i < na; i++)
          for (int j = 0; j < nb; j++)
            bad += bvh_motion_overlap(alo[i], ahi[i], aelo[i], aehi[i], blo[j], bhi[j], belo[j], behi[j]) != seen[(size_t)i * nb + j];
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(h.dup, 0);
      }
      /* a with itself */
      memset(seen, 0, sizeof seen);
      pair_hits s = {seen, na, 0, 0, 0, 0};
      CHECK_EQ_INT(bvh_query_self_part(&a, 0, collect_self, &s), 0);
      CHECK_EQ_INT(bvh_query_self_part(&a, 1, collect_self, &s), 0);
      int bad = 0, expect = 0;
      for (int i = 0; i < na; i++)
        for (int j = i + 1; j < na; j++) {
          const int ov = bvh_motion_overlap(alo[i], ahi[i], aelo[i], aehi[i], alo[j], ahi[j], aelo[j], aehi[j]);
          expect += ov;
          bad += ov != seen[(size_t)i * na + j];
        }
      CHECK_EQ_INT(bad, 0);
      CHECK_EQ_INT(s.count, expect);
      CHECK_EQ_INT(s.misordered + s.dup, 0);
      /* end boxes equal to the start boxes: the box traversal's pairs */
      bvh_refit_ends(&a, alo, ahi);
      CHECK_EQ_INT(a.ends_differ, 0);
      memset(seen, 0, sizeof seen);
      pair_hits u = {seen, na, 0, 0, 0, 0};
      CHECK_EQ_INT(bvh_query_self(&a, collect_self, &u), 0);
      CHECK_EQ_INT(overlap_mismatches(seen, na, alo, ahi, na, alo, ahi, na, 1), 0);
      bvh_free(&a);
      bvh_free(&b);
    }
  }
}
