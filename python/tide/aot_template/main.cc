// main.cc: runs a model compiled by tide.aot.compile once (docs/aot.md) and prints its outputs.
//
//   model_main [--params PATH] [--plugins DIRS] [--batch N] [--lod 0,3,7] [--repeat N]
//              [--capture] [--out DIR] [--quiet] [INPUT...]
//
// One INPUT per feed, in the plan's order: a .npy file, or raw bytes in the feed's data type
// at its dims (the variable one --batch, default the range's lower end); without INPUTs the
// feeds are made (a fixed pattern). --lod gives a LoD level-1 feed's offsets (its first dim is
// their last). --out writes each output of the last run as DIR/output_<i>.npy; --repeat N runs N
// more times and prints the median time per run. --capture captures and replays the runs where
// the plan's device can (CUDA graphs) and prints what capture did. Unless --quiet, prints each
// output's first values and the seconds tide_model_create and the first run took. Exits 1 with the
// model's error on failure.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model.h"

namespace {

struct NpyType {
  TideDataType dtype;
  const char* descr;
  size_t size;
};
constexpr NpyType kNpyTypes[] = {
    {TIDE_FP32, "<f4", 4},  {TIDE_FP64, "<f8", 8},  {TIDE_INT32, "<i4", 4},
    {TIDE_INT64, "<i8", 8}, {TIDE_INT16, "<i2", 2}, {TIDE_FP16, "<f2", 2},
    {TIDE_UINT8, "|u1", 1}, {TIDE_INT8, "|i1", 1},  {TIDE_BOOL, "|b1", 1},
};

const NpyType* TypeOf(int32_t dtype) {
  for (const NpyType& t : kNpyTypes)
    if (t.dtype == dtype) return &t;
  return nullptr;
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "model_main: %s\n", what.c_str());
  std::exit(1);
}

int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

struct Input {
  std::vector<char> bytes;
  std::vector<int64_t> dims;
  int32_t dtype = TIDE_FP32;
};

// A .npy file (format versions 1 to 3, C order, little-endian).
Input ReadNpy(const std::string& path, const std::string& all) {
  if (all.size() < 10) Fail(path + ": too short for a .npy file");
  const int major = static_cast<unsigned char>(all[6]);
  size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(all[8]) | static_cast<unsigned char>(all[9]) << 8;
    start = 10;
  } else {
    uint32_t n = 0;
    std::memcpy(&n, all.data() + 8, 4);
    header_len = n;
    start = 12;
  }
  const std::string header = all.substr(start, header_len);
  auto field = [&](const char* key) {
    const size_t at = header.find(key);
    if (at == std::string::npos) Fail(path + ": no '" + key + "' in the .npy header");
    return header.substr(at + std::strlen(key));
  };
  const std::string descr = field("'descr':");
  Input in;
  const NpyType* type = nullptr;
  for (const NpyType& t : kNpyTypes)
    if (descr.find(std::string("'") + t.descr + "'") < descr.find(',')) type = &t;
  if (!type) Fail(path + ": a data type model_main does not read: " + descr.substr(0, 8));
  in.dtype = type->dtype;
  if (field("'fortran_order':").find("True") < 3) Fail(path + ": Fortran order is not read");
  std::string shape = field("'shape':");
  shape = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);
  std::stringstream ss(shape);
  for (std::string d; std::getline(ss, d, ',');)
    if (d.find_first_not_of(' ') != std::string::npos) in.dims.push_back(std::stoll(d));
  const size_t bytes = static_cast<size_t>(Numel(in.dims)) * type->size;
  if (all.size() < start + header_len + bytes) Fail(path + ": truncated");
  in.bytes.assign(all.begin() + static_cast<long>(start + header_len),
                  all.begin() + static_cast<long>(start + header_len + bytes));
  return in;
}

void WriteNpy(const std::string& path, const TideModelTensor& t) {
  const NpyType* type = TypeOf(t.dtype);
  if (!type) Fail(path + ": an output of data type code " + std::to_string(t.dtype));
  std::string shape;
  for (int32_t i = 0; i < t.rank; ++i) shape += std::to_string(t.dims[i]) + ",";
  if (t.rank > 1) shape.pop_back();
  std::string header = std::string("{'descr': '") + type->descr +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                static_cast<unsigned char>(header.size() >> 8)};
  f.write(reinterpret_cast<const char*>(len), 2);
  f << header;
  std::vector<int64_t> dims(t.dims, t.dims + t.rank);
  f.write(static_cast<const char*>(t.data),
          static_cast<std::streamsize>(static_cast<size_t>(Numel(dims)) * type->size));
  if (!f) Fail("cannot write " + path);
}

// A feed made without a file: a fixed pattern in [-1, 1] (integers: 0 to 9).
Input Made(const TideAotFeed& feed, const std::vector<int64_t>& dims) {
  const NpyType* type = TypeOf(feed.dtype);
  if (!type) Fail(std::string("feed '") + feed.name + "': cannot make its data type");
  Input in;
  in.dims = dims;
  in.dtype = feed.dtype;
  const int64_t n = Numel(dims);
  in.bytes.resize(static_cast<size_t>(n) * type->size);
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>((i * 7919) % 2001 - 1000) / 1000.0;
    char* at = in.bytes.data() + i * static_cast<int64_t>(type->size);
    if (feed.dtype == TIDE_FP32) {
      const float f = static_cast<float>(v);
      std::memcpy(at, &f, 4);
    } else if (feed.dtype == TIDE_FP64) {
      std::memcpy(at, &v, 8);
    } else if (feed.dtype == TIDE_INT64) {
      const int64_t k = i % 10;
      std::memcpy(at, &k, 8);
    } else if (feed.dtype == TIDE_INT32) {
      const int32_t k = static_cast<int32_t>(i % 10);
      std::memcpy(at, &k, 4);
    } else {
      *at = static_cast<char>(i % 2);
    }
  }
  return in;
}

void Print(const char* name, const TideModelTensor& t) {
  std::printf("%s: dtype %d, dims [", name, t.dtype);
  int64_t n = 1;
  for (int32_t i = 0; i < t.rank; ++i) {
    std::printf("%s%lld", i ? ", " : "", static_cast<long long>(t.dims[i]));
    n *= t.dims[i];
  }
  std::printf("]:");
  for (int64_t i = 0; i < n && i < 10; ++i) {
    if (t.dtype == TIDE_FP32) std::printf(" %.6g", static_cast<const float*>(t.data)[i]);
    if (t.dtype == TIDE_FP64) std::printf(" %.6g", static_cast<const double*>(t.data)[i]);
    if (t.dtype == TIDE_INT64)
      std::printf(" %lld", static_cast<long long>(static_cast<const int64_t*>(t.data)[i]));
    if (t.dtype == TIDE_INT32) std::printf(" %d", static_cast<const int32_t*>(t.data)[i]);
  }
  std::printf("%s\n", n > 10 ? " ..." : "");
}

}  // namespace

int main(int argc, char** argv) {
#ifdef TIDE_MODEL_DIR
  std::string params = TIDE_MODEL_DIR, plugins, out_dir;  // params.bin beside the source
#else
  std::string params, plugins, out_dir;  // none: the library's own (embed_params=True)
#endif
  std::vector<std::string> files;
  std::vector<uint64_t> lod;
  int64_t batch = -1, repeat = 0;
  bool quiet = false, capture = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--params") {
      params = value();
    } else if (a == "--plugins") {
      plugins = value();
    } else if (a == "--batch") {
      batch = std::stoll(value());
    } else if (a == "--repeat") {
      repeat = std::stoll(value());
    } else if (a == "--out") {
      out_dir = value();
    } else if (a == "--quiet") {
      quiet = true;
    } else if (a == "--capture") {
      capture = true;
    } else if (a == "--lod") {
      std::stringstream ss(value());
      for (std::string o; std::getline(ss, o, ',');) lod.push_back(std::stoull(o));
    } else if (a.rfind("--", 0) == 0) {
      Fail("unknown option " + a + " (see the top of main.cc)");
    } else {
      files.push_back(a);
    }
  }
  const TideAotPlan* plan = tide_model_plan();
  if (batch < 0) batch = plan->lower > 0 ? plan->lower : 1;
  if (!files.empty() && files.size() != static_cast<size_t>(plan->num_feeds))
    Fail("the model has " + std::to_string(plan->num_feeds) + " feed(s); given " +
         std::to_string(files.size()) + " input file(s)");

  std::vector<Input> inputs;
  for (int32_t f = 0; f < plan->num_feeds; ++f) {
    const TideAotFeed& feed = plan->feeds[f];
    std::vector<int64_t> dims(feed.dims, feed.dims + feed.rank);
    for (int64_t& d : dims)
      if (d < 0) d = batch;
    if (feed.lod_level > 0 && !lod.empty() && !dims.empty())
      dims[0] = static_cast<int64_t>(lod.back());
    if (files.empty()) {
      inputs.push_back(Made(feed, dims));
      continue;
    }
    std::ifstream in(files[f], std::ios::binary);
    if (!in) Fail("cannot open " + files[f]);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (all.rfind("\x93NUMPY", 0) == 0) {
      inputs.push_back(ReadNpy(files[f], all));
    } else {
      Input raw;
      raw.dims = dims;
      raw.dtype = feed.dtype;
      raw.bytes.assign(all.begin(), all.end());
      const NpyType* type = TypeOf(feed.dtype);
      if (!type || raw.bytes.size() != static_cast<size_t>(Numel(dims)) * type->size)
        Fail(files[f] + ": " + std::to_string(raw.bytes.size()) + " bytes, not feed '" + feed.name +
             "' at --batch " + std::to_string(batch));
      inputs.push_back(raw);
    }
  }
  std::vector<TideModelTensor> in(inputs.size()), out(static_cast<size_t>(plan->num_fetches));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool with_lod = plan->feeds[i].lod_level > 0 && !lod.empty();
    in[i] = {inputs[i].bytes.data(),
             inputs[i].dtype,
             static_cast<int32_t>(inputs[i].dims.size()),
             inputs[i].dims.data(),
             with_lod ? lod.data() : nullptr,
             with_lod ? lod.size() : 0};
  }

  const auto t0 = std::chrono::steady_clock::now();
  TideModel* model = tide_model_create(params.empty() ? nullptr : params.c_str(),
                                       plugins.empty() ? nullptr : plugins.c_str());
  if (!model) Fail(tide_model_last_error());
  if (capture && tide_model_set_capture(model, 1) != TIDE_OK) Fail(tide_model_last_error());
  const auto t1 = std::chrono::steady_clock::now();
  if (tide_model_run(model, in.data(), in.size(), out.data(), out.size()) != TIDE_OK)
    Fail(tide_model_last_error());
  const auto t2 = std::chrono::steady_clock::now();
  if (!quiet)
    std::printf("create %.6f s, first run %.6f s\n", std::chrono::duration<double>(t1 - t0).count(),
                std::chrono::duration<double>(t2 - t1).count());
  if (!quiet)
    for (size_t i = 0; i < out.size(); ++i) Print(plan->fetches[i], out[i]);
  if (repeat > 0) {  // the median run: a busy machine's preemptions land in a few runs
    std::vector<double> us(static_cast<size_t>(repeat));
    for (double& t : us) {
      const auto start = std::chrono::steady_clock::now();
      if (tide_model_run(model, in.data(), in.size(), out.data(), out.size()) != TIDE_OK)
        Fail(tide_model_last_error());
      t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count();
    }
    std::sort(us.begin(), us.end());
    std::printf("us per run: %.3f (median of %lld; fastest %.3f)\n", us[us.size() / 2],
                static_cast<long long>(repeat), us.front());
  }
  for (size_t i = 0; i < out.size() && !out_dir.empty(); ++i)
    WriteNpy(out_dir + "/output_" + std::to_string(i) + ".npy", out[i]);
  if (capture) {
    uint64_t replays = 0;
    const char* note = tide_model_capture_note(model, &replays);
    std::printf("capture: %s; %llu replay(s)\n", note, static_cast<unsigned long long>(replays));
  }
  tide_model_destroy(model);
  return 0;
}
