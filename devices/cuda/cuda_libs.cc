// cuda_libs.cc: opens cuBLAS, cuDNN and NCCL on first use (see cuda_libs.h).
#include "cuda_libs.h"

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <tide/plugin.hpp>

#define TIDE_CUDA_STR2(x) #x
#define TIDE_CUDA_STR(x) TIDE_CUDA_STR2(x)

#ifndef TIDE_CUDA_LIBRARY_DIRS
#define TIDE_CUDA_LIBRARY_DIRS ""
#endif

namespace tide_cuda {

// The typed members' signatures are the C functions' (no overload matches otherwise).
static_assert(static_cast<CublasGemmExFn>(&::cublasGemmEx) != nullptr);
static_assert(static_cast<CublasGemmStridedBatchedExFn>(&::cublasGemmStridedBatchedEx) != nullptr);

namespace {

// The soname first (LD_LIBRARY_PATH, the ld.so cache, this plugin's RUNPATH), then the
// directories the plugin was built against.
void* Open(const std::string& soname, std::string* tried) {
  if (void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  *tried = soname + " (" + dlerror() + ")";
  std::string dirs = TIDE_CUDA_LIBRARY_DIRS;
  size_t pos = 0;
  while (pos <= dirs.size()) {
    size_t end = dirs.find(':', pos);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(pos, end - pos);
    pos = end + 1;
    if (dir.empty()) continue;
    std::string path = dir + "/" + soname;
    if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    *tried += ", " + path + " (" + dlerror() + ")";
  }
  return nullptr;
}

template <typename Api>
struct Library {
  std::once_flag once;
  Api api;
  std::string error;  // empty when loaded
};

template <typename Api, typename Fill>
const Api& Get(Library<Api>& lib, const char* what, const std::string& soname, Fill fill) {
  std::call_once(lib.once, [&] {
    std::string tried;
    void* h = Open(soname, &tried);
    if (!h) {
      lib.error = std::string(what) + " could not be loaded; tried " + tried +
                  ". Install it or add its directory to LD_LIBRARY_PATH";
      return;
    }
    std::string missing;
    fill(h, &lib.api, &missing);
    if (!missing.empty())
      lib.error = std::string(what) + " (" + soname + ") lacks function(s):" + missing +
                  "; it is older than the headers Tide was built with";
  });
  if (!lib.error.empty()) TIDE_THROW(TIDE_UNAVAILABLE, lib.error);
  return lib.api;
}

#define TIDE_CUDA_LIB_LOAD(name)                                      \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(h, #name)); \
  if (!api->name) *missing += " " #name;
#define TIDE_CUDA_LIB_LOAD_TYPED(name, type) TIDE_CUDA_LIB_LOAD(name)

}  // namespace

const CublasApi& Cublas() {
  static Library<CublasApi> lib;
  return Get(lib, "cuBLAS", "libcublas.so." TIDE_CUDA_STR(CUBLAS_VER_MAJOR),
             [](void* h, CublasApi* api, std::string* missing) {
               TIDE_CUBLAS_FUNCTIONS(TIDE_CUDA_LIB_LOAD)
               TIDE_CUBLAS_TYPED_FUNCTIONS(TIDE_CUDA_LIB_LOAD_TYPED)
             });
}

const CudnnApi& Cudnn() {
  static Library<CudnnApi> lib;
  return Get(lib, "cuDNN", "libcudnn.so." TIDE_CUDA_STR(CUDNN_MAJOR),
             [](void* h, CudnnApi* api, std::string* missing) {
               TIDE_CUDNN_FUNCTIONS(TIDE_CUDA_LIB_LOAD)
             });
}

#ifdef TIDE_CUDA_WITH_NCCL
const NcclApi& Nccl() {
  static Library<NcclApi> lib;
  return Get(
      lib, "NCCL", "libnccl.so." TIDE_CUDA_STR(NCCL_MAJOR),
      [](void* h, NcclApi* api, std::string* missing) { TIDE_NCCL_FUNCTIONS(TIDE_CUDA_LIB_LOAD) });
}
#endif

const char* CublasStatusText(cublasStatus_t s) {
  try {
    return Cublas().cublasGetStatusString(s);
  } catch (...) {
    return "cuBLAS error";
  }
}

const char* CudnnStatusText(cudnnStatus_t s) {
  try {
    return Cudnn().cudnnGetErrorString(s);
  } catch (...) {
    return "cuDNN error";
  }
}

}  // namespace tide_cuda
