// host_api.h: the table of core functions handed to every plugin (TideHostApi).
#pragma once

#include <tide/plugin_api.h>

namespace tide::core {

// The process's host API table: ABI TIDE_ABI_MAJOR.TIDE_ABI_MINOR, every entry set.
const TideHostApi* GetHostApi();

}  // namespace tide::core
