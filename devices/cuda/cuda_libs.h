// cuda_libs.h: cuBLAS, cuDNN and NCCL, opened with dlopen on first use instead of linked. The
// plugin then loads in milliseconds (these libraries are hundreds of MB), loads on machines that
// lack them, and only the ops that need them fail there, saying which library is missing. NCCL
// only where the plugin was built with nccl.h (TIDE_CUDA_WITH_NCCL).
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>
#ifdef TIDE_CUDA_WITH_NCCL
#include <nccl.h>
#endif

namespace tide_cuda {

#define TIDE_CUBLAS_FUNCTIONS(X) \
  X(cublasCreate_v2)             \
  X(cublasDestroy_v2)            \
  X(cublasSetStream_v2)          \
  X(cublasSetMathMode)           \
  X(cublasGetMathMode)           \
  X(cublasGetStatusString)       \
  X(cublasSgemm_v2)              \
  X(cublasDgemm_v2)              \
  X(cublasSgemmStridedBatched)   \
  X(cublasDgemmStridedBatched)

// Functions the C++ header overloads (an inline wrapper taking the old cudaDataType compute type):
// declared with the C signature's type, as decltype cannot pick an overload.
using CublasGemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                          int, int, const void*, const void*, cudaDataType, int,
                                          const void*, cudaDataType, int, const void*, void*,
                                          cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using CublasGemmStridedBatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*,
    void*, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
#define TIDE_CUBLAS_TYPED_FUNCTIONS(X) \
  X(cublasGemmEx, CublasGemmExFn)      \
  X(cublasGemmStridedBatchedEx, CublasGemmStridedBatchedExFn)

#define TIDE_CUDNN_FUNCTIONS(X)                     \
  X(cudnnGetVersion)                                \
  X(cudnnCreate)                                    \
  X(cudnnDestroy)                                   \
  X(cudnnSetStream)                                 \
  X(cudnnGetErrorString)                            \
  X(cudnnCreateTensorDescriptor)                    \
  X(cudnnDestroyTensorDescriptor)                   \
  X(cudnnSetTensor4dDescriptor)                     \
  X(cudnnCreateFilterDescriptor)                    \
  X(cudnnDestroyFilterDescriptor)                   \
  X(cudnnSetFilter4dDescriptor)                     \
  X(cudnnCreateConvolutionDescriptor)               \
  X(cudnnDestroyConvolutionDescriptor)              \
  X(cudnnSetConvolution2dDescriptor)                \
  X(cudnnSetConvolutionGroupCount)                  \
  X(cudnnSetConvolutionMathType)                    \
  X(cudnnGetConvolutionForwardAlgorithm_v7)         \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)    \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)  \
  X(cudnnGetConvolutionForwardWorkspaceSize)        \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)   \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(cudnnConvolutionForward)                        \
  X(cudnnConvolutionBackwardData)                   \
  X(cudnnConvolutionBackwardFilter)                 \
  X(cudnnSetTensorNdDescriptor)                     \
  X(cudnnGetTensorNdDescriptor)                     \
  X(cudnnCreateDropoutDescriptor)                   \
  X(cudnnDestroyDropoutDescriptor)                  \
  X(cudnnSetDropoutDescriptor)                      \
  X(cudnnCreateRNNDescriptor)                       \
  X(cudnnDestroyRNNDescriptor)                      \
  X(cudnnSetRNNDescriptor_v8)                       \
  X(cudnnCreateRNNDataDescriptor)                   \
  X(cudnnDestroyRNNDataDescriptor)                  \
  X(cudnnSetRNNDataDescriptor)                      \
  X(cudnnGetRNNWeightSpaceSize)                     \
  X(cudnnGetRNNWeightParams)                        \
  X(cudnnGetRNNTempSpaceSizes)                      \
  X(cudnnRNNForward)                                \
  X(cudnnRNNBackwardData_v8)                        \
  X(cudnnRNNBackwardWeights_v8)

#define TIDE_NCCL_FUNCTIONS(X) \
  X(ncclGetVersion)            \
  X(ncclGetErrorString)        \
  X(ncclGetUniqueId)           \
  X(ncclCommInitRank)          \
  X(ncclCommDestroy)           \
  X(ncclAllReduce)             \
  X(ncclBroadcast)             \
  X(ncclAllGather)             \
  X(ncclReduceScatter)         \
  X(ncclGroupStart)            \
  X(ncclGroupEnd)              \
  X(ncclCommGetAsyncError)     \
  X(ncclCommAbort)

#define TIDE_CUDA_LIB_MEMBER(name) decltype(&::name) name = nullptr;
#define TIDE_CUDA_LIB_TYPED_MEMBER(name, type) type name = nullptr;
struct CublasApi {
  TIDE_CUBLAS_FUNCTIONS(TIDE_CUDA_LIB_MEMBER)
  TIDE_CUBLAS_TYPED_FUNCTIONS(TIDE_CUDA_LIB_TYPED_MEMBER)
};
struct CudnnApi {
  TIDE_CUDNN_FUNCTIONS(TIDE_CUDA_LIB_MEMBER)
};
#ifdef TIDE_CUDA_WITH_NCCL
struct NcclApi {
  TIDE_NCCL_FUNCTIONS(TIDE_CUDA_LIB_MEMBER)
};
#endif
#undef TIDE_CUDA_LIB_MEMBER
#undef TIDE_CUDA_LIB_TYPED_MEMBER

// The library's functions, opened once (thread-safe). Throws TIDE_UNAVAILABLE naming the files
// tried and the loader's error when the library or one of its functions is missing.
const CublasApi& Cublas();
const CudnnApi& Cudnn();
#ifdef TIDE_CUDA_WITH_NCCL
const NcclApi& Nccl();
#endif

// "CUBLAS_STATUS_...: text" / cuDNN's error string, for messages.
const char* CublasStatusText(cublasStatus_t s);
const char* CudnnStatusText(cudnnStatus_t s);

}  // namespace tide_cuda
