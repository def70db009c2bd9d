// The erasure-coding case group of s3bench (`--only ec`): the same large
// object PUT and GET on two servers the group starts itself — the plain
// single-directory store (`--data DIR`) and a pool of 6 drive directories
// (`--data DIR --drives D1,...,D6`, the server's default 4+2) — then GET on
// the pool with the shards of drives 2 and 5 deleted (the server rebuilds
// the missing blocks on read), and the ISA-L Reed-Solomon encode rate on one
// core, all in the same run. The pool's figures are printed as fractions of
// the single-drive ones (and degraded GET of healthy GET), with the targets
// of issue 4. Every GET is checked byte for byte.
#pragma once

#include <string>

#include "report.h"
#include "s3_cases.h"

namespace strata::bench {

// Rows: ec_encode, ec_reconstruct (per CPU-second of one thread);
// ec_put_1, ec_get_1, ec_put_pool, ec_get_pool, ec_get_degraded (bytes per
// second, each run repeating its request for --duration-s of timed time);
// the same five with suffix _cpu (bytes per CPU-second of the server
// process); ec_get4k_alone and ec_get4k_healing (p99 of 4 KiB GETs at c=16 on
// the pool, alone and while the healer rebuilds two shards of an object of
// the group's size back to back). `strata_binary` is started twice; both servers run side by side
// and the runs of all rows are interleaved, so that load drift on a shared
// machine hits both alike. Throws BenchError if a server does not start.
void RunErasureCoding(const CaseOptions& opt, const std::string& strata_binary, Report& report);

}  // namespace strata::bench
