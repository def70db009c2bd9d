// libFuzzer target: what a remote S3 endpoint sends strata's remote client
// (remote/s3_replies.h) and the footer of a remote pool's objects
// (remote/remote_store.h). The first byte picks the parser; the rest is the
// document. Parsers must refuse or accept without crashing; a list page that
// is truncated must name a way on; a footer that decodes must encode back to
// the same bytes.
// Seeds: tests/fuzz/remote_replies/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "remote/remote_store.h"
#include "remote/s3_replies.h"

using namespace strata::remote;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view doc(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      if (auto e = ParseError(doc); e && e->code.empty()) std::abort();
      break;
    case 1:
      if (auto id = ParseInitiate(doc); id && id->empty()) std::abort();
      break;
    case 2:
      if (auto p = ParseListV2(doc)) {
        for (const ListedObject& o : p->objects) {
          if (o.key.empty()) std::abort();
        }
      }
      break;
    case 3:
      if (auto p = ParseListUploads(doc); p && p->truncated && p->next_key_marker.empty()) {
        std::abort();
      }
      break;
    case 4:
      if (auto f = DecodeFooter(doc)) {
        if (EncodeFooter(f->header, f->trailer, f->data_size) != doc) std::abort();
      }
      if (doc.size() >= kFooterTailBytes) (void)FooterLength(doc.substr(doc.size() - kFooterTailBytes));
      break;
  }
  return 0;
}
