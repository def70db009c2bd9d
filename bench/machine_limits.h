// The machine limits each S3 figure is compared with, measured in the same
// process and run as the S3 cases, with the same socket code (net.h):
//  - loopback TCP throughput, one stream, 1 MiB writes;
//  - 4 KiB request / 4 KiB response rate against a tiny HTTP-like echo server;
//  - durable file writes: create, write, fdatasync, fsync(dir), as a data
//    file of one object is made durable (the bound of a durable PUT of many
//    files, which no network figure shows);
//  - MD5 throughput on one core (OpenSSL through strata's StreamHash, as the
//    server computes ETags), per CPU-second.
#pragma once

#include <string>

#include "workload.h"

namespace strata::bench {

// Bytes per second (one sender thread, one receiver thread, 127.0.0.1).
double MeasureLoopbackBytesPerSecond(double duration_s);

// `concurrency` client connections, each sending a 4 KiB request and reading
// a 4 KiB response back to back; the echo server runs one thread per
// connection, like a blocking server's worker.
TimedResult MeasureEchoRequestResponse(int concurrency, double duration_s);

// MD5 over 1 MiB buffers on the calling thread, bytes per CPU-second of
// that thread (so other load on the machine does not lower it).
double MeasureMd5BytesPerSecond(double duration_s);

// `concurrency` threads, each creating files of `file_bytes` in its own
// directory under `dir` (same filesystem as the server's data), writing them
// in one write, fdatasync'ing the file and fsync'ing the directory before the
// next. Bytes per second made durable. The files are removed afterwards.
TimedResult MeasureDurableFileWrites(const std::string& dir, uint64_t file_bytes,
                                     int concurrency, double duration_s);
// The best any durable layout can do on that filesystem: each worker appends
// `append_bytes` to a file of its own and fdatasyncs it (one op per append;
// a new file every 1 GiB, the old one removed).
TimedResult MeasureDurableAppends(const std::string& dir, uint64_t append_bytes, int concurrency,
                                  double duration_s);

}  // namespace strata::bench
