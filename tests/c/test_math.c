/* test_math.c — math_vec.h / math_quat.c: quaternion <-> matrix round trips (identity and 180°
 * rotations included), rotation composition, norm preservation, angular velocity from two
 * orientations, slerp/nlerp, 3x3 inverse and determinant identities.
 *
 * Tolerances are stated in units of the double epsilon (2.2e-16) times a small operation count:
 * these are exact formulas evaluated in floating point, so only rounding separates them from the
 * identities being checked. */
#include "kernel_fixtures.h"

#define EPS 2.220446049250313e-16

/* Largest |a_ij - b_ij|. */
static double m3_maxdiff(const mat3 *a, const mat3 *b) {
  double d = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) d = fmax(d, fabs(a->m[i][j] - b->m[i][j]));
  return d;
}

static mat3 random_mat3(fx_rng *r) {
  mat3 a;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) a.m[i][j] = fx_sym(r);
  return a;
}

static double q_dot(quat a, quat b) { return a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z; }

/* Angle (rad) of the rotation taking a to b, in [0, pi]. */
static double q_angle_between(quat a, quat b) {
  double d = fabs(q_dot(a, b));
  /* the atan2 form is accurate near 0 where acos(d) loses half the digits */
  quat e = q_mul(b, q_conj(a));
  double s = sqrt(e.x * e.x + e.y * e.y + e.z * e.z);
  return 2.0 * atan2(s, d);
}

/* One quaternion checked against its matrix: orthonormal, det +1, and the matrix converts back to
 * the same rotation (q or -q). */
static void check_round_trip(quat q, const char *what) {
  mat3 R = q_to_mat3(q);
  mat3 RtR = m3_transpose(&R);
  RtR = m3_mul(&RtR, &R);
  mat3 I = m3_identity();
  /* each entry of R is 1 - 2(..) or 2(..) of unit-norm products: a few eps; R^T R adds 3 more */
  CHECK_MSG(m3_maxdiff(&RtR, &I) <= 16 * EPS, "%s: R^T R - I = %.3g", what, m3_maxdiff(&RtR, &I));
  CHECK_MSG(fabs(m3_det(&R) - 1) <= 16 * EPS, "%s: det R - 1 = %.3g", what, m3_det(&R) - 1);
  quat p = q_from_mat3(&R);
  CHECK_MSG(isfinite(p.w) && isfinite(p.x) && isfinite(p.y) && isfinite(p.z), "%s: non-finite quaternion", what);
  CHECK_MSG(fabs(q_norm(p) - 1) <= 4 * EPS, "%s: |q| - 1 = %.3g", what, q_norm(p) - 1);
  /* q and -q are the same rotation; Shepperd's branch choice keeps every division by >= 1/2 so
   * the recovered components carry only a few eps of error */
  CHECK_MSG(fabs(fabs(q_dot(p, q)) - 1) <= 16 * EPS, "%s: |<q, from_mat3(to_mat3(q))>| = %.17g", what, q_dot(p, q));
  double comp = fmax(fmax(fabs(fabs(p.w) - fabs(q.w)), fabs(fabs(p.x) - fabs(q.x))),
                     fmax(fabs(fabs(p.y) - fabs(q.y)), fabs(fabs(p.z) - fabs(q.z))));
  CHECK_MSG(comp <= 16 * EPS, "%s: components differ by %.3g", what, comp);
  mat3 R2 = q_to_mat3(p);
  CHECK_MSG(m3_maxdiff(&R, &R2) <= 32 * EPS, "%s: matrix round trip differs by %.3g", what, m3_maxdiff(&R, &R2));
}

TEST(math_quat_matrix_round_trip_special_rotations) {
  /* The identity: the 003 seed divided by the (zero) vector part here. */
  mat3 I = m3_identity();
  quat qi = q_from_mat3(&I);
  CHECK(qi.w == 1 && qi.x == 0 && qi.y == 0 && qi.z == 0);
  check_round_trip(q_identity(), "identity");

  /* Half turns: trace = -1, the w component is 0 and the other branches of Shepperd's method
   * must take over. The matrices are exact, so the quaternions are too. */
  mat3 rx = {{{1, 0, 0}, {0, -1, 0}, {0, 0, -1}}};
  mat3 ry = {{{-1, 0, 0}, {0, 1, 0}, {0, 0, -1}}};
  mat3 rz = {{{-1, 0, 0}, {0, -1, 0}, {0, 0, 1}}};
  quat qx = q_from_mat3(&rx), qy = q_from_mat3(&ry), qz = q_from_mat3(&rz);
  CHECK(qx.w == 0 && fabs(qx.x) == 1 && qx.y == 0 && qx.z == 0);
  CHECK(qy.w == 0 && qy.x == 0 && fabs(qy.y) == 1 && qy.z == 0);
  CHECK(qz.w == 0 && qz.x == 0 && qz.y == 0 && fabs(qz.z) == 1);

  const vec3 axes[] = {v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1), v3(1, 1, 0), v3(1, 1, 1), v3(1, -2, 3), v3(-0.3, 0, 1)};
  const double angles[] = {FX_PI, -FX_PI, FX_PI - 1e-9, FX_PI / 2, 1e-12, 0.0, 2 * FX_PI - 1e-7, 3.0};
  char what[96];
  for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++)
    for (size_t k = 0; k < sizeof angles / sizeof angles[0]; k++) {
      snprintf(what, sizeof what, "axis %zu angle %.12g", a, angles[k]);
      check_round_trip(q_from_axis_angle(axes[a], angles[k]), what);
    }
}

TEST(math_quat_matrix_round_trip_random) {
  fx_rng r = {0x1234567ull};
  char what[64];
  for (int i = 0; i < 20000; i++) {
    quat q = fx_quat(&r);
    snprintf(what, sizeof what, "random %d", i);
    check_round_trip(q, what);
  }
}

TEST(math_quat_rotate_matches_matrix_and_composition) {
  fx_rng r = {99};
  for (int i = 0; i < 5000; i++) {
    quat a = fx_quat(&r), b = fx_quat(&r);
    vec3 v = v3_scale(fx_vec(&r), 10.0);
    mat3 Ra = q_to_mat3(a), Rb = q_to_mat3(b);
    /* q v q* against R v: both are a handful of products of unit quantities times |v| = 10 */
    vec3 d = v3_sub(q_rotate(a, v), m3_mulv(&Ra, v));
    CHECK_MSG(v3_len(d) <= 64 * EPS * 10, "q_rotate vs R v: %.3g", v3_len(d));
    vec3 di = v3_sub(q_rotate_inv(a, v), m3_tmulv(&Ra, v));
    CHECK_MSG(v3_len(di) <= 64 * EPS * 10, "q_rotate_inv vs R^T v: %.3g", v3_len(di));
    /* rotations keep lengths and undo each other */
    CHECK_NEAR(v3_len(q_rotate(a, v)), v3_len(v), 64 * EPS * 10);
    CHECK(v3_len(v3_sub(q_rotate_inv(a, q_rotate(a, v)), v)) <= 64 * EPS * 10);
    /* R(a b) = R(a) R(b): quaternion product is composition (b first, then a) */
    mat3 Rab = q_to_mat3(q_mul(a, b)), RaRb = m3_mul(&Ra, &Rb);
    CHECK_MSG(m3_maxdiff(&Rab, &RaRb) <= 64 * EPS, "R(ab) vs R(a)R(b): %.3g", m3_maxdiff(&Rab, &RaRb));
    vec3 c1 = q_rotate(q_mul(a, b), v), c2 = q_rotate(a, q_rotate(b, v));
    CHECK(v3_len(v3_sub(c1, c2)) <= 64 * EPS * 10);
  }
  /* axis-angle convention: a positive angle about z turns x towards y (right hand) */
  vec3 y = q_rotate(q_from_axis_angle(v3(0, 0, 2), FX_PI / 2), v3(1, 0, 0));
  CHECK_NEAR(y.x, 0, 4 * EPS);
  CHECK_NEAR(y.y, 1, 4 * EPS);
  CHECK_NEAR(y.z, 0, 4 * EPS);
}

TEST(math_quat_norm_stays_one_after_many_products) {
  fx_rng r = {7};
  quat q = q_identity(), raw = q_identity();
  mat3 R = m3_identity();
  double worst = 0;
  for (int i = 0; i < 100000; i++) {
    quat d = q_from_axis_angle(fx_unit_vec(&r), 0.1 * fx_sym(&r));
    q = q_normalize(q_mul(d, q));
    raw = q_mul(d, raw);
    worst = fmax(worst, fabs(q_norm(q) - 1));
    if (i < 1000) {
      mat3 D = q_to_mat3(d);
      R = m3_mul(&D, &R);
    }
    if (i == 999) {
      /* the product of 1000 quaternions is the product of their matrices (rounding grows like
       * sqrt(n) eps; 1e-12 is a generous bound for n = 1000) */
      mat3 Rq = q_to_mat3(q);
      CHECK_MSG(m3_maxdiff(&Rq, &R) <= 1e-12, "quaternion vs matrix chain: %.3g", m3_maxdiff(&Rq, &R));
    }
  }
  /* normalisation after each product keeps |q| within a few eps of 1 for ever */
  CHECK_MSG(worst <= 4 * EPS, "max ||q| - 1| = %.3g", worst);
  /* without it the norm wanders (a random walk of rounding errors), but stays a rotation when
   * normalised at the end: both chains describe the same orientation */
  CHECK(fabs(fabs(q_dot(q, q_normalize(raw))) - 1) <= 1e-10);
}

TEST(math_quat_angular_velocity_recovers_axis_angle) {
  fx_rng r = {2024};
  for (int i = 0; i < 5000; i++) {
    quat a = fx_quat(&r);
    vec3 axis = fx_unit_vec(&r);
    /* angles up to just below a half turn, where the shortest arc is still this one */
    double angle = (FX_PI - 1e-6) * fx_unit(&r);
    if (i % 10 == 0) angle = 1e-9 * fx_unit(&r) + 1e-12; /* tiny rotations */
    double dt = 1e-3 + fx_unit(&r);
    quat b = q_mul(q_from_axis_angle(axis, angle), a); /* world-frame rotation applied after a */
    vec3 w = q_angular_velocity(a, b, dt);
    vec3 expect = v3_scale(axis, angle / dt);
    /* relative to |omega| (the axis comes from the vector part of b a*), plus the absolute
     * rounding of b itself: its components carry ~eps error, i.e. ~eps rad of angle */
    double err = v3_len(v3_sub(w, expect));
    double tol = 1e-12 * v3_len(expect) + 8 * EPS / dt;
    CHECK_MSG(err <= tol, "angle %.3g dt %.3g: |omega - expected| = %.3g (|omega| %.3g)", angle, dt, err,
              v3_len(expect));
    /* q and -q are the same orientation: same answer */
    quat nb = {-b.w, -b.x, -b.y, -b.z};
    vec3 w2 = q_angular_velocity(a, nb, dt);
    CHECK(v3_len(v3_sub(w2, w)) <= tol);
  }
  /* more than a half turn one way is less than a half turn the other way */
  quat a = q_identity();
  quat b = q_from_axis_angle(v3(0, 0, 1), 1.5 * FX_PI);
  vec3 w = q_angular_velocity(a, b, 2.0);
  CHECK_NEAR(w.x, 0, 1e-15);
  CHECK_NEAR(w.y, 0, 1e-15);
  CHECK_NEAR(w.z, -0.5 * FX_PI / 2.0, 1e-14);
  /* no rotation: zero */
  vec3 z = q_angular_velocity(b, b, 0.1);
  CHECK(z.x == 0 && z.y == 0 && z.z == 0);
}

TEST(math_quat_slerp_nlerp_endpoints_and_constant_speed) {
  fx_rng r = {31337};
  for (int i = 0; i < 2000; i++) {
    quat a = fx_quat(&r), b = fx_quat(&r);
    if (i % 7 == 0) b = q_normalize(q_mul(q_from_axis_angle(fx_unit_vec(&r), 1e-3), a)); /* close: nlerp path */
    /* endpoints are the inputs as rotations (b may come back as -b: shortest arc) */
    CHECK(fabs(fabs(q_dot(q_slerp(a, b, 0), a)) - 1) <= 8 * EPS);
    CHECK(fabs(fabs(q_dot(q_slerp(a, b, 1), b)) - 1) <= 8 * EPS);
    CHECK(fabs(fabs(q_dot(q_nlerp(a, b, 0), a)) - 1) <= 8 * EPS);
    CHECK(fabs(fabs(q_dot(q_nlerp(a, b, 1), b)) - 1) <= 8 * EPS);
    double total = q_angle_between(a, b);
    quat nb = {-b.w, -b.x, -b.y, -b.z};
    for (int k = 1; k < 10; k++) {
      double t = k / 10.0;
      quat s = q_slerp(a, b, t);
      CHECK(fabs(q_norm(s) - 1) <= 4 * EPS);
      /* slerp moves at constant angular speed along the shortest arc (d > 0.9995 uses nlerp,
       * whose angle error for arcs below 0.063 rad is below 1e-4 relative) */
      double tol = total < 0.064 ? 1e-4 * total + 1e-15 : 1e-11;
      CHECK_MSG(fabs(q_angle_between(a, s) - t * total) <= tol, "slerp angle %.17g vs %.17g", q_angle_between(a, s),
                t * total);
      CHECK(fabs(q_angle_between(s, b) - (1 - t) * total) <= tol);
      /* b and -b give the same path */
      CHECK(fabs(fabs(q_dot(q_slerp(a, nb, t), s)) - 1) <= 1e-12);
      quat n = q_nlerp(a, b, t);
      CHECK(fabs(q_norm(n) - 1) <= 4 * EPS);
      CHECK(fabs(fabs(q_dot(q_nlerp(a, nb, t), n)) - 1) <= 1e-12);
      /* nlerp stays on the same great arc: its angle from a plus to b is the total */
      CHECK(fabs(q_angle_between(a, n) + q_angle_between(n, b) - total) <= 1e-11);
    }
    /* symmetric midpoint: nlerp and slerp agree at t = 1/2 */
    CHECK(fabs(fabs(q_dot(q_nlerp(a, b, 0.5), q_slerp(a, b, 0.5))) - 1) <= 1e-12);
  }
  /* half-way between identity and a quarter turn is an eighth turn */
  quat h = q_slerp(q_identity(), q_from_axis_angle(v3(0, 1, 0), FX_PI / 2), 0.5);
  quat e = q_from_axis_angle(v3(0, 1, 0), FX_PI / 4);
  CHECK(fabs(q_dot(h, e) - 1) <= 4 * EPS);
}

TEST(math_mat3_inverse_and_determinant_identities) {
  fx_rng r = {555};
  mat3 I = m3_identity();
  for (int i = 0; i < 5000; i++) {
    mat3 A = random_mat3(&r), B = random_mat3(&r);
    /* keep A well conditioned so that the residual bound below is meaningful */
    for (int k = 0; k < 3; k++) A.m[k][k] += (A.m[k][k] >= 0 ? 2.5 : -2.5);
    mat3 Ai;
    CHECK(m3_inverse(&A, &Ai));
    mat3 P = m3_mul(&Ai, &A), Q = m3_mul(&A, &Ai);
    /* cond(A) < ~10 here: the residual is a few eps times that */
    CHECK_MSG(m3_maxdiff(&P, &I) <= 1e-13, "A^-1 A - I = %.3g", m3_maxdiff(&P, &I));
    CHECK_MSG(m3_maxdiff(&Q, &I) <= 1e-13, "A A^-1 - I = %.3g", m3_maxdiff(&Q, &I));
    double dA = m3_det(&A), dB = m3_det(&B);
    mat3 AB = m3_mul(&A, &B), At = m3_transpose(&A);
    /* relative 1e-12: entries O(3), determinants of products lose a few digits near det B ~ 0 */
    double scale = fabs(dA) * (1 + fabs(dB)) + 1;
    CHECK_NEAR(m3_det(&AB), dA * dB, 1e-12 * scale * 10);
    CHECK_NEAR(m3_det(&At), dA, 1e-13 * fabs(dA) + 1e-14);
    CHECK_NEAR(m3_det(&Ai), 1.0 / dA, 1e-12 / fabs(dA));
    mat3 S = A;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) S.m[a][b] *= -2.0; /* exact scaling */
    CHECK(m3_det(&S) == -8.0 * dA || fabs(m3_det(&S) + 8 * dA) <= 1e-13 * fabs(dA));
    mat3 W = A; /* swapping two rows flips the sign */
    for (int b = 0; b < 3; b++) {
      W.m[0][b] = A.m[1][b];
      W.m[1][b] = A.m[0][b];
    }
    CHECK_NEAR(m3_det(&W), -dA, 1e-13 * fabs(dA) + 1e-14);
    /* (A v) . u = v . (A^T u) */
    vec3 u = fx_vec(&r), v = fx_vec(&r);
    CHECK_NEAR(v3_dot(m3_mulv(&A, v), u), v3_dot(v, m3_tmulv(&A, u)), 1e-13);
    /* rotations have determinant 1 and inverse = transpose */
    mat3 R = q_to_mat3(fx_quat(&r)), Ri, Rt = m3_transpose(&R);
    CHECK(m3_inverse(&R, &Ri));
    CHECK(m3_maxdiff(&Ri, &Rt) <= 1e-14);
    /* outer products have rank one */
    mat3 O = m3_outer(u, v);
    CHECK_NEAR(m3_det(&O), 0, 1e-15);
  }
  /* a singular matrix is refused and the output left untouched */
  mat3 sing = {{{1, 2, 3}, {2, 4, 6}, {0, 1, 1}}};
  mat3 out = {{{7, 7, 7}, {7, 7, 7}, {7, 7, 7}}};
  CHECK(m3_inverse(&sing, &out) == 0);
  CHECK(out.m[0][0] == 7 && out.m[2][2] == 7);
  CHECK(m3_det(&sing) == 0);
  /* scale does not matter: 1e-30 A is as invertible as A */
  mat3 tiny = {{{1e-30, 0, 0}, {0, 2e-30, 0}, {0, 0, 4e-30}}}, ti;
  CHECK(m3_inverse(&tiny, &ti));
  CHECK_NEAR(ti.m[2][2], 0.25e30, 1e16);
}

TEST(math_vec_helpers) {
  vec3 z = v3_normalize(v3(0, 0, 0));
  CHECK(z.x == 0 && z.y == 0 && z.z == 0); /* the zero vector stays zero, no NaN */
  vec3 n = v3_normalize(v3(3, 4, 12));
  CHECK_NEAR(v3_len(n), 1, 2 * EPS);
  CHECK_NEAR(n.z, 12.0 / 13.0, 2 * EPS);
  vec3 a = v3(1, 2, 3), b = v3(-4, 5, 0.5);
  vec3 c = v3_cross(a, b);
  CHECK(v3_dot(c, a) == 0 && v3_dot(c, b) == 0); /* small integers and halves: exact */
  vec3 l = v3_lerp(a, b, 0.25);
  CHECK(l.x == -0.25 && l.y == 2.75 && l.z == 2.375);
  CHECK(!v3_isfinite(v3(0, NAN, 0)) && !v3_isfinite(v3(INFINITY, 0, 0)) && v3_isfinite(a));
  CHECK(v3_comp(a, 0) == 1 && v3_comp(a, 1) == 2 && v3_comp(a, 2) == 3);
}

/* The scratch arena promises 32-byte alignment, overflow blocks included (the rigid solver keeps
 * 4-wide vectors of doubles in it). */
TEST(core_arena_allocations_are_32_byte_aligned) {
  arena a;
  CHECK(arena_init(&a, 4096) == 0);
  arena_mark m = arena_get_mark(&a);
  for (int i = 0; i < 12; i++) { /* past the base block: overflow blocks */
    unsigned char *p = arena_alloc(&a, (size_t)(1000 + 77 * i), "test");
    CHECK(p != NULL);
    CHECK(((uintptr_t)p & 31) == 0);
    memset(p, 0xab, (size_t)(1000 + 77 * i));
  }
  arena_release(&a, m);
  arena_destroy(&a);
}

/* The helper thread of a world (core_par): every job runs part 0 and part 1 exactly once each,
 * whether the helper or the caller (when the helper has not claimed it yet) runs part 1, and the
 * caller sees part 1's writes when core_par_run returns. Jobs alternate between a long part 0
 * (the helper takes part 1) and an empty one (the caller often takes it itself). */
typedef struct par_job {
  int round;
  int *hits; /* [round][part] */
  volatile double sink;
} par_job;

static void par_part(void *ctx, int part) {
  par_job *j = ctx;
  if (part == 0 && j->round % 2 == 0) {
    double s = 0;
    for (int k = 0; k < 2000; k++) s += sqrt((double)k);
    j->sink = s;
  }
  j->hits[2 * j->round + part]++;
}

TEST(core_par_runs_each_part_once_whoever_runs_it) {
  enum { ROUNDS = 4000 };
  int *hits = calloc(2 * ROUNDS, sizeof(int));
  core_par *p = core_par_create();
  CHECK(p != NULL);
  par_job j = {0, hits, 0};
  for (j.round = 0; j.round < ROUNDS; j.round++) {
    core_par_run(p, par_part, &j);
    CHECK_MSG(hits[2 * j.round] == 1 && hits[2 * j.round + 1] == 1, "round %d: parts ran %d and %d times", j.round,
              hits[2 * j.round], hits[2 * j.round + 1]);
  }
  core_par_destroy(p);
  /* without a helper: both parts inline, in order */
  memset(hits, 0, 2 * ROUNDS * sizeof(int));
  j.round = 1;
  core_par_run(NULL, par_part, &j);
  CHECK(hits[2] == 1 && hits[3] == 1);
  free(hits);
}
