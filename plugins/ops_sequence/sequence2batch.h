// sequence2batch.h: SequenceToBatch (Fluid's math/sequence2batch.h). The sequences of a LoD
// level are sorted by length, longest first; batch step t holds the t-th row of every sequence
// still running, so a step's rows are contiguous and a recurrence runs one GEMM per step over
// exactly the sequences that have a row there (no padding). The rows of step t are a prefix of
// step t-1's sequences, so row i of step t continues row i of step t-1.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace ops_sequence {

struct BatchLayout {
  std::vector<int64_t> starts;    // step t's batch rows are [starts[t], starts[t + 1])
  std::vector<int64_t> seq_rows;  // batch row -> row of the sequence tensor
  std::vector<int64_t> order;     // batch slot i (in every step) -> index of its sequence
  int64_t steps() const { return static_cast<int64_t>(starts.size()) - 1; }
  int64_t rows(int64_t t) const { return starts[t + 1] - starts[t]; }
  int64_t total() const { return starts.back(); }
};

// The batch layout of the sequences of `level` (offsets); with is_reverse each sequence runs from
// its last row to its first. Sequences of equal length keep their order (a stable sort).
inline BatchLayout MakeBatchLayout(const std::vector<uint64_t>& level, bool is_reverse) {
  BatchLayout b;
  const int64_t n = static_cast<int64_t>(level.size()) - 1;
  auto len = [&](int64_t s) { return static_cast<int64_t>(level[s + 1] - level[s]); };
  b.order.resize(n);
  std::iota(b.order.begin(), b.order.end(), int64_t(0));
  std::stable_sort(b.order.begin(), b.order.end(),
                   [&](int64_t a, int64_t c) { return len(a) > len(c); });
  const int64_t max_len = n ? len(b.order[0]) : 0;
  b.starts.assign(1, 0);
  b.seq_rows.reserve(level.empty() ? 0 : level.back());
  for (int64_t t = 0; t < max_len; ++t) {
    for (int64_t i = 0; i < n && len(b.order[i]) > t; ++i) {
      const int64_t s = b.order[i];
      b.seq_rows.push_back(is_reverse ? static_cast<int64_t>(level[s + 1]) - 1 - t
                                      : static_cast<int64_t>(level[s]) + t);
    }
    b.starts.push_back(static_cast<int64_t>(b.seq_rows.size()));
  }
  return b;
}

// batch[r] = seq[seq_rows[r]] for rows of `width` elements.
template <typename T>
void ToBatch(const BatchLayout& b, const T* seq, T* batch, int64_t width) {
  for (int64_t r = 0; r < b.total(); ++r)
    std::memcpy(batch + r * width, seq + b.seq_rows[r] * width, sizeof(T) * width);
}

// seq[seq_rows[r]] = batch[r].
template <typename T>
void ToSeq(const BatchLayout& b, const T* batch, T* seq, int64_t width) {
  for (int64_t r = 0; r < b.total(); ++r)
    std::memcpy(seq + b.seq_rows[r] * width, batch + r * width, sizeof(T) * width);
}

// ToSeq in place: data [total, width] in batch order becomes sequence order. Follows the
// permutation's cycles with one row of scratch (`row`, width elements).
template <typename T>
void BatchToSeqInPlace(const BatchLayout& b, T* data, int64_t width, T* row) {
  std::vector<bool> done(b.total(), false);
  for (int64_t start = 0; start < b.total(); ++start) {
    if (done[start]) continue;
    // `row` holds batch row r's content, which belongs at seq_rows[r].
    std::memcpy(row, data + start * width, sizeof(T) * width);
    for (int64_t r = start;;) {
      done[r] = true;
      const int64_t dest = b.seq_rows[r];
      if (dest == start) {
        std::memcpy(data + start * width, row, sizeof(T) * width);
        break;
      }
      std::swap_ranges(row, row + width, data + dest * width);
      r = dest;
    }
  }
}

// out[i] = init[order[i]]: an initial state [num_seqs, width] in batch-slot order.
template <typename T>
void ReorderInitState(const BatchLayout& b, const T* init, T* out, int64_t width) {
  for (size_t i = 0; i < b.order.size(); ++i)
    std::memcpy(out + i * width, init + b.order[i] * width, sizeof(T) * width);
}

// init_grad[order[i]] = grad[i]: the inverse of ReorderInitState.
template <typename T>
void RestoreInitStateOrder(const BatchLayout& b, const T* grad, T* init_grad, int64_t width) {
  for (size_t i = 0; i < b.order.size(); ++i)
    std::memcpy(init_grad + b.order[i] * width, grad + i * width, sizeof(T) * width);
}

// prev[r] = the state each batch row starts from, for the rows of steps >= first_step:
// step t's rows continue the first rows of step t-1 (`states` in batch layout); step 0 starts
// from `init` (in batch-slot order). prev holds rows [starts[first_step], total).
template <typename T>
void GatherPrevStates(const BatchLayout& b, const T* states, const T* init, T* prev, int64_t width,
                      int64_t first_step) {
  const int64_t base = b.starts[first_step];
  for (int64_t t = first_step; t < b.steps(); ++t) {
    const T* src = t == 0 ? init : states + b.starts[t - 1] * width;
    std::memcpy(prev + (b.starts[t] - base) * width, src, sizeof(T) * width * b.rows(t));
  }
}

// GatherPrevStates from `seq_states` in sequence order (the op's output) rather than batch order.
template <typename T>
void GatherPrevSeqStates(const BatchLayout& b, const T* seq_states, const T* init, T* prev,
                         int64_t width, int64_t first_step) {
  const int64_t base = b.starts[first_step];
  for (int64_t t = first_step; t < b.steps(); ++t) {
    T* dst = prev + (b.starts[t] - base) * width;
    if (t == 0) {
      std::memcpy(dst, init, sizeof(T) * width * b.rows(t));
      continue;
    }
    for (int64_t i = 0; i < b.rows(t); ++i)
      std::memcpy(dst + i * width, seq_states + b.seq_rows[b.starts[t - 1] + i] * width,
                  sizeof(T) * width);
  }
}

}  // namespace ops_sequence
