// Publishing a file atomically and durably: the one sequence every writer of
// a named, self-contained file uses (shard files, heal's rebuilt shards, the
// drive format file, tombstones).
//
//   write TEMP -> Sync (data durable) -> Close -> Rename(TEMP, FINAL)
//   -> SyncDir(dir of FINAL) (the name durable)
//
// Until the rename, FINAL keeps its old content (or stays absent); a crash
// before the directory sync may undo the rename (mem_fs models exactly that);
// after it, FINAL has the new bytes. TEMP and FINAL must be in the same
// directory (one SyncDir covers both names).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "io/file_system.h"

namespace strata::io {

// Sync + Close of a file written in full: its bytes are durable (but not yet
// under their final name). Closes even when the sync fails.
Status SyncAndClose(WritableFile* file);

// Rename(temp, final_path) + SyncDir of their directory. *renamed (if given)
// tells whether the rename happened, i.e. whether FINAL now shows the new
// bytes even though the call failed (the directory sync did): the caller
// decides whether to remove it.
Status PublishFile(FileSystem* fs, const std::string& temp, const std::string& final_path,
                   bool* renamed = nullptr);

// The whole sequence for bytes at hand, through `final_path + ".tmp"`. On
// failure the temp file is removed; FINAL is untouched unless the rename
// happened (then it may hold the new bytes, not durably).
Status WriteFileAtomically(FileSystem* fs, const std::string& final_path, std::string_view bytes);

// The directory part of a path ("a/b/c" -> "a/b"; "c" -> "").
std::string DirName(const std::string& path);

}  // namespace strata::io
