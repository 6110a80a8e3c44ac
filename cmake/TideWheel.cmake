# The wheel build (pip install . / pip wheel . through scikit-build-core, pyproject.toml): the
# install prefix is the tide package directory itself, so the core (lib/), its plugins
# (lib/tide/plugins, found beside the core with no environment variable), the SDK (include/,
# lib/cmake/Tide) and the Python package all live in site-packages/tide. RPATHs are $ORIGIN-
# relative, so the package works from any site-packages.
if(NOT SKBUILD)
  set(TIDE_WHEEL OFF)
  return()
endif()
set(TIDE_WHEEL ON)
message(STATUS "Tide: building a wheel (scikit-build-core ${SKBUILD_CORE_VERSION}), prefix ${CMAKE_INSTALL_PREFIX}")
# The same compiler launcher as scripts/build.sh, so the wheel's objects come from ccache when
# build/ compiled them already (scripts/common.sh sets CCACHE_BASEDIR for that).
find_program(TIDE_CCACHE ccache)
if(TIDE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER ${TIDE_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${TIDE_CCACHE})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${TIDE_CCACHE})
endif()
