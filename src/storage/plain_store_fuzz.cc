// libFuzzer target: data files of the plain store (storage/plain_store.h,
// docs/formats/data-files.md: the data, a CRC32C per 64 KiB block, a footer)
// on an in-memory FileSystem. input[0]: bit 0 the mode, bits 1-4 how many
// times the payload repeats (files of several blocks), bits 5-7 read sizes.
//   build mode: the payload is written through the store (Create / Append in
//               pieces / Finish), then one fuzz-chosen byte of the file is
//               changed (or none) and the file is read back in pieces: every
//               read either fails or returns exactly the bytes written, so a
//               damaged file is never served.
//   raw mode:   the payload is the file itself, opened as a checksummed file
//               of the size that fits and as a legacy (footer-less) one; reads
//               must stay within the file and never crash.
// Seeds: tests/fuzz/data_file/.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "io/mem_fs.h"
#include "storage/plain_store.h"

using namespace strata;

namespace {

const std::string kId = "00c0ffee00c0ffee00c0ffee00c0ffee";
const std::string kPath = "/d/objects/00/" + kId;

struct Store {
  std::unique_ptr<io::MemFileSystem> fs = io::NewMemFileSystem();
  std::unique_ptr<storage::DataStore> store;
  Store() { store = std::move(storage::OpenPlainDataStore(fs.get(), "/d")).value(); }
};

Store& TheStore() {
  static Store s;
  return s;
}

void WriteFile(io::FileSystem* fs, std::string_view bytes) {
  auto f = std::move(fs->NewWritableFile(kPath)).value();
  FUZZ_CHECK(f->Append(bytes).ok() && f->Close().ok());
}

std::string ReadFile(io::FileSystem* fs) {
  auto f = std::move(fs->NewReadableFile(kPath)).value();
  std::string out(f->Size(), '\0');
  size_t got = 0;
  while (got < out.size()) {
    auto n = f->ReadAt(got, out.data() + got, out.size() - got);
    FUZZ_CHECK(n.ok() && *n > 0);
    got += *n;
  }
  return out;
}

// Reads the whole object in pieces; false if a read failed.
bool ReadAll(storage::DataReader& r, uint64_t size, fuzz::Rng& rng, size_t max_read,
             std::string* out) {
  std::string buf(max_read, '\0');
  uint64_t offset = 0;
  while (offset < size) {
    auto n = r.ReadAt(offset, buf.data(), rng.Size(max_read));
    if (!n.ok()) return false;
    FUZZ_CHECK(*n > 0 && offset + *n <= size);
    out->append(buf.data(), *n);
    offset += *n;
  }
  auto end = r.ReadAt(size, buf.data(), 1);
  FUZZ_CHECK(end.ok() && *end == 0);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  std::string payload;
  const int repeat = 1 + ((control >> 1) & 15);
  for (int i = 0; i < repeat; ++i) payload.append(reinterpret_cast<const char*>(data + 1), size - 1);
  Store& s = TheStore();
  fuzz::Rng rng(control + size);
  // Read sizes up to one of these: around the 64 KiB block size especially.
  static constexpr size_t kMaxReads[] = {1, 100, 4096, 65535, 65536, 65537, 131072, 200000};
  const size_t max_read = kMaxReads[control >> 5];

  if (control & 1) {
    auto w = std::move(s.store->Create(kId, {})).value();
    std::string_view rest = payload;
    while (!rest.empty()) {
      size_t k = std::min(rest.size(), rng.Size(100000));
      FUZZ_CHECK(w->Append(rest.substr(0, k)).ok());
      rest.remove_prefix(k);
    }
    FUZZ_CHECK(w->Finish("").ok());
    std::string file = ReadFile(s.fs.get());
    const bool damage = (size - 1) > 0 && rng.Next() % 4 != 0;
    if (damage) {
      size_t at = rng.Next() % file.size();
      file[at] = static_cast<char>(file[at] ^ (1 + rng.Next() % 255));
      WriteFile(s.fs.get(), file);
    }
    auto r = s.store->Open(kId, payload.size());
    if (r.ok()) {
      std::string got;
      if (ReadAll(**r, payload.size(), rng, max_read, &got)) FUZZ_CHECK(got == payload);
    } else {
      FUZZ_CHECK(damage);
    }
  } else {
    WriteFile(s.fs.get(), payload);
    // The object size a checksummed file of this length would hold.
    uint64_t blocks = (payload.size() + 65535) / 65536;
    const uint64_t checksummed = payload.size() - std::min<uint64_t>(payload.size(), 24 + 4 * blocks);
    for (uint64_t want : {uint64_t{payload.size()}, checksummed}) {
      auto r = s.store->Open(kId, want);
      if (!r.ok()) continue;
      std::string got;
      if (ReadAll(**r, want, rng, max_read, &got)) {
        FUZZ_CHECK(got == std::string_view(payload).substr(0, want));
      }
    }
  }
  (void)s.store->Remove(kId);
  return 0;
}
