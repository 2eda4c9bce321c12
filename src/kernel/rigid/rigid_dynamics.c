/* rigid_dynamics.c — free motion of dynamic rigid bodies (document 003): state (x, q, v, omega)
 * with the body origin at the centre of mass, world inertia R I0 R^T, forces and torques
 * accumulated between steps, gravity (optionally 003's altitude-dependent g).
 *
 * Symplectic Euler (the default, and what the contact solver uses): v += h F/m, then omega with
 * the gyroscopic term implicit in the body frame — one Newton step on
 * I0 (w1 - w0) + h w1 x I0 w1 = h tau (Catto 2015), which keeps a fast-spinning body with
 * unequal moments from gaining energy — then x += h v, q += h/2 (0, omega) q, renormalised.
 * RK4 and explicit Euler integrate Y = (x, q, P, L), dY/dt = (P/m, 1/2 omega q, F, tau) as 003
 * did, for free flight (the solver switches a body in contact to symplectic Euler for that
 * substep). */
#include "rigid/rigid.h"

#define EARTH_RADIUS 6371000.0

mat3 rigid_world_inv_inertia(const rigid_body *r, quat q) {
  mat3 R = q_to_mat3(q), Rt = m3_transpose(&R);
  mat3 a = m3_mul(&R, &r->model.inv_inertia);
  return m3_mul(&a, &Rt);
}

static vec3 gravity_of(const loom_world *w, const rigid_body *r, vec3 x) {
  vec3 g = v3_scale(w->gravity, r->params.gravity_scale);
  if (r->params.altitude_gravity) {
    double gl = v3_len(w->gravity);
    double z = gl > 0 ? -v3_dot(x, w->gravity) / gl : 0; /* height along "up" */
    g = v3_scale(g, 1 - 2 * z / EARTH_RADIUS);
  }
  return g;
}

static vec3 gyroscopic(const rigid_body *r, quat q, vec3 omega, double h) {
  vec3 wb = q_rotate_inv(q, omega);
  const mat3 *I = &r->model.inertia;
  vec3 Iw = m3_mulv(I, wb);
  vec3 f = v3_scale(v3_cross(wb, Iw), h);
  /* J = I + h (skew(w) I - skew(I w)) */
  mat3 J;
  for (int j = 0; j < 3; j++) {
    vec3 col = v3(I->m[0][j], I->m[1][j], I->m[2][j]);
    vec3 e = v3(j == 0, j == 1, j == 2);
    vec3 c = v3_add(col, v3_scale(v3_sub(v3_cross(wb, col), v3_cross(Iw, e)), h));
    J.m[0][j] = c.x, J.m[1][j] = c.y, J.m[2][j] = c.z;
  }
  mat3 Ji;
  if (!m3_inverse(&J, &Ji)) return omega;
  wb = v3_sub(wb, m3_mulv(&Ji, f));
  return q_rotate(q, wb);
}

void rigid_integrate_velocity(const loom_world *w, rigid_body *r, double h) {
  rigid_state *st = &r->state;
  if (r->params.linear) {
    vec3 a = v3_madd(gravity_of(w, r, st->pos), v3_add(st->force, r->cloth_force), r->model.inv_mass);
    st->vel = v3_scale(v3_madd(st->vel, a, h), 1.0 / (1 + h * r->params.linear_damping));
  } else {
    st->vel = v3(0, 0, 0);
  }
  if (r->params.angular) {
    vec3 om = st->omega, tau = v3_add(st->torque, r->cloth_torque);
    if (tau.x != 0 || tau.y != 0 || tau.z != 0) { /* (most bodies in most steps have no torque) */
      mat3 Iw = rigid_world_inv_inertia(r, st->q);
      om = v3_madd(om, m3_mulv(&Iw, tau), h);
    }
    om = gyroscopic(r, st->q, om, h);
    st->omega = v3_scale(om, 1.0 / (1 + h * r->params.angular_damping));
  } else {
    st->omega = v3(0, 0, 0);
  }
}

/* q rotated by omega over h: the exact exponential (a constant omega turns by |omega| h). */
static quat q_advance(quat q, vec3 omega, double h) {
  double a = v3_len(omega) * h;
  if (!(a > 0)) return q;
  return q_normalize(q_mul(q_from_axis_angle(v3_scale(omega, 1.0 / v3_len(omega)), a), q));
}

void rigid_integrate_pose(rigid_body *r, double h) {
  rigid_state *st = &r->state;
  st->pos = v3_madd(st->pos, st->vel, h);
  st->q = q_advance(st->q, st->omega, h);
}

/* ---- RK4 and explicit Euler on (x, q, P, L) --------------------------------------------------- */

typedef struct ystate {
  vec3 x, P, L;
  quat q;
} ystate;

static ystate deriv(const loom_world *w, const rigid_body *r, const ystate *y) {
  ystate d;
  const double m = r->model.mass;
  vec3 v = v3_scale(y->P, 1.0 / m);
  mat3 Iw = rigid_world_inv_inertia(r, q_normalize(y->q));
  vec3 om = m3_mulv(&Iw, y->L);
  quat wq = {0, om.x, om.y, om.z};
  quat dq = q_mul(wq, y->q);
  d.x = r->params.linear ? v : v3(0, 0, 0);
  d.P = r->params.linear ? v3_add(v3_scale(gravity_of(w, r, y->x), m), v3_add(r->state.force, r->cloth_force)) : v3(0, 0, 0);
  d.q = r->params.angular ? (quat){0.5 * dq.w, 0.5 * dq.x, 0.5 * dq.y, 0.5 * dq.z} : (quat){0, 0, 0, 0};
  d.L = r->params.angular ? v3_add(r->state.torque, r->cloth_torque) : v3(0, 0, 0);
  return d;
}

static ystate yadd(const ystate *a, const ystate *d, double h) {
  ystate o;
  o.x = v3_madd(a->x, d->x, h);
  o.P = v3_madd(a->P, d->P, h);
  o.L = v3_madd(a->L, d->L, h);
  o.q = (quat){a->q.w + h * d->q.w, a->q.x + h * d->q.x, a->q.y + h * d->q.y, a->q.z + h * d->q.z};
  return o;
}

void rigid_free_motion(const loom_world *w, rigid_body *r, double h) {
  rigid_state *st = &r->state;
  if (r->params.integrator == RIGID_SYMPLECTIC) {
    rigid_integrate_velocity(w, r, h);
    rigid_integrate_pose(r, h);
    return;
  }
  mat3 R = q_to_mat3(st->q), Rt = m3_transpose(&R);
  mat3 IR = m3_mul(&r->model.inertia, &Rt), Iw = m3_mul(&R, &IR);
  ystate y0 = {st->pos, v3_scale(st->vel, r->model.mass), m3_mulv(&Iw, st->omega), st->q}, y1;
  ystate k1 = deriv(w, r, &y0);
  if (r->params.integrator == RIGID_EULER) {
    y1 = yadd(&y0, &k1, h);
  } else {
    ystate t = yadd(&y0, &k1, h / 2);
    ystate k2 = deriv(w, r, &t);
    t = yadd(&y0, &k2, h / 2);
    ystate k3 = deriv(w, r, &t);
    t = yadd(&y0, &k3, h); /* (003 printed u0 + k3/2 here; RK4 takes the full step) */
    ystate k4 = deriv(w, r, &t);
    ystate s = y0;
    s = yadd(&s, &k1, h / 6);
    s = yadd(&s, &k2, h / 3);
    s = yadd(&s, &k3, h / 3);
    y1 = yadd(&s, &k4, h / 6);
  }
  st->pos = y1.x;
  st->q = q_normalize(y1.q);
  st->vel = r->params.linear ? v3_scale(y1.P, r->model.inv_mass / (1 + h * r->params.linear_damping)) : v3(0, 0, 0);
  mat3 Ii = rigid_world_inv_inertia(r, st->q);
  st->omega = r->params.angular ? v3_scale(m3_mulv(&Ii, y1.L), 1.0 / (1 + h * r->params.angular_damping)) : v3(0, 0, 0);
}
