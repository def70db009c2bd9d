// Status and Result<T>: the error values every module boundary returns.
// The OK path carries no allocation. Codes are canonical and few; S3 error
// codes live only in s3/errors, the KV protocol maps these to one byte.
//
// Messages are for people and logs and may be reworded at any time: no code
// decides anything by their text. Where a caller must tell apart failures of
// one code (which S3 error a NotFound becomes; whether a broken request body
// is broken in its trailer), the producer tags the Status with a Detail and
// the caller switches on detail(). One small enum for the whole tree keeps
// every tag distinct, so a Status means the same wherever it travels.
#pragma once

#include <cassert>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace strata {

enum class Code : unsigned char {
  kOk = 0,
  kNotFound,
  kAlreadyExists,
  kInvalidArgument,
  kPreconditionFailed,
  kCorruption,
  kIOError,
  kUnavailable,
  kResourceExhausted,  // disk full, quota, too large
  kPermissionDenied,
  kOutOfRange,
  kNotImplemented,
  kDeadlineExceeded,
  kAborted,  // the peer went away / request cut short
  kInternal,
};

std::string_view CodeName(Code code);

// What a non-OK Status is about, when its code alone does not say enough.
enum class Detail : unsigned char {
  kNone = 0,
  // kNotFound from the object engine: what does not exist.
  kBucket,
  kKey,
  kUpload,   // a multipart upload
  kVersion,  // an object version named by id
  // kInvalidArgument from a request body decoder (auth/aws_chunked): the
  // trailer section (trailing headers, their signature) is malformed.
  kTrailer,
  // kPermissionDenied from the object engine: Object Lock protects the version.
  kLocked,
  // kPreconditionFailed from the object engine: the bucket's versioning or
  // Object Lock state forbids the request (S3 InvalidBucketState).
  kBucketState,
  // kNotFound from the object engine: the bucket has no Object Lock
  // configuration (kLockConfig) / the version has no retention or legal
  // hold (kObjectLock).
  kLockConfig,
  kObjectLock,
  // From the key service (kms/): no such key (kNotFound), the key is
  // disabled (kPreconditionFailed), a wrapped data key that does not open
  // under its key and context (kPermissionDenied).
  kKmsKey,
  kKmsDisabled,
  kKmsCiphertext,
  // kPermissionDenied from the object engine: the data key given does not
  // open the object's chunks (a wrong SSE-C key); kPreconditionFailed: the
  // object is encrypted and no key was given.
  kSseKey,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string_view message, Detail detail = Detail::kNone)
      : rep_(code == Code::kOk ? nullptr
                               : std::make_shared<Rep>(Rep{code, detail, std::string(message)})) {}

  static Status OK() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  Detail detail() const { return rep_ ? rep_->detail : Detail::kNone; }
  const std::string& message() const;
  // Returns a copy with `context: ` prepended to the message (3FS-style
  // wrapping); code and detail are kept.
  Status WithContext(std::string_view context) const;
  std::string ToString() const;
  void IgnoreError() const {}

 private:
  struct Rep {
    Code code;
    Detail detail;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;
};

inline Status NotFound(std::string_view m) { return Status(Code::kNotFound, m); }
// NotFound saying what is missing (Detail::kBucket, kKey, kUpload, kVersion).
inline Status NotFound(Detail what, std::string_view m) {
  return Status(Code::kNotFound, m, what);
}
inline Status AlreadyExists(std::string_view m) { return Status(Code::kAlreadyExists, m); }
inline Status InvalidArgument(std::string_view m) { return Status(Code::kInvalidArgument, m); }
inline Status InvalidArgument(Detail detail, std::string_view m) {
  return Status(Code::kInvalidArgument, m, detail);
}
inline Status PreconditionFailed(std::string_view m) {
  return Status(Code::kPreconditionFailed, m);
}
inline Status PreconditionFailed(Detail detail, std::string_view m) {
  return Status(Code::kPreconditionFailed, m, detail);
}
inline Status Corruption(std::string_view m) { return Status(Code::kCorruption, m); }
inline Status IOError(std::string_view m) { return Status(Code::kIOError, m); }
inline Status Unavailable(std::string_view m) { return Status(Code::kUnavailable, m); }
inline Status ResourceExhausted(std::string_view m) { return Status(Code::kResourceExhausted, m); }
// An exception caught where it may go no further (a helper thread's task):
// std::bad_alloc is kUnavailable (retryable: S3 503, not a full disk's 507),
// anything else kInternal.
Status StatusFromException(const std::exception& e);
inline Status PermissionDenied(std::string_view m) { return Status(Code::kPermissionDenied, m); }
inline Status PermissionDenied(Detail detail, std::string_view m) {
  return Status(Code::kPermissionDenied, m, detail);
}
inline Status OutOfRange(std::string_view m) { return Status(Code::kOutOfRange, m); }
inline Status NotImplemented(std::string_view m) { return Status(Code::kNotImplemented, m); }
inline Status DeadlineExceeded(std::string_view m) { return Status(Code::kDeadlineExceeded, m); }
inline Status Aborted(std::string_view m) { return Status(Code::kAborted, m); }
inline Status Internal(std::string_view m) { return Status(Code::kInternal, m); }

// Maps an errno value to a Status (ENOENT -> NotFound, ENOSPC -> ResourceExhausted, ...).
Status ErrnoStatus(int err, std::string_view context);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result built from an OK status");
  }

  bool ok() const { return v_.index() == 1; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace strata

#define STRATA_CONCAT_INNER(a, b) a##b
#define STRATA_CONCAT(a, b) STRATA_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    ::strata::Status _st = (expr);             \
    if (!_st.ok()) return _st;                 \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(STRATA_CONCAT(_res_, __LINE__), lhs, expr)
