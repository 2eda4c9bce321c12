/* math_quat.c — 3x3 matrices and unit quaternions. */
#include "math/math_vec.h"

mat3 m3_mul(const mat3 *a, const mat3 *b) {
  mat3 r;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      r.m[i][j] = a->m[i][0] * b->m[0][j] + a->m[i][1] * b->m[1][j] + a->m[i][2] * b->m[2][j];
  return r;
}

mat3 m3_transpose(const mat3 *a) {
  mat3 r;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) r.m[i][j] = a->m[j][i];
  return r;
}

double m3_det(const mat3 *a) {
  const double(*m)[3] = a->m;
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

int m3_inverse(const mat3 *a, mat3 *out) {
  const double(*m)[3] = a->m;
  double det = m3_det(a);
  double scale = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) scale = fmax(scale, fabs(m[i][j]));
  if (!(fabs(det) > 1e-300) || fabs(det) <= 1e-14 * scale * scale * scale) return 0;
  double id = 1.0 / det;
  mat3 r;
  r.m[0][0] = (m[1][1] * m[2][2] - m[1][2] * m[2][1]) * id;
  r.m[0][1] = (m[0][2] * m[2][1] - m[0][1] * m[2][2]) * id;
  r.m[0][2] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) * id;
  r.m[1][0] = (m[1][2] * m[2][0] - m[1][0] * m[2][2]) * id;
  r.m[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) * id;
  r.m[1][2] = (m[0][2] * m[1][0] - m[0][0] * m[1][2]) * id;
  r.m[2][0] = (m[1][0] * m[2][1] - m[1][1] * m[2][0]) * id;
  r.m[2][1] = (m[0][1] * m[2][0] - m[0][0] * m[2][1]) * id;
  r.m[2][2] = (m[0][0] * m[1][1] - m[0][1] * m[1][0]) * id;
  *out = r;
  return 1;
}

mat3 m3_outer(vec3 a, vec3 b) {
  mat3 r = {{{a.x * b.x, a.x * b.y, a.x * b.z}, {a.y * b.x, a.y * b.y, a.y * b.z}, {a.z * b.x, a.z * b.y, a.z * b.z}}};
  return r;
}

quat q_mul(quat a, quat b) {
  quat r;
  r.w = a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z;
  r.x = a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y;
  r.y = a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x;
  r.z = a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w;
  return r;
}

quat q_conj(quat a) {
  quat r = {a.w, -a.x, -a.y, -a.z};
  return r;
}

double q_norm(quat a) { return sqrt(a.w * a.w + a.x * a.x + a.y * a.y + a.z * a.z); }

quat q_normalize(quat a) {
  double n = q_norm(a);
  if (!(n > 0) || !isfinite(n)) return q_identity();
  quat r = {a.w / n, a.x / n, a.y / n, a.z / n};
  return r;
}

quat q_from_axis_angle(vec3 axis, double angle) {
  vec3 u = v3_normalize(axis);
  double s = sin(0.5 * angle);
  quat r = {cos(0.5 * angle), u.x * s, u.y * s, u.z * s};
  return r;
}

vec3 q_rotate(quat q, vec3 v) {
  /* v' = v + 2 w (u x v) + 2 u x (u x v), u = vector part */
  vec3 u = v3(q.x, q.y, q.z);
  vec3 t = v3_scale(v3_cross(u, v), 2.0);
  return v3_add(v3_madd(v, t, q.w), v3_cross(u, t));
}

vec3 q_rotate_inv(quat q, vec3 v) { return q_rotate(q_conj(q), v); }

mat3 q_to_mat3(quat q) {
  double w = q.w, x = q.x, y = q.y, z = q.z;
  mat3 r = {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
             {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
             {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
  return r;
}

quat q_from_mat3(const mat3 *a) {
  /* Shepperd 1978: pick the largest of (trace, diagonal) to avoid dividing by a small number;
   * this covers the identity, which the 003 seed's version divided by zero on. */
  const double(*m)[3] = a->m;
  double tr = m[0][0] + m[1][1] + m[2][2];
  quat q;
  if (tr >= m[0][0] && tr >= m[1][1] && tr >= m[2][2]) {
    double s = 2.0 * sqrt(fmax(1.0 + tr, 0.0));
    q.w = 0.25 * s;
    q.x = (m[2][1] - m[1][2]) / s;
    q.y = (m[0][2] - m[2][0]) / s;
    q.z = (m[1][0] - m[0][1]) / s;
  } else if (m[0][0] >= m[1][1] && m[0][0] >= m[2][2]) {
    double s = 2.0 * sqrt(fmax(1.0 + m[0][0] - m[1][1] - m[2][2], 0.0));
    q.w = (m[2][1] - m[1][2]) / s;
    q.x = 0.25 * s;
    q.y = (m[0][1] + m[1][0]) / s;
    q.z = (m[0][2] + m[2][0]) / s;
  } else if (m[1][1] >= m[2][2]) {
    double s = 2.0 * sqrt(fmax(1.0 + m[1][1] - m[0][0] - m[2][2], 0.0));
    q.w = (m[0][2] - m[2][0]) / s;
    q.x = (m[0][1] + m[1][0]) / s;
    q.y = 0.25 * s;
    q.z = (m[1][2] + m[2][1]) / s;
  } else {
    double s = 2.0 * sqrt(fmax(1.0 + m[2][2] - m[0][0] - m[1][1], 0.0));
    q.w = (m[1][0] - m[0][1]) / s;
    q.x = (m[0][2] + m[2][0]) / s;
    q.y = (m[1][2] + m[2][1]) / s;
    q.z = 0.25 * s;
  }
  if (q.w < 0) q = (quat){-q.w, -q.x, -q.y, -q.z};
  return q_normalize(q);
}

quat q_nlerp(quat a, quat b, double t) {
  double d = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
  double s = d < 0 ? -1.0 : 1.0;
  quat r = {a.w + t * (s * b.w - a.w), a.x + t * (s * b.x - a.x), a.y + t * (s * b.y - a.y), a.z + t * (s * b.z - a.z)};
  return q_normalize(r);
}

quat q_slerp(quat a, quat b, double t) {
  double d = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
  if (d < 0) {
    b = (quat){-b.w, -b.x, -b.y, -b.z};
    d = -d;
  }
  if (d > 0.9995) return q_nlerp(a, b, t);
  double th = acos(fmin(d, 1.0));
  double s0 = sin((1 - t) * th) / sin(th), s1 = sin(t * th) / sin(th);
  quat r = {s0 * a.w + s1 * b.w, s0 * a.x + s1 * b.x, s0 * a.y + s1 * b.y, s0 * a.z + s1 * b.z};
  return q_normalize(r);
}

vec3 q_angular_velocity(quat a, quat b, double dt) {
  /* dq = b a*, taken along the shortest arc; omega = axis * angle / dt */
  quat d = q_mul(b, q_conj(a));
  if (d.w < 0) d = (quat){-d.w, -d.x, -d.y, -d.z};
  vec3 u = v3(d.x, d.y, d.z);
  double s = v3_len(u);
  if (s < 1e-15 || !(dt > 0)) return v3(0, 0, 0);
  double angle = 2.0 * atan2(s, d.w);
  return v3_scale(u, angle / (s * dt));
}
