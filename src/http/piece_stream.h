// PieceStream: a Beast/Asio SyncReadStream over bytes in memory that hands
// them out in pieces whose sizes a callback picks, then reports EOF: what a
// socket does to a request. The test and fuzz twin of TimedStream for
// request_parse_test.cc and request_parse_fuzz.cc.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>
#include <algorithm>
#include <cstddef>
#include <functional>
#include <string_view>
#include <utility>

namespace strata::http {

class PieceStream {
 public:
  // `next_piece` returns the size of the next piece (>= 1).
  PieceStream(std::string_view data, std::function<size_t()> next_piece)
      : data_(data), next_piece_(std::move(next_piece)) {}

  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
    ec = {};
    if (data_.empty()) {
      ec = boost::asio::error::eof;
      return 0;
    }
    size_t k = std::min(data_.size(), std::max<size_t>(next_piece_(), 1));
    size_t n = boost::asio::buffer_copy(buffers, boost::asio::buffer(data_.data(), k));
    data_.remove_prefix(n);
    return n;
  }
  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers) {
    boost::system::error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  std::string_view data_;
  std::function<size_t()> next_piece_;
};

}  // namespace strata::http
