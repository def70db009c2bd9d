// MemFileSystem: the in-memory twin of the POSIX filesystem, with a crash model.
//
// The crash model (what SimulateCrash keeps), as strict as POSIX wherever the
// commit protocol depends on it:
//  - File data: a file's bytes survive up to the length at its last Sync().
//    Data belongs to the file (the inode), not to a name, so synced bytes
//    survive under whichever name the directory keeps.
//  - Directory entries: each directory keeps two maps, `live` (what callers
//    see) and `durable` (as of its last SyncDir). Creating, renaming and
//    removing a file change only `live`; SyncDir copies `live` to `durable`;
//    a crash copies `durable` back. So a created-but-unsynced-dir file
//    vanishes, an unsynced rename is undone, and an unsynced remove reappears.
//    A rename across directories needs a SyncDir of both.
//  - Directories themselves are entries of their parent like files: a
//    directory made by CreateDirs survives a crash only once its parent was
//    synced (SyncDir) after it was made; one that does not survive takes
//    everything below it along. (There is no RemoveDir.)
//  - Truncating an existing file (NewWritableFile on it) is durable at once
//    and loses the old bytes: the pessimistic reading.
//  - Handles opened before a crash are cut off: surviving files get fresh
//    nodes, so late writes through old handles land nowhere visible.
//
// Paths are split on '/', empty and "." components dropped: "/a//b/" and
// "a/b" name the same file; "" is the root, which always exists.
#include "io/mem_fs.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace strata::io {
namespace {

struct Node {  // one file's contents (an inode)
  mutable std::mutex mu;
  std::string data;
  size_t synced_size = 0;
};
using NodePtr = std::shared_ptr<Node>;

class MemWritableFile : public WritableFile {
 public:
  MemWritableFile(std::string path, NodePtr node)
      : path_(std::move(path)), node_(std::move(node)) {}

  Status Append(std::string_view data) override {
    if (closed_) return InvalidArgument(path_ + ": append after close");
    std::lock_guard lock(node_->mu);
    node_->data.append(data);
    return Status::OK();
  }
  Status Sync() override {
    if (closed_) return InvalidArgument(path_ + ": sync after close");
    std::lock_guard lock(node_->mu);
    node_->synced_size = node_->data.size();
    return Status::OK();
  }
  Status Close() override {
    closed_ = true;  // like close(2): does not sync
    return Status::OK();
  }

 private:
  std::string path_;
  NodePtr node_;
  bool closed_ = false;
};

class MemReadableFile : public ReadableFile {
 public:
  explicit MemReadableFile(NodePtr node) : node_(std::move(node)) {}

  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) const override {
    std::lock_guard lock(node_->mu);
    if (offset >= node_->data.size()) return size_t{0};
    size_t len = std::min<uint64_t>(n, node_->data.size() - offset);
    node_->data.copy(buf, len, offset);
    return len;
  }
  uint64_t Size() const override {
    std::lock_guard lock(node_->mu);
    return node_->data.size();
  }
  // The node's address: not reused while this handle holds the node.
  std::string Identity() const override {
    return std::to_string(reinterpret_cast<uintptr_t>(node_.get()));
  }

 private:
  NodePtr node_;
};

struct Dir {
  std::map<std::string, NodePtr> live;     // files as callers see them
  std::map<std::string, NodePtr> durable;  // files as of the last SyncDir
  std::set<std::string> subdirs;           // subdirectories as callers see them
  std::set<std::string> durable_subdirs;   // as of the last SyncDir
};

// "a/b/c" -> {"a/b", "c"}; the parent of a top-level name is the root "".
struct SplitPath {
  std::string dir;
  std::string name;
};

std::string Normalize(const std::string& path) {
  std::string out;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = std::min(path.find('/', i), path.size());
    std::string_view part(path.data() + i, j - i);
    if (!part.empty() && part != ".") {
      if (!out.empty()) out.push_back('/');
      out.append(part);
    }
    i = j + 1;
  }
  return out;
}

SplitPath Split(const std::string& normalized) {
  size_t slash = normalized.rfind('/');
  if (slash == std::string::npos) return {"", normalized};
  return {normalized.substr(0, slash), normalized.substr(slash + 1)};
}

class MemFileSystemImpl : public MemFileSystem {
 public:
  MemFileSystemImpl() { dirs_[""]; }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(Dir * dir, ParentOf(path));
    SplitPath p = Split(Normalize(path));
    if (p.name.empty() || dir->subdirs.count(p.name)) return ErrnoStatus(EISDIR, path);
    NodePtr& node = dir->live[p.name];
    if (node == nullptr) {
      node = std::make_shared<Node>();
    } else {  // O_TRUNC on the same inode
      std::lock_guard node_lock(node->mu);
      node->data.clear();
      node->synced_size = 0;
    }
    return std::unique_ptr<WritableFile>(new MemWritableFile(path, node));
  }

  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path) override {
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(NodePtr node, FindFile(path));
    return std::unique_ptr<ReadableFile>(new MemReadableFile(std::move(node)));
  }

  Status CreateDirs(const std::string& path) override {
    std::lock_guard lock(mu_);
    std::string norm = Normalize(path);
    std::string cur;
    for (size_t i = 0; i <= norm.size();) {
      size_t j = std::min(norm.find('/', i), norm.size());
      std::string child = norm.substr(i, j - i);
      if (child.empty()) break;  // root
      Dir& parent = dirs_[cur];
      if (parent.live.count(child)) return ErrnoStatus(ENOTDIR, path);
      parent.subdirs.insert(child);
      cur = cur.empty() ? child : cur + "/" + child;
      dirs_[cur];
      i = j + 1;
    }
    return Status::OK();
  }

  Status RemoveFile(const std::string& path) override {
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(Dir * dir, ParentOf(path));
    SplitPath p = Split(Normalize(path));
    if (dir->subdirs.count(p.name)) return ErrnoStatus(EISDIR, path);
    if (dir->live.erase(p.name) == 0) return ErrnoStatus(ENOENT, path);
    return Status::OK();
  }

  Status Rename(const std::string& from, const std::string& to) override {
    std::lock_guard lock(mu_);
    std::string context = from + " -> " + to;
    ASSIGN_OR_RETURN(Dir * from_dir, ParentOf(from));
    ASSIGN_OR_RETURN(Dir * to_dir, ParentOf(to));
    SplitPath f = Split(Normalize(from));
    SplitPath t = Split(Normalize(to));
    auto it = from_dir->live.find(f.name);
    if (it == from_dir->live.end()) {
      // Renaming directories is not modelled; the engine renames files only.
      if (from_dir->subdirs.count(f.name)) return NotImplemented(context + ": directory rename");
      return ErrnoStatus(ENOENT, context);
    }
    if (t.name.empty() || to_dir->subdirs.count(t.name)) return ErrnoStatus(EISDIR, context);
    NodePtr node = it->second;
    from_dir->live.erase(it);
    to_dir->live[t.name] = std::move(node);  // replaces atomically, like rename(2)
    return Status::OK();
  }

  Status SyncDir(const std::string& path) override {
    std::lock_guard lock(mu_);
    auto it = dirs_.find(Normalize(path));
    if (it == dirs_.end()) return ErrnoStatus(ENOENT, path);
    it->second.durable = it->second.live;
    it->second.durable_subdirs = it->second.subdirs;
    return Status::OK();
  }

  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    std::lock_guard lock(mu_);
    auto it = dirs_.find(Normalize(path));
    if (it == dirs_.end()) return ErrnoStatus(ENOENT, path);
    std::vector<std::string> names(it->second.subdirs.begin(), it->second.subdirs.end());
    for (const auto& [name, node] : it->second.live) names.push_back(name);
    std::sort(names.begin(), names.end());
    return names;
  }

  bool FileExists(const std::string& path) override {
    std::lock_guard lock(mu_);
    std::string norm = Normalize(path);
    return dirs_.count(norm) > 0 || FindFile(path).ok();
  }

  Result<uint64_t> FileSize(const std::string& path) override {
    std::lock_guard lock(mu_);
    if (dirs_.count(Normalize(path))) return ErrnoStatus(EISDIR, path);
    ASSIGN_OR_RETURN(NodePtr node, FindFile(path));
    std::lock_guard node_lock(node->mu);
    return static_cast<uint64_t>(node->data.size());
  }

  void SimulateCrash() override {
    std::lock_guard lock(mu_);
    // Directories not durably linked from the root are gone, with their contents.
    std::set<std::string> reachable = {""};
    std::vector<std::string> to_visit = {""};
    while (!to_visit.empty()) {
      std::string path = std::move(to_visit.back());
      to_visit.pop_back();
      Dir& dir = dirs_[path];
      for (const std::string& sub : dir.durable_subdirs) {
        std::string child = path.empty() ? sub : path + "/" + sub;
        if (reachable.insert(child).second) to_visit.push_back(child);
      }
      dir.subdirs = dir.durable_subdirs;
    }
    for (auto it = dirs_.begin(); it != dirs_.end();) {
      it = reachable.count(it->first) ? std::next(it) : dirs_.erase(it);
    }
    // One fresh node per surviving inode, so a file kept under two names
    // (a cross-directory rename synced on one side only) stays one file.
    std::map<Node*, NodePtr> fresh;
    for (auto& [dir_path, dir] : dirs_) {
      for (auto& [name, node] : dir.durable) {
        NodePtr& copy = fresh[node.get()];
        if (copy == nullptr) {
          std::lock_guard node_lock(node->mu);
          copy = std::make_shared<Node>();
          copy->data = node->data.substr(0, node->synced_size);
          copy->synced_size = copy->data.size();
        }
        node = copy;
      }
      dir.live = dir.durable;
    }
  }

 private:
  // The directory holding `path`; NotFound if it does not exist.
  Result<Dir*> ParentOf(const std::string& path) {
    auto it = dirs_.find(Split(Normalize(path)).dir);
    if (it == dirs_.end()) return ErrnoStatus(ENOENT, path);
    return &it->second;
  }

  Result<NodePtr> FindFile(const std::string& path) {
    ASSIGN_OR_RETURN(Dir * dir, ParentOf(path));
    auto it = dir->live.find(Split(Normalize(path)).name);
    if (it == dir->live.end()) return ErrnoStatus(ENOENT, path);
    return it->second;
  }

  std::mutex mu_;
  std::map<std::string, Dir> dirs_;  // by normalized path; "" is the root
};

}  // namespace

std::unique_ptr<MemFileSystem> NewMemFileSystem() { return std::make_unique<MemFileSystemImpl>(); }

}  // namespace strata::io
