#include "server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "common/encoding.h"
#include "common/hash.h"
#include "net.h"

extern char** environ;

namespace strata::bench {
namespace {

namespace fs = std::filesystem;

constexpr int kStartTimeoutSeconds = 30;
constexpr int kStopTimeoutSeconds = 20;

std::string MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/s3bench.XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) throw BenchError("mkdtemp failed for " + tmpl);
  return tmpl;
}

// A port that was free a moment ago. The server binds it right after, so a
// collision is possible but unlikely; Start then fails with the server's log.
int PickFreePort() { return Socket::ListenLoopback(0).LocalPort(); }

// The current environment plus the server's root credentials.
std::vector<std::string> ServerEnvironment(const Credentials& creds) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.starts_with("STRATA_ROOT_USER=") || entry.starts_with("STRATA_ROOT_PASSWORD="))
      continue;
    env.emplace_back(entry);
  }
  env.push_back("STRATA_ROOT_USER=" + creds.access_key);
  env.push_back("STRATA_ROOT_PASSWORD=" + creds.secret_key);
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

bool Exited(pid_t pid, int timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  do {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

}  // namespace

std::unique_ptr<ServerProcess> ServerProcess::Start(const std::string& binary,
                                                    const ServerOptions& options) {
  if (access(binary.c_str(), X_OK) != 0)
    throw BenchError("strata binary not executable: " + binary);
  std::unique_ptr<ServerProcess> server(new ServerProcess());
  server->temp_dir_ = MakeTempDir();
  server->data_dir_ = server->temp_dir_ + "/data";
  server->port_ = PickFreePort();
  server->credentials_.access_key = "bench" + HexEncode(RandomBytes(6));
  server->credentials_.secret_key = HexEncode(RandomBytes(20));

  std::vector<std::string> args = {binary,     "server",
                                   "--listen", server->host_ + ":" + std::to_string(server->port_),
                                   "--data",   server->data_dir_};
  if (options.drives > 0) {
    std::string list;
    for (int i = 1; i <= options.drives; ++i) {
      server->drive_dirs_.push_back(server->temp_dir_ + "/drive" + std::to_string(i));
      if (!list.empty()) list += ",";
      list += server->drive_dirs_.back();
    }
    args.insert(args.end(), {"--drives", list});
  }
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
  std::vector<std::string> env = ServerEnvironment(server->credentials_);
  std::string log_path = server->temp_dir_ + "/server.log";

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv = CStrings(args);
  std::vector<char*> envp = CStrings(env);
  int rc = posix_spawn(&server->pid_, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    server->pid_ = -1;
    throw BenchError("cannot start " + binary + ": " + std::strerror(rc));
  }
  server->WaitUntilAccepting();
  return server;
}

void ServerProcess::WaitUntilAccepting() {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kStartTimeoutSeconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      throw BenchError("strata server exited at start-up; its log:\n" + LogTail());
    }
    try {
      Socket::Connect(host_, port_);
      return;
    } catch (const BenchError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  throw BenchError("strata server did not accept connections within " +
                   std::to_string(kStartTimeoutSeconds) + " s; its log:\n" + LogTail());
}

std::string ServerProcess::LogTail() const {
  std::ifstream in(temp_dir_ + "/server.log");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string log = ss.str();
  return log.size() > 4000 ? log.substr(log.size() - 4000) : log;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    if (!Exited(pid_, kStopTimeoutSeconds)) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::error_code ignored;
  if (!temp_dir_.empty()) fs::remove_all(temp_dir_, ignored);
}

std::string FindStrataNextToSelf() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const fs::path& candidate :
       {self.parent_path() / "strata", self.parent_path().parent_path() / "strata",
        self.parent_path().parent_path() / "src/server/strata"}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

}  // namespace strata::bench
