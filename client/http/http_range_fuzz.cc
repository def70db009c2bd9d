// libFuzzer target: what an S3 endpoint may send the loader's native range
// reader (http_range.h) in reply to its GETs. The input is the whole byte
// stream of the connection; three exchanges run on it (exact, prefix, exact)
// while the connection stays usable. Nothing may crash or hang; a body goes
// into the destination only within its bounds, another reply's body stays
// within kMaxOtherBody, and a 2xx body that went to the destination is
// exactly its Content-Length.
// Seeds: tests/fuzz/http_range/.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "http_range.h"

using strata::kv::HttpRangeConnection;
using strata::kv::HttpReply;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 100000) return 0;  // stays within the socket buffers below
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
  const int buffer = 1 << 20;
  ::setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));
  ::setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  size_t off = 0;
  while (off < size) {
    ssize_t n = ::send(sv[1], data + off, size - off, MSG_NOSIGNAL);
    if (n <= 0) std::abort();
    off += static_cast<size_t>(n);
  }
  ::shutdown(sv[1], SHUT_WR);  // the reader sees the end after the input
  auto conn = HttpRangeConnection::OverSocket(sv[0]);
  static constexpr char kHead[] = "GET /b/k HTTP/1.1\r\nHost: x\r\nRange: bytes=0-63\r\n\r\n";
  char dest[80];
  std::memset(dest, 0xAA, sizeof(dest));
  for (int i = 0; i < 3 && conn->usable(); ++i) {
    const bool exact = i != 1;
    HttpReply reply;
    if (!conn->Exchange(kHead, dest, 64, exact, &reply).ok()) break;
    if (reply.into_dest > 64) std::abort();
    if (reply.into_dest > 0 && (reply.content_length != reply.into_dest ||
                                (exact && reply.into_dest != 64))) {
      std::abort();
    }
    if (reply.body.size() > HttpRangeConnection::kMaxOtherBody) std::abort();
    for (size_t j = 64; j < sizeof(dest); ++j) {
      if (static_cast<unsigned char>(dest[j]) != 0xAA) std::abort();  // past the bound
    }
  }
  ::close(sv[1]);
  return 0;
}
