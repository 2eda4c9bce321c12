/* contact.h — the contact families and their solvers. Kinds meet here: this folder may include
 * every kind's header. Each family detects into the world's contact buffer during the detect
 * phase and resolves its contacts in the respond phase (docs/architecture.md). */
#ifndef LOOM_CONTACT_H
#define LOOM_CONTACT_H

#include "cloth/cloth.h"
#include "rigid/rigid.h"

/* Vertex against rigid shape (contact_obstacle.c): particles of body pair->a against the static or
 * kinematic shape of pair->b over the current substep. */
void contact_vertices_detect(loom_world *w, const body_pair *pair, const step_info *s);
/* Resolves the vertex contacts of this substep in buffer order (Gauss–Seidel): a vertex that an
 * earlier contact already moved is evaluated again where it is now. */
void contact_vertices_respond(loom_world *w, const step_info *s, int first);
/* Sharp features of rigid shapes against cloth triangles and edges (contact_features.c), found
 * where the vertex response left the cloth and resolved at once. */
void contact_features_respond(loom_world *w, const body_pair *pair, const step_info *s);

#endif
