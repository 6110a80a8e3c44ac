// wire.cc: encoding variables into header + zero-copy data frame, checking and decoding them.
#include "wire.h"

#include <algorithm>
#include <cstring>

namespace tide_zmq {
namespace {

using transport::VariableMessage;

// What a zero-copy frame owns: a tensor sharing the sent tensor's allocation.
struct FrameHold {
  tide::OwnedTensor tensor;
  std::shared_ptr<FrameCounter> live;
};

void FreeFrame(void* /*data*/, void* hint) {
  auto* hold = static_cast<FrameHold*>(hint);
  std::shared_ptr<FrameCounter> live = std::move(hold->live);
  delete hold;  // the tensor share first, then tell whoever waits
  if (live) live->Release();
}

bool KnownDataType(int32_t d) {
  switch (d) {
    case TIDE_BOOL:
    case TIDE_INT16:
    case TIDE_INT32:
    case TIDE_INT64:
    case TIDE_FP16:
    case TIDE_FP32:
    case TIDE_FP64:
    case TIDE_UINT8:
    case TIDE_INT8:
    case TIDE_BF16:
      return true;
    default:
      return false;
  }
}

constexpr int kMaxRank = 32;
constexpr size_t kCopyBelow = 64 << 10;  // frames smaller than this are copied, as pyzmq does
constexpr size_t kMaxNameLength = 4096;

}  // namespace

const std::shared_ptr<FrameCounter>& ServedFrames() {
  static auto* counter = new std::shared_ptr<FrameCounter>(std::make_shared<FrameCounter>());
  return *counter;
}

zmq::message_t ZeroCopyFrame(const tide::Tensor& t, size_t offset, size_t bytes,
                             const std::shared_ptr<FrameCounter>& live) {
  if (bytes == 0) return zmq::message_t();
  if (bytes < kCopyBelow)  // a copy is cheaper than sharing (and releasing) the tensor
    return zmq::message_t(static_cast<const char*>(t.raw_data()) + offset, bytes);
  auto* hold = new FrameHold;
  hold->tensor.ShareDataWith(t);
  hold->live = live;
  char* base = static_cast<char*>(const_cast<void*>(hold->tensor.raw_data()));
  if (live) live->Add();
  return zmq::message_t(base + offset, bytes, &FreeFrame, hold);
}

void EncodeVariable(const tide::Variable& var, const std::string& wire_name, int64_t row_begin,
                    int64_t row_end, const std::string& what, VariableMessage* msg,
                    zmq::message_t* frame, const std::shared_ptr<FrameCounter>& live) {
  msg->Clear();
  msg->set_name(wire_name);
  tide::Tensor t;
  if (var.IsSelectedRows()) {
    TIDE_CHECK(row_end < 0, what, ": a SelectedRows variable cannot be sent in row blocks");
    tide::SelectedRows sr = var.GetSelectedRows();
    msg->set_type(VariableMessage::SELECTED_ROWS);
    msg->set_height(sr.height());
    for (int64_t r : sr.rows()) msg->add_rows(r);
    t = sr.value();
  } else if (var.IsTensor()) {
    msg->set_type(VariableMessage::LOD_TENSOR);
    t = var.GetTensor();
  } else {
    TIDE_THROW(TIDE_INVALID_ARGUMENT, what,
               ": the variable holds neither a LoDTensor nor a "
               "SelectedRows (was it computed before this op?)");
  }
  TIDE_CHECK(t.initialized(), what,
             ": the variable holds no data (was it computed before this op?)");
  const size_t elem = tide::DataTypeSize(t.dtype());
  TIDE_CHECK(elem > 0, what, ": cannot send data of type ", tide::DataTypeName(t.dtype()));
  tide::Dims dims = t.dims();
  size_t offset = 0, bytes = static_cast<size_t>(t.numel()) * elem;
  if (row_end >= 0) {
    TIDE_CHECK(!dims.empty() && dims[0] > 0, what,
               ": cannot take row blocks of a tensor with dims ", tide::ToString(dims));
    TIDE_CHECK(0 <= row_begin && row_begin <= row_end && row_end <= dims[0], what, ": rows [",
               row_begin, ", ", row_end, ") are outside the tensor's ", dims[0], " rows");
    size_t row_bytes = bytes / static_cast<size_t>(dims[0]);
    offset = static_cast<size_t>(row_begin) * row_bytes;
    bytes = static_cast<size_t>(row_end - row_begin) * row_bytes;
    dims[0] = row_end - row_begin;
  } else if (msg->type() == VariableMessage::LOD_TENSOR) {
    for (const auto& level : t.lod()) {
      auto* l = msg->add_lod();
      for (uint64_t o : level) l->add_offsets(o);
    }
  }
  msg->set_dtype(t.dtype());
  for (int64_t d : dims) msg->add_dims(d);
  msg->set_data_bytes(bytes);
  if (IsHostPlace(t.place())) {
    *frame = ZeroCopyFrame(t, offset, bytes, live);
  } else {  // stage device memory on the host; the frame keeps the staging copy alive
    tide::OwnedTensor host;
    host.CopyFrom(t, tide::Place("cpu", 0));
    *frame = ZeroCopyFrame(host, offset, bytes, live);
  }
}

std::string CheckVariableMessage(const VariableMessage& m, size_t frame_bytes) {
  using tide::detail::Concat;
  if (m.name().empty() || m.name().size() > kMaxNameLength) return "a variable with a bad name";
  const std::string who = "variable '" + m.name() + "'";
  if (m.type() != VariableMessage::LOD_TENSOR && m.type() != VariableMessage::SELECTED_ROWS)
    return Concat(who, ": unknown variable type ", static_cast<int>(m.type()));
  if (!KnownDataType(m.dtype())) return Concat(who, ": unknown data type ", m.dtype());
  if (m.dims_size() > kMaxRank) return Concat(who, ": rank ", m.dims_size(), " > ", kMaxRank);
  // Empty dims are left out of the overflow check: a shape like [0, 2^40, 2^40] holds nothing, but
  // a row of it (what SelectedRows and LoD code multiply out) would overflow int64.
  int64_t numel = 1, nonzero = 1;
  for (int64_t d : m.dims()) {
    if (d < 0) return Concat(who, ": negative dim ", d);
    if (d && __builtin_mul_overflow(nonzero, d, &nonzero)) return Concat(who, ": dims overflow");
    numel *= d;  // at most `nonzero`
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(
          numel, static_cast<int64_t>(tide::DataTypeSize(static_cast<TideDataType>(m.dtype()))),
          &bytes))
    return Concat(who, ": size overflows");
  if (static_cast<uint64_t>(bytes) != m.data_bytes())
    return Concat(who, ": declares ", m.data_bytes(), " data bytes, its dims and type make ",
                  bytes);
  if (static_cast<uint64_t>(bytes) != frame_bytes)
    return Concat(who, ": truncated or padded data frame: ", frame_bytes, " bytes, expected ",
                  bytes);
  const int64_t rows = m.dims_size() ? m.dims(0) : 0;
  if (m.type() == VariableMessage::SELECTED_ROWS) {
    if (m.lod_size()) return Concat(who, ": a SelectedRows has no LoD");
    if (m.dims_size() == 0) return Concat(who, ": a SelectedRows value needs rank >= 1");
    if (m.rows_size() != rows)
      return Concat(who, ": ", m.rows_size(), " row ids for a value of ", rows, " rows");
    if (m.height() < 0) return Concat(who, ": negative height");
    for (int64_t r : m.rows())
      if (r < 0 || r >= m.height())
        return Concat(who, ": row id ", r, " outside the height ", m.height());
    return "";
  }
  if (m.rows_size() || m.height()) return Concat(who, ": a LoDTensor has no rows or height");
  for (int k = 0; k < m.lod_size(); ++k) {
    const auto& level = m.lod(k).offsets();
    if (level.empty() || level[0] != 0)
      return Concat(who, ": LoD level ", k, " does not start at 0");
    for (int i = 1; i < level.size(); ++i)
      if (level[i] < level[i - 1]) return Concat(who, ": LoD level ", k, " decreases");
    uint64_t want = k + 1 < m.lod_size() ? uint64_t(m.lod(k + 1).offsets_size() - 1)
                                         : static_cast<uint64_t>(rows);
    if (level[level.size() - 1] != want)
      return Concat(who, ": LoD level ", k, " ends at ", level[level.size() - 1], ", expected ",
                    want);
  }
  return "";
}

void DecodeVariable(const VariableMessage& m, zmq::message_t* frame, tide::Variable var,
                    const tide::Place& place) {
  tide::Tensor t;
  if (m.type() == VariableMessage::SELECTED_ROWS) {
    tide::SelectedRows sr = var.GetSelectedRows();
    sr.set_height(m.height());
    sr.set_rows(std::vector<int64_t>(m.rows().begin(), m.rows().end()));
    t = sr.value();
  } else {
    t = var.GetTensor();
  }
  const bool host = IsHostPlace(place);
  const auto dtype = static_cast<TideDataType>(m.dtype());
  tide::Dims dims(m.dims().begin(), m.dims().end());
  const size_t elem = tide::DataTypeSize(dtype);
  if (host && m.data_bytes() >= kCopyBelow &&
      reinterpret_cast<uintptr_t>(frame->data()) % elem == 0) {
    // Large data stays in the received frame: the tensor owns the message from here on.
    auto* keep = new zmq::message_t(std::move(*frame));
    t.Resize(dims);
    t.AdoptData(keep->data(), keep->size(), dtype, place, [keep] { delete keep; });
  } else {
    tide::OwnedTensor staging;
    tide::Tensor dst = host ? t : tide::Tensor(staging.c());
    dst.Resize(dims);
    void* p = dst.mutable_data(dtype, host ? place : tide::Place("cpu", 0));
    if (m.data_bytes()) std::memcpy(p, frame->data(), m.data_bytes());
    if (!host) t.CopyFrom(staging, place);
  }
  if (m.type() == VariableMessage::LOD_TENSOR) {
    tide::LoD lod;
    for (const auto& level : m.lod())
      lod.emplace_back(level.offsets().begin(), level.offsets().end());
    t.set_lod(lod);
  }
}

namespace {
// Scans `n` elements of `Bits` for an all-ones exponent (`exp`): Inf when the mantissa (`man`) is
// zero, NaN otherwise. Bit patterns, so the fp16 and bf16 of the wire need no conversion.
template <typename Bits>
std::string ScanNonFinite(const char* data, size_t n, Bits exp, Bits man) {
  for (size_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, data + i * sizeof(Bits), sizeof(Bits));
    if ((b & exp) == exp) return tide::detail::Concat((b & man) ? "NaN" : "Inf", " at element ", i);
  }
  return "";
}
}  // namespace

std::string FirstNonFinite(const VariableMessage& m, const zmq::message_t& frame) {
  const auto* data = static_cast<const char*>(frame.data());
  const size_t bytes = std::min<size_t>(frame.size(), m.data_bytes());
  switch (static_cast<TideDataType>(m.dtype())) {
    case TIDE_FP32:
      return ScanNonFinite<uint32_t>(data, bytes / 4, 0x7F800000u, 0x007FFFFFu);
    case TIDE_FP64:
      return ScanNonFinite<uint64_t>(data, bytes / 8, 0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull);
    case TIDE_FP16:
      return ScanNonFinite<uint16_t>(data, bytes / 2, 0x7C00, 0x03FF);
    case TIDE_BF16:
      return ScanNonFinite<uint16_t>(data, bytes / 2, 0x7F80, 0x007F);
    default:
      return "";
  }
}

}  // namespace tide_zmq
