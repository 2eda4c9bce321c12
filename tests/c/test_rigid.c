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

static rigid_body *make_body(loom_world **w, int shape, vec3 half, double r, int motion) {
  if (!*w) *w = fx_world(1.0 / 60);
  loom_rigid_def d;
  loom_rigid_def_default(&d);
  static int serial;
  char name[32];
  snprintf(name, sizeof name, "b%d", serial++);
  d.name = name;
  d.shape = shape;
  d.half_extents = half;
  d.radius = r;
  d.half_height = 0.2;
  d.motion = motion;
  int h = loom_rigid_create(*w, &d);
  CHECK(h != 0);
  return rigid_of_slot(&(*w)->bodies[handle_slot(h)]);
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
