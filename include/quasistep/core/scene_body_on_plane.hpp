// The body_on_plane parts of a scene file (docs/scene-format.md): the one rigid body of
// Xie & Chakraborty's world, its hull, initial state and loads.
#pragma once

#include <functional>

#include "quasistep/core/json_node.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/schedule.hpp"

namespace qs {

/// Reads the body_on_plane parts of a scene into m (bodies, loads) and rejects the sections
/// that do not apply (joints, contacts, commands). Throws JsonInputError naming the field.
/// Called by core/scene.cpp after the world section, with its schedule reader.
void read_body_on_plane(const json_input::Node& root, Model& m,
                        const std::function<Schedule(const json_input::Node&)>& read_schedule);

}  // namespace qs
