/* rigid_body.c — rigid bodies: creation (shape, mass properties, polytope), poses over a step,
 * distance queries, and the public calls that read or push them. */
#include <string.h>

#include <stddef.h>

#include "rigid/rigid.h"

LOOM_API void loom_rigid_def_default(loom_rigid_def *def) {
  if (!def) return;
  memset(def, 0, sizeof *def);
  def->shape = LOOM_SHAPE_SPHERE;
  def->radius = 0.5;
  def->half_height = 0.5;
  def->half_extents = v3(0.5, 0.5, 0.5);
  def->motion = LOOM_STATIC;
  def->orientation = q_identity();
  def->friction = 0.3;
  def->restitution = 0;
  def->thickness = 0;
  def->density = 1000;
  def->linear = def->angular = 1;
  def->gravity_scale = 1;
  def->can_sleep = 1;
}

static int positive(const char *name, const char *field, double v) {
  if (!(v > 0) || !isfinite(v) || v > 1e6)
    return loom_fail("rigid '%s': '%s' must be a positive number (<= 1e6 m), got %g", name, field, v);
  return 0;
}

static int validate(const loom_rigid_def *d) {
  const char *nm = d->name;
  switch (d->shape) {
  case LOOM_SHAPE_SPHERE:
    if (positive(nm, "radius", d->radius)) return -1;
    break;
  case LOOM_SHAPE_BOX:
    if (positive(nm, "half_extents.x", d->half_extents.x) || positive(nm, "half_extents.y", d->half_extents.y) ||
        positive(nm, "half_extents.z", d->half_extents.z))
      return -1;
    break;
  case LOOM_SHAPE_CAPSULE:
  case LOOM_SHAPE_CYLINDER:
    if (positive(nm, "radius", d->radius) || positive(nm, "half_height", d->half_height)) return -1;
    break;
  case LOOM_SHAPE_CONVEX:
    if (!d->mesh) return loom_fail("rigid '%s': shape 'convex' needs a mesh", nm);
    if (mesh_validate(d->mesh) != 0) {
      loom_error_prefix("rigid");
      return -1;
    }
    if (mesh_check_reach(d->mesh->v, d->mesh->nv, "rigid", nm)) return -1;
    break;
  case LOOM_SHAPE_MESH:
    if (!d->mesh) return loom_fail("rigid '%s': shape 'mesh' needs a mesh", nm);
    if (d->mesh->nt <= 0) return loom_fail("rigid '%s': the mesh has no triangles", nm);
    if (mesh_validate(d->mesh) != 0) {
      loom_error_prefix("rigid");
      return -1;
    }
    if (mesh_check_reach(d->mesh->v, d->mesh->nv, "rigid", nm)) return -1;
    break;
  default: return loom_fail("rigid '%s': unknown shape %d", nm, d->shape);
  }
  if (d->motion == LOOM_DYNAMIC) {
    if (d->shape == LOOM_SHAPE_MESH)
      return loom_fail("rigid '%s': a triangle mesh shape is static or kinematic only (static = true or kinematic = true)", nm);
    if (!isfinite(d->mass) || d->mass < 0 || d->mass > 1e12)
      return loom_fail("rigid '%s': 'mass' must be a positive number of kg, got %g", nm, d->mass);
    if (d->mass == 0 && (!isfinite(d->density) || !(d->density > 0) || d->density > 1e6))
      return loom_fail("rigid '%s': 'density' must be a positive number of kg/m^3, got %g", nm, d->density);
    if (!v3_isfinite(d->velocity) || v3_len(d->velocity) > SOFT_MAX_SPEED)
      return loom_fail("rigid '%s': 'velocity' must be finite and at most 1e4 m/s (the divergence guard's limit), got "
                       "(%g, %g, %g)", nm, d->velocity.x, d->velocity.y, d->velocity.z);
    if (!v3_isfinite(d->angular_velocity) || v3_len(d->angular_velocity) > SOFT_MAX_SPEED)
      return loom_fail("rigid '%s': 'angular_velocity' must be finite and at most 1e4 rad/s, got (%g, %g, %g)", nm,
                       d->angular_velocity.x, d->angular_velocity.y, d->angular_velocity.z);
    if (d->integrator < RIGID_SYMPLECTIC || d->integrator > RIGID_EULER)
      return loom_fail("rigid '%s': unknown integrator %d", nm, d->integrator);
    if (!isfinite(d->linear_damping) || d->linear_damping < 0 || !isfinite(d->angular_damping) || d->angular_damping < 0)
      return loom_fail("rigid '%s': damping must be a non-negative number", nm);
    if (!isfinite(d->gravity_scale) || fabs(d->gravity_scale) > 1e3)
      return loom_fail("rigid '%s': 'gravity_scale' must be a number in [-1000, 1000]", nm);
  } else if (d->linear != 1 || d->angular != 1 || v3_len2(d->velocity) > 0 || v3_len2(d->angular_velocity) > 0) {
    return loom_fail("rigid '%s': a %s body has no velocity and no enabled motions; they apply to dynamic bodies",
                     nm, d->motion == LOOM_KINEMATIC ? "kinematic" : "static");
  }
  if (d->motion != LOOM_STATIC && d->motion != LOOM_KINEMATIC && d->motion != LOOM_DYNAMIC) return loom_fail("rigid '%s': unknown motion %d", nm, d->motion);
  if (!v3_isfinite(d->position) || v3_len(d->position) > SOFT_MAX_COORD)
    return loom_fail("rigid '%s': 'position' must be finite and within 1e6 m of the origin, got (%g, %g, %g)", nm,
                     d->position.x, d->position.y, d->position.z);
  quat q = d->orientation;
  double qn = q_norm(q);
  if (!isfinite(qn) || !(qn > 1e-9))
    return loom_fail("rigid '%s': 'orientation' must be a non-zero quaternion {w, x, y, z}", nm);
  if (!isfinite(d->friction) || d->friction < 0 || d->friction > 10)
    return loom_fail("rigid '%s': 'friction' must be a number in [0, 10], got %g", nm, d->friction);
  if (!isfinite(d->restitution) || d->restitution < 0 || d->restitution > 1)
    return loom_fail("rigid '%s': 'restitution' must be a number in [0, 1], got %g", nm, d->restitution);
  if (!isfinite(d->thickness) || d->thickness < 0 || d->thickness > 1)
    return loom_fail("rigid '%s': 'thickness' must be a number in [0, 1], got %g", nm, d->thickness);
  return 0;
}

/* The triangles' edges for contacts: adj[3 t + k] is the triangle across edge tri[k] -> tri[k + 1]
 * of triangle t (-1: a boundary edge); bit k of convex[t]: the edge is a convex fold (the
 * neighbour's far corner below t's plane by more than 1e-3 of its distance to the edge's line,
 * seen from the triangles' front), bit k + 3: a fold of more than 10 degrees. 0, or -1 when out
 * of memory. */
int rigid_mesh_edges(const loom_mesh *m, int32_t **adj_out, uint8_t **convex_out) {
  int32_t *adj = core_alloc((size_t)m->nt * 3, sizeof(int32_t));
  uint8_t *convex = core_calloc((size_t)m->nt, 1);
  if (!adj || !convex) {
    core_free(adj);
    core_free(convex);
    return -1;
  }
  for (int i = 0; i < 3 * m->nt; i++) adj[i] = -1;
  const double sin_fold = sin(10.0 * LOOM_PI / 180.0);
  for (int e = 0; e < m->ne; e++) {
    const int a = m->edge[2 * e], b = m->edge[2 * e + 1];
    for (int s = 0; s < 2; s++) {
      const int t = m->edge_tri[2 * e + s], u = m->edge_tri[2 * e + 1 - s];
      if (t < 0 || u < 0) continue;
      const int32_t *o = &m->tri[3 * u];
      const int c = o[0] != a && o[0] != b ? o[0] : (o[1] != a && o[1] != b ? o[1] : o[2]);
      const vec3 ab = v3_sub(m->v[b], m->v[a]), ac = v3_sub(m->v[c], m->v[a]);
      const vec3 nt = v3_normalize(v3_cross(v3_sub(m->v[m->tri[3 * t + 1]], m->v[m->tri[3 * t]]),
                                            v3_sub(m->v[m->tri[3 * t + 2]], m->v[m->tri[3 * t]])));
      const double across = v3_len(v3_cross(ab, ac)) / fmax(v3_len(ab), 1e-300); /* c's distance to the edge's line */
      const double below = -v3_dot(nt, ac);
      const int bits = (below > 1e-3 * across ? 1 : 0) | (below > sin_fold * across ? 8 : 0);
      for (int k = 0; k < 3; k++) {
        const int p = m->tri[3 * t + k], q = m->tri[3 * t + (k + 1) % 3];
        if ((p == a && q == b) || (p == b && q == a)) {
          adj[3 * t + k] = u;
          convex[t] |= (uint8_t)(bits << k);
        }
      }
    }
  }
  *adj_out = adj;
  *convex_out = convex;
  return 0;
}

/* A closed mesh's inside (rigid.h, vert_pn): each vertex's angle-weighted pseudo-normal, the sum
 * of its triangles' normals weighted by their angles at it. Any other mesh keeps vert_pn NULL and
 * an unsigned distance. */
static int build_inside(rigid_body *r) {
  const loom_mesh *m = r->model.mesh;
  int32_t a, b;
  const int open = mesh_open_edge(m, &a, &b);
  if (open < 0) return -1;
  if (open > 0 || !(mesh_signed_volume(m) > 0)) return 0;
  vec3 *pn = core_calloc((size_t)m->nv, sizeof(vec3));
  if (!pn) return -1;
  for (int t = 0; t < m->nt; t++)
    for (int k = 0; k < 3; k++) {
      const int i = m->tri[3 * t + k];
      const vec3 e1 = v3_sub(m->v[m->tri[3 * t + (k + 1) % 3]], m->v[i]);
      const vec3 e2 = v3_sub(m->v[m->tri[3 * t + (k + 2) % 3]], m->v[i]);
      const double angle = atan2(v3_len(v3_cross(e1, e2)), v3_dot(e1, e2));
      pn[i] = v3_madd(pn[i], r->model.tri_normal[t], angle);
    }
  r->model.vert_pn = pn;
  return 0;
}

/* The pseudo-normal of the feature of triangle t that holds the point of barycentric coordinates
 * w (as the nearest-point search gives them: exact zeros off the face's interior): a corner's,
 * an edge's (the sum of its two triangles' normals) or the face's. */
static vec3 inside_normal(const rigid_body *r, int t, const double w[3]) {
  int zeros = 0, zero = 0, corner = 0;
  for (int k = 0; k < 3; k++) {
    if (w[k] <= 0) zeros++, zero = k;
    if (w[k] > w[corner]) corner = k;
  }
  if (zeros >= 2) return r->model.vert_pn[r->model.mesh->tri[3 * t + corner]];
  if (zeros == 1) {
    const int u = r->model.tri_adj[3 * t + (zero + 1) % 3]; /* the edge opposite corner `zero` */
    if (u >= 0) return v3_add(r->model.tri_normal[t], r->model.tri_normal[u]);
  }
  return r->model.tri_normal[t];
}

static int build_mesh_shape(rigid_body *r, const loom_mesh *src) {
  r->model.mesh = loom_mesh_copy(src);
  if (!r->model.mesh) return -1;
  const loom_mesh *m = r->model.mesh;
  vec3 *lo = core_alloc((size_t)m->nt, sizeof(vec3));
  vec3 *hi = core_alloc((size_t)m->nt, sizeof(vec3));
  r->model.tri_normal = core_alloc((size_t)m->nt, sizeof(vec3));
  if (!lo || !hi || !r->model.tri_normal) {
    core_free(lo);
    core_free(hi);
    return -1;
  }
  for (int t = 0; t < m->nt; t++) {
    vec3 a = m->v[m->tri[3 * t]], b = m->v[m->tri[3 * t + 1]], c = m->v[m->tri[3 * t + 2]];
    lo[t] = v3_min(a, v3_min(b, c));
    hi[t] = v3_max(a, v3_max(b, c));
    r->model.tri_normal[t] = v3_normalize(v3_cross(v3_sub(b, a), v3_sub(c, a)));
  }
  int rc = bvh_build(&r->model.tree, lo, hi, m->nt, 4);
  core_free(lo);
  core_free(hi);
  if (rc != 0) return -1;
  if (rigid_mesh_edges(m, &r->model.tri_adj, &r->model.tri_convex) != 0) return -1;
  if (r->model.shape_type == LOOM_SHAPE_MESH && build_inside(r) != 0) return -1;
  loom_mesh_aabb(m, &r->model.local_lo, &r->model.local_hi);
  return 0;
}

/* A convex hull: the hull of the mesh's vertices, moved so that its centre of mass is the body's
 * origin (the body is placed so that the hull stays where the mesh frame put it), its mass
 * properties from the exact polyhedral integrals, its polytope, tree and features. */
static int build_convex(rigid_body *r, const loom_rigid_def *def) {
  loom_mesh *hull = loom_mesh_convex_hull(def->mesh, NULL);
  if (!hull) {
    loom_error_prefix("rigid");
    return -1;
  }
  double m;
  vec3 com;
  mat3 I;
  if (rigid_mass_properties(LOOM_SHAPE_MESH, NULL, hull, def->mass > 0 ? 1.0 : def->density, &m, &com, &I) != 0) {
    loom_mesh_destroy(hull);
    loom_error_prefix("rigid");
    return -1;
  }
  for (int i = 0; i < hull->nv; i++) hull->v[i] = v3_sub(hull->v[i], com);
  const vec3 shift = q_rotate(r->state.q, com);
  r->state.pos = r->state.pos0 = r->state.target_pos = v3_add(r->state.pos, shift);
  int rc = build_mesh_shape(r, hull);
  if (rc == 0) {
    r->model.poly = rigid_poly_hull(r->model.mesh);
    if (!r->model.poly) {
      loom_error_prefix("rigid");
      rc = -1;
    }
  }
  loom_mesh_destroy(hull);
  if (rc) return -1;
  if (def->mass > 0) {
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) I.m[i][j] *= def->mass / m;
    m = def->mass;
  }
  r->model.mass = m;
  r->model.inertia = I;
  if (!(m > 0) || !m3_inverse(&I, &r->model.inv_inertia))
    return loom_fail("rigid '%s': the hull has no usable mass (mass %g kg)", def->name, m);
  r->model.inv_mass = 1.0 / m;
  return rigid_build_features(r) || rigid_build_ccd(r) ? -1 : 0;
}

int rigid_create(loom_world *w, int slot, const void *vdef) {
  const loom_rigid_def *def = vdef;
  if (validate(def) != 0) return -1;
  rigid_body *r = core_calloc(1, sizeof *r);
  if (!r) return -1;
  w->bodies[slot].data = r;
  r->model.shape_type = def->shape;
  r->params.motion = def->motion;
  r->state.pos = r->state.pos0 = r->state.target_pos = def->position;
  r->state.q = r->state.q0 = r->state.target_q = q_normalize(def->orientation);
  r->params.friction = def->friction;
  r->params.restitution = def->restitution;
  r->params.thickness = def->thickness;
  r->params.linear = def->linear != 0;
  r->params.angular = def->angular != 0;
  r->params.integrator = def->integrator;
  r->params.linear_damping = def->linear_damping;
  r->params.angular_damping = def->angular_damping;
  r->params.gravity_scale = def->gravity_scale;
  r->params.altitude_gravity = def->altitude_gravity != 0;
  r->params.can_sleep = def->can_sleep != 0;
  r->params.layers = 1;
  r->params.mask = 0x7fffffff;
  r->state.span0 = 0;
  r->state.span1 = 1;
  r->solver_index = -1;
  r->fresh = 1;
  if (def->motion == LOOM_DYNAMIC) {
    r->state.vel = def->linear ? def->velocity : v3(0, 0, 0);
    r->state.omega = def->angular ? def->angular_velocity : v3(0, 0, 0);
  }
  geom_shape *s = &r->model.shape;
  switch (def->shape) {
  case LOOM_SHAPE_SPHERE:
    s->type = GEOM_SPHERE;
    s->radius = def->radius;
    break;
  case LOOM_SHAPE_BOX:
    s->type = GEOM_BOX;
    s->half = def->half_extents;
    break;
  case LOOM_SHAPE_CAPSULE:
    s->type = GEOM_CAPSULE;
    s->radius = def->radius;
    s->half_h = def->half_height;
    break;
  case LOOM_SHAPE_CYLINDER:
    s->type = GEOM_CYLINDER;
    s->radius = def->radius;
    s->half_h = def->half_height;
    break;
  case LOOM_SHAPE_MESH:
    if (build_mesh_shape(r, def->mesh) != 0) return -1;
    return rigid_build_features(r) || rigid_build_ccd(r) ? -1 : 0;
  case LOOM_SHAPE_CONVEX: return build_convex(r, def);
  }
  if (def->shape == LOOM_SHAPE_SPHERE || def->shape == LOOM_SHAPE_CAPSULE) r->model.rounded = def->radius;
  vec3 e = geom_shape_extent(s);
  r->model.local_lo = v3_neg(e);
  r->model.local_hi = e;
  if (def->shape == LOOM_SHAPE_BOX) r->model.poly = rigid_poly_box(s->half);
  if (def->shape == LOOM_SHAPE_CYLINDER) r->model.poly = rigid_poly_prism(s->radius, s->half_h, 24);
  if ((def->shape == LOOM_SHAPE_BOX || def->shape == LOOM_SHAPE_CYLINDER) && !r->model.poly)
    return loom_fail("rigid '%s': out of memory", def->name);
  vec3 com;
  if (rigid_mass_properties(def->shape, s, NULL, def->mass > 0 ? 1.0 : def->density, &r->model.mass, &com,
                            &r->model.inertia) != 0) {
    loom_error_prefix("rigid");
    return -1;
  }
  if (def->mass > 0) { /* the shape's mass distribution scaled to the given mass */
    double k = def->mass / r->model.mass;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) r->model.inertia.m[i][j] *= k;
    r->model.mass = def->mass;
  }
  if (!(r->model.mass > 0) || !isfinite(r->model.mass) || !m3_inverse(&r->model.inertia, &r->model.inv_inertia))
    return loom_fail("rigid '%s': the shape has no usable mass (mass %g kg)", def->name, r->model.mass);
  r->model.inv_mass = 1.0 / r->model.mass;
  return rigid_build_features(r) || rigid_build_ccd(r) ? -1 : 0;
}

void rigid_free(void *data) {
  rigid_body *r = data;
  if (!r) return;
  loom_mesh_destroy(r->model.mesh);
  bvh_free(&r->model.tree);
  core_free(r->model.tri_normal);
  core_free(r->model.tri_adj);
  core_free(r->model.tri_convex);
  core_free(r->model.vert_pn);
  core_free(r->model.feat_pt);
  core_free(r->model.feat_pt_n);
  core_free(r->model.feat_seg);
  core_free(r->model.feat_seg_n);
  core_free(r->model.feat_pt_r);
  core_free(r->model.feat_seg_r);
  core_free(r->model.feat_seg_side);
  core_free(r->model.feat_pt_hard);
  core_free(r->model.feat_seg_hard);
  rigid_ccd_free(&r->model);
  rigid_poly_free(r->model.poly);
  core_free(r);
}

void rigid_pose_at(const rigid_body *r, double a, vec3 *pos, quat *q) {
  const double s0 = r->state.span0, s1 = r->state.span1;
  a = s1 > s0 ? (a - s0) / (s1 - s0) : 1;
  if (a <= 0) {
    *pos = r->state.pos0;
    *q = r->state.q0;
  } else if (a >= 1) {
    *pos = r->state.target_pos;
    *q = r->state.target_q;
  } else {
    *pos = v3_lerp(r->state.pos0, r->state.target_pos, a);
    *q = q_nlerp(r->state.q0, r->state.target_q, a);
  }
}

static void posed_aabb(const rigid_body *r, vec3 pos, quat q, vec3 *lo, vec3 *hi) {
  /* |R| applied to the local half extents bounds the rotated box */
  mat3 R = q_to_mat3(q);
  vec3 c = v3_scale(v3_add(r->model.local_lo, r->model.local_hi), 0.5);
  vec3 e = v3_scale(v3_sub(r->model.local_hi, r->model.local_lo), 0.5);
  vec3 wc = v3_add(pos, m3_mulv(&R, c));
  vec3 we;
  we.x = fabs(R.m[0][0]) * e.x + fabs(R.m[0][1]) * e.y + fabs(R.m[0][2]) * e.z;
  we.y = fabs(R.m[1][0]) * e.x + fabs(R.m[1][1]) * e.y + fabs(R.m[1][2]) * e.z;
  we.z = fabs(R.m[2][0]) * e.x + fabs(R.m[2][1]) * e.y + fabs(R.m[2][2]) * e.z;
  *lo = v3_sub(wc, we);
  *hi = v3_add(wc, we);
}

void rigid_current_aabb(const rigid_body *r, double pad, vec3 *lo, vec3 *hi) {
  posed_aabb(r, r->state.pos, r->state.q, lo, hi);
  const vec3 p = v3(pad, pad, pad);
  *lo = v3_sub(*lo, p);
  *hi = v3_add(*hi, p);
}

void rigid_swept_aabb(const rigid_body *r, double pad, vec3 *lo, vec3 *hi) {
  vec3 l0, h0, l1, h1;
  posed_aabb(r, r->state.pos0, r->state.q0, &l0, &h0);
  posed_aabb(r, r->state.target_pos, r->state.target_q, &l1, &h1);
  vec3 p = v3(pad, pad, pad);
  *lo = v3_sub(v3_min(l0, l1), p);
  *hi = v3_add(v3_max(h0, h1), p);
}

vec3 rigid_point_velocity(const rigid_body *r, vec3 p) {
  /* about the body origin at the end of the step (substep, dynamic), where contacts are resolved */
  return v3_add(r->state.vel, v3_cross(r->state.omega, v3_sub(p, r->state.target_pos)));
}

int rigid_mesh_closest(const rigid_body *r, vec3 p, double max_dist, double *dist, vec3 *closest, double bary[3],
                       obstacle_query *mq) {
  const loom_mesh *m = r->model.mesh;
  if (!mq) return bvh_closest_triangle(&r->model.tree, m->v, m->tri, p, max_dist, dist, closest, bary, NULL);
  mq->brute_tests += m->nt;
  if (mq->brute) return bvh_closest_triangle_scan(m->nt, m->v, m->tri, p, max_dist, dist, closest, bary, &mq->tests);
  return bvh_closest_triangle(&r->model.tree, m->v, m->tri, p, max_dist, dist, closest, bary, &mq->tests);
}

double rigid_local_distance(const rigid_body *r, vec3 p, vec3 *n) { return rigid_local_distance_q(r, p, n, NULL); }

double rigid_local_distance_q(const rigid_body *r, vec3 p, vec3 *n, obstacle_query *mq) {
  if (!rigid_shape_has_mesh(r->model.shape_type)) return geom_shape_sdf(&r->model.shape, p, n);
  const rigid_poly *poly = r->model.poly;
  if (r->model.shape_type == LOOM_SHAPE_CONVEX && poly) {
    /* inside a convex polytope: minus the distance to the nearest face plane (exact) */
    double best = -INFINITY;
    int bf = 0;
    for (int f = 0; f < poly->nf; f++) {
      double d = v3_dot(poly->face_n[f], p) - poly->face_d[f];
      if (d > best) best = d, bf = f;
    }
    if (best <= 0) {
      if (n) *n = poly->face_n[bf];
      return best;
    }
  }
  /* the distance to the nearest triangle (branch and bound in the tree); on a closed mesh negative
   * inside, where p lies behind the pseudo-normal of the nearest feature */
  double d, w[3];
  vec3 q;
  int best = rigid_mesh_closest(r, p, INFINITY, &d, &q, w, mq);
  if (best < 0) {
    if (n) *n = v3(0, 0, 1);
    return INFINITY;
  }
  if (r->model.vert_pn && v3_dot(v3_sub(p, q), inside_normal(r, best, w)) < 0) d = -d;
  if (n) *n = fabs(d) > 1e-12 ? v3_scale(v3_sub(p, q), 1.0 / d) : r->model.tri_normal[best];
  return d;
}

/* ---- public -------------------------------------------------------------------------------------- */

static rigid_body *rigid_of(const loom_world *w, int handle, const char *fn) {
  int slot = world_slot(w, handle, LOOM_KIND_RIGID, fn);
  return slot < 0 ? NULL : rigid_of_slot(&w->bodies[slot]);
}

LOOM_API int loom_rigid_motion(const loom_world *w, int body) {
  rigid_body *r = rigid_of(w, body, "rigid:motion");
  return r ? r->params.motion : -1;
}

LOOM_API int loom_rigid_pose(const loom_world *w, int body, loom_vec3 *position, loom_quat *orientation) {
  rigid_body *r = rigid_of(w, body, "rigid:pose");
  if (!r) return -1;
  if (position) *position = r->state.pos;
  if (orientation) *orientation = r->state.q;
  return 0;
}

LOOM_API int loom_rigid_velocity(const loom_world *w, int body, loom_vec3 *v, loom_vec3 *omega) {
  rigid_body *r = rigid_of(w, body, "rigid:velocity");
  if (!r) return -1;
  if (v) *v = r->state.vel;
  if (omega) *omega = r->state.omega;
  return 0;
}

LOOM_API int loom_rigid_set_target(loom_world *w, int body, const loom_vec3 *position, const loom_quat *orientation) {
  rigid_body *r = rigid_of(w, body, "rigid:set_target");
  if (!r) return -1;
  int slot = world_slot(w, body, LOOM_KIND_RIGID, "rigid:set_target");
  if (r->params.motion != LOOM_KINEMATIC)
    return loom_fail("rigid '%s' is static; only kinematic bodies follow targets (kinematic = true)", w->bodies[slot].name);
  if (!position || !v3_isfinite(*position) || v3_len(*position) > SOFT_MAX_COORD)
    return loom_fail("rigid '%s': target position must be finite and within 1e6 m of the origin", w->bodies[slot].name);
  if (orientation && !(q_norm(*orientation) > 1e-9 && isfinite(q_norm(*orientation))))
    return loom_fail("rigid '%s': target orientation must be a non-zero quaternion", w->bodies[slot].name);
  /* the step's motion from the pose to the target: beyond the divergence guard's speed it would
   * only stop what it touches (a cloth in its way was frozen with advice about dt and stiffness) */
  const double dt = w->dt;
  const double speed = v3_len(v3_sub(*position, r->state.pos)) / dt;
  if (!(speed <= SOFT_MAX_SPEED))
    return loom_fail("rigid '%s': the target (%g, %g, %g) is %g m from its pose, a speed of %.3g m/s over the step of "
                     "%g s, beyond 1e4 m/s (the divergence guard's limit): move it with set_pose to jump, or slow its "
                     "trajectory", w->bodies[slot].name, position->x, position->y, position->z,
                     v3_len(v3_sub(*position, r->state.pos)), speed, dt);
  const quat tq = orientation ? q_normalize(*orientation) : r->state.q;
  const quat dq = q_mul(tq, q_conj(r->state.q));
  const double half = atan2(sqrt(dq.x * dq.x + dq.y * dq.y + dq.z * dq.z), fabs(dq.w));
  if (!(2 * half / dt <= SOFT_MAX_SPEED))
    return loom_fail("rigid '%s': the target orientation is %.3g rad from its pose, a spin of %.3g rad/s over the step "
                     "of %g s, beyond 1e4 rad/s (the divergence guard's limit): turn it with set_pose to jump, or slow "
                     "its trajectory", w->bodies[slot].name, 2 * half, 2 * half / dt, dt);
  r->state.target_pos = *position;
  r->state.target_q = tq;
  r->state.has_target = 1;
  return 0;
}

LOOM_API int loom_rigid_set_pose(loom_world *w, int body, const loom_vec3 *position, const loom_quat *orientation) {
  rigid_body *r = rigid_of(w, body, "rigid:set_pose");
  if (!r) return -1;
  if (position) {
    if (!v3_isfinite(*position) || v3_len(*position) > SOFT_MAX_COORD)
      return loom_fail("rigid:set_pose: position must be finite and within 1e6 m of the origin, got (%g, %g, %g)",
                       position->x, position->y, position->z);
    r->state.pos = r->state.pos0 = r->state.target_pos = *position;
  }
  if (orientation) {
    if (!(q_norm(*orientation) > 1e-9 && isfinite(q_norm(*orientation))))
      return loom_fail("rigid:set_pose: orientation must be a non-zero quaternion");
    r->state.q = r->state.q0 = r->state.target_q = q_normalize(*orientation);
  }
  r->state.has_target = 0;
  r->state.vel = r->state.omega = v3(0, 0, 0);
  r->state.asleep = 0;
  r->state.sleep_time = 0;
  return 0;
}

static rigid_body *dynamic_of(loom_world *w, int body, const char *fn) {
  int slot = world_slot(w, body, LOOM_KIND_RIGID, fn);
  if (slot < 0) return NULL;
  rigid_body *r = rigid_of_slot(&w->bodies[slot]);
  if (!rigid_is_dynamic(r)) {
    loom_fail("%s: rigid '%s' is %s: forces, impulses and velocities move dynamic bodies only", fn, w->bodies[slot].name,
              r->params.motion == LOOM_STATIC ? "static" : "kinematic");
    return NULL;
  }
  return r;
}

LOOM_API int loom_rigid_apply(loom_world *w, int body, const loom_vec3 *f, const loom_vec3 *p, int impulse) {
  const char *fn = impulse ? "rigid:apply_impulse" : "rigid:apply_force";
  rigid_body *r = dynamic_of(w, body, fn);
  if (!r) return -1;
  if (!f || !v3_isfinite(*f) || v3_len(*f) > 1e15) return loom_fail("%s: the vector must be finite", fn);
  if (p && !v3_isfinite(*p)) return loom_fail("%s: the point must be finite", fn);
  vec3 tau = p ? v3_cross(v3_sub(*p, r->state.pos), *f) : v3(0, 0, 0);
  if (impulse) {
    if (r->params.linear) r->state.vel = v3_madd(r->state.vel, *f, r->model.inv_mass);
    if (r->params.angular) {
      mat3 Ii = rigid_world_inv_inertia(r, r->state.q);
      r->state.omega = v3_add(r->state.omega, m3_mulv(&Ii, tau));
    }
  } else {
    r->state.force = v3_add(r->state.force, *f);
    r->state.torque = v3_add(r->state.torque, tau);
  }
  r->state.asleep = 0;
  r->state.sleep_time = 0;
  return 0;
}

LOOM_API int loom_rigid_apply_torque(loom_world *w, int body, const loom_vec3 *torque) {
  rigid_body *r = dynamic_of(w, body, "rigid:apply_torque");
  if (!r) return -1;
  if (!torque || !v3_isfinite(*torque) || v3_len(*torque) > 1e15) return loom_fail("rigid:apply_torque: the torque must be finite");
  r->state.torque = v3_add(r->state.torque, *torque);
  r->state.asleep = 0;
  r->state.sleep_time = 0;
  return 0;
}

LOOM_API int loom_rigid_set_velocity(loom_world *w, int body, const loom_vec3 *v, const loom_vec3 *omega) {
  rigid_body *r = dynamic_of(w, body, "rigid:set_velocity");
  if (!r) return -1;
  if ((v && (!v3_isfinite(*v) || v3_len(*v) > SOFT_MAX_SPEED)) ||
      (omega && (!v3_isfinite(*omega) || v3_len(*omega) > SOFT_MAX_SPEED)))
    return loom_fail("rigid:set_velocity: velocities must be finite and at most 1e4 m/s (rad/s)");
  if (v) r->state.vel = r->params.linear ? *v : v3(0, 0, 0);
  if (omega) r->state.omega = r->params.angular ? *omega : v3(0, 0, 0);
  r->state.asleep = 0;
  r->state.sleep_time = 0;
  return 0;
}

LOOM_API int loom_rigid_mass(const loom_world *w, int body, double *mass, double inertia[9], int *asleep) {
  rigid_body *r = rigid_of(w, body, "rigid:mass");
  if (!r) return -1;
  if (mass) *mass = r->model.mass;
  if (inertia) {
    mat3 R = q_to_mat3(r->state.q), Rt = m3_transpose(&R);
    mat3 a = m3_mul(&R, &r->model.inertia), I = m3_mul(&a, &Rt);
    for (int i = 0; i < 9; i++) inertia[i] = I.m[i / 3][i % 3];
  }
  if (asleep) *asleep = r->state.asleep;
  return 0;
}

/* Drawing data is not kept in the body: the tessellation is made when asked for. */
LOOM_API loom_mesh *loom_rigid_shape_mesh(const loom_world *w, int body) {
  rigid_body *r = rigid_of(w, body, "rigid:shape_mesh");
  if (!r) return NULL;
  const geom_shape *s = &r->model.shape;
  switch (r->model.shape_type) {
  case LOOM_SHAPE_SPHERE: return loom_mesh_sphere(s->radius, 48, 24);
  case LOOM_SHAPE_BOX: return loom_mesh_box(s->half.x, s->half.y, s->half.z, 1);
  case LOOM_SHAPE_CAPSULE: return loom_mesh_capsule(s->radius, s->half_h, 32, 8);
  case LOOM_SHAPE_CYLINDER: return loom_mesh_cylinder(s->radius, s->half_h, 48, 1);
  default: return loom_mesh_copy(r->model.mesh);
  }
}

LOOM_API int loom_rigid_distance(const loom_world *w, int body, const loom_vec3 *p, double *distance, loom_vec3 *normal) {
  rigid_body *r = rigid_of(w, body, "rigid:distance");
  if (!r) return -1;
  if (!p || !v3_isfinite(*p)) return loom_fail("rigid:distance: point must be finite");
  vec3 local = q_rotate_inv(r->state.q, v3_sub(*p, r->state.pos));
  vec3 n;
  double d = rigid_local_distance(r, local, &n);
  if (distance) *distance = d;
  if (normal) *normal = q_rotate(r->state.q, n);
  return 0;
}
