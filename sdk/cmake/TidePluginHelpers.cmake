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
