// Tests: how many threads this process runs (from /proc), in all or by name
// (NameThisThread), to show that work ran without a thread of its own.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace strata {

inline int ThreadsNow() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

inline int ThreadsNamed(const std::string& name) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(e.path() / "comm");
    std::string c;
    std::getline(comm, c);
    if (c == name) ++n;
  }
  return n;
}

}  // namespace strata
