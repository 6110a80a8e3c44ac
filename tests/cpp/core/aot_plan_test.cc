// Tests core/aot's arena planning (offsets reused by liveness, aligned) and the frozen plan's file
// (a round trip keeps every field; a changed byte, another version or a truncation is refused).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "core/aot/arena_plan.h"
#include "core/aot/frozen_plan.h"

namespace tide::core {
namespace {

bool Overlap(const ArenaLayout& l, const std::vector<ArenaRequest>& r, size_t a, size_t b) {
  return l.offsets[a] < l.offsets[b] + r[b].bytes && l.offsets[b] < l.offsets[a] + r[a].bytes;
}

TEST(ArenaPlan, TemporariesThatLiveApartShareBytes) {
  // A chain a -> b -> c -> d: each lives for two ops, so two slots serve the four.
  std::vector<ArenaRequest> r{{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaLayout l = PlanArena(r, 64);
  EXPECT_EQ(l.bytes, 2 * 1024u);  // 1000 rounded up to the alignment, twice
  EXPECT_EQ(l.offsets[0], l.offsets[2]);
  EXPECT_EQ(l.offsets[1], l.offsets[3]);
  EXPECT_NE(l.offsets[0], l.offsets[1]);
}

TEST(ArenaPlan, TemporariesLiveAtOnceNeverOverlapAndAreAligned) {
  std::vector<ArenaRequest> r{{100, 0, 5}, {3000, 2, 3}, {70, 1, 4}, {5000, 3, 6}, {1, 0, 0}};
  ArenaLayout l = PlanArena(r, 256);
  for (size_t a = 0; a < r.size(); ++a) {
    EXPECT_EQ(l.offsets[a] % 256, 0u) << a;
    EXPECT_LE(l.offsets[a] + r[a].bytes, l.bytes) << a;
    for (size_t b = a + 1; b < r.size(); ++b)
      if (r[a].first <= r[b].last && r[b].first <= r[a].last)
        EXPECT_FALSE(Overlap(l, r, a, b)) << a << " and " << b << " live together";
  }
  // Largest first: 5000 at 0, 3000 above it, then 100 and 70; the byte that lives at op 0 only
  // (beside the 100) shares the 5000's bytes, which are not live yet.
  EXPECT_EQ(l.bytes, 5120u + 3072u + 256u + 256u);
  EXPECT_EQ(l.offsets[4], 0u);
}

FrozenPlan SamplePlan() {
  FrozenPlan p;
  p.place_kind = "cpu";
  p.lower = 1;
  p.upper = 8;
  p.feeds.push_back({"x", {-1, 3}, TIDE_FP32, 0});
  p.fetches = {"y"};
  FrozenVar v;
  v.name = "y";
  v.dtype = TIDE_FP32;
  v.dims = {8, 3};
  v.per_unit = {1, 0};
  v.offset = 64;
  v.bytes = 96;
  p.vars.push_back(v);
  FrozenOp op;
  op.index = 1;
  op.type = "scale";
  op.inputs = {{"X", {"x"}}};
  op.outputs = {{"Out", {"y"}}};
  op.attrs = {{"scale", 2.5f},
              {"names", std::vector<std::string>{"a", "b"}},
              {"flags", std::vector<bool>{true, false}},
              {"big", int64_t{1} << 40},
              {"sub", BlockIndex{3}}};
  op.kernel = {"cpu", "plain", TIDE_FP32, TIDE_LAYOUT_ANY, TIDE_FP32, "ops_math", "/x/libm.so"};
  op.transforms = {"input 'X' ('x'): cast float16 -> float32; "};
  p.ops.push_back(op);
  p.arena_bytes = 256;
  p.params.push_back({"w", TIDE_FP32, {2}, {}, std::string(8, '\1')});
  return p;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(FrozenPlanFile, RoundTripKeepsEveryField) {
  const std::string path = ::testing::TempDir() + "aot_roundtrip.tideaot";
  WriteFrozenPlan(SamplePlan(), path);
  FrozenPlan p = ReadFrozenPlan(path);
  EXPECT_EQ(p.place_kind, "cpu");
  EXPECT_EQ(p.lower, 1);
  EXPECT_EQ(p.upper, 8);
  ASSERT_EQ(p.feeds.size(), 1u);
  EXPECT_EQ(p.feeds[0].dims, (std::vector<int64_t>{-1, 3}));
  ASSERT_EQ(p.vars.size(), 1u);
  EXPECT_EQ(p.vars[0].per_unit, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(p.vars[0].offset, 64);
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].attrs, SamplePlan().ops[0].attrs);
  EXPECT_EQ(p.ops[0].kernel.plugin_file, "/x/libm.so");
  EXPECT_EQ(p.ops[0].transforms, SamplePlan().ops[0].transforms);
  ASSERT_EQ(p.params.size(), 1u);
  EXPECT_EQ(p.params[0].data(), std::string(8, '\1'));  // a view into the file read
  std::remove(path.c_str());
}

void ExpectRefused(const std::string& path, const std::string& bytes, const std::string& why) {
  Spit(path, bytes);
  try {
    ReadFrozenPlan(path);
    ADD_FAILURE() << "read a plan that " << why;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(FrozenPlanFile, RefusesCorruptedTruncatedAndOtherVersions) {
  const std::string path = ::testing::TempDir() + "aot_bad.tideaot";
  WriteFrozenPlan(SamplePlan(), path);
  const std::string good = Slurp(path);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  ExpectRefused(path, flipped, "corrupted");
  ExpectRefused(path, good.substr(0, good.size() - 20), "corrupted or truncated");
  std::string version = good;
  version[8] = 99;  // the format version follows the 8-byte magic
  ExpectRefused(path, version, "format version 99");
  ExpectRefused(path, "not a plan at all, just some text", "not a frozen plan");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tide::core
