// checkpoint.cc: pserver checkpoints in tide.io's tensor record format.
#include "checkpoint.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

namespace tide_zmq {
namespace {

constexpr char kMagicRecord[] = "TIDETNSR";
constexpr uint32_t kRecordVersion = 1;
constexpr char kRoundName[] = "@TIDE_PSERVER_ROUND@";

TideDataType DataTypeFromName(const std::string& name) {
  for (TideDataType t : {TIDE_BOOL, TIDE_INT16, TIDE_INT32, TIDE_INT64, TIDE_FP16, TIDE_FP32,
                         TIDE_FP64, TIDE_UINT8, TIDE_INT8, TIDE_BF16})
    if (name == tide::DataTypeName(t)) return t;
  return TIDE_UNDEFINED;
}

template <typename T>
void Put(std::ofstream& f, T v) {
  f.write(reinterpret_cast<const char*>(&v), sizeof(T));
}
void PutString(std::ofstream& f, const std::string& s) {
  Put<uint32_t>(f, static_cast<uint32_t>(s.size()));
  f.write(s.data(), static_cast<std::streamsize>(s.size()));
}

void WriteRecord(std::ofstream& f, const std::string& name, TideDataType dtype,
                 const tide::Dims& dims, const tide::LoD& lod, const void* data, uint64_t nbytes) {
  f.write(kMagicRecord, 8);
  Put<uint32_t>(f, kRecordVersion);
  PutString(f, name);
  PutString(f, tide::DataTypeName(dtype));
  Put<uint32_t>(f, static_cast<uint32_t>(dims.size()));
  for (int64_t d : dims) Put<int64_t>(f, d);
  Put<uint32_t>(f, static_cast<uint32_t>(lod.size()));
  for (const auto& level : lod) {
    Put<uint64_t>(f, level.size());
    for (uint64_t o : level) Put<uint64_t>(f, o);
  }
  Put<uint64_t>(f, nbytes);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(nbytes));
}

struct Record {
  TideDataType dtype;
  tide::Dims dims;
  tide::LoD lod;
  std::string data;
};

class Reader {
 public:
  Reader(const std::string& path) : path_(path), f_(path, std::ios::binary) {
    if (f_.good()) {
      f_.seekg(0, std::ios::end);
      size_ = static_cast<uint64_t>(f_.tellg());
      f_.seekg(0);
    }
  }
  bool good() const { return f_.good(); }
  // False at a clean end of file.
  bool Next(std::string* name, Record* r) {
    char magic[8];
    f_.read(magic, 8);
    if (f_.gcount() == 0) return false;
    Check(f_.gcount() == 8 && std::memcmp(magic, kMagicRecord, 8) == 0, "not a Tide tensor file");
    Check(Get<uint32_t>() == kRecordVersion, "unknown record version");
    *name = GetString();
    std::string dt = GetString();
    r->dtype = DataTypeFromName(dt);
    Check(r->dtype != TIDE_UNDEFINED, "unknown data type '" + dt + "'");
    uint32_t rank = Get<uint32_t>();
    Check(rank <= 32, "bad rank");
    r->dims.resize(rank);
    for (auto& d : r->dims) d = Get<int64_t>();
    uint32_t levels = Get<uint32_t>();
    Check(levels <= 32, "bad LoD");
    r->lod.assign(levels, {});
    for (auto& level : r->lod) {
      uint64_t n = Get<uint64_t>();
      Check(n < (uint64_t(1) << 32) && n * 8 <= Left(), "bad LoD");
      level.resize(n);
      for (auto& o : level) o = Get<uint64_t>();
    }
    uint64_t nbytes = Get<uint64_t>();
    // A corrupt size must not be allocated: the data has to be in the file.
    Check(nbytes <= Left(), "file ends inside '" + *name + "' (" + std::to_string(nbytes) +
                                " data bytes, " + std::to_string(Left()) + " left)");
    r->data.resize(nbytes);
    f_.read(&r->data[0], static_cast<std::streamsize>(nbytes));
    Check(static_cast<uint64_t>(f_.gcount()) == nbytes, "file ends inside '" + *name + "'");
    return true;
  }

 private:
  void Check(bool ok, const std::string& why) {
    if (!ok) TIDE_THROW(TIDE_INVALID_ARGUMENT, "checkpoint ", path_, ": ", why);
  }
  uint64_t Left() {
    const std::streamoff pos = f_.tellg();
    return pos < 0 || static_cast<uint64_t>(pos) > size_ ? 0 : size_ - static_cast<uint64_t>(pos);
  }
  template <typename T>
  T Get() {
    T v{};
    f_.read(reinterpret_cast<char*>(&v), sizeof(T));
    Check(f_.gcount() == sizeof(T), "file ends early");
    return v;
  }
  std::string GetString() {
    uint32_t n = Get<uint32_t>();
    Check(n < 65536, "bad string length");
    std::string s(n, '\0');
    f_.read(&s[0], n);
    Check(f_.gcount() == n, "file ends early");
    return s;
  }
  std::string path_;
  std::ifstream f_;
  uint64_t size_ = 0;
};

}  // namespace

std::string CheckpointPath(const std::string& dir, const std::string& endpoint) {
  std::string safe;
  for (char c : endpoint)
    safe += (isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  return dir + "/pserver_" + safe + ".ckpt";
}

void SaveCheckpoint(const std::string& path, const tide::Scope& scope,
                    const std::vector<std::string>& names, int64_t round) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    TIDE_CHECK(f.good(), "checkpoint: cannot write ", tmp);
    WriteRecord(f, kRoundName, TIDE_INT64, {1}, {}, &round, sizeof(round));
    for (const auto& n : names) {
      tide::Variable v = scope.FindVar(n);
      TIDE_CHECK(v && v.IsTensor(), "checkpoint: '", n,
                 "' is not a LoDTensor in the pserver's scope");
      tide::Tensor t = v.GetTensor();
      TIDE_CHECK(t.initialized(), "checkpoint: '", n, "' holds no data");
      tide::OwnedTensor host;
      const void* data = t.raw_data();
      if (!IsHostPlace(t.place())) {
        host.CopyFrom(t, tide::Place("cpu", 0));
        data = host.raw_data();
      }
      WriteRecord(f, n, t.dtype(), t.dims(), t.lod(), data,
                  static_cast<uint64_t>(t.numel()) * tide::DataTypeSize(t.dtype()));
    }
    f.flush();
    TIDE_CHECK(f.good(), "checkpoint: writing ", tmp, " failed (disk full?)");
  }
  TIDE_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, "checkpoint: cannot rename ", tmp, " to ",
             path);
}

int64_t LoadCheckpoint(const std::string& path, const tide::Scope& scope,
                       const std::vector<std::string>& names, const tide::Place& place) {
  Reader r(path);
  if (!r.good()) return -1;
  std::map<std::string, Record> records;
  std::string name;
  Record rec;
  while (r.Next(&name, &rec)) records[name] = std::move(rec);
  auto round_it = records.find(kRoundName);
  TIDE_CHECK(round_it != records.end() && round_it->second.data.size() == sizeof(int64_t),
             "checkpoint ", path, " has no round record");
  int64_t round = 0;
  std::memcpy(&round, round_it->second.data.data(), sizeof(round));
  for (const auto& n : names) {
    auto it = records.find(n);
    TIDE_CHECK(it != records.end(), "checkpoint ", path, " has no '", n,
               "': it was written by another program or pserver");
    const Record& rc = it->second;
    tide::Variable v = scope.FindVar(n);
    TIDE_CHECK(v, "checkpoint ", path, ": the pserver program has no variable '", n, "'");
    tide::Tensor t = v.GetTensor();
    if (t.initialized())
      TIDE_CHECK(t.dims() == rc.dims && t.dtype() == rc.dtype, "checkpoint ", path, ": '", n,
                 "' is ", tide::DataTypeName(rc.dtype), tide::ToString(rc.dims),
                 ", the program's is ", tide::DataTypeName(t.dtype()), tide::ToString(t.dims()));
    tide::OwnedTensor host;
    host.Resize(rc.dims);
    void* p = host.mutable_data(rc.dtype, tide::Place("cpu", 0));
    TIDE_CHECK(rc.data.size() == static_cast<size_t>(host.numel()) * tide::DataTypeSize(rc.dtype),
               "checkpoint ", path, ": '", n, "' has a data size that does not match its dims");
    std::memcpy(p, rc.data.data(), rc.data.size());
    host.set_lod(rc.lod);
    t.CopyFrom(host, place);
  }
  return round;
}

}  // namespace tide_zmq
