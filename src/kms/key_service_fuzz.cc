// libFuzzer target: the key service's wrapped data keys (kms/key_service.h).
// input[0] picks the context length; the rest splits into a context and a
// "wrapped key" blob. Decrypt must refuse anything it did not make — no
// crash, no key returned — and must still open what GenerateDataKey made
// (with the blob's tail bytes flipped by the input it must not).
// Genuine blobs are made under the context "fixture" only, and the input's
// blob is opened under "x" + its context, which never equals it: libFuzzer
// can learn genuine blobs from the comparisons it watches (the data-key
// cache's lookups) and replay them, but never under their own context.
// Seeds: tests/fuzz/kms_wrapped/.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "kms/key_service.h"
#include "meta/kv_store.h"

namespace {

struct Fixture {
  std::unique_ptr<strata::meta::KvStore> kv = strata::meta::NewMemStore();
  std::unique_ptr<strata::kms::KeyService> service;
  std::string key_id;
  Fixture() {
    auto s = strata::kms::KeyService::Open(kv.get(), std::string(32, '\x5a'), "us-east-1",
                                           "123456789012");
    FUZZ_CHECK(s.ok());
    service = std::move(s).value();
    auto k = service->CreateKey("alias/fuzz", "");
    FUZZ_CHECK(k.ok());
    key_id = k->id;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture f;
  if (size < 1) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t context_len = std::min<size_t>(data[0], rest.size());
  const std::string_view context = rest.substr(0, context_len);
  const std::string_view blob = rest.substr(context_len);

  const std::string foreign_context = "x" + std::string(context);
  auto opened = f.service->Decrypt(blob, foreign_context);
  FUZZ_CHECK(!opened.ok());  // the fuzzer cannot forge a sealed data key
  (void)strata::kms::KeyService::KeyIdOf(blob);

  constexpr std::string_view kContext = "fixture";
  auto dk = f.service->GenerateDataKey(f.key_id, kContext);
  FUZZ_CHECK(dk.ok());
  auto back = f.service->Decrypt(dk->wrapped, kContext);
  FUZZ_CHECK(back.ok() && *back == dk->plaintext);
  FUZZ_CHECK(!f.service->Decrypt(dk->wrapped, foreign_context).ok());  // bound to its context
  if (!blob.empty()) {  // the genuine blob altered by the input: refused
    std::string altered = dk->wrapped;
    for (size_t i = 0; i < blob.size() && i < altered.size(); ++i) {
      altered[altered.size() - 1 - i] ^= blob[i];
    }
    if (altered != dk->wrapped) FUZZ_CHECK(!f.service->Decrypt(altered, kContext).ok());
  }
  return 0;
}
