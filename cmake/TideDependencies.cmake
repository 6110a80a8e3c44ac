# TideDependencies.cmake: finds what the build needs. A missing dependency stops the configure
# with one line naming the Debian package that provides it (scripts/install_deps.sh installs
# them all); an optional part that is off says which package would turn it on.

# tide_require(<debian package> <find_package arguments>...): find_package or a one-line error.
macro(tide_require deb_pkg name)
  find_package(${name} ${ARGN} QUIET)
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR "Tide needs ${name}: install the Debian package ${deb_pkg} "
                        "(scripts/install_deps.sh installs every dependency)")
  endif()
endmacro()

# tide_require_file(<var> <debian package> <file>): a header that has no CMake package.
function(tide_require_file var deb_pkg file)
  find_path(${var} ${file})
  if(NOT ${var})
    message(FATAL_ERROR "Tide needs ${file}: install the Debian package ${deb_pkg} "
                        "(scripts/install_deps.sh installs every dependency)")
  endif()
endfunction()

# tide_resolve_option(<var> <found> <hint>): ON/OFF/AUTO options -> <var>_ENABLED. ON without
# the dependencies is an error naming <hint> (the packages to install).
function(tide_resolve_option var found hint)
  if(${var} STREQUAL "AUTO")
    set(${var}_ENABLED ${found} PARENT_SCOPE)
    if(NOT ${found})
      message(STATUS "Tide: ${var} is AUTO and off: install ${hint} to build it")
    endif()
  elseif(${var})
    if(NOT ${found})
      message(FATAL_ERROR "${var}=ON but its dependencies were not found: install ${hint}")
    endif()
    set(${var}_ENABLED TRUE PARENT_SCOPE)
  else()
    set(${var}_ENABLED FALSE PARENT_SCOPE)
  endif()
endfunction()

# tide_find_dnnl(): oneDNN's CMake package (target DNNL::dnnl), or nothing. Debian's
# dnnl-config.cmake requires OpenCL (it is built with the OpenCL GPU runtime), and its
# find_package(OpenCL REQUIRED) would stop the configure with no word about which package is
# missing, so OpenCL is looked for first.
function(tide_find_dnnl)
  find_file(TIDE_DNNL_CONFIG dnnl-config.cmake
            PATH_SUFFIXES lib/cmake/dnnl lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/dnnl
                          lib64/cmake/dnnl)
  if(TIDE_DNNL_CONFIG)
    file(STRINGS "${TIDE_DNNL_CONFIG}" _needs_opencl REGEX "find_package\\(OpenCL")
    if(_needs_opencl)
      find_package(OpenCL QUIET)
      if(NOT OpenCL_FOUND)
        message(WARNING "oneDNN (${TIDE_DNNL_CONFIG}) needs OpenCL's development files: install "
                        "the Debian package ocl-icd-opencl-dev; building without oneDNN")
        return()
      endif()
    endif()
  endif()
  find_package(dnnl CONFIG QUIET)
  set(dnnl_FOUND ${dnnl_FOUND} PARENT_SCOPE)
  set(dnnl_VERSION ${dnnl_VERSION} PARENT_SCOPE)
endfunction()
