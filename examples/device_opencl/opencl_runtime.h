// opencl_runtime.h: the plugin's OpenCL state, shared by the device (opencl_device.cc) and the
// kernels (opencl_kernels.cc): the devices found at load, one cl_context each, the command queue a
// place's Tide context wraps, and the kernels compiled from kernels.cl (once per device and data
// type, at the place's first use) with a launcher that sets their arguments.
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tide/plugin.hpp>
#include <type_traits>
#include <vector>

namespace tide_opencl {

// "CL_OUT_OF_RESOURCES (-5)": OpenCL's error codes by name, for messages.
std::string ErrorName(cl_int err);

// Throws tide::Error naming `what` and the OpenCL error when err is not CL_SUCCESS.
#define TIDE_CL_CHECK(expr, ...)                               \
  do {                                                         \
    const cl_int tide_cl_err_ = (expr);                        \
    if (tide_cl_err_ != CL_SUCCESS)                            \
      TIDE_THROW(TIDE_INTERNAL, "opencl: ", __VA_ARGS__, ": ", \
                 ::tide_opencl::ErrorName(tide_cl_err_));      \
  } while (0)

// One usable device: OpenCL 2.0 or newer with coarse-grained SVM (what Tide's allocator needs:
// pointers it can offset, see README.md).
struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_context context = nullptr;  // made at load, kept to process exit (frees come after finalize)
  std::string name, vendor, version, driver;
  cl_ulong global_mem = 0;
  cl_uint compute_units = 0;
  bool fp64 = false;
};

// The compiled kernels of one device and element type (float or double).
struct KernelSet {
  struct Entry {
    cl_kernel kernel = nullptr;
    // clSetKernelArg + enqueue on one cl_kernel is not thread-safe, and Tide runs kernels of one
    // op type from several executors at once: each launch holds the kernel's lock.
    std::unique_ptr<std::mutex> mu = std::make_unique<std::mutex>();
  };
  cl_program program = nullptr;
  std::map<std::string, Entry> kernels;
};

// What a Tide context of an "opencl" place is: an in-order command queue on its device.
struct Context {
  int32_t device = 0;
  int32_t role = 0;  // TideStreamRole: the compute context, or a copy stream's
  cl_command_queue queue = nullptr;
  const KernelSet* kernels[2] = {nullptr, nullptr};  // float, double (null: no fp64)
};

// The devices found when the plugin loaded (empty when there is no OpenCL platform).
const std::vector<DeviceInfo>& Devices();
// Why no device was found ("" when some were): shown by the Count()-is-0 paths.
const std::string& NoDeviceReason();

// The kernels of `device` for float (dtype 0) or double (1), built from kernels.cl on the first
// call (thread-safe); nullptr for double on a device without cl_khr_fp64.
const KernelSet* Kernels(int32_t device, int dtype);

// The extension name kernels reach their place's Context by.
constexpr const char* kContextExtension = "tide.opencl.context";

// A kernel launch: arguments in the kernel's order. Pointers are SVM pointers (Tide's tensors'
// data, also at an offset into a block), set with clSetKernelArgSVMPointer; everything else by
// value, with the C++ type matching the kernel's parameter (cl_long for long, T for the element
// type).
class Launch {
 public:
  Launch(const tide::KernelContext& ctx, const Context& c, int dtype, const char* name);
  template <typename... A>
  void Run1D(size_t global, A... args) {
    Run({global, 1, 1}, {kLocal1D, 1, 1}, 1, args...);
  }
  // 2-D / 3-D: global sizes are rounded up to the local ones; kernels check their bounds.
  template <typename... A>
  void Run(std::array<size_t, 3> global, std::array<size_t, 3> local, cl_uint dims, A... args) {
    std::lock_guard<std::mutex> lock(*entry_->mu);
    cl_uint i = 0;
    (SetArg(i++, args), ...);
    Enqueue(global, local, dims);
  }
  static constexpr size_t kLocal1D = 64;

 private:
  template <typename A>
  void SetArg(cl_uint i, A a) {
    cl_int err;
    if constexpr (std::is_pointer_v<A>)
      err = clSetKernelArgSVMPointer(entry_->kernel, i, a);
    else
      err = clSetKernelArg(entry_->kernel, i, sizeof(A), &a);
    if (err != CL_SUCCESS) ArgFailed(i, err);
  }
  [[noreturn]] void ArgFailed(cl_uint i, cl_int err) const;
  void Enqueue(std::array<size_t, 3> global, std::array<size_t, 3> local, cl_uint dims);

  const char* op_;
  const char* name_;
  cl_command_queue queue_;
  KernelSet::Entry* entry_;
};

// Queues a copy of `size` host bytes at `src` to `dst` on the device, the bytes taken before it
// returns (staged, freed when the copy is done), as contract 2 asks of a host-to-device copy.
void Upload(cl_command_queue queue, void* dst, const void* src, size_t size);

// The kernel's place's Context (the core hands a kernel its place's context).
const Context& ContextOf(const tide::KernelContext& ctx);

}  // namespace tide_opencl
