# tide_add_plugin(<name> [DESTINATION <dir>] [NO_INSTALL] <sources>...): builds a Tide plugin
# module that sees only the SDK, exports only its two entry points (hidden visibility), and lands
# where Tide finds it. Used in-tree and, through find_package(Tide), by third-party plugins.
#
# Where `cmake --install` puts it: DESTINATION if given (relative to the install prefix, e.g. a
# package directory a wheel's "tide.plugins" entry point names); else TIDE_PLUGIN_INSTALL_DIR if
# the project sets it (in-tree: <libdir>/tide/plugins); else, out of tree, TIDE_PLUGIN_DIR from
# TideConfig.cmake: the plugin directory of the Tide found (absolute), where it looks by default.
# NO_INSTALL, or in-tree with TIDE_PLUGIN_INSTALL_DIR unset (tests/): never installed.
function(tide_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 _tap "NO_INSTALL" "DESTINATION" "")
  add_library(${name} MODULE ${_tap_UNPARSED_ARGUMENTS})
  if(TARGET Tide::sdk)
    target_link_libraries(${name} PRIVATE Tide::sdk)
  else()
    target_link_libraries(${name} PRIVATE tide_sdk)
  endif()
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_compile_features(${name} PRIVATE cxx_std_17)
  if(DEFINED TIDE_PLUGIN_OUTPUT_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TIDE_PLUGIN_OUTPUT_DIR})
  endif()
  # No undefined symbols: a plugin must not rely on the core's (or anyone's) C++ symbols.
  target_link_options(${name} PRIVATE -Wl,--no-undefined)
  if(_tap_NO_INSTALL)
    return()
  elseif(_tap_DESTINATION)
    set(dest ${_tap_DESTINATION})
  elseif(TIDE_PLUGIN_INSTALL_DIR)
    set(dest ${TIDE_PLUGIN_INSTALL_DIR})
  elseif(TIDE_PLUGIN_DIR)
    set(dest ${TIDE_PLUGIN_DIR})
  elseif(DEFINED TIDE_PLUGIN_OUTPUT_DIR)  # in-tree with TIDE_PLUGIN_INSTALL_DIR unset: tests' plugins
    return()
  else()
    message(WARNING "tide_add_plugin(${name}): no install destination (find_package(Tide) sets "
                    "TIDE_PLUGIN_DIR; or pass DESTINATION): `cmake --install` will not install it")
    return()
  endif()
  install(TARGETS ${name} LIBRARY DESTINATION ${dest} COMPONENT runtime)
endfunction()

# tide_plugin_program_proto(<target> <package>): compiles Tide's program IR (framework.proto, from
# TIDE_PROTO_DIR) into <target> under the protobuf package <package> (e.g. acme.proto: C++
# namespace acme::proto), for a plugin that reads or writes serialized programs (a device's
# get_capability and compile, a program pass; tide/plugin_api.h). The package must be the
# plugin's own: the core's copy of the messages (package tide.proto, file framework.proto) lives
# in the same process, and protobuf refuses a file or message name registered twice. The wire
# format is the same. Sources include "<target>_framework.pb.h". Needs protobuf (protoc and
# libprotobuf, the version Tide links).
function(tide_plugin_program_proto target package)
  if(NOT TIDE_PROTO_DIR OR NOT EXISTS "${TIDE_PROTO_DIR}/framework.proto")
    message(FATAL_ERROR "tide_plugin_program_proto(${target}): no framework.proto in "
                        "TIDE_PROTO_DIR ('${TIDE_PROTO_DIR}')")
  endif()
  if(NOT COMMAND protobuf_generate_cpp)
    find_package(Protobuf REQUIRED)
  endif()
  file(READ "${TIDE_PROTO_DIR}/framework.proto" text)
  string(REPLACE "package tide.proto;" "package ${package};" text "${text}")
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${target}_proto")
  file(WRITE "${dir}/staged.proto" "${text}")
  # Rewritten only when it changes, so a reconfigure does not rebuild the plugin.
  configure_file("${dir}/staged.proto" "${dir}/${target}_framework.proto" COPYONLY)
  protobuf_generate_cpp(srcs hdrs "${dir}/${target}_framework.proto")
  target_sources(${target} PRIVATE ${srcs})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
  target_link_libraries(${target} PRIVATE protobuf::libprotobuf)
endfunction()
