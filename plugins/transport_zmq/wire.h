// wire.h: variables <-> wire form (a VariableMessage header + one raw data frame), and the checks
// that make a variable received from the network safe to write into a scope.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <zmq.hpp>

#include "common.h"
#include "transport.pb.h"

namespace tide_zmq {

namespace transport = ::tide::transport;  // the generated wire messages

// Zero-copy frames ZeroMQ still holds (it releases them from its I/O thread once sent).
class FrameCounter {
 public:
  void Add() { n_.fetch_add(1); }
  void Release() {
    if (n_.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    }
  }
  int64_t count() const { return n_.load(); }
  // True when none is left within timeout_ms.
  bool WaitZero(int64_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                        [&] { return n_.load() == 0; });
  }

 private:
  std::atomic<int64_t> n_{0};
  std::mutex mu_;
  std::condition_variable cv_;
};

// The parameter frames a pserver has handed out; it waits for none before updating in place.
const std::shared_ptr<FrameCounter>& ServedFrames();

// A frame over `bytes` bytes of `t`'s memory from byte `offset`, without copying (from 64 KiB up;
// smaller ones are copied): the frame holds a share of the tensor's allocation until ZeroMQ is
// done with it. `live` (may be null) counts such frames until then.
zmq::message_t ZeroCopyFrame(const tide::Tensor& t, size_t offset, size_t bytes,
                             const std::shared_ptr<FrameCounter>& live = nullptr);

// Describes `var` (called `wire_name` on the wire) into `msg` and makes its data frame. With
// row_end >= 0 only rows [row_begin, row_end) of dim 0 travel (a block of a sliced LoDTensor).
// Device tensors are staged through host memory. `what` names the op and variable for errors;
// `live` is ZeroCopyFrame's.
void EncodeVariable(const tide::Variable& var, const std::string& wire_name, int64_t row_begin,
                    int64_t row_end, const std::string& what, transport::VariableMessage* msg,
                    zmq::message_t* frame, const std::shared_ptr<FrameCounter>& live = nullptr);

// "" when `m` (with a data frame of `frame_bytes`) is well formed: known dtype, non-negative dims
// whose size matches the frame, LoD offsets and rows in range. Otherwise what is wrong.
std::string CheckVariableMessage(const transport::VariableMessage& m, size_t frame_bytes);

// "" when every element of a checked message's floating-point data is finite (or the data is not
// floating point); else the first that is not, e.g. "NaN at element 3".
std::string FirstNonFinite(const transport::VariableMessage& m, const zmq::message_t& frame);

// Writes a checked message into `var` (made a LoDTensor or SelectedRows as the message says), on
// `place`. Data of at least kCopyBelow bytes is adopted by the tensor, which takes the frame (no
// copy); smaller data is copied out of it.
void DecodeVariable(const transport::VariableMessage& m, zmq::message_t* frame, tide::Variable var,
                    const tide::Place& place);

}  // namespace tide_zmq
