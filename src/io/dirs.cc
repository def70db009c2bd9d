#include "io/dirs.h"

#include <vector>

namespace strata::io {

namespace {
std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}
}  // namespace

Status CreateDirsDurably(FileSystem* fs, const std::string& path) {
  // The components that do not exist yet, from the deepest up.
  std::vector<std::string> missing;
  std::string cur = path;
  while (!cur.empty() && cur != "/" && cur != "." && !fs->FileExists(cur)) {
    missing.push_back(cur);
    cur = Parent(cur);
  }
  if (missing.empty()) return Status::OK();
  RETURN_IF_ERROR(fs->CreateDirs(path));
  for (const std::string& dir : missing) RETURN_IF_ERROR(fs->SyncDir(Parent(dir)));
  return Status::OK();
}

}  // namespace strata::io
