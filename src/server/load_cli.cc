#include "server/load_cli.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace strata::server {
namespace {

namespace fs = std::filesystem;

bool IsPackage(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "strata" / "loader.py", ec);
}

}  // namespace

int RunLoad(const std::vector<std::string>& args) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);  // Linux, as the rest
  const fs::path bin_dir = exe.parent_path();
  // Where the Python package is: $STRATA_PYTHONPATH, the source tree beside a
  // build directory (build/strata -> client/python), an installed share dir.
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("STRATA_PYTHONPATH"); env && *env) candidates.emplace_back(env);
  candidates.push_back(bin_dir.parent_path() / "client" / "python");
  candidates.push_back(bin_dir.parent_path() / "share" / "strata" / "python");
  std::string pythonpath;
  for (const fs::path& c : candidates) {
    if (IsPackage(c)) {
      pythonpath = c.string();
      break;
    }
  }
  if (pythonpath.empty()) {
    std::fprintf(stderr,
                 "strata load: cannot find the strata Python package (strata/loader.py) in "
                 "$STRATA_PYTHONPATH, %s or %s\n",
                 candidates[candidates.size() - 2].c_str(), candidates.back().c_str());
    return 1;
  }
  // The build's Python modules when there are: strata_kv (CRC32C checks) and strata_cuda
  // (the pinned ring for --device cuda).
  if (fs::exists(bin_dir / "client" / "python", ec)) pythonpath += ":" + (bin_dir / "client" / "python").string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
  setenv("PYTHONPATH", pythonpath.c_str(), 1);
  const char* python = std::getenv("STRATA_PYTHON");
  if (!python || !*python) python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  std::vector<char*> argv;
  std::vector<std::string> owned = {python, "-m", "strata.loader"};
  owned.insert(owned.end(), args.begin(), args.end());
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(python, argv.data());
  std::fprintf(stderr, "strata load: cannot run %s: %s\n", python, std::strerror(errno));
  return 1;
}

}  // namespace strata::server
