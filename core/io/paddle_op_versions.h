// paddle_op_versions.h: the Paddle op versions (op_version_registry) Tide implements, which the
// loader checks a program's op_version_map against.
#pragma once

#include <map>
#include <string>

namespace tide::core {

// Paddle op versions whose semantics Tide's op packs implement; an op absent here is known at
// version 0 only.
const std::map<std::string, int>& KnownPaddleOpVersions();

}  // namespace tide::core
