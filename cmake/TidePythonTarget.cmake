# The Python package for another CPython than the one running the build (scripts/wheel.sh
# --python-headers DIR): a binary wheel is per CPython version, and the build machine (Debian 12)
# has only its own 3.11. With TIDE_PYTHON_HEADERS naming that version's headers (the directory
# holding Python.h, e.g. Debian's libpython3.13-dev unpacked), tide._C is compiled against them
# and named for that version, without its interpreter: pybind11's cross-compiling mode (pybind11
# 2.12 or later, which knows 3.13; pybind11_DIR names it). Only the extension differs; the core
# and the plugins are the same objects (ccache).
set(Python_INCLUDE_DIR "${TIDE_PYTHON_HEADERS}")
find_package(Python COMPONENTS Development.Module REQUIRED)
if(NOT CMAKE_LIBRARY_ARCHITECTURE)
  message(FATAL_ERROR "TIDE_PYTHON_HEADERS: no CMAKE_LIBRARY_ARCHITECTURE to name the extension for")
endif()
# Debian's pyconfig.h includes <ARCH/python3.X/pyconfig.h>: the headers' parent is an include
# directory too.
get_filename_component(_tide_py_include_root "${TIDE_PYTHON_HEADERS}" DIRECTORY)
if(EXISTS "${_tide_py_include_root}/${CMAKE_LIBRARY_ARCHITECTURE}")
  set_property(TARGET Python::Module APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
               "${_tide_py_include_root}")
endif()
set(Python_SOABI "cpython-${Python_VERSION_MAJOR}${Python_VERSION_MINOR}-${CMAKE_LIBRARY_ARCHITECTURE}")
set(PYTHON_MODULE_EXTENSION ".${Python_SOABI}.so" CACHE INTERNAL "")
set(PYTHON_IS_DEBUG OFF CACHE INTERNAL "")
# pybind11 takes the SOABI above instead of asking an interpreter only when cross-compiling.
# Said only around find_package(pybind11) (which records it), so no other find sees it.
set(_tide_crosscompiling "${CMAKE_CROSSCOMPILING}")
set(CMAKE_CROSSCOMPILING TRUE)
set(PYBIND11_USE_CROSSCOMPILING ON)
find_package(pybind11 2.12 CONFIG REQUIRED)
set(CMAKE_CROSSCOMPILING "${_tide_crosscompiling}")
message(STATUS "Tide: the Python package for CPython ${Python_VERSION} (${TIDE_PYTHON_HEADERS}), "
               "extension suffix ${PYTHON_MODULE_EXTENSION}")
