// A strata server started by the benchmark: fresh temporary data directory,
// free loopback port, generated root credentials; stopped (SIGTERM, then
// SIGKILL) and its directory removed when this object goes away.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "s3_client.h"

namespace strata::bench {

class ServerProcess {
 public:
  // Starts `binary` and waits until it accepts connections. Throws BenchError
  // (with the tail of the server's log) if it exits or does not come up.
  static std::unique_ptr<ServerProcess> Start(const std::string& binary);
  ~ServerProcess();

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  const Credentials& credentials() const { return credentials_; }
  const std::string& data_dir() const { return data_dir_; }

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
};

// The strata binary next to the running s3bench (build dir layouts:
// BUILD/bench/s3bench with BUILD/strata); "" if not found.
std::string FindStrataNextToSelf();

}  // namespace strata::bench
