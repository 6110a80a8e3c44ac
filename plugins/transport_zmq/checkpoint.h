// checkpoint.h: a pserver's parameters and optimizer state, saved every N rounds and loaded at
// start-up. One file in tide.io's tensor format (tide.io.load_vars(filename=...) reads it), plus a
// record holding the round.
#pragma once

#include <string>
#include <vector>

#include "common.h"

namespace tide_zmq {

// <dir>/pserver_<host>_<port>.ckpt
std::string CheckpointPath(const std::string& dir, const std::string& endpoint);

// Writes `names` from `scope` and `round`, atomically (a temporary file renamed into place).
void SaveCheckpoint(const std::string& path, const tide::Scope& scope,
                    const std::vector<std::string>& names, int64_t round);

// Loads `names` into their (existing) variables on `place`; returns the saved round, or -1 when
// there is no checkpoint file. A file that does not fit the program is an error naming both.
int64_t LoadCheckpoint(const std::string& path, const tide::Scope& scope,
                       const std::vector<std::string>& names, const tide::Place& place);

}  // namespace tide_zmq
