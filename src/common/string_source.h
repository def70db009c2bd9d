// A ByteSource over a string, for tests and small in-memory bodies: hands out
// at most `max_read` bytes per Read, then `end` (OK: end of stream; an error
// status: what a broken or stalled connection reports).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>

#include "common/byte_source.h"

namespace strata {

class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string data, size_t max_read = std::numeric_limits<size_t>::max(),
                        Status end = Status::OK())
      : data_(std::move(data)), max_read_(max_read), end_(std::move(end)) {}
  Result<size_t> Read(char* buf, size_t n) override {
    if (pos_ == data_.size()) {
      if (!end_.ok()) return end_;
      return size_t{0};
    }
    size_t k = std::min({n, max_read_, data_.size() - pos_});
    std::copy_n(data_.data() + pos_, k, buf);
    pos_ += k;
    return k;
  }

 private:
  std::string data_;
  size_t pos_ = 0;
  size_t max_read_;
  Status end_;
};

}  // namespace strata
