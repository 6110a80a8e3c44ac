// rank_table.h: reading a LoDRankTable variable (DynamicRNN). The core keeps a rank table as an
// int64 CPU tensor [n, 2] of (sequence index, length) rows, longest first, whose LoD is the
// table's coarse LoD (the levels above the one it ranks).
#pragma once

#include <algorithm>

#include "rnn_util.h"

namespace ops_control {

struct RankItem {
  int64_t index, length;
};

struct RankTable {
  std::vector<RankItem> items;  // longest first
  tide::LoD coarse;             // its level is coarse.size()
  size_t level() const { return coarse.size(); }
  int64_t max_len() const { return items.empty() ? 0 : items[0].length; }
  // How many sequences are longer than `step` (the rows a step of DynamicRNN has).
  int64_t LongerThan(int64_t step) const {
    return std::lower_bound(items.begin(), items.end(), step,
                            [](const RankItem& a, int64_t s) { return a.length > s; }) -
           items.begin();
  }
  int64_t total() const {
    int64_t n = 0;
    for (const auto& it : items) n += it.length;
    return n;
  }
};

// The rank table input `param` of the op; an error naming the op and variable otherwise.
inline RankTable ReadRankTable(tide::OpRunContext& ctx, const char* param = "RankTable") {
  const std::string name = OnlyInput(ctx, param);
  tide::Variable v = Lookup(ctx, name);
  TIDE_CHECK(v.IsRankTable(), "op '", ctx.op_type(), "': ", param, " ('", name,
             "') does not hold a LoD rank table (make it with lod_rank_table)");
  tide::Tensor t = v.GetRankTable();
  TIDE_CHECK(t.initialized(), "op '", ctx.op_type(), "': the rank table '", name,
             "' was never filled");
  RankTable table;
  const int64_t* d = t.data<int64_t>();
  for (int64_t i = 0; i < t.dim(0); ++i) table.items.push_back({d[2 * i], d[2 * i + 1]});
  table.coarse = t.lod();
  return table;
}

// Fills the rank table variable `out` from `lod`'s level `level`.
inline void WriteRankTable(tide::Variable out, const tide::LoD& lod, size_t level) {
  const Level& l = lod[level];
  std::vector<RankItem> items;
  for (size_t i = 0; i + 1 < l.size(); ++i)
    items.push_back({static_cast<int64_t>(i), static_cast<int64_t>(l[i + 1] - l[i])});
  std::stable_sort(items.begin(), items.end(),
                   [](const RankItem& a, const RankItem& b) { return a.length > b.length; });
  tide::Tensor t = out.GetRankTable();
  t.Resize({static_cast<int64_t>(items.size()), 2});
  int64_t* d = t.mutable_data<int64_t>(tide::Place("cpu", 0));
  for (size_t i = 0; i < items.size(); ++i) {
    d[2 * i] = items[i].index;
    d[2 * i + 1] = items[i].length;
  }
  t.set_lod(tide::LoD(lod.begin(), lod.begin() + level));
}

// The table's level as offsets in sequence-index order (the LoD a tensor ranked by it has at
// that level, when it has no other).
inline Level OffsetsByIndex(const RankTable& table) {
  std::vector<int64_t> len(table.items.size(), 0);
  for (const auto& it : table.items) len.at(it.index) = it.length;
  Level off{0};
  for (int64_t n : len) off.push_back(off.back() + n);
  return off;
}

// The LoD of `t` (input `param`, variable `name`) the table ranks, checked: at least
// level + 1 levels that fit its rows, as many sequences at the table's level as the table has.
// A tensor without LoD ranked at level 0 (a gradient, which carries none) is taken as laid out
// by the table when its rows add up to the table's lengths.
inline tide::LoD RankedLoD(tide::OpRunContext& ctx, const char* param, const std::string& name,
                           const tide::Tensor& t, const RankTable& table) {
  tide::LoD lod = t.lod();
  const int64_t rows = t.rank() ? t.dim(0) : 0;
  if (lod.empty() && table.level() == 0 && rows == table.total()) return {OffsetsByIndex(table)};
  TIDE_CHECK(lod.size() > table.level(), "op '", ctx.op_type(), "': ", param, " ('", name,
             "', dims ", tide::ToString(t.dims()), ") has a ", lod.size(),
             "-level LoD, but the rank table ranks level ", table.level(),
             (lod.empty() ? "; the op needs a LoDTensor of sequences" : ""));
  CheckLoDFits(ctx, param, name, t);
  const size_t n = lod[table.level()].size() - 1;
  TIDE_CHECK(n == table.items.size(), "op '", ctx.op_type(), "': ", param, " ('", name, "') has ",
             n, " sequence(s) at LoD level ", table.level(), ", the rank table has ",
             table.items.size());
  return lod;
}

}  // namespace ops_control
