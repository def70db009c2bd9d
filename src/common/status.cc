#include "common/status.h"

#include <cerrno>
#include <cstring>
#include <new>

namespace strata {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kNotFound: return "NotFound";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kPreconditionFailed: return "PreconditionFailed";
    case Code::kCorruption: return "Corruption";
    case Code::kIOError: return "IOError";
    case Code::kUnavailable: return "Unavailable";
    case Code::kResourceExhausted: return "ResourceExhausted";
    case Code::kPermissionDenied: return "PermissionDenied";
    case Code::kOutOfRange: return "OutOfRange";
    case Code::kNotImplemented: return "NotImplemented";
    case Code::kDeadlineExceeded: return "DeadlineExceeded";
    case Code::kAborted: return "Aborted";
    case Code::kInternal: return "Internal";
  }
  return "Unknown";
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code(), std::string(context) + ": " + message(), detail());
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code())) + ": " + message();
}

Status StatusFromException(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    return Unavailable("out of memory (std::bad_alloc)");
  }
  return Status(Code::kInternal, std::string("unexpected exception: ") + e.what());
}

Status ErrnoStatus(int err, std::string_view context) {
  std::string msg = std::string(context) + ": " + std::strerror(err);
  switch (err) {
    case ENOENT: return NotFound(msg);
    case EEXIST: return AlreadyExists(msg);
    case ENOSPC:
    case EDQUOT: return ResourceExhausted(msg);
    case EACCES:
    case EPERM: return PermissionDenied(msg);
    case EINVAL: return InvalidArgument(msg);
    default: return IOError(msg);
  }
}

}  // namespace strata
