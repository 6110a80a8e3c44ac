// raw_plugin.cc: a test plugin written straight against the C ABI (no plugin.hpp), named RAW_NAME
// with op RAW_OP. RAW_MODE: 1 claims ABI major TIDE_ABI_MAJOR + 1; 2 tide_plugin_register throws
// after staging its op; 3 tide_plugin_info throws; 4 is built against a newer minor and needs
// it (min_abi_minor = TIDE_ABI_MINOR + 1); 5 is built against a newer minor but runs on this
// one (it checks newer host functions); 6 is an older plugin whose info has no min_abi_minor;
// 7 gives an attribute a default TideAttrValue whose struct_size is too small; 8 was built against
// the ABI's layout revision 1 (before the tables were grouped by object); 9 exports no layout
// revision (built before revisions existed).
#include <tide/plugin_api.h>

#include <stdexcept>

#if RAW_MODE == 8
extern "C" TIDE_PLUGIN_EXPORT uint32_t tide_plugin_abi_layout(void) { return 1; }
#elif RAW_MODE != 9
TIDE_DEFINE_PLUGIN_ABI_LAYOUT
#endif

extern "C" TIDE_PLUGIN_EXPORT const TidePluginInfo* tide_plugin_info(const TideAbiRange*) {
  if (RAW_MODE == 3) throw std::runtime_error("raw_info_throw: thrown out of tide_plugin_info");
  static TidePluginInfo info{};
  info.struct_size = RAW_MODE == 6 ? TIDE_STRUCT_SIZE(TidePluginInfo, description)
                                   : TIDE_STRUCT_SIZE(TidePluginInfo, min_abi_minor);
  info.name = RAW_NAME;
  info.version = "9.9.9";
  info.abi_major = RAW_MODE == 1 ? TIDE_ABI_MAJOR + 1 : TIDE_ABI_MAJOR;
  info.abi_minor = 0;  // the host's minor or lower: what both sides speak
  info.min_abi_minor = RAW_MODE == 4 ? TIDE_ABI_MINOR + 1 : 0;
  info.requires = nullptr;
  info.description = "a raw C-ABI test plugin";
  return &info;
}

// A kernel op needs shape inference to register; this one infers nothing.
static TideStatus* InferNothing(TideInferShapeContext*, void*) { return nullptr; }

extern "C" TIDE_PLUGIN_EXPORT TideStatus* tide_plugin_register(const TideHostApi* host,
                                                               TideRegistrar* r) {
  TideOpDef def{};
  def.struct_size = TIDE_STRUCT_SIZE(TideOpDef, run_data);
  def.type = RAW_OP;
  def.infer_shape = InferNothing;
  TideAttrValue small{};
  small.struct_size = sizeof(size_t);  // claims only its struct_size field
  small.type = TIDE_ATTR_INT;
  TideAttrDef attr{};
  attr.struct_size = TIDE_STRUCT_SIZE(TideAttrDef, check_data);
  attr.name = "k";
  attr.type = TIDE_ATTR_INT;
  attr.default_value = &small;
  if (RAW_MODE == 7) {
    def.attrs = &attr;
    def.num_attrs = 1;
  }
  if (TideStatus* s = host->Registrar_AddOp(r, &def)) return s;
  if (RAW_MODE == 2) throw std::runtime_error("raw_throw: thrown out of tide_plugin_register");
  return nullptr;
}
