# tide_add_plugin(<name> <sources>...): builds a Tide plugin module that sees only the SDK,
# exports only its two entry points (hidden visibility), and lands where Tide finds it.
# Used in-tree and, through find_package(Tide), by third-party plugins.
function(tide_add_plugin name)
  add_library(${name} MODULE ${ARGN})
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
  # In-tree: the install tree's plugin directory; out of tree (find_package(Tide)): the plugin
  # directory of the Tide found (TIDE_PLUGIN_DIR, absolute), where it looks by default.
  if(DEFINED TIDE_PLUGIN_INSTALL_DIR)
    install(TARGETS ${name} LIBRARY DESTINATION ${TIDE_PLUGIN_INSTALL_DIR})
  elseif(DEFINED TIDE_PLUGIN_DIR)
    install(TARGETS ${name} LIBRARY DESTINATION ${TIDE_PLUGIN_DIR})
  endif()
endfunction()
