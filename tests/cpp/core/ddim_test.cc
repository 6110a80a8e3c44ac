// Tests core/platform/ddim.h: DDim construction, product, slicing, indexing and FlattenTo2D.
#include "core/platform/ddim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "core/platform/enforce.h"

namespace tide::core {
namespace {

using ::testing::HasSubstr;

TEST(DDimTest, DefaultIsRankZero) {
  DDim d;
  EXPECT_EQ(d.size(), 0);
  EXPECT_EQ(d.product(), 1);  // a scalar holds one element
  EXPECT_FALSE(d.HasUnknown());
  EXPECT_EQ(d.ToString(), "[]");
  EXPECT_TRUE(d.ToVector().empty());
}

TEST(DDimTest, ConstructorsAgree) {
  DDim a{2, 3, 4};
  DDim b(std::vector<int64_t>{2, 3, 4});
  const int64_t raw[] = {2, 3, 4};
  DDim c(raw, 3);
  EXPECT_EQ(a, b);
  EXPECT_EQ(b, c);
  EXPECT_EQ(a.size(), 3);
  EXPECT_EQ(a[0], 2);
  EXPECT_EQ(a[1], 3);
  EXPECT_EQ(a[2], 4);
  EXPECT_EQ(a.ToVector(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(a.data()[2], 4);
}

TEST(DDimTest, EqualityComparesRankAndValues) {
  EXPECT_EQ(DDim({1, 2}), DDim({1, 2}));
  EXPECT_NE(DDim({1, 2}), DDim({2, 1}));
  EXPECT_NE(DDim({1, 2}), DDim({1, 2, 1}));
  EXPECT_NE(DDim({1}), DDim());
  EXPECT_EQ(DDim(), DDim(std::vector<int64_t>{}));
}

TEST(DDimTest, MutableIndexing) {
  DDim d{5, 6};
  d[1] = 7;
  EXPECT_EQ(d, DDim({5, 7}));
}

TEST(DDimTest, Product) {
  EXPECT_EQ(DDim({2, 3, 4}).product(), 24);
  EXPECT_EQ(DDim({7}).product(), 7);
  EXPECT_EQ(DDim({3, 0, 5}).product(), 0);
  EXPECT_EQ(DDim({1LL << 20, 1LL << 20}).product(), 1LL << 40);
}

TEST(DDimTest, UnknownDimMakesProductMinusOne) {
  DDim d{-1, 13};
  EXPECT_TRUE(d.HasUnknown());
  EXPECT_EQ(d.product(), -1);
  EXPECT_EQ(DDim({4, 5, -1}).product(), -1);
  // An unknown dim wins even over a zero that comes after it.
  EXPECT_EQ(DDim({-1, 0}).product(), -1);
  EXPECT_FALSE(DDim({4, 5}).HasUnknown());
}

TEST(DDimTest, ToString) {
  EXPECT_EQ(DDim({2, 3}).ToString(), "[2, 3]");
  EXPECT_EQ(DDim({-1, 13}).ToString(), "[-1, 13]");
  EXPECT_EQ(DDim({9}).ToString(), "[9]");
}

TEST(DDimTest, Slice) {
  DDim d{2, 3, 4, 5};
  EXPECT_EQ(d.Slice(1, 3), DDim({3, 4}));
  EXPECT_EQ(d.Slice(0, 4), d);
  EXPECT_EQ(d.Slice(2, 2), DDim());
  EXPECT_EQ(d.Slice(3, 4), DDim({5}));
  EXPECT_EQ(d.Slice(0, 0).product(), 1);
}

TEST(DDimTest, SliceOutOfRangeThrows) {
  DDim d{2, 3, 4};
  for (auto [b, e] : std::vector<std::pair<int, int>>{{-1, 2}, {2, 1}, {0, 4}, {4, 4}}) {
    try {
      d.Slice(b, e);
      FAIL() << "Slice(" << b << ", " << e << ") did not throw";
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), TIDE_INVALID_ARGUMENT);
      EXPECT_THAT(err.what(), HasSubstr("[2, 3, 4]"));
    }
  }
}

TEST(DDimTest, AtWithPositiveAndNegativeIndex) {
  DDim d{2, 3, 4};
  EXPECT_EQ(d.at(0), 2);
  EXPECT_EQ(d.at(2), 4);
  EXPECT_EQ(d.at(-1), 4);
  EXPECT_EQ(d.at(-3), 2);
}

TEST(DDimTest, AtOutOfRangeThrows) {
  DDim d{2, 3, 4};
  for (int i : {3, 4, -4, -100}) {
    try {
      d.at(i);
      FAIL() << "at(" << i << ") did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
      EXPECT_THAT(e.what(), HasSubstr("dim index " + std::to_string(i)));
      EXPECT_THAT(e.what(), HasSubstr("rank 3"));
    }
  }
  EXPECT_THROW(DDim().at(0), Error);
  EXPECT_THROW(DDim().at(-1), Error);
}

TEST(DDimTest, MaxRankIsNine) {
  std::vector<int64_t> nine(DDim::kMaxRank, 2);
  DDim d(nine);
  EXPECT_EQ(d.size(), 9);
  EXPECT_EQ(d.product(), 512);
  EXPECT_EQ(d.at(-1), 2);
}

TEST(DDimTest, RankAboveNineThrows) {
  std::vector<int64_t> ten(10, 1);
  try {
    DDim d(ten);
    FAIL() << "rank 10 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("rank 10"));
  }
  EXPECT_THROW(DDim({1, 1, 1, 1, 1, 1, 1, 1, 1, 1}), Error);
  const int64_t raw[] = {1};
  EXPECT_THROW(DDim(raw, -1), Error);
}

TEST(DDimTest, FlattenTo2D) {
  DDim d{2, 3, 4, 5};
  EXPECT_EQ(FlattenTo2D(d, 1), DDim({2, 60}));
  EXPECT_EQ(FlattenTo2D(d, 2), DDim({6, 20}));
  EXPECT_EQ(FlattenTo2D(d, 3), DDim({24, 5}));
  // All dims as rows leaves one column (the product of no dims).
  EXPECT_EQ(FlattenTo2D(d, 4), DDim({120, 1}));
  EXPECT_EQ(FlattenTo2D(DDim({7, 8}), 1), DDim({7, 8}));
  // An unknown batch dim stays unknown in the rows.
  EXPECT_EQ(FlattenTo2D(DDim({-1, 3, 4}), 1), DDim({-1, 12}));
}

TEST(DDimTest, FlattenTo2DBadNumColDimsThrows) {
  DDim d{2, 3, 4};
  for (int n : {0, -1, 4}) {
    try {
      FlattenTo2D(d, n);
      FAIL() << "num_col_dims " << n << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
      EXPECT_THAT(e.what(), HasSubstr("num_col_dims " + std::to_string(n)));
      EXPECT_THAT(e.what(), HasSubstr("[2, 3, 4]"));
    }
  }
  EXPECT_THROW(FlattenTo2D(DDim(), 1), Error);
}

}  // namespace
}  // namespace tide::core
