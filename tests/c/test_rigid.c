/* test_rigid.c — dynamic rigid bodies: mass properties (analytic shapes against the exact
 * polyhedral integrals of their meshes), the narrow phase's manifolds (normal from B towards A,
 * point counts, separations), and the RK4 free flight being exact under a constant force. */
#include "kernel_fixtures.h"
#include "contact/contact_rigid.h"

static void check_inertia_near(const mat3 *a, const mat3 *b, double tol) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) CHECK_NEAR(a->m[i][j], b->m[i][j], tol);
}

TEST(rigid_polyhedral_inertia_matches_analytic_box) {
  geom_shape s = {GEOM_BOX, 0, 0, {0.3, 0.5, 0.7}};
  double m0, m1;
  vec3 c0, c1;
  mat3 I0, I1;
  CHECK_EQ_INT(rigid_mass_properties(LOOM_SHAPE_BOX, &s, NULL, 700, &m0, &c0, &I0), 0);
  loom_mesh *box = loom_mesh_box(0.3, 0.5, 0.7, 3);
  /* shifted off the origin: the centre of mass follows, the inertia about it does not change */
  for (int i = 0; i < box->nv; i++) box->v[i] = v3_add(box->v[i], v3(1, -2, 0.5));
  CHECK_EQ_INT(rigid_mass_properties(LOOM_SHAPE_MESH, NULL, box, 700, &m1, &c1, &I1), 0);
  CHECK_NEAR(m1, m0, 1e-9 * m0);
  CHECK_NEAR(m0, 700 * 0.6 * 1.0 * 1.4, 1e-9);
  CHECK_NEAR(c1.x, 1, 1e-12);
  CHECK_NEAR(c1.y, -2, 1e-12);
  CHECK_NEAR(c1.z, 0.5, 1e-12);
  check_inertia_near(&I1, &I0, 1e-9 * I0.m[0][0]);
  loom_mesh_destroy(box);
}

TEST(rigid_polyhedral_inertia_of_a_sphere_mesh_converges) {
  geom_shape s = {GEOM_SPHERE, 0.4, 0, {0, 0, 0}};
  double m0, m1;
  vec3 c0, c1;
  mat3 I0, I1;
  rigid_mass_properties(LOOM_SHAPE_SPHERE, &s, NULL, 1000, &m0, &c0, &I0);
  loom_mesh *sph = loom_mesh_sphere(0.4, 96, 48);
  CHECK_EQ_INT(rigid_mass_properties(LOOM_SHAPE_MESH, NULL, sph, 1000, &m1, &c1, &I1), 0);
  CHECK_NEAR(m1, m0, 0.005 * m0); /* an inscribed polyhedron: slightly lighter */
  CHECK_NEAR(I1.m[2][2], I0.m[2][2], 0.01 * I0.m[2][2]);
  CHECK_NEAR(I1.m[0][1], 0, 1e-9 * I0.m[0][0]);
  loom_mesh_destroy(sph);
}

TEST(rigid_mass_properties_refuse_open_and_inside_out_meshes) {
  double m;
  vec3 c;
  mat3 I;
  loom_mesh *box = loom_mesh_box(0.5, 0.5, 0.5, 1);
  box->nt -= 1; /* a missing triangle opens it */
  CHECK(rigid_mass_properties(LOOM_SHAPE_MESH, NULL, box, 1000, &m, &c, &I) != 0);
  CHECK_STR_CONTAINS(loom_last_error(), "open");
  box->nt += 1;
  for (int t = 0; t < box->nt; t++) {
    int32_t k = box->tri[3 * t + 1];
    box->tri[3 * t + 1] = box->tri[3 * t + 2];
    box->tri[3 * t + 2] = k;
  }
  CHECK(rigid_mass_properties(LOOM_SHAPE_MESH, NULL, box, 1000, &m, &c, &I) != 0);
  CHECK_STR_CONTAINS(loom_last_error(), "inside out");
  loom_mesh_destroy(box);
}

TEST(rigid_capsule_and_cylinder_mass) {
  geom_shape cap = {GEOM_CAPSULE, 0.1, 0.3, {0, 0, 0}}, cyl = {GEOM_CYLINDER, 0.1, 0.3, {0, 0, 0}};
  double m;
  vec3 c;
  mat3 I;
  rigid_mass_properties(LOOM_SHAPE_CAPSULE, &cap, NULL, 1000, &m, &c, &I);
  CHECK_NEAR(m, 1000 * (FX_PI * 0.01 * 0.6 + 4.0 / 3.0 * FX_PI * 0.001), 1e-9);
  rigid_mass_properties(LOOM_SHAPE_CYLINDER, &cyl, NULL, 1000, &m, &c, &I);
  CHECK_NEAR(I.m[2][2], 0.5 * m * 0.01, 1e-12);
  CHECK_NEAR(I.m[0][0], m * (3 * 0.01 + 0.36) / 12, 1e-12);
}

/* Makes the body d describes under a fresh name. */
static rigid_body *create_body(loom_world *w, loom_rigid_def *d) {
  static int serial;
  char name[32];
  snprintf(name, sizeof name, "b%d", serial++);
  d->name = name;
  int h = loom_rigid_create(w, d);
  CHECK(h != 0);
  return h ? rigid_of_slot(&w->bodies[handle_slot(h)]) : NULL;
}

static rigid_body *make_body(loom_world **w, int shape, vec3 half, double r, int motion) {
  if (!*w) *w = fx_world(1.0 / 60);
  loom_rigid_def d;
  loom_rigid_def_default(&d);
  d.shape = shape;
  d.half_extents = half;
  d.radius = r;
  d.half_height = 0.2;
  d.motion = motion;
  return create_body(*w, &d);
}

TEST(rigid_narrow_phase_normals_point_from_b_to_a) {
  loom_world *w = NULL;
  rigid_body *box = make_body(&w, LOOM_SHAPE_BOX, v3(0.5, 0.5, 0.5), 0, LOOM_DYNAMIC);
  rigid_body *ground = make_body(&w, LOOM_SHAPE_BOX, v3(5, 5, 0.5), 0, LOOM_STATIC);
  rigid_body *ball = make_body(&w, LOOM_SHAPE_SPHERE, v3(0, 0, 0), 0.25, LOOM_DYNAMIC);
  rigid_body *cap = make_body(&w, LOOM_SHAPE_CAPSULE, v3(0, 0, 0), 0.1, LOOM_DYNAMIC);
  rigid_manifold m;
  /* box resting 1 mm into the ground: four points, normal +z, separation -1 mm */
  CHECK_EQ_INT(rigid_collide(box, v3(0, 0, 0.499), q_identity(), ground, v3(0, 0, -0.5), q_identity(), 0.02, &m), 4);
  CHECK_NEAR(m.n.z, 1, 1e-12);
  for (int i = 0; i < 4; i++) CHECK_NEAR(m.pt[i].sep, -0.001, 1e-12);
  /* swapped: the normal turns */
  CHECK_EQ_INT(rigid_collide(ground, v3(0, 0, -0.5), q_identity(), box, v3(0, 0, 0.499), q_identity(), 0.02, &m), 4);
  CHECK_NEAR(m.n.z, -1, 1e-12);
  /* a box turned 45 degrees about z on the ground still has a face contact of 4 points */
  quat qz = q_from_axis_angle(v3(0, 0, 1), FX_PI / 4);
  CHECK_EQ_INT(rigid_collide(box, v3(0, 0, 0.5), qz, ground, v3(0, 0, -0.5), q_identity(), 0.02, &m), 4);
  /* a box on its edge: one or two points, normal +z */
  quat qy = q_from_axis_angle(v3(0, 1, 0), FX_PI / 4);
  CHECK(rigid_collide(box, v3(0, 0, sqrt(0.5) - 0.001), qy, ground, v3(0, 0, -0.5), q_identity(), 0.02, &m) == 2);
  CHECK_NEAR(m.n.z, 1, 1e-9);
  /* sphere beside the box: normal along +x, separation 0.05 */
  CHECK_EQ_INT(rigid_collide(ball, v3(0.8, 0, 0), q_identity(), box, v3(0, 0, 0), q_identity(), 0.1, &m), 1);
  CHECK_NEAR(m.n.x, 1, 1e-12);
  CHECK_NEAR(m.pt[0].sep, 0.05, 1e-12);
  /* beyond the margin: nothing */
  CHECK_EQ_INT(rigid_collide(ball, v3(0.8, 0, 0), q_identity(), box, v3(0, 0, 0), q_identity(), 0.01, &m), 0);
  /* a capsule lying on the ground: both end spheres */
  quat qx = q_from_axis_angle(v3(1, 0, 0), FX_PI / 2);
  CHECK_EQ_INT(rigid_collide(cap, v3(0, 0, 0.1), qx, ground, v3(0, 0, -0.5), q_identity(), 0.02, &m), 2);
  CHECK_NEAR(m.n.z, 1, 1e-9);
  /* edge against edge: two boxes crossed, edges touching */
  quat qa = q_mul(q_from_axis_angle(v3(0, 0, 1), FX_PI / 2), qy);
  double z = 2 * sqrt(0.5) - 0.002;
  CHECK_EQ_INT(rigid_collide(box, v3(0, 0, z), qa, box, v3(0, 0, 0), qy, 0.02, &m), 1);
  CHECK_NEAR(m.n.z, 1, 1e-9);
  CHECK_NEAR(m.pt[0].sep, -0.002, 1e-9);
  loom_world_destroy(w);
}

/* A body of shape `shape` (mesh or convex) made from mesh m, which it copies. */
static rigid_body *make_mesh_shape(loom_world *w, int shape, loom_mesh *m, int motion) {
  CHECK(m != NULL);
  loom_rigid_def d;
  loom_rigid_def_default(&d);
  d.shape = shape;
  d.mesh = m;
  d.motion = motion;
  rigid_body *r = create_body(w, &d);
  loom_mesh_destroy(m);
  return r;
}

static rigid_body *make_mesh_body(loom_world *w, const loom_vec3 *v, int nv, const int32_t *tri, int nt) {
  return make_mesh_shape(w, LOOM_SHAPE_MESH, loom_mesh_from_arrays(v, nv, tri, nt), LOOM_STATIC);
}

/* A polytope against a triangle mesh: separating axes per triangle, the mesh's inside edges left
 * out, manifolds gathered by normal. A tent (a ridge along y at z = 0.3, slopes down to z = 0 at
 * x = +-1) and a V groove (slopes at 45 degrees meeting at z = 0). */
TEST(rigid_polytope_against_mesh_ridges_grooves_and_inside_edges) {
  loom_world *w = NULL;
  rigid_body *box = make_body(&w, LOOM_SHAPE_BOX, v3(0.4, 0.2, 0.1), 0, LOOM_DYNAMIC);
  const int32_t tri[12] = {0, 1, 4, 0, 4, 3, 1, 2, 5, 1, 5, 4};
  const loom_vec3 tent_v[6] = {{-1, -1, 0}, {0, -1, 0.3}, {1, -1, 0}, {-1, 1, 0}, {0, 1, 0.3}, {1, 1, 0}};
  const loom_vec3 groove_v[6] = {{-1, -1, 1}, {0, -1, 0}, {1, -1, 1}, {-1, 1, 1}, {0, 1, 0}, {1, 1, 1}};
  rigid_body *tent = make_mesh_body(w, tent_v, 6, tri, 4);
  rigid_body *groove = make_mesh_body(w, groove_v, 6, tri, 4);
  /* the ridge is a convex fold, the groove's fold is not; the diagonals join coplanar triangles;
   * the border has no neighbours */
  for (int t = 0; t < 4; t++) {
    for (int k = 0; k < 3; k++) {
      const int a = tri[3 * t + k], b = tri[3 * t + (k + 1) % 3];
      const int fold = (a == 1 && b == 4) || (a == 4 && b == 1);
      const int diagonal = (a == 0 && b == 4) || (a == 4 && b == 0) || (a == 1 && b == 5) || (a == 5 && b == 1);
      CHECK_EQ_INT(tent->model.tri_adj[3 * t + k] >= 0, fold || diagonal);
      CHECK_EQ_INT((tent->model.tri_convex[t] >> k) & 1, fold);
      CHECK_EQ_INT((groove->model.tri_convex[t] >> k) & 1, 0);
    }
  }
  rigid_manifold m[RIGID_PAIR_MANIFOLDS];
  /* the box flat on the ridge, 1 mm into it: no corner of the box touches, the ridge does — two
   * points along it, normal +z (from the mesh towards the box) */
  CHECK_EQ_INT(rigid_collide_all(box, v3(0, 0, 0.399), q_identity(), tent, v3(0, 0, 0), q_identity(), 0.02, m, 4), 1);
  CHECK_EQ_INT(m[0].count, 2);
  CHECK_NEAR(m[0].n.z, 1, 1e-12);
  for (int i = 0; i < 2; i++) {
    CHECK_NEAR(m[0].pt[i].sep, -0.001, 1e-12);
    CHECK_NEAR(m[0].pt[i].p.x, 0, 1e-12);
    CHECK_NEAR(fabs(m[0].pt[i].p.y), 0.2, 1e-12);
  }
  /* the same pair swapped: the normal turns */
  CHECK_EQ_INT(rigid_collide_all(tent, v3(0, 0, 0), q_identity(), box, v3(0, 0, 0.399), q_identity(), 0.02, m, 4), 1);
  CHECK_NEAR(m[0].n.z, -1, 1e-12);
  /* a 0.2 m box turned 45 degrees about y sits in the groove: two manifolds of four points, one on
   * each slope, normals (-+1, 0, 1)/sqrt 2 */
  rigid_body *cube = make_body(&w, LOOM_SHAPE_BOX, v3(0.1, 0.3, 0.1), 0, LOOM_DYNAMIC);
  const quat qy = q_from_axis_angle(v3(0, 1, 0), FX_PI / 4);
  CHECK_EQ_INT(rigid_collide_all(cube, v3(0, 0, 0.1 * sqrt(2) - 0.001), qy, groove, v3(0, 0, 0), q_identity(), 0.02, m, 4), 2);
  for (int k = 0; k < 2; k++) {
    CHECK_EQ_INT(m[k].count, 4);
    CHECK_NEAR(fabs(m[k].n.x), sqrt(0.5), 1e-9);
    CHECK_NEAR(m[k].n.z, sqrt(0.5), 1e-9);
    for (int i = 0; i < 4; i++) CHECK_NEAR(m[k].pt[i].sep, -0.001 * sqrt(0.5), 1e-9);
  }
  CHECK(m[0].n.x * m[1].n.x < 0);
  /* one manifold asked for: the two gathered into one */
  CHECK_EQ_INT(rigid_collide_all(cube, v3(0, 0, 0.1 * sqrt(2) - 0.001), qy, groove, v3(0, 0, 0), q_identity(), 0.02, m, 1), 1);
  /* a box lying on a flat grid mesh across the inside diagonals and edges: one manifold, normal
   * +z, four points (none from the inside edges' side axes, which would push it sideways) */
  loom_mesh *grid = loom_mesh_grid(4, 4, 40, 40, NULL, 0);
  loom_vec3 *gv = malloc(sizeof(loom_vec3) * (size_t)grid->nv);
  for (int i = 0; i < grid->nv; i++) gv[i] = grid->v[i];
  rigid_body *flat = make_mesh_body(w, gv, grid->nv, grid->tri, grid->nt);
  free(gv);
  loom_mesh_destroy(grid);
  for (int s = 0; s < 8; s++) {
    const vec3 at = v3(0.013 * s, -0.021 * s, 0.0995);
    const quat qz = q_from_axis_angle(v3(0, 0, 1), 0.1 * s);
    CHECK_EQ_INT(rigid_collide_all(box, at, qz, flat, v3(0, 0, 0), q_identity(), 0.02, m, 4), 1);
    CHECK_NEAR(m[0].n.z, 1, 1e-12);
    CHECK_EQ_INT(m[0].count, 4);
    for (int i = 0; i < 4; i++) CHECK_NEAR(m[0].pt[i].sep, -0.0005, 1e-12);
  }
  /* a sphere: in the groove it touches both slopes (two manifolds, one point each, normals
   * (-+1, 0, 1)/sqrt 2); on the flat grid one point straight below, also over an inner edge or
   * corner, and none from the neighbours' edges (their points are farther than the face's) */
  rigid_body *ball = make_body(&w, LOOM_SHAPE_SPHERE, v3(0, 0, 0), 0.1, LOOM_DYNAMIC);
  CHECK_EQ_INT(rigid_collide_all(ball, v3(0, 0, 0.1 * sqrt(2) - 0.001), q_identity(), groove, v3(0, 0, 0), q_identity(), 0.02, m, 4), 2);
  for (int k = 0; k < 2; k++) {
    CHECK_EQ_INT(m[k].count, 1);
    CHECK_NEAR(m[k].n.z, sqrt(0.5), 1e-9);
    CHECK_NEAR(m[k].pt[0].sep, -0.001 * sqrt(0.5), 1e-9);
  }
  const vec3 spots[3] = {v3(0.031, -0.017, 0.0995), v3(0.1, 0.037, 0.0995), v3(0.1, 0.1, 0.0995)};
  for (int s = 0; s < 3; s++) { /* inside a triangle, over a grid line (an inner edge), over a grid corner */
    CHECK_EQ_INT(rigid_collide_all(ball, spots[s], q_identity(), flat, v3(0, 0, 0), q_identity(), 0.02, m, 4), 1);
    CHECK_EQ_INT(m[0].count, 1);
    CHECK_NEAR(m[0].n.z, 1, 1e-12);
    CHECK_NEAR(m[0].pt[0].sep, -0.0005, 1e-12);
  }
  loom_world_destroy(w);
}

/* The Gauss-map pruning of edge pairs (hulls and prisms against mesh triangles) finds the same
 * separation and normal as trying every pair of edge directions, over random poses. */
TEST(rigid_polytope_triangle_edge_pruning_matches_all_pairs) {
  loom_world *w = NULL;
  rigid_body *cyl = make_body(&w, LOOM_SHAPE_CYLINDER, v3(0, 0, 0), 0.1, LOOM_DYNAMIC);
  rigid_body *rock = make_mesh_shape(w, LOOM_SHAPE_CONVEX, loom_mesh_sphere(0.12, 7, 4), LOOM_DYNAMIC);
  const int32_t tri[12] = {0, 1, 4, 0, 4, 3, 1, 2, 5, 1, 5, 4};
  const loom_vec3 tent_v[6] = {{-1, -1, 0}, {0, -1, 0.3}, {1, -1, 0}, {-1, 1, 0}, {0, 1, 0.3}, {1, 1, 0}};
  rigid_body *tent = make_mesh_body(w, tent_v, 6, tri, 4);
  fx_rng r = {2024};
  int compared = 0, touching = 0;
  for (int it = 0; it < 4000; it++) {
    const rigid_body *body = it & 1 ? cyl : rock;
    const vec3 at = v3(0.3 * fx_sym(&r), 0.3 * fx_sym(&r), 0.2 + 0.25 * fx_unit(&r));
    const quat q = fx_quat(&r);
    rigid_manifold fast[RIGID_PAIR_MANIFOLDS], ref[RIGID_PAIR_MANIFOLDS];
    rigid_narrow_reference = 0;
    const int nf = rigid_collide_all(body, at, q, tent, v3(0, 0, 0), q_identity(), 0.02, fast, RIGID_PAIR_MANIFOLDS);
    rigid_narrow_reference = 1;
    const int nr = rigid_collide_all(body, at, q, tent, v3(0, 0, 0), q_identity(), 0.02, ref, RIGID_PAIR_MANIFOLDS);
    rigid_narrow_reference = 0;
    CHECK_EQ_INT(nf, nr);
    if (nf != nr) break;
    touching += nf > 0;
    for (int k = 0; k < nf; k++) {
      double df = INFINITY, dr = INFINITY;
      for (int i = 0; i < fast[k].count; i++) df = fmin(df, fast[k].pt[i].sep);
      for (int i = 0; i < ref[k].count; i++) dr = fmin(dr, ref[k].pt[i].sep);
      if (dr > 0) {
        /* apart: the separating-axis value is a lower bound of the distance, and the reference's
         * extra axes can raise it a little; the pruned one is never above (conservative) */
        CHECK(df <= dr + 1e-12);
        continue;
      }
      /* touching or overlapping: the least push is on an axis the Gauss map keeps */
      CHECK_NEAR(v3_dot(fast[k].n, ref[k].n), 1, 1e-9);
      CHECK_NEAR(df, dr, 1e-9);
      compared++;
    }
  }
  CHECK(touching > 500);
  CHECK(compared > 500);
  loom_world_destroy(w);
}

TEST(rigid_rk4_is_exact_for_constant_force_and_euler_is_not) {
  for (int integ = RIGID_RK4; integ <= RIGID_EULER; integ++) {
    loom_world *w = fx_world(0.1);
    rigid_body *b = make_body(&w, LOOM_SHAPE_SPHERE, v3(0, 0, 0), 0.1, LOOM_DYNAMIC);
    b->params.integrator = integ;
    b->params.can_sleep = 0;
    for (int k = 0; k < 10; k++) loom_world_step(w);
    double z = b->state.pos.z, exact = -0.5 * 9.81 * 1.0;
    if (integ == RIGID_RK4) CHECK_NEAR(z, exact, 1e-12);
    else CHECK(fabs(z - exact) > 0.1);
    loom_world_destroy(w);
  }
}

TEST(rigid_convex_hull_of_points_holds_them_all) {
  fx_rng r = {12345};
  loom_mesh *cloud = loom_mesh_sphere(1.0, 12, 6);
  /* push some vertices inwards: they are not on the hull */
  for (int i = 0; i < cloud->nv; i += 3) cloud->v[i] = v3_scale(cloud->v[i], 0.5 + 0.3 * fx_unit(&r));
  int convex = -1;
  loom_mesh *h = loom_mesh_convex_hull(cloud, &convex);
  CHECK(h != NULL);
  CHECK_EQ_INT(convex, 0);
  CHECK(h->nv < cloud->nv);
  /* closed and outward: Euler characteristic 2, positive volume; every input point inside */
  CHECK_EQ_INT(h->nv - h->ne + h->nt, 2);
  double m;
  vec3 c;
  mat3 I;
  CHECK_EQ_INT(rigid_mass_properties(LOOM_SHAPE_MESH, NULL, h, 1, &m, &c, &I), 0);
  for (int i = 0; i < cloud->nv; i++)
    for (int t = 0; t < h->nt; t++) {
      vec3 a = h->v[h->tri[3 * t]], b = h->v[h->tri[3 * t + 1]], d = h->v[h->tri[3 * t + 2]];
      vec3 n = v3_normalize(v3_cross(v3_sub(b, a), v3_sub(d, a)));
      CHECK(v3_dot(n, v3_sub(cloud->v[i], a)) < 1e-9);
    }
  loom_mesh_destroy(h);
  loom_mesh_destroy(cloud);
  /* a box is its own hull: 8 vertices, merged into 6 faces of 4 */
  loom_mesh *box = loom_mesh_box(0.5, 0.3, 0.2, 2);
  h = loom_mesh_convex_hull(box, &convex);
  CHECK_EQ_INT(convex, 1);
  CHECK_EQ_INT(h->nv, 8);
  rigid_poly *p = rigid_poly_hull(h);
  CHECK(p != NULL);
  CHECK_EQ_INT(p->nf, 6);
  CHECK_EQ_INT(p->ne, 12);
  CHECK_EQ_INT(p->ndir, 3);
  for (int f = 0; f < 6; f++) CHECK_EQ_INT(p->face_count[f], 4);
  rigid_poly_free(p);
  loom_mesh_destroy(h);
  /* coplanar points have no hull */
  for (int i = 0; i < box->nv; i++) box->v[i].z = 0;
  CHECK(loom_mesh_convex_hull(box, NULL) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "coplanar");
  loom_mesh_destroy(box);
}

/* The broad phase's rigid pairs are exactly the pairs of overlapping substep boxes brute force
 * finds (with at least one dynamic body), on random boxes. */
TEST(rigid_broadphase_matches_brute_force) {
  fx_rng r = {777};
  loom_world *w = fx_world(1.0 / 60);
  w->gravity = v3(0, 0, 0);
  const int n = 60;
  for (int i = 0; i < n; i++) {
    loom_rigid_def d;
    loom_rigid_def_default(&d);
    char name[16];
    snprintf(name, sizeof name, "r%d", i);
    d.name = name;
    d.shape = LOOM_SHAPE_BOX;
    d.half_extents = v3(0.05 + 0.3 * fx_unit(&r), 0.05 + 0.3 * fx_unit(&r), 0.05 + 0.3 * fx_unit(&r));
    d.position = v3_scale(fx_vec(&r), 2.5);
    d.orientation = fx_quat(&r);
    d.motion = i % 5 == 0 ? LOOM_STATIC : LOOM_DYNAMIC;
    if (d.motion == LOOM_DYNAMIC) d.velocity = fx_vec(&r);
    CHECK(loom_rigid_create(w, &d) != 0);
  }
  arena_mark mark = arena_get_mark(&w->scratch);
  step_info s = {w->dt, w->dt, 0, 1, 0, 1};
  phase_begin(w, &s);
  phase_predict(w, &s);
  broadphase_pairs(w, &s);
  int brute = 0, found = 0;
  for (int a = 0; a < w->order_count; a++)
    for (int b = a + 1; b < w->order_count; b++) {
      body_slot *A = &w->bodies[w->order[a]], *B = &w->bodies[w->order[b]];
      if (!A->ops->moves(A) && !B->ops->moves(B)) continue;
      vec3 la, ha, lb, hb;
      A->ops->bounds(w, A, &s, &la, &ha);
      B->ops->bounds(w, B, &s, &lb, &hb);
      if (!bvh_box_overlap(la, ha, lb, hb)) continue;
      brute++;
      int in = 0;
      for (int k = 0; k < w->npairs; k++)
        in += (w->pairs[k].a == w->order[a] && w->pairs[k].b == w->order[b]) ||
              (w->pairs[k].a == w->order[b] && w->pairs[k].b == w->order[a]);
      CHECK_EQ_INT(in, 1);
      found += in;
    }
  CHECK(brute > 10); /* the boxes are crowded enough to test something */
  CHECK_EQ_INT(w->npairs, brute);
  CHECK_EQ_INT(found, brute);
  w->pairs = NULL;
  w->npairs = 0;
  arena_release(&w->scratch, mark);
  loom_world_destroy(w);
}

/* The reference inside test: the winding number of a closed mesh around p, the sum of its
 * triangles' signed solid angles (van Oosterom and Strackee 1983) over 4 pi. */
static double winding_number(const loom_mesh *m, vec3 p) {
  double sum = 0;
  for (int t = 0; t < m->nt; t++) {
    const vec3 a = v3_sub(m->v[m->tri[3 * t]], p), b = v3_sub(m->v[m->tri[3 * t + 1]], p);
    const vec3 c = v3_sub(m->v[m->tri[3 * t + 2]], p);
    const double la = v3_len(a), lb = v3_len(b), lc = v3_len(c);
    sum += 2 * atan2(v3_dot(a, v3_cross(b, c)), la * lb * lc + v3_dot(a, b) * lc + v3_dot(a, c) * lb + v3_dot(b, c) * la);
  }
  return sum / (4 * FX_PI);
}

/* Checks a closed mesh body's signed distance at 3000 points: random ones in the box [-e, e], and
 * ones within 5 mm of a vertex or of an edge's midpoint (the corner and edge regions). Returns
 * how many were inside. */
static int check_signed(loom_world *w, loom_mesh *m, vec3 e) {
  rigid_body *r = make_mesh_shape(w, LOOM_SHAPE_MESH, loom_mesh_copy(m), LOOM_STATIC);
  CHECK(r && r->model.vert_pn != NULL);
  fx_rng g = {2024};
  int inside = 0, outside = 0;
  for (int k = 0; k < 3000; k++) {
    vec3 p;
    if (k < 1000) {
      p = v3(e.x * (2 * fx_unit(&g) - 1), e.y * (2 * fx_unit(&g) - 1), e.z * (2 * fx_unit(&g) - 1));
    } else {
      const int t = (int)(fx_next(&g) % (uint64_t)m->nt), c = (int)(fx_next(&g) % 3);
      vec3 a = m->v[m->tri[3 * t + c]];
      if (k >= 2000) a = v3_scale(v3_add(a, m->v[m->tri[3 * t + (c + 1) % 3]]), 0.5);
      p = v3_add(a, v3(0.005 * (2 * fx_unit(&g) - 1), 0.005 * (2 * fx_unit(&g) - 1), 0.005 * (2 * fx_unit(&g) - 1)));
    }
    vec3 n;
    const double d = rigid_local_distance(r, p, &n);
    const double wn = winding_number(m, p);
    CHECK_MSG(fabs(wn) < 1e-6 || fabs(wn - 1) < 1e-6, "winding number %g", wn);
    if (fabs(d) < 1e-9) continue;
    const int in = wn > 0.5;
    inside += in, outside += !in;
    CHECK_MSG((d < 0) == in, "point %d (%g, %g, %g): distance %g, winding number %g", k, p.x, p.y, p.z, d, wn);
    double u = INFINITY;
    for (int t = 0; t < m->nt; t++) {
      double bw[3];
      const vec3 q = geom_closest_on_triangle(p, m->v[m->tri[3 * t]], m->v[m->tri[3 * t + 1]], m->v[m->tri[3 * t + 2]], bw);
      u = fmin(u, v3_dist(p, q));
    }
    CHECK_NEAR(fabs(d), u, 1e-12);
    CHECK_NEAR(v3_len(n), 1, 1e-9);
    CHECK_NEAR(rigid_local_distance(r, v3_madd(p, n, -d), NULL), 0, 1e-9);
  }
  CHECK(outside > 500);
  return inside;
}

/* A closed mesh obstacle has an inside: its distance is negative exactly where the winding number
 * says the point is inside, on a torus (saddle vertices inside its ring) and on a tetrahedron
 * (edges and corners sharper than a right angle, where a face's own normal gives the wrong side
 * and the pseudo-normals do not); its size is the distance to the nearest triangle, and the
 * normal leads from the point to the surface point p - d n. An open mesh and a closed one wound
 * inside out keep the unsigned distance. */
TEST(rigid_closed_mesh_distance_is_signed_by_pseudo_normals) {
  loom_world *w = fx_world(1.0 / 60);
  loom_mesh *torus = loom_mesh_torus(0.4, 0.15, 24, 8);
  int32_t ea, eb;
  CHECK_EQ_INT(mesh_open_edge(torus, &ea, &eb), 0);
  CHECK(mesh_signed_volume(torus) > 0);
  CHECK(check_signed(w, torus, v3(0.6, 0.6, 0.2)) > 300);
  const loom_vec3 tv[4] = {{0, 0, 0}, {0.2, 0, 0}, {0.1, 0.17, 0}, {0.1, 0.06, 0.16}};
  const int32_t tt[12] = {0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3};
  loom_mesh *tet = loom_mesh_from_arrays(tv, 4, tt, 4);
  CHECK(check_signed(w, tet, v3(0.3, 0.3, 0.3)) > 50);
  loom_mesh_destroy(tet);
  rigid_body *r = make_mesh_shape(w, LOOM_SHAPE_MESH, loom_mesh_copy(torus), LOOM_STATIC);
  /* inside out: the same triangles wound the other way have no inside */
  for (int t = 0; t < torus->nt; t++) {
    const int32_t s = torus->tri[3 * t + 1];
    torus->tri[3 * t + 1] = torus->tri[3 * t + 2];
    torus->tri[3 * t + 2] = s;
  }
  CHECK(mesh_signed_volume(torus) < 0);
  rigid_body *flipped = make_mesh_shape(w, LOOM_SHAPE_MESH, loom_mesh_copy(torus), LOOM_STATIC);
  CHECK(flipped->model.vert_pn == NULL);
  const double centre = rigid_local_distance(r, v3(0.4, 0, 0), NULL); /* the tube's centre line */
  CHECK(centre < -0.13);
  CHECK_NEAR(rigid_local_distance(flipped, v3(0.4, 0, 0), NULL), -centre, 1e-15);
  /* one triangle turned over: used twice in one direction; one triangle fewer: open */
  torus->tri[1] ^= torus->tri[2], torus->tri[2] ^= torus->tri[1], torus->tri[1] ^= torus->tri[2];
  CHECK_EQ_INT(mesh_open_edge(torus, &ea, &eb), 1);
  torus->tri[1] ^= torus->tri[2], torus->tri[2] ^= torus->tri[1], torus->tri[1] ^= torus->tri[2];
  CHECK_EQ_INT(mesh_open_edge(torus, &ea, &eb), 0);
  torus->nt--;
  CHECK_EQ_INT(mesh_open_edge(torus, &ea, &eb), 2);
  loom_mesh_destroy(torus);
  /* an open sheet: the same distance on both sides */
  const loom_vec3 c0 = {0, 0, 0};
  rigid_body *sheet = make_mesh_shape(w, LOOM_SHAPE_MESH, loom_mesh_grid(1, 1, 4, 4, &c0, 0), LOOM_STATIC);
  CHECK(sheet->model.vert_pn == NULL);
  CHECK_NEAR(rigid_local_distance(sheet, v3(0.1, 0.1, -0.2), NULL), 0.2, 1e-12);
  CHECK_NEAR(rigid_local_distance(sheet, v3(0.1, 0.1, 0.2), NULL), 0.2, 1e-12);
  loom_world_destroy(w);
}

/* A dynamic sphere, capsule or box made with its centre inside a static closed mesh (a box's
 * triangles, top at z = 0) is pushed out through the nearest face and comes to rest on the top,
 * as it does on the analytic box; the mesh's triangles alone held it against their inner side
 * and it fell to the bottom face, inside. */
TEST(rigid_body_made_inside_a_closed_mesh_is_pushed_out) {
  for (int shape = 0; shape < 3; shape++) {
    loom_world *w = fx_world(1.0 / 240);
    loom_mesh *box = loom_mesh_box(1, 1, 0.25, 1);
    const loom_vec3 down = {0, 0, -0.25};
    loom_mesh_transform(box, NULL, NULL, &down);
    rigid_body *floor = make_mesh_shape(w, LOOM_SHAPE_MESH, box, LOOM_STATIC);
    CHECK(floor->model.vert_pn != NULL);
    const int kind[3] = {LOOM_SHAPE_SPHERE, LOOM_SHAPE_CAPSULE, LOOM_SHAPE_BOX};
    rigid_body *b = make_body(&w, kind[shape], v3(0.1, 0.1, 0.1), 0.1, LOOM_DYNAMIC);
    b->state.pos = b->state.pos0 = b->state.target_pos = v3(0, 0, -0.05);
    for (int k = 0; k < 480; k++) loom_world_step(w);
    const double rest[3] = {0.1, 0.3, 0.1}; /* radius; half height + radius (axis along z); half extent */
    CHECK_MSG(fabs(b->state.pos.z - rest[shape]) < 2e-3, "shape %d rests at z = %g, expected %g", shape,
              b->state.pos.z, rest[shape]);
    loom_world_destroy(w);
  }
}
