# The sim device (a model of an asynchronous accelerator), built out of tree against an installed
# Tide SDK: cmake -S . -B build -DCMAKE_PREFIX_PATH=<Tide's prefix> && cmake --build build.
# Installed as share/tide/examples/sim_device/CMakeLists.txt (sdk/CMakeLists.txt).
cmake_minimum_required(VERSION 3.18)
project(tide_device_sim CXX)
find_package(Tide 0.1 REQUIRED)
tide_add_plugin(tide_device_sim NO_INSTALL sim_device.cc sim_mlp_kernels.cc sim_collective.cc
                sim_bf16_kernels.cc sim_compiler.cc)
# Eigen: tide/low_precision.hpp's tide::bfloat16 (its bfloat16 mul and casts).
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
target_link_libraries(tide_device_sim PRIVATE Eigen3::Eigen)
tide_plugin_program_proto(tide_device_sim tide_sim.proto)
# Its collective library (sim_collective.h) runs on Gloo where libgloo-dev is installed.
find_package(Gloo CONFIG QUIET)
if(Gloo_FOUND AND TARGET gloo)
  target_compile_definitions(tide_device_sim PRIVATE TIDE_SIM_WITH_GLOO)
  target_link_libraries(tide_device_sim PRIVATE gloo)
endif()
