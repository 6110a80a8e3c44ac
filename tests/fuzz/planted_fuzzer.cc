// planted_fuzzer.cc: the fuzz script's own test target (scripts/fuzz.sh --self-test), never fuzzed
// for findings. It plants the two failures the script must tell apart:
//  - a bug: with TIDE_FUZZ_PLANT_BUG set, an input starting with "PLANTED" reads past the end of a
//    heap buffer (AddressSanitizer reports it, the input reproduces it): a finding, which must fail
//    CI with its reproducer;
//  - a failure of the sanitizer runtime: with TIDE_FUZZ_PLANT_RUNTIME_FAILURE=<marker file>, the
//    first run's empty input dies the way LeakSanitizer's tracer did on CI (its fatal-error line,
//    then abort, leaving an empty reproducer) and never again once the marker exists: a warning
//    and a retry, never a red CI.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

bool FirstTime(const char* marker) {
  if (access(marker, F_OK) == 0) return false;
  if (FILE* f = std::fopen(marker, "w")) std::fclose(f);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* marker = std::getenv("TIDE_FUZZ_PLANT_RUNTIME_FAILURE");
  if (size == 0 && marker != nullptr && FirstTime(marker)) {
    std::fprintf(stderr, "==%d==LeakSanitizer has encountered a fatal error.\n", getpid());
    std::abort();
  }
  static const char kPlant[] = "PLANTED";
  static const bool plant_bug = std::getenv("TIDE_FUZZ_PLANT_BUG") != nullptr;
  if (plant_bug && size >= sizeof(kPlant) - 1 &&
      std::memcmp(data, kPlant, sizeof(kPlant) - 1) == 0) {
    auto copy = std::make_unique<uint8_t[]>(size);
    std::memcpy(copy.get(), data, size);
    volatile uint8_t past_the_end = copy[size + 8];  // the planted bug
    (void)past_the_end;
  }
  return 0;
}
