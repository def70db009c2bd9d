// In-memory FileSystem twin for tests. Keeps, per file, the bytes written and
// the prefix that was synced; per directory, which entries were synced.
// SimulateCrash() discards everything a power loss could lose.
#pragma once

#include "io/file_system.h"

namespace strata::io {

class MemFileSystem : public FileSystem {
 public:
  // Drops unsynced file contents and directory entries created/renamed/removed
  // since the last SyncDir of their directory.
  virtual void SimulateCrash() = 0;
};

}  // namespace strata::io
