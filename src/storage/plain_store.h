// PlainDataStore: one file per data id under ROOT/objects/<id[0..2]>/<id>,
// no checksums, no redundancy. The single-directory layout of the first
// release; kept for tests and as the simplest DataStore.
#pragma once

#include <memory>
#include <string>

#include "io/file_system.h"
#include "storage/data_store.h"

namespace strata::storage {

Result<std::unique_ptr<DataStore>> OpenPlainDataStore(io::FileSystem* fs, std::string root);

}  // namespace strata::storage
