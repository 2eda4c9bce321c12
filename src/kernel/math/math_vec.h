/* math_vec.h — small inline vector, matrix and quaternion helpers (double precision). */
#ifndef LOOM_MATH_VEC_H
#define LOOM_MATH_VEC_H

#include <math.h>
#include "loom.h"

#define LOOM_PI 3.14159265358979323846

typedef loom_vec3 vec3;
typedef loom_quat quat;
/* Row-major 3x3 matrix: m[row][col]. */
typedef struct mat3 { double m[3][3]; } mat3;

static inline vec3 v3(double x, double y, double z) { vec3 r = {x, y, z}; return r; }
static inline vec3 v3_add(vec3 a, vec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline vec3 v3_sub(vec3 a, vec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline vec3 v3_scale(vec3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
static inline vec3 v3_neg(vec3 a) { return v3(-a.x, -a.y, -a.z); }
/* a + s b */
static inline vec3 v3_madd(vec3 a, vec3 b, double s) { return v3(a.x + s * b.x, a.y + s * b.y, a.z + s * b.z); }
static inline double v3_dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline vec3 v3_cross(vec3 a, vec3 b) {
  return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double v3_len2(vec3 a) { return v3_dot(a, a); }
static inline double v3_len(vec3 a) { return sqrt(v3_dot(a, a)); }
static inline double v3_dist(vec3 a, vec3 b) { return v3_len(v3_sub(a, b)); }
static inline double v3_dist2(vec3 a, vec3 b) { return v3_len2(v3_sub(a, b)); }
/* Unit vector; the zero vector stays zero. */
static inline vec3 v3_normalize(vec3 a) {
  double l = v3_len(a);
  return l > 0 ? v3_scale(a, 1.0 / l) : a;
}
/* Plain comparisons, not fmin/fmax: those are library calls at -O2 (NaN rules) and showed up at
 * 14 % of a contact-heavy step. Inputs here are finite (bounding boxes of checked states). */
static inline double d_min(double a, double b) { return a < b ? a : b; }
static inline double d_max(double a, double b) { return a > b ? a : b; }
static inline vec3 v3_min(vec3 a, vec3 b) { return v3(d_min(a.x, b.x), d_min(a.y, b.y), d_min(a.z, b.z)); }
static inline vec3 v3_max(vec3 a, vec3 b) { return v3(d_max(a.x, b.x), d_max(a.y, b.y), d_max(a.z, b.z)); }
static inline vec3 v3_lerp(vec3 a, vec3 b, double t) { return v3_madd(a, v3_sub(b, a), t); }
static inline int v3_isfinite(vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }

/* An implicit solve whose right-hand side's norm is not finite has no finite answer: its velocity
 * change is made undefined at the free vertex (inv_m != 0) with the largest right-hand side (a
 * non-finite one first; every vertex when none is free), so the divergence guard stops the body
 * and names the vertex a force pushed. */
static inline void v3_poison_largest(vec3 *dv, const vec3 *rhs, const double *inv_m, int n) {
  int worst = -1;
  double most = -1;
  for (int i = 0; i < n; i++) {
    if (inv_m[i] == 0) continue;
    const double r2 = rhs[i].x * rhs[i].x + rhs[i].y * rhs[i].y + rhs[i].z * rhs[i].z;
    const double size = isfinite(r2) ? r2 : INFINITY;
    if (size > most) most = size, worst = i;
  }
  for (int i = 0; i < n; i++)
    if (worst < 0 || i == worst) dv[i].x = dv[i].y = dv[i].z = NAN;
}
static inline double v3_comp(vec3 a, int i) { return i == 0 ? a.x : (i == 1 ? a.y : a.z); }

static inline mat3 m3_identity(void) {
  mat3 r = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  return r;
}
static inline vec3 m3_mulv(const mat3 *a, vec3 v) {
  return v3(a->m[0][0] * v.x + a->m[0][1] * v.y + a->m[0][2] * v.z,
            a->m[1][0] * v.x + a->m[1][1] * v.y + a->m[1][2] * v.z,
            a->m[2][0] * v.x + a->m[2][1] * v.y + a->m[2][2] * v.z);
}
/* transpose(a) v */
static inline vec3 m3_tmulv(const mat3 *a, vec3 v) {
  return v3(a->m[0][0] * v.x + a->m[1][0] * v.y + a->m[2][0] * v.z,
            a->m[0][1] * v.x + a->m[1][1] * v.y + a->m[2][1] * v.z,
            a->m[0][2] * v.x + a->m[1][2] * v.y + a->m[2][2] * v.z);
}
mat3 m3_mul(const mat3 *a, const mat3 *b);
mat3 m3_transpose(const mat3 *a);
double m3_det(const mat3 *a);
/* Inverse; returns 0 (and leaves *out untouched) when |det| <= tiny. */
int m3_inverse(const mat3 *a, mat3 *out);
/* Outer product a b^T. */
mat3 m3_outer(vec3 a, vec3 b);

static inline quat q_identity(void) { quat q = {1, 0, 0, 0}; return q; }
quat q_mul(quat a, quat b);
quat q_conj(quat a);
quat q_normalize(quat a);
double q_norm(quat a);
/* Rotation of angle (rad) about a unit axis. */
quat q_from_axis_angle(vec3 axis, double angle);
/* Rotates v by unit quaternion q (q v q*). */
vec3 q_rotate(quat q, vec3 v);
/* Rotates v by the inverse of unit quaternion q. */
vec3 q_rotate_inv(quat q, vec3 v);
/* Rotation matrix of a unit quaternion. */
mat3 q_to_mat3(quat q);
/* Unit quaternion of a rotation matrix (Shepperd's method: robust for every trace). */
quat q_from_mat3(const mat3 *m);
/* Normalised linear interpolation along the shortest arc, t in [0, 1]. */
quat q_nlerp(quat a, quat b, double t);
/* Spherical linear interpolation along the shortest arc. */
quat q_slerp(quat a, quat b, double t);
/* Angular velocity (world frame, rad/s) that rotates a into b in time dt along the shortest arc. */
vec3 q_angular_velocity(quat a, quat b, double dt);

#endif
