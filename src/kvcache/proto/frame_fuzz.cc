// libFuzzer target: every decoder of the KV frame codec over arbitrary bytes.
// The first byte picks the decoder; decoders must never read out of bounds,
// and whatever decodes must re-encode to the same bytes.
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kvcache/proto/frame.h"

using namespace strata::kvcache::proto;

namespace {

void Check(bool cond) {
  if (!cond) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (selector % 14) {
    case 0: {
      FrameHeader h;
      if (DecodeFrameHeader(in, &h) == HeaderCheck::kOk) {
        std::string out;
        AppendFrameHeader(h, &out);
        Check(out == in.substr(0, kFrameHeaderBytes));
      }
      break;
    }
    case 1: {
      std::string_view ak;
      if (DecodeHelloRequest(in, &ak)) Check(EncodeHelloRequest(ak) == in);
      break;
    }
    case 2: {
      NamespaceDescriptor d;
      if (DecodeNamespaceDescriptor(in, &d)) {
        std::string out;
        Check(EncodeNamespaceDescriptor(d, &out) && out == in);
        Check(in.substr(0, CanonicalNamespaceIdentity(d).size()) == CanonicalNamespaceIdentity(d));
        (void)NamespaceBucket(NamespaceDigest(d));
      }
      break;
    }
    case 3: {
      OpenNamespaceResponse r;
      if (DecodeOpenNamespaceResponse(in, &r)) Check(EncodeOpenNamespaceResponse(r) == in);
      break;
    }
    case 4: {
      KeysRequest r;
      if (DecodeKeysRequest(in, &r)) Check(EncodeKeysRequest(r.ns, r.keys) == in);
      break;
    }
    case 5: {
      PinRequest r;
      if (DecodePinRequest(in, &r)) Check(EncodePinRequest(r.ns, r.ttl_ms, r.keys) == in);
      break;
    }
    case 6: {
      GetRequest r;
      if (DecodeGetRequest(in, &r)) Check(EncodeGetRequest(r.ns, r.items) == in);
      break;
    }
    case 7: {
      PutRequestHead r;
      size_t need = 0;
      HeadScan scan = ScanPutRequestHead(in, &need);
      bool ok = DecodePutRequestHead(in, &r);
      // The scanner and the decoder agree on where the head ends.
      Check(ok == (scan == HeadScan::kComplete));
      if (ok) {
        Check(need == r.head_bytes);
        Check(EncodePutRequestHead(r.ns, r.items) == in.substr(0, r.head_bytes));
        uint64_t total = 0;
        (void)PutBlockBytes(r.items, &total);
      } else if (scan == HeadScan::kNeedMore) {
        Check(need > in.size());
      }
      // Resumed over growing prefixes, the scanner reaches the same verdict.
      PutHeadScanState st;
      size_t have = 0, need2 = 0;
      HeadScan s2;
      while ((s2 = ScanPutRequestHead(in.substr(0, have), &need2, &st)) == HeadScan::kNeedMore &&
             need2 <= in.size()) {
        Check(need2 > have);
        have = need2;
      }
      Check(s2 == scan);
      if (s2 != HeadScan::kMalformed) Check(need2 == need);
      break;
    }
    case 8: {
      if (in.empty()) break;
      std::vector<GetResult> res;
      size_t n = static_cast<uint8_t>(in[0]);
      if (DecodeGetResponseHead(in.substr(1), n, &res)) {
        std::string out;
        AppendGetResponseHead(res, &out);
        Check(out == in.substr(1, n * kGetResultBytes));
      }
      break;
    }
    case 9: {
      std::vector<WireStatus> st;
      if (DecodeStatusList(in, in.size(), &st)) Check(EncodeStatusList(st) == in);
      break;
    }
    case 10: {
      NamespaceStats s;
      if (DecodeStatsResponse(in, &s)) Check(EncodeStatsResponse(s) == in);
      break;
    }
    case 11: {
      uint32_t p = 0;
      uint64_t ns = 0;
      if (DecodeLookupResponse(in, &p)) Check(EncodeLookupResponse(p) == in);
      if (DecodeNamespaceRequest(in, &ns)) Check(EncodeNamespaceRequest(ns) == in);
      break;
    }
    case 12: {  // LOOKUP_EACH reply for a request of in[0..1] keys
      if (in.size() < 2) break;
      size_t n = static_cast<uint8_t>(in[0]) | size_t{static_cast<uint8_t>(in[1])} << 8;
      std::vector<bool> present;
      if (DecodeLookupEachResponse(in.substr(2), n, &present)) {
        Check(present.size() == n && EncodeLookupEachResponse(present) == in.substr(2));
      }
      break;
    }
    case 13: {
      EventsRequest rq;
      if (DecodeEventsRequest(in, &rq)) Check(EncodeEventsRequest(rq) == in);
      EventsResponse r;
      if (DecodeEventsResponse(in, &r)) Check(EncodeEventsResponse(r) == in);
      break;
    }
  }
  return 0;
}
