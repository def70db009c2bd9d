// PlainDataStore: one file per data id under ROOT/objects/<id[0..2]>/<id>,
// the single-directory layout of `strata server --data DIR`: no redundancy,
// but a CRC32C per 64 KiB block (footer format in docs/formats/data-files.md)
// checked on every read, so bitrot fails a read (Corruption) instead of being
// served. Files written before the footer existed are read unverified.
#pragma once

#include <memory>
#include <string>

#include "io/file_system.h"
#include "storage/data_store.h"

namespace strata::storage {

Result<std::unique_ptr<DataStore>> OpenPlainDataStore(io::FileSystem* fs, std::string root);

}  // namespace strata::storage
