// A strata server started by the benchmark: fresh temporary data directory,
// free loopback port, generated root credentials; stopped (SIGTERM, then
// SIGKILL) and its directory removed when this object goes away. By default
// the plain single-directory store (`--data DIR`); with `drives` > 0 an
// erasure-coded pool (`--data DIR --drives D1,...,DN`, DIR keeping only the
// metadata, the layout the server's default for N drives).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "s3_client.h"

namespace strata::bench {

struct ServerOptions {
  int drives = 0;                       // 0: plain `--data DIR`; N: DIR + N drive directories
  std::vector<std::string> extra_args;  // appended to `strata server ...`
};

class ServerProcess {
 public:
  // Starts `binary` and waits until it accepts connections. Throws BenchError
  // (with the tail of the server's log) if it exits or does not come up.
  static std::unique_ptr<ServerProcess> Start(const std::string& binary,
                                              const ServerOptions& options = {});
  ~ServerProcess();

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  const Credentials& credentials() const { return credentials_; }
  const std::string& data_dir() const { return data_dir_; }
  // The drive directories, in --drives order (empty for the plain store).
  const std::vector<std::string>& drive_dirs() const { return drive_dirs_; }
  pid_t pid() const { return pid_; }

 private:
  ServerProcess() = default;
  void WaitUntilAccepting();
  std::string LogTail() const;

  pid_t pid_ = -1;
  std::string host_ = "127.0.0.1";
  int port_ = 0;
  Credentials credentials_;
  std::string temp_dir_;  // holds data/ and server.log
  std::string data_dir_;
  std::vector<std::string> drive_dirs_;
};

// The strata binary next to the running s3bench (build dir layouts:
// BUILD/bench/s3bench with BUILD/strata); "" if not found.
std::string FindStrataNextToSelf();

}  // namespace strata::bench
