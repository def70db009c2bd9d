// The HTTP/1.1 server. Event loops (four per core by default) accept
// connections and park idle keep-alive connections on epoll. Each loop is
// led by one thread of a worker pool at a time: the leader serves requests
// without a body (GET, HEAD, ...) itself as their heads arrive, so a small
// read costs no thread hand-off, and hands anything else (a body to receive,
// TLS) to the pool, whose threads parse the head (Boost.Beast), run the
// handler (which may block on disk and metadata), stream the body in and
// the response out with per-operation timeouts, then park the connection
// again. A leader whose request would wait on anything but a core (a client
// not reading, a helper's next piece, a large reply turning bulk) hands its
// loop to another thread first and finishes the request as a worker.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/byte_source.h"
#include "common/status.h"
#include "http/request.h"
#include "common/tls.h"

namespace strata::http {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 9000;  // 0 picks a free port
  // Requests served at once by worker threads that are running. A worker
  // waiting on its peer (a reader whose socket buffer is full, a body still
  // arriving) does not count: another thread takes the next connection, so
  // a few slow readers of large replies do not make every other request
  // wait. Threads in all, waiting or not, stay at most max_worker_threads
  // (the larger of the two) plus two per event loop (its leader, and one in
  // reserve for a leader handing its loop on); the extra ones end after an
  // idle while. Requests the loops' leaders serve (GET and HEAD without a
  // body) are not counted among worker_threads.
  int worker_threads = 64;
  int max_worker_threads = 1024;
  // Event loops, each led by one pool thread at a time; 0: four per core, at
  // most 64. More than one per core: a leader is one thread, and where cores
  // are short the kernel shares them per thread (docs/performance.md).
  int event_loops = 0;
  size_t max_header_bytes = 64 * 1024;
  int io_timeout_ms = 60 * 1000;  // one read/write making no progress
  // The whole request head must arrive within this time of its first byte.
  // A partial head waits on its event loop, never on a worker.
  int header_timeout_ms = 20 * 1000;
  // A keep-alive connection with no request for this long is closed.
  int idle_timeout_ms = 60 * 1000;
  // Request bodies: after the grace period the average rate must stay above
  // this (a body may take grace + bytes / rate in all), else RequestTimeout.
  uint64_t min_body_bytes_per_s = 4096;
  int body_grace_ms = 10 * 1000;
  // Open connections at most; one more is answered 503 and closed at once.
  int max_connections = 8192;
  // After an error response, what the client still sends is drained (so it
  // reads the response instead of a reset) for at most this long / this much.
  int linger_ms = 2000;
  size_t max_linger_bytes = 8u << 20;
  // Set: every connection speaks TLS (http/tls.h); requests are marked secure.
  std::shared_ptr<TlsContext> tls;
};

// Handles one request. `body` yields the decoded body (Content-Length or
// chunked); reading it sends `100 Continue` first when the client asked.
using Handler = std::function<void(const Request&, ByteSource& body, ResponseWriter&)>;
// Renders the response for a request the server could not parse.
using ErrorRenderer = std::function<void(ProtocolError, ResponseWriter&)>;

class Server {
 public:
  static Result<std::unique_ptr<Server>> Start(ServerOptions options, Handler handler,
                                               ErrorRenderer on_error);
  virtual ~Server() = default;
  virtual int port() const = 0;
  virtual void Stop() = 0;  // stops accepting, waits for workers
};

}  // namespace strata::http
