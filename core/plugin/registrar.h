// registrar.h: TideRegistrar, which stages what a plugin registers during tide_plugin_register,
// and the host functions that fill it from the plugin's C records.
#pragma once

#include <tide/plugin_api.h>

#include <string>

#include "core/registry/registry.h"

struct TideRegistrar {
  std::string plugin;       // the plugin's name
  std::string plugin_file;  // its path
  tide::core::PluginStaging staged;
};

namespace tide::core {

TideStatus* RegistrarAddOp(TideRegistrar* r, const TideOpDef* def);
TideStatus* RegistrarAddKernel(TideRegistrar* r, const TideKernelDef* def);
TideStatus* RegistrarAddDevice(TideRegistrar* r, const TideDeviceDef* def);
TideStatus* RegistrarAddLibrary(TideRegistrar* r, const TideLibraryDef* def);
TideStatus* RegistrarAddLayoutTransform(TideRegistrar* r, const TideLayoutTransformDef* def);
TideStatus* RegistrarAddDataTypeCast(TideRegistrar* r, const TideDataTypeCastDef* def);
TideStatus* RegistrarAddProgramPass(TideRegistrar* r, const TideProgramPassDef* def);

}  // namespace tide::core
