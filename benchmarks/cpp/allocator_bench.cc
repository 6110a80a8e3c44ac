// allocator_bench.cc: Tide's allocator (memory::Alloc/Free on cpu:0: the buddy allocator over
// the CPU device plugin) against glibc malloc/free, same sizes and order, in one run. Prints a
// table `case | tide ns | malloc ns | tide/malloc` and, with --json FILE, the same as JSON.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/host/initialize.h"
#include "core/memory/memory.h"

using namespace tide::core;  // NOLINT: a benchmark

namespace {

struct Pattern {
  std::string name;
  std::vector<size_t> sizes;  // allocated in order
  size_t live;                // how many stay live before frees start (LIFO window)
};

template <typename A, typename F>
double NsPerPair(const Pattern& p, A alloc, F free_fn, int reps) {
  std::vector<void*> window(p.live);
  std::vector<double> times;
  for (int r = 0; r < reps + 2; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    size_t k = 0;
    for (size_t i = 0; i < p.sizes.size(); ++i) {
      if (k == p.live) {
        while (k) free_fn(window[--k]);
      }
      void* ptr = alloc(p.sizes[i]);
      static_cast<char*>(ptr)[0] = 1;  // touch it
      window[k++] = ptr;
    }
    while (k) free_fn(window[--k]);
    double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    if (r >= 2) times.push_back(ns / p.sizes.size());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string json;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--json") json = argv[i + 1];
  Initialize();
  const Place cpu("cpu", 0);
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> pow2(8, 16);  // 256 B .. 64 KiB
  std::uniform_int_distribution<size_t> any(256, 65536);
  std::vector<Pattern> patterns;
  auto make = [&](const std::string& name, size_t live, bool powers) {
    Pattern p{name, {}, live};
    for (int i = 0; i < 200000; ++i) p.sizes.push_back(powers ? size_t(1) << pow2(rng) : any(rng));
    patterns.push_back(p);
  };
  make("pairs, power-of-two sizes", 1, true);
  make("pairs, any size 256 B-64 KiB", 1, false);
  make("16 live, any size", 16, false);
  make("256 live, any size", 256, false);

  std::printf("allocator: alloc+free of 256 B - 64 KiB (ns per pair; lower is better)\n");
  std::printf("%-34s | %10s | %10s | %11s\n", "case", "tide", "malloc", "tide/malloc");
  std::string rows;
  for (const auto& p : patterns) {
    double tide = NsPerPair(
        p, [&](size_t n) { return memory::Alloc(cpu, n); }, [&](void* q) { memory::Free(cpu, q); },
        7);
    double libc = NsPerPair(
        p, [](size_t n) { return std::malloc(n); }, [](void* q) { std::free(q); }, 7);
    std::printf("%-34s | %10.1f | %10.1f | %11.2f\n", p.name.c_str(), tide, libc, tide / libc);
    rows += (rows.empty() ? "" : ",") + std::string("{\"case\": \"") + p.name +
            "\", \"tide_ns\": " + std::to_string(tide) +
            ", \"malloc_ns\": " + std::to_string(libc) + "}";
  }
  std::printf("machine: 2 threads n/a (single-threaded), glibc malloc, %s\n",
              memory::Stats(cpu).ToString().c_str());
  if (!json.empty()) std::ofstream(json) << "{\"rows\": [" << rows << "]}\n";
  return 0;
}
