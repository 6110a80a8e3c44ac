// wire.h: variables <-> wire form (a VariableMessage header + one raw data frame), and the checks
// that make a variable received from the network safe to write into a scope.
#pragma once

#include <zmq.hpp>

#include <atomic>
#include <string>

#include "common.h"
#include "transport.pb.h"

namespace tide_zmq {

namespace transport = ::tide::transport;  // the generated wire messages

// Parameter frames a pserver has handed to ZeroMQ without copying and ZeroMQ still holds; the
// pserver waits for this to drop to zero before it updates parameters in place.
std::atomic<int64_t>& ServedFrames();

// A frame over `bytes` bytes of `t`'s memory from byte `offset`, without copying (from 64 KiB up;
// smaller ones are copied): the frame holds a share of the tensor's allocation until ZeroMQ is
// done with it. `live` (may be NULL) counts the
// frames not yet released.
zmq::message_t ZeroCopyFrame(const tide::Tensor& t, size_t offset, size_t bytes,
                             std::atomic<int64_t>* live = nullptr);

// Describes `var` (called `wire_name` on the wire) into `msg` and makes its data frame. With
// row_end >= 0 only rows [row_begin, row_end) of dim 0 travel (a block of a sliced LoDTensor).
// Device tensors are staged through host memory. `what` names the op and variable for errors;
// `live` is ZeroCopyFrame's.
void EncodeVariable(const tide::Variable& var, const std::string& wire_name, int64_t row_begin,
                    int64_t row_end, const std::string& what, transport::VariableMessage* msg,
                    zmq::message_t* frame, std::atomic<int64_t>* live = nullptr);

// "" when `m` (with a data frame of `frame_bytes`) is well formed: known dtype, non-negative dims
// whose size matches the frame, LoD offsets and rows in range. Otherwise what is wrong.
std::string CheckVariableMessage(const transport::VariableMessage& m, size_t frame_bytes);

// Writes a checked message into `var` (made a LoDTensor or SelectedRows as the message says), on
// `place`. The one copy: from the received frame into the tensor.
void DecodeVariable(const transport::VariableMessage& m, const zmq::message_t& frame,
                    tide::Variable var, const tide::Place& place);

// Bytes of one dim-0 row of a message's tensor (the product of the other dims * dtype size).
int64_t RowBytes(const transport::VariableMessage& m);

}  // namespace tide_zmq
