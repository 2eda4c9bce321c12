/* test_ccd.c — the collision pipeline's formulas (Bridson, Fedkiw & Anderson 2002, document 000):
 * the coplanarity cubic and its roots (000's two plotted polynomials, touching and grazing roots),
 * point–triangle and edge–edge continuous tests against a sampled reference on random and
 * adversarial motions, the repulsion and inelastic impulses (0.1 d exactly, v_N = 0, equal masses
 * = Bridson's formula, infinite mass), and a world in which two cloths meet: momentum kept, nothing
 * crosses. */
#include <stdlib.h>
#include <string.h>

#include "kernel_fixtures.h"
#include "contact/contact.h"
#include "geom/geom.h"

static double cubic_at(const double c[4], double t) { return ((c[3] * t + c[2]) * t + c[1]) * t + c[0]; }

TEST(ccd_000_plotted_polynomials) {
  /* 000: p(t) = 1.034e-5 t^3 - 1.24e-4 t + 7.84e-6 has one root in [0, 0.1] s; on [0, 1] after
   * t = 0.1 u the coefficients are c_k 0.1^k */
  const double T = 0.1;
  double c[4] = {7.84e-6, -1.24e-4 * T, 0, 1.034e-5 * T * T * T};
  double r[GEOM_CUBIC_MAX_ROOTS];
  int n = geom_cubic_roots01(c, 1e-18, r);
  CHECK_EQ_INT(n, 1);
  double t = r[0] * T;
  CHECK(t > 0.0630 && t < 0.0636);
  CHECK(fabs(cubic_at(c, r[0])) < 1e-15);
  /* sign change across the root, as in the plot */
  CHECK(cubic_at(c, r[0] - 1e-6) > 0 && cubic_at(c, r[0] + 1e-6) < 0);
  /* 000: -3.27e-3 t^2 + 1e-4 t + 3.98e-6 stays positive on [0, 0.05] s (its root is at 0.0534 s) */
  const double T2 = 0.05;
  double q[4] = {3.98e-6, 1e-4 * T2, -3.27e-3 * T2 * T2, 0};
  CHECK_EQ_INT(geom_cubic_roots01(q, 1e-18, r), 0);
  const double T3 = 0.06;
  double q3[4] = {3.98e-6, 1e-4 * T3, -3.27e-3 * T3 * T3, 0};
  CHECK_EQ_INT(geom_cubic_roots01(q3, 1e-18, r), 1);
  CHECK_NEAR(r[0] * T3, 0.05341, 1e-4);
}

TEST(ccd_cubic_touching_grazing_and_degenerate) {
  double r[GEOM_CUBIC_MAX_ROOTS];
  /* (t - 0.5)^2: a grazing double root, no sign change */
  double g[4] = {0.25, -1, 1, 0};
  CHECK_EQ_INT(geom_cubic_roots01(g, 1e-15, r), 1);
  CHECK_NEAR(r[0], 0.5, 1e-7);
  /* (t - 0.3)^3: triple root */
  double tr[4] = {-0.027, 0.27, -0.9, 1};
  CHECK(geom_cubic_roots01(tr, 1e-15, r) >= 1);
  CHECK_NEAR(r[0], 0.3, 1e-4);
  /* roots exactly at the ends */
  double e[4] = {0, 1, -1, 0}; /* t (1 - t) */
  CHECK_EQ_INT(geom_cubic_roots01(e, 0, r), 2);
  CHECK_NEAR(r[0], 0, 0);
  CHECK_NEAR(r[1], 1, 0);
  /* three simple roots */
  double three[4] = {-0.1 * 0.5 * 0.9, 0.1 * 0.5 + 0.1 * 0.9 + 0.5 * 0.9, -(0.1 + 0.5 + 0.9), 1};
  CHECK_EQ_INT(geom_cubic_roots01(three, 1e-15, r), 3);
  CHECK_NEAR(r[0], 0.1, 1e-9);
  CHECK_NEAR(r[1], 0.5, 1e-9);
  CHECK_NEAR(r[2], 0.9, 1e-9);
  /* constant non-zero, and non-finite coefficients: nothing */
  double k[4] = {1, 0, 0, 0};
  CHECK_EQ_INT(geom_cubic_roots01(k, 1e-15, r), 0);
  double bad[4] = {NAN, 1, 0, 0};
  CHECK_EQ_INT(geom_cubic_roots01(bad, 1e-15, r), 0);
}

/* Reference: the point crosses the triangle's interior if, sampled finely, the signed plane
 * distance changes sign where the point projects inside with a margin. */
static int reference_pt(const vec3 x[4], const vec3 d[4], double margin) {
  const int S = 4000;
  double prev = 0;
  for (int i = 0; i <= S; i++) {
    const double t = (double)i / S;
    vec3 a = v3_madd(x[0], d[0], t), b = v3_madd(x[1], d[1], t), c = v3_madd(x[2], d[2], t), p = v3_madd(x[3], d[3], t);
    vec3 n = v3_cross(v3_sub(b, a), v3_sub(c, a));
    const double s = v3_dot(v3_sub(p, a), n);
    if (i > 0 && ((s <= 0) != (prev <= 0))) {
      double w[3];
      geom_closest_on_triangle(p, a, b, c, w);
      if (w[0] > margin && w[1] > margin && w[2] > margin) return 1;
    }
    prev = s;
  }
  return 0;
}

/* Distance of the pair at time t of its motion. */
static double distance_at(int edge_edge, const vec3 x[4], const vec3 d[4], double t) {
  vec3 y[4];
  double w[4];
  for (int k = 0; k < 4; k++) y[k] = v3_madd(x[k], d[k], t);
  return geom_proximity(edge_edge, y, w, NULL);
}

TEST(ccd_point_triangle_matches_sampled_reference) {
  fx_rng r = {12345};
  int crossings = 0, misses = 0, false_far = 0;
  for (int it = 0; it < 3000; it++) {
    vec3 x[4], d[4];
    for (int k = 0; k < 4; k++) {
      x[k] = fx_vec(&r);
      d[k] = v3_scale(fx_vec(&r), 1.5);
    }
    const int ref = reference_pt(x, d, 1e-3);
    geom_ccd_hit hit;
    const int got = geom_ccd_point_triangle(x, d, 1e-9, &hit);
    crossings += ref;
    if (ref && !got) misses++;
    if (got) {
      /* a reported hit is real: at its time the point is on the triangle */
      if (distance_at(0, x, d, hit.t) > 1e-8) false_far++;
      CHECK(hit.t >= 0 && hit.t <= 1);
      CHECK_NEAR(v3_len(hit.n), 1, 1e-12);
      CHECK_NEAR(hit.w[3], 1, 0);
      CHECK_NEAR(hit.w[0] + hit.w[1] + hit.w[2], -1, 1e-12);
    }
  }
  CHECK(crossings > 100);
  CHECK_EQ_INT(misses, 0);
  CHECK_EQ_INT(false_far, 0);
}

TEST(ccd_edge_edge_matches_sampled_reference) {
  fx_rng r = {777};
  int crossings = 0, misses = 0;
  for (int it = 0; it < 3000; it++) {
    vec3 x[4], d[4];
    for (int k = 0; k < 4; k++) {
      x[k] = fx_vec(&r);
      d[k] = v3_scale(fx_vec(&r), 1.5);
    }
    /* reference: sampled signed volume changes sign where the closest points are interior */
    const int S = 4000;
    double prev = 0;
    int ref = 0;
    for (int i = 0; i <= S && !ref; i++) {
      const double t = (double)i / S;
      vec3 y[4];
      for (int k = 0; k < 4; k++) y[k] = v3_madd(x[k], d[k], t);
      const double s = v3_dot(v3_cross(v3_sub(y[1], y[0]), v3_sub(y[3], y[2])), v3_sub(y[2], y[0]));
      if (i > 0 && ((s <= 0) != (prev <= 0))) {
        double a, b;
        const double dist2 = geom_segment_segment(y[0], y[1], y[2], y[3], &a, &b);
        const double len = v3_dist(y[0], y[1]) + v3_dist(y[2], y[3]);
        if (a > 1e-3 && a < 1 - 1e-3 && b > 1e-3 && b < 1 - 1e-3 && sqrt(dist2) < 1e-3 * len / S * 50) ref = 1;
      }
      prev = s;
    }
    geom_ccd_hit hit;
    const int got = geom_ccd_edge_edge(x, d, 1e-9, &hit);
    crossings += ref;
    if (ref && !got) misses++;
    if (got) {
      CHECK(distance_at(1, x, d, hit.t) <= 1e-8);
      CHECK_NEAR(hit.w[0] + hit.w[1], 1, 1e-12);
      CHECK_NEAR(hit.w[2] + hit.w[3], -1, 1e-12);
    }
  }
  CHECK(crossings > 20);
  CHECK_EQ_INT(misses, 0);
}

TEST(ccd_adversarial_configurations) {
  geom_ccd_hit hit;
  /* triangle in z = 0; the point crosses the plane outside it: no collision */
  vec3 x[4] = {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(2, 2, 1)};
  vec3 d[4] = {v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, -2)};
  CHECK_EQ_INT(geom_ccd_point_triangle(x, d, 1e-9, &hit), 0);
  /* the same through the inside: a collision at t = 0.5 with the normal on the start side */
  x[3] = v3(0.2, 0.2, 1);
  CHECK_EQ_INT(geom_ccd_point_triangle(x, d, 1e-9, &hit), 1);
  CHECK_NEAR(hit.t, 0.5, 1e-12);
  CHECK_NEAR(hit.n.z, 1, 1e-12);
  CHECK_NEAR(hit.w[0], -0.6, 1e-12);
  /* ends exactly on the triangle: t = 1; starts on it: t = 0 */
  d[3] = v3(0, 0, -1);
  CHECK_EQ_INT(geom_ccd_point_triangle(x, d, 1e-9, &hit), 1);
  CHECK_NEAR(hit.t, 1, 0);
  x[3] = v3(0.2, 0.2, 0);
  d[3] = v3(0, 0, 1);
  CHECK_EQ_INT(geom_ccd_point_triangle(x, d, 1e-9, &hit), 1);
  CHECK_NEAR(hit.t, 0, 0);
  /* both move together, parallel to the plane: never meet */
  x[3] = v3(0.2, 0.2, 0.5);
  for (int k = 0; k < 4; k++) d[k] = v3(3, -1, 0);
  CHECK_EQ_INT(geom_ccd_point_triangle(x, d, 1e-9, &hit), 0);
  /* coplanar motion throughout: a point sliding in the triangle's plane into it */
  x[3] = v3(2, 0.1, 0);
  for (int k = 0; k < 3; k++) d[k] = v3(0, 0, 0);
  d[3] = v3(-1.9, 0, 0);
  CHECK_EQ_INT(geom_ccd_point_triangle(x, d, 1e-9, &hit), 1);
  /* a triangle rotating about its edge so that its plane sweeps over a point outside it */
  vec3 y[4] = {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0.2, -0.5, 0.5)};
  vec3 e[4] = {v3(0, 0, 0), v3(0, 0, 0), v3(0, -1, 1), v3(0, 0, 0)};
  CHECK_EQ_INT(geom_ccd_point_triangle(y, e, 1e-9, &hit), 0);
  /* edges that become coplanar without crossing: parallel edges sliding into one plane */
  vec3 a[4] = {v3(0, 0, 1), v3(1, 0, 1), v3(0, 1, 0), v3(1, 1, 0)};
  vec3 da[4] = {v3(0, 0, -1), v3(0, 0, -1), v3(0, 0, 0), v3(0, 0, 0)};
  CHECK_EQ_INT(geom_ccd_edge_edge(a, da, 1e-9, &hit), 0);
  /* crossing edges: hit at t = 0.5 in the middle of both */
  vec3 b[4] = {v3(-1, 0, 1), v3(1, 0, 1), v3(0, -1, 0), v3(0, 1, 0)};
  vec3 db[4] = {v3(0, 0, -2), v3(0, 0, -2), v3(0, 0, 0), v3(0, 0, 0)};
  CHECK_EQ_INT(geom_ccd_edge_edge(b, db, 1e-9, &hit), 1);
  CHECK_NEAR(hit.t, 0.5, 1e-12);
  CHECK_NEAR(hit.w[0], 0.5, 1e-12);
  CHECK_NEAR(hit.w[2], -0.5, 1e-12);
  CHECK_NEAR(hit.n.z, 1, 1e-12);
  /* the same edges passing beside each other: none */
  b[2] = v3(2, -1, 0);
  b[3] = v3(2, 1, 0);
  CHECK_EQ_INT(geom_ccd_edge_edge(b, db, 1e-9, &hit), 0);
  /* non-finite input */
  b[0].x = NAN;
  CHECK_EQ_INT(geom_ccd_edge_edge(b, db, 1e-9, &hit), 0);
}

TEST(ccd_repulsion_impulse) {
  /* point over the middle of a triangle, equal masses, approaching */
  const double w[4] = {-1.0 / 3, -1.0 / 3, -1.0 / 3, 1};
  const double m[4] = {0.01, 0.01, 0.01, 0.01}, inv[4] = {100, 100, 100, 100};
  const vec3 n = v3(0, 0, 1);
  const double h = 0.01, thick = 0.004, dist = 0.001, d = thick - dist;
  vec3 dv;
  /* stiff spring: limited to 0.1 d per step: the separation grows by exactly 0.1 d */
  CHECK_EQ_INT(contact_repulsion(w, inv, m, n, v3(0, 0, -0.5), dist, thick, 1e9, 0, h, &dv), 1);
  CHECK_NEAR(-0.5 + dv.z, 0.1 * d / h, 1e-15);
  CHECK_NEAR(dist + h * (-0.5 + dv.z) - dist, 0.1 * d, 1e-15);
  /* already separating faster than that: nothing */
  CHECK_EQ_INT(contact_repulsion(w, inv, m, n, v3(0, 0, 0.1 * d / h + 1e-9), dist, thick, 1e9, 0, h, &dv), 0);
  CHECK_EQ_INT(contact_repulsion(w, inv, m, n, v3(0, 0, -1), 0.005, thick, 1e9, 0, h, &dv), 0); /* not within */
  /* soft spring at rest: h k d (1/m_A + 1/m_B), m_A = point, m_B = sum of |w| m over the triangle */
  const double k = 0.5;
  CHECK_EQ_INT(contact_repulsion(w, inv, m, n, v3(0, 0, 0), dist, thick, k, 0, h, &dv), 1);
  CHECK_NEAR(dv.z, h * k * d * (1 / 0.01 + 1 / 0.01), 1e-15);
  /* infinite-mass triangle: only the point's mass counts */
  const double inv_fixed[4] = {0, 0, 0, 100};
  CHECK_EQ_INT(contact_repulsion(w, inv_fixed, m, n, v3(0, 0, 0), dist, thick, k, 0, h, &dv), 1);
  CHECK_NEAR(dv.z, h * k * d / 0.01, 1e-15);
  /* Coulomb: the tangential change is at most mu times the normal one, and stops slow sliding */
  CHECK_EQ_INT(contact_repulsion(w, inv, m, n, v3(2, 0, -0.5), dist, thick, 1e9, 0.3, h, &dv), 1);
  CHECK_NEAR(-dv.x, 0.3 * dv.z, 1e-12);
  CHECK_EQ_INT(contact_repulsion(w, inv, m, n, v3(0.01, 0, -0.5), dist, thick, 1e9, 0.3, h, &dv), 1);
  CHECK_NEAR(dv.x, -0.01, 1e-15);
}

TEST(ccd_resting_pair_arrives_at_the_thickness) {
  /* a point 6 mm over a triangle (thickness 4 mm) falling at 0.5 m/s: over h = 10 ms it would end
   * 1 mm inside; the change makes it end exactly at the thickness */
  const vec3 n = v3(0, 0, 1);
  const double h = 0.01, thick = 0.004, dist = 0.006;
  vec3 dv;
  CHECK_EQ_INT(contact_resting(n, v3(0, 0, -0.5), dist, thick, 0, h, &dv), 1);
  CHECK_NEAR(dist + h * (-0.5 + dv.z), thick, 1e-15);
  /* one that stops short of the thickness, or separates, or is already within it: nothing */
  CHECK_EQ_INT(contact_resting(n, v3(0, 0, -0.1), dist, thick, 0, h, &dv), 0);
  CHECK_EQ_INT(contact_resting(n, v3(0, 0, 0.1), dist, thick, 0, h, &dv), 0);
  CHECK_EQ_INT(contact_resting(n, v3(0, 0, -0.5), 0.003, thick, 0, h, &dv), 0);
  CHECK_EQ_INT(contact_resting(n, v3(0, 0, NAN), dist, thick, 0, h, &dv), 0);
  /* Coulomb: the tangential change is at most mu times the normal one, and stops slow sliding */
  CHECK_EQ_INT(contact_resting(n, v3(2, 0, -0.5), dist, thick, 0.3, h, &dv), 1);
  CHECK_NEAR(dv.z, 0.3, 1e-12);
  CHECK_NEAR(-dv.x, 0.3 * dv.z, 1e-12);
  CHECK_EQ_INT(contact_resting(n, v3(0.01, 0, -0.5), dist, thick, 0.3, h, &dv), 1);
  CHECK_NEAR(dv.x, -0.01, 1e-15);
  CHECK_NEAR(dv.y, 0, 0);
}

TEST(ccd_inelastic_target) {
  /* the impulse asks for the velocity that ends the substep 0.1 thick apart along n */
  const double w[4] = {-0.2, -0.3, -0.5, 1};
  vec3 x0[4] = {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0.3, 0.3, 0.002)};
  vec3 v[4] = {v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, -1)};
  const double h = 0.01, thick = 0.004;
  const double dvn = contact_ccd_target(w, x0, v, v3(0, 0, 1), thick, h);
  CHECK_NEAR(0.002 + h * (-1 + dvn), 0.1 * thick, 1e-15);
  /* applied with weights w_k inv_m_k J: v_N as asked, momentum kept, an infinite mass untouched */
  const double m[4] = {0.01, 0.02, 0.04, 0.01};
  double inv[4] = {1 / m[0], 1 / m[1], 0, 1 / m[3]};
  double s = 0;
  for (int k = 0; k < 4; k++) s += w[k] * w[k] * inv[k];
  vec3 p_before = v3(0, 0, 0), p_after = v3(0, 0, 0), vrel = v3(0, 0, 0);
  for (int k = 0; k < 4; k++) {
    vec3 nv = v3_madd(v[k], v3(0, 0, 1), dvn * w[k] * inv[k] / s);
    if (inv[k] > 0) {
      p_before = v3_madd(p_before, v[k], m[k]);
      p_after = v3_madd(p_after, nv, m[k]);
    }
    CHECK(inv[k] > 0 || v3_dist(nv, v[k]) == 0);
    vrel = v3_madd(vrel, nv, w[k]);
  }
  CHECK_NEAR(vrel.z, -1 + dvn, 1e-12);
  /* with equal finite masses the total momentum is unchanged (sum of w = 0) */
  double eq[4] = {100, 100, 100, 100};
  s = 0;
  for (int k = 0; k < 4; k++) s += w[k] * w[k] * eq[k];
  double pz = 0;
  for (int k = 0; k < 4; k++) pz += 0.01 * dvn * w[k] * eq[k] / s;
  CHECK_NEAR(pz, 0, 1e-15);
  /* Bridson's equal-mass form: the point gets 2I/(1 + sum w^2) / m with I = m dvn / 2 */
  const double I = 0.01 * dvn / 2;
  const double bridson = 2 * I / (1 + 0.04 + 0.09 + 0.25) / 0.01;
  CHECK_NEAR(dvn * w[3] * eq[3] / s, bridson, 1e-12);
  /* separating already: 0 */
  v[3] = v3(0, 0, 1);
  CHECK_NEAR(contact_ccd_target(w, x0, v, v3(0, 0, 1), thick, h), 0, 0);
}

TEST(ccd_inelastic_rest_stops_the_approach_at_the_end) {
  /* 000's inelastic impulse: after it the pair's relative normal velocity is zero. The mean
   * velocity keeps what brings the pair to 0.1 thick (contact_ccd_target); what it still
   * approaches with is taken off the end velocity alone (contact_ccd_rest) */
  const double w[4] = {-0.2, -0.3, -0.5, 1};
  vec3 x0[4] = {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0.3, 0.3, 0.002)};
  vec3 v[4] = {v3(0, 0, 0.1), v3(0, 0, 0), v3(0, 0, -0.2), v3(0.4, 0, -1)};
  const vec3 n = v3(0, 0, 1);
  const double h = 0.01, thick = 0.004;
  const double dvn = contact_ccd_target(w, x0, v, n, thick, h);
  const double rest = contact_ccd_rest(w, v, n, dvn);
  double vn = 0;
  for (int k = 0; k < 4; k++) vn += w[k] * v[k].z;
  CHECK(dvn > 0 && rest > 0);
  CHECK_NEAR(vn + dvn + rest, 0, 1e-14);
  /* applied like the impulse (w_k inv_m_k / sum w^2 inv_m): the end velocities have no relative
   * approach, an infinite mass is untouched, the tangential part is not changed */
  const double inv[4] = {100, 50, 0, 100};
  double s = 0;
  for (int k = 0; k < 4; k++) s += w[k] * w[k] * inv[k];
  double rel = 0;
  for (int k = 0; k < 4; k++) {
    const vec3 ve = v3_madd(v[k], n, (dvn + rest) * w[k] * inv[k] / s);
    rel += w[k] * ve.z;
    if (inv[k] == 0) CHECK(v3_dist(ve, v[k]) == 0);
    CHECK(ve.x == v[k].x && ve.y == v[k].y);
  }
  CHECK_NEAR(rel, 0, 1e-13);
  /* with equal finite masses the momentum is kept (sum of w = 0) */
  double eq = 0, peq = 0;
  for (int k = 0; k < 4; k++) eq += w[k] * w[k] * 100;
  for (int k = 0; k < 4; k++) peq += 0.01 * (dvn + rest) * w[k] * 100 / eq;
  CHECK_NEAR(peq, 0, 1e-15);
  /* a pair that starts within 0.1 thick must separate: the target already does more than stop
   * it, and nothing is left */
  x0[3] = v3(0.3, 0.3, 0.0001);
  const double sep = contact_ccd_target(w, x0, v, n, thick, h);
  CHECK(vn + sep > 0);
  CHECK_NEAR(contact_ccd_rest(w, v, n, sep), 0, 0);
  /* separating pairs get nothing */
  v[3] = v3(0, 0, 1);
  CHECK_NEAR(contact_ccd_rest(w, v, n, 0), 0, 0);
}

/* Two cloths flying into each other in zero gravity: nothing passes through at any step, and
 * momentum is what it was (the pipeline's impulses come in equal and opposite pairs). */
TEST(ccd_two_cloths_collide_head_on) {
  loom_world *w = fx_world(0.01);
  loom_vec3 g = {0, 0, 0};
  loom_world_set_gravity(w, &g);
  loom_mesh *m1 = fx_grid(9, 0.4, v3(0, 0, 0.05), LOOM_PLANE_XY);
  loom_mesh *m2 = fx_grid(9, 0.4, v3(0.03, 0.02, -0.05), LOOM_PLANE_XY);
  loom_cloth_def d1 = fx_def(LOOM_MODEL_SPRINGS, "upper", m1), d2 = fx_def(LOOM_MODEL_SPRINGS, "lower", m2);
  d1.thickness = d2.thickness = 0.004;
  d1.drag = d2.drag = 0; /* air drag would take momentum */
  int a = loom_cloth_create(w, &d1), b = loom_cloth_create(w, &d2);
  CHECK(a > 0 && b > 0);
  loom_vec3 *va = loom_body_v(w, a), *vb = loom_body_v(w, b);
  const int n = loom_body_vertex_count(w, a);
  for (int i = 0; i < n; i++) {
    va[i] = (loom_vec3){0, 0, -4};
    vb[i] = (loom_vec3){0, 0, 6};
  }
  const double *ma = loom_body_m(w, a), *mb = loom_body_m(w, b);
  double p0 = 0;
  for (int i = 0; i < n; i++) p0 += ma[i] * va[i].z + mb[i] * vb[i].z;
  int crossings = 0;
  loom_stats st;
  int ccd = 0, listed = 1;
  for (int s = 0; s < 40; s++) {
    loom_world_step(w);
    crossings += loom_world_interpenetrations(w);
    loom_world_stats(w, &st);
    ccd += st.ccd_collisions + st.proximity;
    /* pairs that got impulses came from a candidate list */
    if (st.ccd_collisions + st.proximity > 0 && st.candidates <= 0) listed = 0;
  }
  CHECK_EQ_INT(crossings, 0);
  CHECK(ccd > 0);
  CHECK(listed);
  double p1 = 0;
  for (int i = 0; i < n; i++) p1 += ma[i] * va[i].z + mb[i] * vb[i].z;
  CHECK_NEAR(p1, p0, 1e-9 * fabs(p0) + 1e-12);
  /* the upper cloth is above the lower one everywhere */
  const loom_vec3 *xa = loom_body_x(w, a), *xb = loom_body_x(w, b);
  double za = 0, zb = 0;
  for (int i = 0; i < n; i++) za += xa[i].z, zb += xb[i].z;
  CHECK(za > zb);
  loom_mesh_destroy(m1);
  loom_mesh_destroy(m2);
  loom_world_destroy(w);
}

/* A static box whose top is the plane z = 0. */
static void add_floor(loom_world *w) {
  loom_rigid_def rd;
  loom_rigid_def_default(&rd);
  rd.name = "floor";
  rd.shape = LOOM_SHAPE_BOX;
  rd.half_extents = v3(1, 1, 0.05);
  rd.position = v3(0, 0, -0.05);
  CHECK(loom_rigid_create(w, &rd) != 0);
}

/* A floor and an N x N sheet standing on edge above it, sheared and rippled so that it folds
 * into a pile (thickness 8 mm, self-collision): the sheet's handle; its mesh in *m. */
static int pile_sheet(loom_world *w, int N, loom_mesh **m) {
  add_floor(w);
  *m = fx_grid(N, 0.5, v3(0, 0, 0.3), LOOM_PLANE_XZ);
  loom_cloth_def d = fx_def(LOOM_MODEL_BARAFF_WITKIN, "sheet", *m);
  d.thickness = 0.008;
  d.self_collision = 1;
  const int c = loom_cloth_create(w, &d);
  CHECK(c > 0);
  loom_vec3 *xc = loom_body_x(w, c);
  for (int i = 0; c > 0 && i < N * N; i++) {
    xc[i].x += 0.15 * (xc[i].z - 0.3);
    xc[i].y = 0.03 * sin(18 * xc[i].z);
  }
  return c;
}

/* An N x N Baraff-Witkin sheet of 1 m (thickness 4 mm, self-collision) pinned at two corners:
 * hanging in the xz plane from its top corners (a hair out of the plane, so that it does not rest
 * in the flat balance), or lying in the xy plane to fall from horizontal. Its handle; its mesh in
 * *m. */
static int pinned_sheet(loom_world *w, int N, int hanging, loom_mesh **m) {
  *m = fx_grid(N, 1.0, v3(0, 0, 1), hanging ? LOOM_PLANE_XZ : LOOM_PLANE_XY);
  loom_cloth_def d = fx_def(LOOM_MODEL_BARAFF_WITKIN, hanging ? "hanging" : "falling", *m);
  d.thickness = 0.004;
  d.self_collision = 1;
  const int c = loom_cloth_create(w, &d);
  CHECK(c > 0);
  if (c <= 0) return c;
  loom_vec3 *xc = loom_body_x(w, c);
  if (hanging)
    for (int i = 0; i < N * N; i++) xc[i].y = 1e-4 * sin(7 * xc[i].x + 3 * xc[i].z);
  const int32_t corners[2] = {hanging ? N * N - N : 0, hanging ? N * N - 1 : N - 1};
  CHECK(loom_pins_create(w, c, corners, 2) > 0);
  return c;
}

/* Whether the candidate list's collected run and its top-ups' run are each in strictly ascending
 * order of (type, bodies, features): what the radix sort (in two halves) and the merges promise. */
static int list_sorted(const loom_world *w) {
  for (int c = 1; c < w->ncpairs; c++) {
    if (c == w->cpair_base) continue;
    const collide_pair *p = &w->cpairs[c - 1], *q = &w->cpairs[c];
    const int32_t kp[5] = {p->type, p->a, p->b, p->fa, p->fb}, kq[5] = {q->type, q->a, q->b, q->fa, q->fb};
    int k = 0;
    while (k < 5 && kp[k] == kq[k]) k++;
    if (k == 5 || kp[k] > kq[k]) return 0;
  }
  return 1;
}

/* A candidate list topped up within a substep (the vertices whose paths left their boxes get
 * their pairs added) holds every pair a full traversal of its trees finds, and acts exactly as
 * one collected afresh each time: a sheet dropped on edge onto a floor crumples into a pile
 * onto another sheet (self-collision, cloth on cloth, the floor's passes moving vertices between
 * the pipeline's rounds) with the same bits either way, and the top-ups happened. Their queries
 * pass over the pairs the list already holds (boxes that overlapped before the top-up) without
 * adding them again, and the list stays sorted. */
TEST(ccd_topped_up_list_acts_as_a_fresh_one) {
  enum { N = 16 };
  loom_vec3 x[2][N * N];
  int topups[2] = {0, 0}, crossings = 0, missing = 0, unsorted = 0;
  double listed = 0;
  for (int run = 0; run < 2; run++) {
    loom_world *w = fx_world(0.01);
    w->ctopup_off = run;
    w->ctopup_check = !run;
    loom_mesh *m = NULL;
    const int c = pile_sheet(w, N, &m);
    /* and a second sheet lying on the floor under it: pairs between two cloths */
    loom_mesh *m2 = fx_grid(N, 0.6, v3(0.02, 0.01, 0.01), LOOM_PLANE_XY);
    loom_cloth_def d2 = fx_def(LOOM_MODEL_BARAFF_WITKIN, "under", m2);
    d2.thickness = 0.008;
    CHECK(loom_cloth_create(w, &d2) > 0);
    for (int s = 0; s < 100; s++) {
      CHECK(loom_world_step(w) >= 0);
      crossings += loom_world_interpenetrations(w);
      unsorted += !list_sorted(w);
    }
    memcpy(x[run], loom_body_x(w, c), sizeof x[run]);
    topups[run] = w->ctopups;
    missing += w->ctopup_missing;
    if (!run) listed = w->ctopup_listed;
    loom_mesh_destroy(m);
    loom_mesh_destroy(m2);
    loom_world_destroy(w);
  }
  CHECK_MSG(topups[0] > 0, "no top-up happened (%d)", topups[0]);
  CHECK_EQ_INT(missing, 0); /* every top-up holds every pair its boxes overlap */
  CHECK_MSG(listed > 0, "the top-ups' queries met no pair the list held (%.0f)", listed);
  CHECK_EQ_INT(unsorted, 0);
  CHECK_EQ_INT(topups[1], 0);
  CHECK_EQ_INT(crossings, 0);
  CHECK(memcmp(x[0], x[1], sizeof x[0]) == 0);
}

/* The pipeline's later runs in a substep (after the obstacle passes moved some vertices) test
 * only the pairs with a node that changed since the last run, which left every path free of
 * collisions: the pile of ccd_topped_up_list_acts_as_a_fresh_one stays free of crossings after
 * every step either way, later runs happened, and they tested fewer pairs. */
TEST(ccd_later_runs_test_what_changed) {
  enum { N = 16 };
  int later[2] = {0, 0}, crossings[2] = {0, 0};
  double tested[2] = {0, 0};
  for (int run = 0; run < 2; run++) {
    loom_world *w = fx_world(0.01);
    w->cround_off = run;
    loom_mesh *m = NULL;
    CHECK(pile_sheet(w, N, &m) > 0);
    for (int s = 0; s < 120; s++) {
      CHECK(loom_world_step(w) >= 0);
      crossings[run] += loom_world_interpenetrations(w);
      if (s == 59) tested[run] = w->cpairs_tested; /* while the pile forms */
    }
    later[run] = w->clater_runs;
    loom_mesh_destroy(m);
    loom_world_destroy(w);
  }
  CHECK_EQ_INT(crossings[0], 0);
  CHECK_EQ_INT(crossings[1], 0);
  CHECK_MSG(later[0] > 0, "no later run happened (%d)", later[0]);
  CHECK_EQ_INT(later[1], 0);
  /* (the two piles part ways, so the counts compare two runs, not one state: over the first 60
   * steps, while the pile forms, 0.77; over 80 0.94, and over all 120 1.13 since its landing takes
   * contact substeps) */
  CHECK_MSG(tested[0] < tested[1], "later runs tested %.0f pairs, full ones %.0f", tested[0], tested[1]);
}

/* The candidate search's margin decides how long a list serves and how long it is, never what
 * the pipeline does: a cloth draped over a soft cube (a resting body, whose pairs are engaged up to
 * RESTING_REACH thicknesses apart) ends bit-identical with margins of a quarter, a half and two
 * half thicknesses, without crossings. */
TEST(ccd_margin_changes_no_result) {
  enum { N = 25 };
  loom_vec3 x[3][N * N];
  const double margins[3] = {0.25, 0.5, 2.0};
  int crossings = 0;
  for (int run = 0; run < 3; run++) {
    loom_world *w = fx_world(1.0 / 120);
    w->cmargin = margins[run];
    add_floor(w);
    const loom_vec3 size = {0.3, 0.3, 0.3}, centre = {0, 0, 0.153};
    loom_tet_mesh *tm = loom_tet_mesh_box(&size, 5, 5, 5, &centre, 5);
    loom_solid_def sd;
    loom_solid_def_default(&sd, LOOM_SOLID_NEOHOOKEAN);
    sd.name = "cube";
    sd.mesh = tm;
    sd.young = 2e4;
    sd.poisson = 0.4;
    sd.density = 300;
    sd.thickness = 0.003;
    CHECK(loom_solid_create(w, &sd) > 0);
    loom_mesh *m = fx_grid(N, 0.7, v3(0, 0, 0.36), LOOM_PLANE_XY);
    loom_cloth_def d = fx_def(LOOM_MODEL_BARAFF_WITKIN, "cloth", m);
    d.thickness = 0.004;
    const int c = loom_cloth_create(w, &d);
    CHECK(c > 0);
    for (int s = 0; s < 50; s++) {
      CHECK(loom_world_step(w) >= 0);
      crossings += loom_world_interpenetrations(w);
    }
    memcpy(x[run], loom_body_x(w, c), sizeof x[run]);
    CHECK(x[run][N * N / 2].z < 0.33); /* the cloth reached the cube (top at 0.303 m) */
    loom_mesh_destroy(m);
    loom_tet_mesh_destroy(tm);
    loom_world_destroy(w);
  }
  CHECK_EQ_INT(crossings, 0);
  CHECK(memcmp(x[0], x[1], sizeof x[0]) == 0);
  CHECK(memcmp(x[0], x[2], sizeof x[0]) == 0);
}

/* The search margin climbs its rungs where lists serve many substeps with top-ups (a cloth hanging
 * from two corners, moving a fraction of a millimetre per step), which then need fewer top-ups; a
 * pile falling in folds, whose lists last a substep, climbs only once it rests. Either way every
 * position is bit-identical to the fixed bottom rung, with no crossing. */
TEST(ccd_margin_climbs_where_lists_last) {
  enum { N = 24 };
  loom_vec3 x[2][2][N * N];
  int topups[2][2], top[2][2], crossings = 0;
  for (int scene = 0; scene < 2; scene++)
    for (int run = 0; run < 2; run++) {
      loom_world *w = fx_world(scene == 0 ? 1.0 / 60 : 0.01);
      w->cmargin = run == 1 ? 0.25 : 0;
      loom_mesh *m = NULL;
      const int c = scene == 0 ? pinned_sheet(w, N, 1, &m) : pile_sheet(w, N, &m);
      top[scene][run] = 0;
      int early = 0;
      for (int s = 0; s < 240; s++) {
        CHECK(loom_world_step(w) >= 0);
        if (s % 10 == 9) crossings += loom_world_interpenetrations(w);
        if (w->cm_level > top[scene][run]) top[scene][run] = w->cm_level;
        if (s == 119) early = w->ctopups;
      }
      topups[scene][run] = w->ctopups - early; /* (over the last 120 steps) */
      memcpy(x[scene][run], loom_body_x(w, c), sizeof x[scene][run]);
      loom_mesh_destroy(m);
      loom_world_destroy(w);
    }
  CHECK_EQ_INT(crossings, 0);
  for (int scene = 0; scene < 2; scene++) CHECK(memcmp(x[scene][0], x[scene][1], sizeof x[scene][0]) == 0);
  CHECK_MSG(top[0][0] >= 2, "the hanging cloth's margin reached rung %d", top[0][0]);
  CHECK_MSG(3 * topups[0][0] < 2 * topups[0][1], "hanging: %d top-ups with the climbing margin, %d with the fixed one",
            topups[0][0], topups[0][1]);
  CHECK_EQ_INT(top[0][1], 0);
}

/* Smooth patches (contact_patch.c) leave out only pairs that cannot meet: a cloth pinned at two
 * corners falls from horizontal and swings without touching itself, bit-identical with and
 * without them, while its lists hold a small fraction of the pairs; a pile, whose layers the
 * patches never join, stays free of crossings after every step either way, its lists shorter too.
 * A checkpoint taken while the patches skip pairs continues bit-identically. */
TEST(ccd_smooth_patches_skip_only_what_cannot_meet) {
  enum { N = 24, P = 16 };
  loom_vec3 x[2][N * N];
  double candidates[2][2] = {{0, 0}, {0, 0}};
  int crossings = 0, certified = 0;
  for (int scene = 0; scene < 2; scene++)
    for (int run = 0; run < 2; run++) {
      loom_world *w = fx_world(scene == 0 ? 1.0 / 60 : 0.01);
      w->cpatch_off = run;
      loom_mesh *m = NULL;
      const int c = scene == 0 ? pinned_sheet(w, N, 0, &m) : pile_sheet(w, P, &m);
      const int steps = scene == 0 ? 90 : 150;
      for (int s = 0; s < steps; s++) {
        CHECK(loom_world_step(w) >= 0);
        crossings += loom_world_interpenetrations(w);
        loom_stats st;
        loom_world_stats(w, &st);
        candidates[scene][run] += st.candidates;
        if (!run) certified += fx_soft(w, c)->p.col.pt_certified > 0;
      }
      if (scene == 0) memcpy(x[run], loom_body_x(w, c), sizeof x[run]);
      loom_mesh_destroy(m);
      loom_world_destroy(w);
    }
  CHECK_EQ_INT(crossings, 0);
  CHECK(memcmp(x[0], x[1], sizeof x[0]) == 0);
  CHECK_MSG(candidates[0][0] < 0.2 * candidates[0][1], "falling: %.0f candidates with patches, %.0f without",
            candidates[0][0], candidates[0][1]);
  CHECK_MSG(candidates[1][0] < candidates[1][1], "pile: %.0f candidates with patches, %.0f without", candidates[1][0],
            candidates[1][1]);
  /* (steps of the two scenes in which some patch was certified: 96 since the pile takes substeps
   * near the floor, 100-odd before) */
  CHECK_MSG(certified > 80, "certified in %d steps", certified);
  /* a checkpoint while the patches skip pairs (the list kept and topped up since) */
  loom_world *w[2] = {fx_world(1.0 / 60), fx_world(1.0 / 60)};
  loom_mesh *m[2];
  int c[2];
  for (int k = 0; k < 2; k++) c[k] = pinned_sheet(w[k], N, 1, &m[k]);
  for (int s = 0; s < 60; s++) CHECK(loom_world_step(w[0]) >= 0);
  CHECK(fx_soft(w[0], c[0])->p.col.pt_certified > 0);
  const int size = loom_world_state_size(w[0]);
  void *snap = malloc((size_t)size);
  CHECK(snap && loom_world_save_state(w[0], snap, size) == size);
  CHECK(snap && loom_world_load_state(w[1], snap, size) == 0);
  free(snap);
  for (int s = 0; s < 60; s++) {
    CHECK(loom_world_step(w[0]) >= 0);
    CHECK(loom_world_step(w[1]) >= 0);
  }
  char h0[17], h1[17];
  fx_hash(w[0], h0);
  fx_hash(w[1], h1);
  CHECK(strcmp(h0, h1) == 0);
  for (int k = 0; k < 2; k++) {
    loom_mesh_destroy(m[k]);
    loom_world_destroy(w[k]);
  }
}
