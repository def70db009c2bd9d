// The machine limits each S3 figure is compared with, measured in the same
// process and run as the S3 cases, with the same socket code (net.h):
//  - loopback TCP throughput, one stream, 1 MiB writes;
//  - 4 KiB request / 4 KiB response rate against a tiny HTTP-like echo server;
//  - MD5 throughput on one core (OpenSSL through strata's StreamHash, as the
//    server computes ETags), per CPU-second.
#pragma once

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

}  // namespace strata::bench
