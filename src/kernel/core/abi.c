/* abi.c — sizes and field offsets of the public structs, so the Lua side can check that its FFI
 * declarations (generated from loom.h) lay structs out exactly as the compiler did. */
#include <stddef.h>
#include <string.h>

#include "loom.h"

typedef struct abi_field {
  const char *type, *field;
  int size, offset;
} abi_field;

#define T(t) {#t, NULL, (int)sizeof(t), 0}
#define F(t, f) {#t, #f, 0, (int)offsetof(t, f)}

static const abi_field table[] = {
    T(loom_vec3), F(loom_vec3, x), F(loom_vec3, y), F(loom_vec3, z),
    T(loom_quat), F(loom_quat, w), F(loom_quat, x), F(loom_quat, y), F(loom_quat, z),
    T(loom_world_def), F(loom_world_def, dt), F(loom_world_def, gravity), F(loom_world_def, wind),
    T(loom_stats), F(loom_stats, time), F(loom_stats, steps), F(loom_stats, max_penetration),
    F(loom_stats, step_seconds), F(loom_stats, contacts), F(loom_stats, collisions), F(loom_stats, impact_zones),
    F(loom_stats, iterations), F(loom_stats, substeps), F(loom_stats, frozen), F(loom_stats, bodies),
    F(loom_stats, cg_residual), F(loom_stats, proximity), F(loom_stats, ccd_collisions),
    F(loom_stats, collision_iterations), F(loom_stats, largest_zone), F(loom_stats, unresolved), F(loom_stats, tangled),
    F(loom_stats, cloth_contacts), F(loom_stats, contact_resolves), F(loom_stats, candidates), F(loom_stats, strain_limited), F(loom_stats, passed_through), F(loom_stats, obstacle_crossings), F(loom_stats, newton_iterations), F(loom_stats, obstacle_tests), F(loom_stats, obstacle_tests_brute), F(loom_stats, solid_points), F(loom_stats, tool_contacts), F(loom_stats, tool_unresolved),
    F(loom_stats, messages),
    T(loom_contact), F(loom_contact, body_a), F(loom_contact, body_b), F(loom_contact, type_a), F(loom_contact, type_b),
    F(loom_contact, feature_a), F(loom_contact, feature_b), F(loom_contact, id), F(loom_contact, solver),
    F(loom_contact, point), F(loom_contact, normal), F(loom_contact, depth), F(loom_contact, toi),
    F(loom_contact, impulse),
    T(loom_param_info), F(loom_param_info, name), F(loom_param_info, unit), F(loom_param_info, doc),
    F(loom_param_info, min), F(loom_param_info, max), F(loom_param_info, flags),
    T(loom_cloth_def), F(loom_cloth_def, name), F(loom_cloth_def, mesh), F(loom_cloth_def, model),
    F(loom_cloth_def, integrator), F(loom_cloth_def, stretch), F(loom_cloth_def, shear), F(loom_cloth_def, bend),
    F(loom_cloth_def, damping), F(loom_cloth_def, drag), F(loom_cloth_def, density), F(loom_cloth_def, mass),
    F(loom_cloth_def, thickness), F(loom_cloth_def, friction), F(loom_cloth_def, substeps),
    F(loom_cloth_def, iterations), F(loom_cloth_def, self_collision), F(loom_cloth_def, cg_tolerance),
    F(loom_cloth_def, cg_iterations), F(loom_cloth_def, compliance),
    T(loom_solid_def), F(loom_solid_def, name), F(loom_solid_def, mesh), F(loom_solid_def, model),
    F(loom_solid_def, integrator), F(loom_solid_def, density), F(loom_solid_def, mass), F(loom_solid_def, node_mass),
    F(loom_solid_def, distance), F(loom_solid_def, volume), F(loom_solid_def, damping), F(loom_solid_def, young),
    F(loom_solid_def, poisson), F(loom_solid_def, rayleigh), F(loom_solid_def, thickness), F(loom_solid_def, friction),
    F(loom_solid_def, substeps), F(loom_solid_def, self_collision), F(loom_solid_def, depth_contact), F(loom_solid_def, yield), F(loom_solid_def, creep),
    F(loom_solid_def, cg_tolerance), F(loom_solid_def, cg_iterations),
    T(loom_simplex_def), F(loom_simplex_def, name), F(loom_simplex_def, mesh), F(loom_simplex_def, model),
    F(loom_simplex_def, integrator), F(loom_simplex_def, k), F(loom_simplex_def, k_anchor), F(loom_simplex_def, mass),
    F(loom_simplex_def, damping), F(loom_simplex_def, thickness), F(loom_simplex_def, friction),
    F(loom_simplex_def, substeps), F(loom_simplex_def, self_collision), F(loom_simplex_def, response),
    F(loom_simplex_def, kp), F(loom_simplex_def, kd), F(loom_simplex_def, hold), F(loom_simplex_def, passes),
    T(loom_rigid_def), F(loom_rigid_def, name), F(loom_rigid_def, shape), F(loom_rigid_def, radius),
    F(loom_rigid_def, half_height), F(loom_rigid_def, half_extents), F(loom_rigid_def, mesh),
    F(loom_rigid_def, motion), F(loom_rigid_def, position), F(loom_rigid_def, orientation),
    F(loom_rigid_def, friction), F(loom_rigid_def, restitution), F(loom_rigid_def, thickness),
    F(loom_rigid_def, mass), F(loom_rigid_def, density), F(loom_rigid_def, velocity), F(loom_rigid_def, angular_velocity),
    F(loom_rigid_def, linear), F(loom_rigid_def, angular), F(loom_rigid_def, integrator),
    F(loom_rigid_def, linear_damping), F(loom_rigid_def, angular_damping), F(loom_rigid_def, gravity_scale),
    F(loom_rigid_def, altitude_gravity), F(loom_rigid_def, can_sleep),
    T(loom_camera), F(loom_camera, eye), F(loom_camera, target), F(loom_camera, up), F(loom_camera, fov_deg),
    F(loom_camera, znear), F(loom_camera, zfar),
};

LOOM_API int loom_abi_sizeof(const char *type) {
  if (!type) return -1;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!table[i].field && !strcmp(table[i].type, type)) return table[i].size;
  return -1;
}

LOOM_API int loom_abi_offsetof(const char *type, const char *field) {
  if (!type || !field) return -1;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].field && !strcmp(table[i].type, type) && !strcmp(table[i].field, field)) return table[i].offset;
  return -1;
}
