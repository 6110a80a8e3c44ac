// Tests core/framework/tensor.h and selected_rows.h on host buffers adopted with ResetHolder.
#include "core/framework/tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "core/framework/selected_rows.h"
#include "core/platform/enforce.h"

namespace tide::core {
namespace {

using ::testing::HasSubstr;

// A host buffer of `n` elements wrapped in an Allocation whose deleter counts its calls.
template <typename T>
AllocationPtr MakeBuffer(size_t n, int* deletes = nullptr) {
  T* buf = new T[n];
  for (size_t i = 0; i < n; ++i) buf[i] = static_cast<T>(i);
  return std::make_shared<Allocation>(buf, n * sizeof(T), Place("tensor_test_host", 0),
                                      [deletes](void* p) {
                                        delete[] static_cast<T*>(p);
                                        if (deletes) ++*deletes;
                                      });
}

TEST(TensorTest, FreshTensorHoldsNothing) {
  Tensor t;
  EXPECT_FALSE(t.initialized());
  EXPECT_EQ(t.data(), nullptr);
  EXPECT_EQ(t.raw_mutable_data(), nullptr);
  EXPECT_EQ(t.memory_size(), 0u);
  EXPECT_FALSE(t.place().valid());
  EXPECT_EQ(t.dtype(), TIDE_UNDEFINED);
  EXPECT_EQ(t.layout(), TIDE_LAYOUT_ANY);
  EXPECT_EQ(t.version(), 0u);
  EXPECT_EQ(t.dims().size(), 0);
  EXPECT_EQ(t.numel(), 1);
  EXPECT_EQ(t.offset(), 0u);
}

TEST(TensorTest, ResizeBumpsVersionOnlyOnChange) {
  Tensor t;
  t.Resize(DDim({2, 3}));
  EXPECT_EQ(t.version(), 1u);
  EXPECT_EQ(t.numel(), 6);
  t.Resize(DDim({2, 3}));
  EXPECT_EQ(t.version(), 1u);
  t.Resize(DDim({3, 2}));
  EXPECT_EQ(t.version(), 2u);
  t.Resize(DDim({3, 2, 1}));
  EXPECT_EQ(t.version(), 3u);
  t.Resize(DDim({3, 2, 1}));
  EXPECT_EQ(t.version(), 3u);
  t.Resize(DDim({-1, 4}));
  EXPECT_EQ(t.numel(), -1);
  EXPECT_EQ(t.version(), 4u);
}

TEST(TensorTest, ResetHolderAdoptsBuffer) {
  auto holder = MakeBuffer<float>(24);
  float* raw = static_cast<float*>(holder->ptr());
  Tensor t;
  t.ResetHolder(holder, TIDE_FP32, DDim({4, 6}));
  EXPECT_TRUE(t.initialized());
  EXPECT_EQ(t.dims(), DDim({4, 6}));
  EXPECT_EQ(t.dtype(), TIDE_FP32);
  EXPECT_EQ(t.data<float>(), raw);
  EXPECT_EQ(t.data(), raw);
  EXPECT_EQ(t.raw_mutable_data(), raw);
  EXPECT_EQ(t.memory_size(), 24 * sizeof(float));
  EXPECT_EQ(t.place(), Place("tensor_test_host", 0));
  EXPECT_EQ(t.holder().get(), holder.get());
  EXPECT_EQ(t.version(), 1u);
  EXPECT_FLOAT_EQ(t.data<float>()[23], 23.f);
}

TEST(TensorTest, ResetHolderWithOffset) {
  auto holder = MakeBuffer<int32_t>(16);
  Tensor t;
  t.ResetHolder(holder, TIDE_INT32, DDim({3, 4}), 4 * sizeof(int32_t));
  EXPECT_EQ(t.offset(), 16u);
  EXPECT_EQ(t.data<int32_t>()[0], 4);
  EXPECT_EQ(t.memory_size(), 12 * sizeof(int32_t));
}

TEST(TensorTest, DeleterRunsWhenLastViewGoes) {
  int deletes = 0;
  {
    Tensor a;
    a.ResetHolder(MakeBuffer<float>(8, &deletes), TIDE_FP32, DDim({2, 4}));
    {
      Tensor b;
      b.ShareDataWith(a);
      Tensor s = a.Slice(1, 2);
      a.Clear();
      EXPECT_EQ(deletes, 0);
      EXPECT_EQ(a.dims(), DDim({2, 4}));  // Clear keeps dims
      EXPECT_FALSE(a.initialized());
      EXPECT_EQ(a.offset(), 0u);
    }
    EXPECT_EQ(deletes, 1);
  }
  EXPECT_EQ(deletes, 1);
}

TEST(TensorTest, DataWithWrongTypeThrows) {
  Tensor t;
  t.ResetHolder(MakeBuffer<float>(4), TIDE_FP32, DDim({4}));
  try {
    t.data<int32_t>();
    FAIL() << "float32 tensor read as int32";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("holds float32"));
    EXPECT_THAT(e.what(), HasSubstr("read as int32"));
  }
  EXPECT_THROW(t.data<double>(), Error);
  EXPECT_THROW(t.data<int64_t>(), Error);
  EXPECT_NO_THROW(t.data<float>());
  Tensor empty;
  EXPECT_THROW(empty.data<float>(), Error);  // undefined dtype
}

TEST(TensorTest, SliceSharesMemoryAtRowOffset) {
  auto holder = MakeBuffer<float>(24);
  float* raw = static_cast<float*>(holder->ptr());
  Tensor t;
  t.ResetHolder(holder, TIDE_FP32, DDim({4, 2, 3}));
  t.set_layout(TIDE_LAYOUT_NCHW);

  Tensor s = t.Slice(1, 3);
  EXPECT_EQ(s.dims(), DDim({2, 2, 3}));
  EXPECT_EQ(s.dtype(), TIDE_FP32);
  EXPECT_EQ(s.layout(), TIDE_LAYOUT_NCHW);
  EXPECT_EQ(s.holder().get(), holder.get());
  EXPECT_EQ(s.offset(), 6 * sizeof(float));
  EXPECT_EQ(s.data<float>(), raw + 6);
  EXPECT_FLOAT_EQ(s.data<float>()[0], 6.f);
  EXPECT_EQ(s.memory_size(), (24 - 6) * sizeof(float));
  // The original is untouched.
  EXPECT_EQ(t.dims(), DDim({4, 2, 3}));
  EXPECT_EQ(t.offset(), 0u);

  // Writes through the slice are visible to the original.
  static_cast<float*>(s.raw_mutable_data())[1] = 100.f;
  EXPECT_FLOAT_EQ(t.data<float>()[7], 100.f);

  // A slice of a slice adds the offsets.
  Tensor ss = s.Slice(1, 2);
  EXPECT_EQ(ss.dims(), DDim({1, 2, 3}));
  EXPECT_EQ(ss.offset(), 12 * sizeof(float));
  EXPECT_EQ(ss.data<float>(), raw + 12);

  // Empty and full slices.
  Tensor e = t.Slice(4, 4);
  EXPECT_EQ(e.dims(), DDim({0, 2, 3}));
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.offset(), 24 * sizeof(float));
  Tensor all = t.Slice(0, 4);
  EXPECT_EQ(all.dims(), t.dims());
  EXPECT_EQ(all.data(), t.data());
  EXPECT_EQ(holder.use_count(), 6);  // holder, t, s, ss, e, all
}

TEST(TensorTest, SliceOffsetUsesElementSize) {
  Tensor t;
  t.ResetHolder(MakeBuffer<int64_t>(10), TIDE_INT64, DDim({5, 2}));
  Tensor s = t.Slice(3, 5);
  EXPECT_EQ(s.offset(), 6 * sizeof(int64_t));
  EXPECT_EQ(s.data<int64_t>()[0], 6);
  EXPECT_EQ(s.data<int64_t>()[3], 9);
}

TEST(TensorTest, SliceOutOfRangeThrows) {
  Tensor t;
  t.ResetHolder(MakeBuffer<float>(6), TIDE_FP32, DDim({3, 2}));
  for (auto [b, e] : std::vector<std::pair<int64_t, int64_t>>{{-1, 1}, {2, 1}, {0, 4}, {4, 5}}) {
    try {
      t.Slice(b, e);
      FAIL() << "Slice(" << b << ", " << e << ") accepted";
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), TIDE_INVALID_ARGUMENT);
      EXPECT_THAT(err.what(), HasSubstr("outside dim 0 of [3, 2]"));
    }
  }
  Tensor scalar;
  scalar.ResetHolder(MakeBuffer<float>(1), TIDE_FP32, DDim());
  try {
    scalar.Slice(0, 1);
    FAIL() << "rank-0 slice accepted";
  } catch (const Error& err) {
    EXPECT_THAT(err.what(), HasSubstr("rank-0"));
  }
}

TEST(TensorTest, ShareDataWithCopiesViewAndBumpsVersionOnDimsChange) {
  auto holder = MakeBuffer<float>(12);
  Tensor src;
  src.ResetHolder(holder, TIDE_FP32, DDim({3, 4}), 2 * sizeof(float));
  src.set_layout(TIDE_LAYOUT_NHWC);

  Tensor dst;
  dst.Resize(DDim({3, 4}));
  uint64_t v = dst.version();
  dst.ShareDataWith(src);
  EXPECT_EQ(dst.version(), v);  // same dims: no bump
  EXPECT_EQ(dst.dims(), src.dims());
  EXPECT_EQ(dst.dtype(), TIDE_FP32);
  EXPECT_EQ(dst.layout(), TIDE_LAYOUT_NHWC);
  EXPECT_EQ(dst.holder(), src.holder());
  EXPECT_EQ(dst.offset(), src.offset());
  EXPECT_EQ(dst.data(), src.data());

  Tensor other;
  other.ResetHolder(MakeBuffer<int32_t>(2), TIDE_INT32, DDim({2}));
  uint64_t v2 = other.version();
  other.ShareDataWith(src);
  EXPECT_EQ(other.version(), v2 + 1);
  EXPECT_EQ(other.dtype(), TIDE_FP32);
  EXPECT_EQ(other.data<float>(), src.data<float>());
}

TEST(TensorTest, MutableDataReusesAFittingHolder) {
  auto holder = MakeBuffer<float>(16);
  Tensor t;
  t.ResetHolder(holder, TIDE_FP32, DDim({4, 4}));
  // Same place, fits: no allocation, same memory, dtype follows the request.
  t.Resize(DDim({2, 4}));
  int32_t* p = t.mutable_data<int32_t>(Place("tensor_test_host", 0));
  EXPECT_EQ(static_cast<void*>(p), holder->ptr());
  EXPECT_EQ(t.dtype(), TIDE_INT32);
  EXPECT_EQ(t.holder().get(), holder.get());
  double* d = t.mutable_data<double>(DDim({8}), Place("tensor_test_host", 0));
  EXPECT_EQ(static_cast<void*>(d), holder->ptr());
  EXPECT_EQ(t.dims(), DDim({8}));
}

TEST(TensorTest, MutableDataRejectsUnknownDimsAndUndefinedType) {
  Tensor t;
  t.Resize(DDim({-1, 3}));
  try {
    t.mutable_data<float>(Place("tensor_test_host", 0));
    FAIL() << "allocated with unknown dims";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("[-1, 3]"));
  }
  t.Resize(DDim({2}));
  try {
    t.mutable_data(Place("tensor_test_host", 0), TIDE_UNDEFINED);
    FAIL() << "allocated an undefined type";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("undefined"));
  }
  EXPECT_FALSE(t.initialized());
}

TEST(LoDTest, ValidLoDs) {
  EXPECT_EQ(CheckLoD({}, 5), "");
  EXPECT_EQ(CheckLoD({{0, 2, 5}}, 5), "");
  EXPECT_EQ(CheckLoD({{0, 0, 5}}, 5), "");  // an empty sequence is fine
  // Two levels: 2 paragraphs of 1 and 2 sentences over 3 sentences of 6 words.
  EXPECT_EQ(CheckLoD({{0, 1, 3}, {0, 1, 3, 6}}, 6), "");
  EXPECT_EQ(CheckLoD({{0, 1}, {0, 2}, {0, 3, 4}}, 4), "");
  EXPECT_EQ(CheckLoD({{0, 0}}, 0), "");
}

TEST(LoDTest, EachKindOfInvalidLoDHasAReason) {
  struct Case {
    LoD lod;
    int64_t rows;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {{{}}, 0, "LoD level 0 needs at least 2 offsets"},
      {{{0}}, 0, "LoD level 0 needs at least 2 offsets"},
      {{{0, 2}, {0}}, 2, "LoD level 1 needs at least 2 offsets"},
      {{{0, 2}, {}}, 2, "LoD level 1 needs at least 2 offsets"},
      {{{0, 1, 2}, {0, 5, 3}}, 3, "LoD level 1 decreases at position 2"},
      {{{1, 3}}, 3, "LoD level 0 must start at 0"},
      {{{0, 1}, {2, 3}}, 3, "LoD level 1 must start at 0"},
      {{{0, 3, 2, 4}}, 4, "LoD level 0 decreases at position 2"},
      {{{0, 2, 4}}, 5, "LoD level 0 ends at 4 but the tensor has 5 rows"},
      {{{0, 2, 6}}, 5, "LoD level 0 ends at 6 but the tensor has 5 rows"},
      {{{0, 1, 2}, {0, 1, 3, 6}}, 6, "LoD level 0 ends at 2 but the next level has 3 sequences"},
      {{{0, 1, 3}, {0, 1, 3, 6}}, 7, "LoD level 1 ends at 6 but the tensor has 7 rows"},
  };
  for (const auto& c : cases) {
    std::string why = CheckLoD(c.lod, c.rows);
    EXPECT_FALSE(why.empty()) << LoDToString(c.lod);
    EXPECT_THAT(why, HasSubstr(c.reason)) << LoDToString(c.lod);
  }
}

TEST(LoDTest, LoDToString) {
  EXPECT_EQ(LoDToString({}), "[]");
  EXPECT_EQ(LoDToString({{0, 2, 3}}), "[[0, 2, 3]]");
  EXPECT_EQ(LoDToString({{0, 1, 3}, {0, 1, 3, 6}}), "[[0, 1, 3], [0, 1, 3, 6]]");
}

TEST(LoDTensorTest, SetLoDBumpsVersionOnlyOnChange) {
  LoDTensor t;
  t.Resize(DDim({6, 2}));
  uint64_t v = t.version();
  t.set_lod({{0, 2, 6}});
  EXPECT_EQ(t.version(), v + 1);
  t.set_lod({{0, 2, 6}});
  EXPECT_EQ(t.version(), v + 1);
  t.set_lod({{0, 3, 6}});
  EXPECT_EQ(t.version(), v + 2);
  t.set_lod({});
  EXPECT_EQ(t.version(), v + 3);
  EXPECT_EQ(t.lod_levels(), 0u);
}

TEST(LoDTensorTest, NumSequences) {
  LoDTensor t;
  EXPECT_EQ(t.NumSequences(), 0u);
  t.set_lod({{0, 1, 3}, {0, 1, 3, 6}});
  EXPECT_EQ(t.lod_levels(), 2u);
  EXPECT_EQ(t.NumSequences(), 2u);
  EXPECT_EQ(t.NumSequences(0), 2u);
  EXPECT_EQ(t.NumSequences(1), 3u);
  EXPECT_EQ(t.NumSequences(2), 0u);
  t.set_lod({{}});
  EXPECT_EQ(t.NumSequences(0), 0u);
}

TEST(LoDTensorTest, SharesDataLikeATensorAndKeepsItsLoD) {
  LoDTensor t;
  t.ResetHolder(MakeBuffer<float>(6), TIDE_FP32, DDim({6, 1}));
  t.set_lod({{0, 2, 6}});
  LoDTensor u;
  u.ShareDataWith(t);  // Tensor's view only
  EXPECT_EQ(u.data(), t.data());
  EXPECT_TRUE(u.lod().empty());
  EXPECT_EQ(CheckLoD(t.lod(), t.dims()[0]), "");
}

TEST(SelectedRowsTest, DenseDims) {
  SelectedRows sr;
  EXPECT_EQ(sr.height(), 0);
  EXPECT_EQ(sr.dense_dims(), DDim());  // no value yet: rank 0
  sr.set_height(10);
  sr.mutable_rows()->assign({1, 4, 7});
  sr.mutable_value()->Resize(DDim({3, 4, 5}));
  EXPECT_EQ(sr.height(), 10);
  EXPECT_EQ(sr.rows(), (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(sr.dense_dims(), DDim({10, 4, 5}));
  EXPECT_EQ(sr.value().dims(), DDim({3, 4, 5}));  // the value keeps its own dims
}

}  // namespace
}  // namespace tide::core
