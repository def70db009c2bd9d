// Helpers shared by the storage tests (header-only, tests only).
#pragma once

#include <string>

#include "storage/data_store.h"

namespace strata::storage::testing {

// Opens `id` (expecting `size` bytes) and reads all of it.
inline Result<std::string> ReadAll(DataStore* store, const std::string& id, size_t size) {
  ASSIGN_OR_RETURN(auto r, store->Open(id, size));
  std::string out(size, '\0');
  for (size_t off = 0; off < size;) {
    ASSIGN_OR_RETURN(size_t n, r->ReadAt(off, out.data() + off, size - off));
    if (n == 0) return Internal("short read at " + std::to_string(off));
    off += n;
  }
  return out;
}

}  // namespace strata::storage::testing
