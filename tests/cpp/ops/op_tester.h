// op_tester.h: runs one op of a loaded op pack through the real executor on a place and checks
// it: outputs against a float64 reference, and its grad ops (from its registered grad maker)
// against central finite differences. The kernel tests and the device conformance checks use it.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/framework/tensor.h"
#include "core/ir/attribute.h"
#include "core/platform/place.h"

namespace tide::test {

// A tensor handed to or taken from an op, with values in float64 for comparison.
struct TestTensor {
  std::vector<int64_t> dims;
  std::vector<double> data;
  TideDataType dtype = TIDE_FP32;
  core::LoD lod;
  int64_t numel() const;
};

// Uniform values in [lo, hi), deterministic for a seed.
TestTensor Random(std::vector<int64_t> dims, TideDataType dtype, double lo = -1, double hi = 1,
                  unsigned seed = 1);
TestTensor Values(std::vector<int64_t> dims, std::vector<double> data,
                  TideDataType dtype = TIDE_FP32);

class OpTester {
 public:
  explicit OpTester(std::string type, core::Place place = core::Place("cpu", 0));

  // Binds `var` (fed with `t`) to input `param`; call again with the same param for a list.
  OpTester& Input(const std::string& param, const std::string& var, TestTensor t);
  OpTester& Output(const std::string& param, const std::string& var);
  OpTester& Attr(const std::string& name, core::Attribute value);

  // Builds the one-op program (checks and compile-time shape inference), runs it, returns every
  // output variable by name. Throws tide::core::Error on failure.
  std::map<std::string, TestTensor> Run() const;
  // Checks d(sum(w * out))/d(input) from the grad ops against central differences, for each of
  // `wrt` (input variable names), with random weights w. Tolerance: |a-n| <= atol + rtol*|n|.
  void CheckGrad(const std::vector<std::string>& wrt, const std::string& out, double rtol,
                 double atol, double delta) const;
  // Runs the forward and grad ops (from the registered grad maker) with out@GRAD fed as `dout`;
  // returns the grads of `wrt` (input variable names), keyed by those names.
  std::map<std::string, TestTensor> RunGrad(const std::vector<std::string>& wrt,
                                            const std::string& out, const TestTensor& dout) const;

 private:
  std::string type_;
  core::Place place_;
  std::vector<std::pair<std::string, std::string>> inputs_;  // param, var
  std::map<std::string, TestTensor> feeds_;
  std::vector<std::pair<std::string, std::string>> outputs_;
  core::AttributeMap attrs_;
};

// Element-wise |got - want| <= atol + rtol * |want|, with the position of the first mismatch.
void ExpectNear(const TestTensor& got, const std::vector<double>& want, double rtol = 1e-5,
                double atol = 1e-6);

// Runs `f`, which must throw exactly a tide::core::Error (not another exception, not nothing)
// whose message contains each of `parts`; returns the message ("" on a failure).
std::string ExpectError(const std::function<void()>& f, const std::vector<std::string>& parts);

// A tolerance that suits the dtype: float32 results vs float64 references.
inline double Tol(TideDataType t) { return t == TIDE_FP64 ? 1e-10 : 1e-5; }

// Finite-difference settings for CheckGrad that suit the dtype: float64 tight, float32 looser.
struct GradTolerance {
  double rtol, atol, delta;
};
inline GradTolerance GradTol(TideDataType t) {
  return t == TIDE_FP64 ? GradTolerance{1e-6, 1e-7, 1e-6} : GradTolerance{5e-3, 1e-3, 1e-2};
}

// The parameter name of the dtype-parameterised suites: "fp32", "fp64", "int32", ...
std::string DtypeParamName(const ::testing::TestParamInfo<TideDataType>& info);

}  // namespace tide::test
