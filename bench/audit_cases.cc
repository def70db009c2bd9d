// The audit trail's cost on the request path (issue 15: 4 KiB PUT with the
// trail on >= 95 % of off): two servers from the same binary, one with
// --audit off, measured in interleaved runs so that drift of the shared
// machine hits both alike (MeasureFeatureCost: the order alternates run to
// run), with each server's CPU per PUT beside the throughput.
#include <cstdio>

#include "s3_cases.h"
#include "server_process.h"

namespace strata::bench {

void RunAuditOverhead(const CaseOptions& opt, const std::string& binary, Report& report) {
  constexpr int kConcurrency = 16;
  ServerOptions off_options;
  off_options.extra_args = {"--audit", "off", "--kv-listen", "off"};
  ServerOptions on_options;
  on_options.extra_args = {"--kv-listen", "off"};
  std::unique_ptr<ServerProcess> off = ServerProcess::Start(binary, off_options);
  std::unique_ptr<ServerProcess> on = ServerProcess::Start(binary, on_options);
  std::fprintf(stderr, "[s3bench] audit group: --audit off on port %d, on (default) on port %d\n",
               off->port(), on->port());
  const Target off_target{off->host(), off->port(), off->credentials()};
  const Target on_target{on->host(), on->port(), on->credentials()};
  EnsureBucket(off_target, kSmallBucket);
  EnsureBucket(on_target, kSmallBucket);
  const std::string c = std::to_string(kConcurrency);
  MeasureFeatureCost(
      opt, report,
      {&off_target, off->pid(), "put4k_audit_off_c" + c, "PUT 4 KiB, c=" + c + ", --audit off"},
      {&on_target, on->pid(), "put4k_audit_on_c" + c, "PUT 4 KiB, c=" + c + ", audit trail on"},
      0.95, 1.05, [&](const Target& target, int r) {
        return TimedSmallPuts(target, kConcurrency, opt.duration_s, "audit/r" + std::to_string(r));
      });
}

}  // namespace strata::bench
