/* bvh.h — static bounding-volume hierarchy over boxes (triangles of obstacles and cloth, picking). Built
 * once by median split on the longest axis; refit keeps the topology when the boxes move. */
#ifndef LOOM_BVH_H
#define LOOM_BVH_H

#include "core/core.h"
#include "math/math_vec.h"

typedef struct bvh_node {
  vec3 lo, hi;   /* box of the subtree */
  int32_t left;  /* child index, or -1 for a leaf */
  int32_t right; /* child index, or for a leaf: first item in bvh.items */
  int32_t count; /* leaf: number of items, 0 for inner nodes */
  int32_t pad;
} bvh_node;

typedef struct bvh {
  bvh_node *nodes; /* node 0 is the root; a left child always directly follows its parent */
  int32_t *items;  /* item indices in leaf order */
  int node_count, item_count;
  vec3 *item_lo, *item_hi; /* item boxes in leaf order (parallel to items): queries test items
                            * exactly, whatever the leaf size */
  /* end boxes (bvh_enable_ends; NULL without): a second box per node and item, for items that
   * move — [lo, hi] holds where an item starts, [elo, ehi] where it ends */
  vec3 *node_elo, *node_ehi, *item_elo, *item_ehi;
  int ends_differ; /* some item's end box is not its start box (bvh_refit_ends): without, the
                    * motion tests are box tests and the end boxes' arrays are not read */
} bvh;

/* Maximum depth of a tree (root = depth 0). Median splits halve the item count at every level,
 * so depth <= ceil(log2(n)) <= 31 for any int n: the fixed query stacks below cannot overflow. */
#define BVH_MAX_DEPTH 64

/* Builds the tree over n boxes lo[i]..hi[i] with at most leaf_size items per leaf.
 * Deterministic. Allocates with core_alloc; 0 or -1. n may be 0. Split rule: median of the item
 * centroids along the longest axis of their bounds (ties in axis length -> lowest axis; equal
 * centroids ordered by item index), so all-identical boxes still split in halves. Fails (message
 * set) on n < 0, leaf_size < 1, NULL arrays with n > 0 or a non-finite box; *t is then empty and
 * safe to free. */
int bvh_build(bvh *t, const vec3 *lo, const vec3 *hi, int n, int leaf_size);
void bvh_free(bvh *t);
/* Rebuilding a tree of the same n in place: the tree's arrays are reused and the sorting
 * buffers live in a bvh_work kept with the tree, so a rebuild allocates nothing after the first
 * (same tree and result as bvh_build). A tree never built, or of another n, is built first. */
typedef struct bvh_work {
  double *key;
  int32_t *order[3], *tmp;
  unsigned char *side;
  int cap;
} bvh_work;
int bvh_rebuild(bvh *t, const vec3 *lo, const vec3 *hi, int n, int leaf_size, bvh_work *wk);
void bvh_work_free(bvh_work *wk);
int bvh_work_reserve(bvh_work *wk, int n); /* buffers for n boxes; 0 or -1 */
/* Recomputes node boxes bottom-up from new item boxes (same n). */
void bvh_refit(bvh *t, const vec3 *lo, const vec3 *hi);

/* Trees over moving items. Each item has a start box [lo, hi] (the tree's boxes, which the build
 * splits) and an end box [elo, ehi]. Two items whose points move on straight paths, each from its
 * start box to its end box over the same interval, can only meet if along every axis their start
 * boxes or their end boxes reach each other on each side (bvh_motion_overlap): the difference of two
 * such points is a convex combination of a difference of starts and a difference of ends. The
 * test does not depend on the frame (a common motion shifts every end box alike), so parts of a
 * moving body that move together are near only where they are near, where swept boxes, stretched
 * by the motion, overlap everything along it. A node's boxes are the unions of its items'.
 * bvh_enable_ends allocates the end boxes once (a rebuild of the same size keeps them; 0 or -1);
 * bvh_refit_ends sets them after a bvh_refit or bvh_rebuild with the same start boxes. A tree
 * whose end boxes all equal their start boxes (ends_differ 0) is read as having its start boxes
 * for end boxes. The pair traversals below use the motion test when either tree's end boxes
 * differ; bvh_query_motion is the query of one moving box. */
int bvh_enable_ends(bvh *t);
void bvh_refit_ends(bvh *t, const vec3 *elo, const vec3 *ehi);
/* Every item's end box is its start box (what bvh_refit_ends would find, without the refit). */
void bvh_ends_equal(bvh *t);
int bvh_motion_overlap(vec3 alo, vec3 ahi, vec3 aelo, vec3 aehi, vec3 blo, vec3 bhi, vec3 belo, vec3 behi);
int bvh_query_motion(const bvh *t, vec3 lo, vec3 hi, vec3 elo, vec3 ehi, int (*fn)(int item, void *ctx), void *ctx);
/* The same, passing over every node n with tag[n] == skip (per node of t, as the caller labels
 * them: skip >= 0 marks subtrees none of whose items it wants; skip < 0 or tag NULL: all). */
int bvh_query_motion_skip(const bvh *t, const int32_t *tag, int32_t skip, vec3 lo, vec3 hi, vec3 elo, vec3 ehi,
                          int (*fn)(int item, void *ctx), void *ctx);
/* Calls fn(item, ctx) for every item whose box overlaps [lo, hi]; stops early when fn returns
 * non-zero (that value is returned). Uses a fixed stack (depth <= BVH_MAX_DEPTH): no allocation. */
int bvh_query_box(const bvh *t, vec3 lo, vec3 hi, int (*fn)(int item, void *ctx), void *ctx);
/* Calls fn(item, ctx) for items whose box the segment p0p1 crosses (slab test). Early exit and
 * stack as bvh_query_box. Non-finite segments report nothing. */
int bvh_query_segment(const bvh *t, vec3 p0, vec3 p1, int (*fn)(int item, void *ctx), void *ctx);

/* Pair traversal: calls fn(ia, ib, ctx) once for every item ia of a and ib of b whose boxes
 * overlap (same closed-box test as bvh_box_overlap; bvh_motion_overlap when either tree has an
 * end box that differs from its start box). Self traversal: calls fn(i, j, ctx) once for
 * every unordered pair of distinct items of t whose boxes overlap, with i < j (item indices).
 * Both descend the two trees together (the node with the larger box splits first), stop early
 * when fn returns non-zero (that value is returned), use a fixed stack of BVH_PAIR_STACK node
 * pairs (enough for two trees of depth <= BVH_MAX_DEPTH) and allocate nothing. The order of the
 * calls is deterministic. NULL or empty trees report nothing. */
#define BVH_PAIR_STACK (4 * BVH_MAX_DEPTH + 4)
int bvh_query_pairs(const bvh *a, const bvh *b, int (*fn)(int ia, int ib, void *ctx), void *ctx);
int bvh_query_self(const bvh *t, int (*fn)(int i, int j, void *ctx), void *ctx);
/* The same traversals in two parts (part 0 or 1) that together report every pair once: a's
 * root's two subtrees each against b (all in part 0 when a's root is a leaf); self: the root's
 * left subtree with itself, and the right with itself and with the left. For two threads; the
 * union of the two parts' calls is that of the whole traversal, their order is not. */
int bvh_query_pairs_part(const bvh *a, const bvh *b, int part, int (*fn)(int ia, int ib, void *ctx), void *ctx);
int bvh_query_self_part(const bvh *t, int part, int (*fn)(int i, int j, void *ctx), void *ctx);
/* The self traversal's part passing over every pair of subtrees n, m with tag[n] == tag[m] >= 0
 * (a subtree with itself when tag[n] >= 0): the caller's label for items whose pairs it does not
 * want (tag: per node of t; NULL: every pair). */
int bvh_query_self_part_skip(const bvh *t, const int32_t *tag, int part, int (*fn)(int i, int j, void *ctx), void *ctx);

/* The item tests the queries use (closed boxes): boxes [alo, ahi] and [blo, bhi] overlap;
 * segment p0p1 meets box [lo, hi] (Kay-Kajiya slab test). */
int bvh_box_overlap(vec3 alo, vec3 ahi, vec3 blo, vec3 bhi);
int bvh_segment_box(vec3 p0, vec3 p1, vec3 lo, vec3 hi);

/* Unsigned distance from p to a triangle mesh whose triangles (vertex positions v, nt x 3
 * indices tri) are the items of t (box of triangle i = item i, as built or refit). Searches
 * only within max_dist (pass INFINITY for no limit). Returns the nearest triangle's index, or -1
 * if none is within max_dist (or the tree is empty); the distance in *dist, the nearest point in
 * *closest and its barycentric weights in bary (each may be NULL). Branch and bound with the
 * fixed stack; no allocation. Ties go to the triangle found first (deterministic). *tests (NULL:
 * not counted) grows by the number of triangles whose nearest point was computed. */
int bvh_closest_triangle(const bvh *t, const vec3 *v, const int32_t *tri, vec3 p, double max_dist, double *dist,
                         vec3 *closest, double bary[3], double *tests);
/* The same answer without the tree: every one of the nt triangles is tested, in index order (ties
 * go to the lowest index, where the tree's search takes the one it meets first: the two differ
 * only for triangles at exactly the same distance). The brute-force reference of tests (loom_world_set_brute_obstacles);
 * *tests grows by nt. */
int bvh_closest_triangle_scan(int nt, const vec3 *v, const int32_t *tri, vec3 p, double max_dist, double *dist,
                              vec3 *closest, double bary[3], double *tests);

#endif
