// libFuzzer target: what a KMIP key server sends back (kms/kmip_ttlv.h,
// kms/kmip_protocol.h). The input is one response message. Decoding must
// refuse anything malformed without crashing; whatever decodes must encode
// back to the very same bytes (TTLV has one encoding per item, padding
// included), and reading it as the answer to each operation must give a
// payload or an error, never a crash. Seeds: tests/fuzz/kmip_response/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "kms/kmip_protocol.h"
#include "kms/kmip_ttlv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::kms::kmip;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto total = MessageBytes(in);
  if (total.ok()) FUZZ_CHECK(*total >= kHeaderBytes && *total <= kMaxMessageBytes);
  auto item = Decode(in);
  if (!item.ok()) return 0;
  std::string again;
  Encode(*item, &again);
  FUZZ_CHECK(again == in);
  for (Operation op : {Operation::kCreate, Operation::kActivate, Operation::kEncrypt,
                       Operation::kDecrypt}) {
    auto payload = ResponsePayload(*item, op);
    if (!payload.ok()) continue;
    (void)UniqueIdentifierOf(*payload);
    if (auto sealed = EncryptResultOf(*payload); sealed.ok()) FUZZ_CHECK(sealed->tag.size() == 16);
    (void)DecryptResultOf(*payload);
  }
  return 0;
}
