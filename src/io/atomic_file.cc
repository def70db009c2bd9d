#include "io/atomic_file.h"

namespace strata::io {

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

Status SyncAndClose(WritableFile* file) {
  Status st = file->Sync();
  Status close = file->Close();  // close(2) releases the fd even after a failed sync
  return st.ok() ? close : st;
}

Status PublishFile(FileSystem* fs, const std::string& temp, const std::string& final_path,
                   bool* renamed) {
  if (renamed != nullptr) *renamed = false;
  RETURN_IF_ERROR(fs->Rename(temp, final_path));
  if (renamed != nullptr) *renamed = true;
  return fs->SyncDir(DirName(final_path));
}

Status WriteFileAtomically(FileSystem* fs, const std::string& final_path, std::string_view bytes) {
  const std::string temp = final_path + ".tmp";
  ASSIGN_OR_RETURN(auto file, fs->NewWritableFile(temp));
  Status st = file->Append(bytes);
  if (st.ok()) {
    st = SyncAndClose(file.get());
  } else {
    file->Close().IgnoreError();
  }
  bool renamed = false;
  if (st.ok()) st = PublishFile(fs, temp, final_path, &renamed);
  if (!st.ok() && !renamed) fs->RemoveFile(temp).IgnoreError();
  return st;
}

}  // namespace strata::io
