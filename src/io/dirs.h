// Directory creation that survives a power cut: a new directory is an entry
// in its parent, durable only once the parent is synced (see mem_fs.cc's
// crash model, which is POSIX's).
#pragma once

#include <string>

#include "io/file_system.h"

namespace strata::io {

// mkdir -p, then SyncDir of the parent of every directory it had to create,
// deepest first, so the whole new chain is durable when it returns.
Status CreateDirsDurably(FileSystem* fs, const std::string& path);

}  // namespace strata::io
