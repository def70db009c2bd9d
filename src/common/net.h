// The one TCP dial of the tree: every client that opens a connection (the
// admin CLI, the KV client library, the KV transport, s3bench, test helpers)
// goes through Dial, so name resolution, the connect timeout and the socket
// options are the same everywhere.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace strata {

// Resolves `host` (a name or a numeric IPv4/IPv6 address) and connects a TCP
// socket to the first of its addresses that accepts, waiting at most
// `timeout_ms` per address (0: the kernel's own connect timeout). With
// `from_host`, the socket is bound to that local address first.
//
// The descriptor returned is the caller's to close. It is blocking,
// close-on-exec and TCP_NODELAY (requests are small and latency-bound); with
// timeout_ms > 0 its sends and receives give up after timeout_ms as well
// (SO_SNDTIMEO/SO_RCVTIMEO: the call fails with EAGAIN).
//
// Errors: InvalidArgument (the host does not resolve), DeadlineExceeded (no
// address accepted within the timeout), Unavailable (refused or unreachable),
// otherwise the errno mapping (ErrnoStatus); the message names host:port.
Result<int> Dial(const std::string& host, uint16_t port, int timeout_ms,
                 const std::string& from_host = "");

}  // namespace strata
