// enforce.cc: names of error codes, for messages.
#include "core/platform/enforce.h"

namespace tide::core {

const char* CodeName(TideCode code) {
  switch (code) {
    case TIDE_OK:
      return "OK";
    case TIDE_INVALID_ARGUMENT:
      return "InvalidArgument";
    case TIDE_NOT_FOUND:
      return "NotFound";
    case TIDE_OUT_OF_RANGE:
      return "OutOfRange";
    case TIDE_UNIMPLEMENTED:
      return "Unimplemented";
    case TIDE_RESOURCE_EXHAUSTED:
      return "ResourceExhausted";
    case TIDE_FAILED_PRECONDITION:
      return "FailedPrecondition";
    case TIDE_ALREADY_EXISTS:
      return "AlreadyExists";
    case TIDE_UNAVAILABLE:
      return "Unavailable";
    case TIDE_INTERNAL:
      return "Internal";
  }
  return "Unknown";
}

}  // namespace tide::core
