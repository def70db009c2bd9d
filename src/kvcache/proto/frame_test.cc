#include "kvcache/proto/frame.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

namespace strata::kvcache::proto {
namespace {

std::string K(char c, size_t n = 16) { return std::string(n, c); }

NamespaceDescriptor SampleDescriptor() {
  NamespaceDescriptor d;
  d.model_id = "meta-llama/Llama-3-8B";
  d.weights_fingerprint = "sha256:abcd";
  d.kv_dtype = "fp16";
  d.kv_layout = "NHD";
  d.tokens_per_block = 16;
  d.block_bytes = 2 << 20;
  d.tp_size = 2;
  d.tp_rank = 1;
  d.pp_size = 1;
  d.pp_rank = 0;
  d.hash_algorithm = "sha256_cbor";
  d.hash_seed = 42;
  d.tenant_salt = "tenant-a";
  d.quota_bytes = 1 << 30;
  d.ttl_s = 3600;
  return d;
}

// Every strict prefix of a valid encoding must be refused.
void ExpectAllPrefixesRefused(const std::string& full,
                              const std::function<bool(std::string_view)>& decode) {
  ASSERT_TRUE(decode(full));
  for (size_t n = 0; n < full.size(); ++n) {
    EXPECT_FALSE(decode(std::string_view(full).substr(0, n))) << "prefix " << n;
  }
  ASSERT_TRUE(decode(full));  // leaves the full decoding in the caller's output
}

TEST(KvFrame, HeaderRoundTrip) {
  FrameHeader h;
  h.op = Op::kGet;
  h.status = WireStatus::kExists;
  h.flags = 0;
  h.request_id = 0x0102030405060708ull;
  h.payload_len = kMaxPayloadBytes;
  std::string buf;
  AppendFrameHeader(h, &buf);
  ASSERT_EQ(buf.size(), kFrameHeaderBytes);
  EXPECT_EQ(buf.substr(0, 4), "SKV1");
  EXPECT_EQ(buf[4], 2);
  EXPECT_EQ(buf[5], 0x12);
  EXPECT_EQ(buf[8], 0x08);  // little-endian
  FrameHeader d;
  ASSERT_EQ(DecodeFrameHeader(buf, &d), HeaderCheck::kOk);
  EXPECT_EQ(d.op, Op::kGet);
  EXPECT_EQ(d.status, WireStatus::kExists);
  EXPECT_EQ(d.request_id, h.request_id);
  EXPECT_EQ(d.payload_len, h.payload_len);
  for (size_t n = 0; n < kFrameHeaderBytes; ++n) {
    EXPECT_EQ(DecodeFrameHeader(buf.substr(0, n), &d), HeaderCheck::kTruncated);
  }
}

TEST(KvFrame, HeaderBadMagicVersionSize) {
  FrameHeader h;
  h.request_id = 77;
  std::string buf;
  AppendFrameHeader(h, &buf);
  FrameHeader d;
  for (int i = 0; i < 4; ++i) {
    std::string bad = buf;
    bad[i] ^= 0x20;
    EXPECT_EQ(DecodeFrameHeader(bad, &d), HeaderCheck::kBadMagic);
  }
  std::string v1 = buf;  // protocol v1 is refused (answered INVALID in its own version)
  v1[4] = 1;
  EXPECT_EQ(DecodeFrameHeader(v1, &d), HeaderCheck::kBadVersion);
  EXPECT_EQ(d.request_id, 77u);  // still usable for the INVALID reply
  EXPECT_EQ(d.version, 1);
  h.payload_len = kMaxPayloadBytes + 1;
  std::string big;
  AppendFrameHeader(h, &big);
  EXPECT_EQ(DecodeFrameHeader(big, &d), HeaderCheck::kTooLarge);
  EXPECT_EQ(d.request_id, 77u);
}

TEST(KvFrame, KnownOps) {
  for (Op op : {Op::kHello, Op::kAuth, Op::kPing, Op::kOpenNamespace, Op::kLookup, Op::kGet,
                Op::kPut, Op::kDelete, Op::kStats, Op::kPin, Op::kUnpin, Op::kLookupEach,
                Op::kEvents}) {
    EXPECT_TRUE(IsKnownOp(static_cast<uint8_t>(op)));
    EXPECT_NE(OpName(op), "UNKNOWN");
  }
  for (int b : {0x00, 0x04, 0x0f, 0x1a, 0xff}) EXPECT_FALSE(IsKnownOp(static_cast<uint8_t>(b)));
  // The opcode table: a byte is known exactly when it has a name.
  int known = 0;
  for (int b = 0; b < 256; ++b) {
    bool named = OpName(static_cast<Op>(b)) != "UNKNOWN";
    EXPECT_EQ(IsKnownOp(static_cast<uint8_t>(b)), named) << b;
    known += named;
  }
  EXPECT_EQ(known, 13);
  EXPECT_EQ(OpName(Op::kOpenNamespace), "OPEN_NAMESPACE");
}

TEST(KvFrame, WireStatusNames) {
  EXPECT_EQ(kMaxWireStatus, 9);
  EXPECT_EQ(WireStatusName(WireStatus::kBadChecksum), "BAD_CHECKSUM");
  EXPECT_EQ(WireStatusName(WireStatus::kOk), "OK");
  EXPECT_EQ(WireStatusName(WireStatus::kNotFound), "NOT_FOUND");
  EXPECT_EQ(WireStatusName(WireStatus::kInternal), "INTERNAL");
  for (int b = 0; b <= kMaxWireStatus; ++b) {
    EXPECT_NE(WireStatusName(static_cast<WireStatus>(b)), "UNKNOWN") << b;
  }
  EXPECT_EQ(WireStatusName(static_cast<WireStatus>(kMaxWireStatus + 1)), "UNKNOWN");
}

TEST(KvFrame, ReaderWriterPrimitives) {
  std::string buf;
  Writer w(&buf);
  w.U8(0xab);
  w.U16(0x1234);
  w.U32(0xdeadbeef);
  w.U64(0x1122334455667788ull);
  w.Str("hello");
  w.Key(K('k'));
  w.Key("");
  Reader r(buf);
  uint8_t a;
  uint16_t b;
  uint32_t c;
  uint64_t d;
  std::string_view s, k, e;
  ASSERT_TRUE(r.U8(&a) && r.U16(&b) && r.U32(&c) && r.U64(&d) && r.Str(&s) && r.Key(&k) &&
              r.KeyOrEmpty(&e));
  EXPECT_EQ(a, 0xab);
  EXPECT_EQ(b, 0x1234);
  EXPECT_EQ(c, 0xdeadbeefu);
  EXPECT_EQ(d, 0x1122334455667788ull);
  EXPECT_EQ(s, "hello");
  EXPECT_EQ(k, K('k'));
  EXPECT_TRUE(e.empty());
  EXPECT_TRUE(r.empty());
  EXPECT_FALSE(r.U8(&a));
  // A failed read consumes nothing.
  Reader r2(std::string_view(buf).substr(0, 1));
  EXPECT_FALSE(r2.U16(&b));
  EXPECT_TRUE(r2.U8(&a));
  EXPECT_EQ(a, 0xab);
}

TEST(KvFrame, KeyLengthBounds) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{24}, size_t{32}, size_t{33},
                   size_t{255}}) {
    std::string buf(1, static_cast<char>(n));
    buf += std::string(n, 'x');
    Reader r(buf);
    std::string_view k;
    bool valid = n >= kMinKeyBytes && n <= kMaxKeyBytes;
    EXPECT_EQ(r.Key(&k), valid) << n;
    Reader r2(buf);
    EXPECT_EQ(r2.KeyOrEmpty(&k), valid || n == 0) << n;
    EXPECT_EQ(ValidKey(std::string(n, 'x')), valid);
  }
  // A LOOKUP carrying a 15-byte key is malformed.
  std::string payload;
  Writer w(&payload);
  w.U64(1);
  w.U32(1);
  w.U8(15);
  w.Bytes(std::string(15, 'x'));
  KeysRequest req;
  EXPECT_FALSE(DecodeKeysRequest(payload, &req));
}

TEST(KvFrame, HelloAndMac) {
  std::string p = EncodeHelloRequest("AKIDEXAMPLE");
  std::string_view ak;
  ExpectAllPrefixesRefused(p, [&](std::string_view in) { return DecodeHelloRequest(in, &ak); });
  ASSERT_TRUE(DecodeHelloRequest(p, &ak));
  EXPECT_EQ(ak, "AKIDEXAMPLE");
  EXPECT_FALSE(DecodeHelloRequest(p + "x", &ak));  // trailing bytes
  std::string nonce(kNonceBytes, 'n');
  std::string mac = ComputeAuthMac("secret", nonce, "AKIDEXAMPLE");
  EXPECT_EQ(mac.size(), kMacBytes);
  EXPECT_EQ(mac, ComputeAuthMac("secret", nonce, "AKIDEXAMPLE"));
  EXPECT_NE(mac, ComputeAuthMac("secret2", nonce, "AKIDEXAMPLE"));
  EXPECT_NE(mac, ComputeAuthMac("secret", std::string(kNonceBytes, 'm'), "AKIDEXAMPLE"));
  Sha256Digest expect = HmacSha256("secret", std::string("strata-kv-v1") + nonce + "AKIDEXAMPLE");
  EXPECT_EQ(0, std::memcmp(mac.data(), expect.data(), 32));
}

TEST(KvFrame, DescriptorRoundTripAndDigest) {
  NamespaceDescriptor d = SampleDescriptor();
  std::string p;
  ASSERT_TRUE(EncodeNamespaceDescriptor(d, &p));
  NamespaceDescriptor back;
  ExpectAllPrefixesRefused(
      p, [&](std::string_view in) { return DecodeNamespaceDescriptor(in, &back); });
  ASSERT_TRUE(DecodeNamespaceDescriptor(p, &back));
  EXPECT_EQ(back.model_id, d.model_id);
  EXPECT_EQ(back.tenant_salt, d.tenant_salt);
  EXPECT_EQ(back.block_bytes, d.block_bytes);
  EXPECT_EQ(back.quota_bytes, d.quota_bytes);
  EXPECT_EQ(back.ttl_s, d.ttl_s);
  EXPECT_EQ(NamespaceDigest(back), NamespaceDigest(d));
  EXPECT_FALSE(DecodeNamespaceDescriptor(p + "x", &back));

  // Quota and TTL are not identity; every other field is.
  Sha256Digest base = NamespaceDigest(d);
  NamespaceDescriptor q = d;
  q.quota_bytes = 5;
  q.ttl_s = 1;
  EXPECT_EQ(NamespaceDigest(q), base);
  std::vector<std::function<void(NamespaceDescriptor&)>> changes = {
      [](auto& x) { x.model_id += "x"; },
      [](auto& x) { x.weights_fingerprint += "x"; },
      [](auto& x) { x.kv_dtype = "bf16"; },
      [](auto& x) { x.kv_layout = "HND"; },
      [](auto& x) { x.tokens_per_block = 256; },
      [](auto& x) { x.block_bytes += 1; },
      [](auto& x) { x.tp_size = 4; },
      [](auto& x) { x.tp_rank = 0; },
      [](auto& x) { x.pp_size = 2; },
      [](auto& x) { x.pp_rank = 1; },
      [](auto& x) { x.hash_algorithm = "xxh3"; },
      [](auto& x) { x.hash_seed = 43; },
      [](auto& x) { x.tenant_salt = "tenant-b"; },
      // Moving a byte between adjacent strings must change the digest (length-prefixed).
      [](auto& x) {
        x.model_id += "s";
        x.weights_fingerprint = x.weights_fingerprint.substr(1);
      },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    NamespaceDescriptor c = d;
    changes[i](c);
    EXPECT_NE(NamespaceDigest(c), base) << "change " << i;
  }
  std::string hex = DigestHex(base);
  EXPECT_EQ(hex.size(), 64u);
  EXPECT_EQ(NamespaceBucket(base), "kv-" + hex.substr(0, 16));
  EXPECT_EQ(BlockObjectKey(base, std::string(16, '\x01')),
            hex + "/" + "01010101010101010101010101010101");

  NamespaceDescriptor big = d;
  big.model_id.assign(kMaxStrBytes + 1, 'm');
  std::string out;
  EXPECT_FALSE(EncodeNamespaceDescriptor(big, &out));
}

TEST(KvFrame, OpenNamespaceResponse) {
  OpenNamespaceResponse r;
  r.handle = 9;
  r.digest = NamespaceDigest(SampleDescriptor());
  r.bucket = NamespaceBucket(r.digest);
  std::string p = EncodeOpenNamespaceResponse(r);
  OpenNamespaceResponse back;
  ExpectAllPrefixesRefused(
      p, [&](std::string_view in) { return DecodeOpenNamespaceResponse(in, &back); });
  EXPECT_EQ(back.handle, 9u);
  EXPECT_EQ(back.digest, r.digest);
  EXPECT_EQ(back.bucket, r.bucket);
}

TEST(KvFrame, KeysRequestRoundTrip) {
  std::string a = K('a'), b = K('b', 32), c = K('c', 20);
  std::vector<std::string_view> keys = {a, b, c};
  std::string p = EncodeKeysRequest(7, keys);
  KeysRequest req;
  ExpectAllPrefixesRefused(p, [&](std::string_view in) { return DecodeKeysRequest(in, &req); });
  EXPECT_EQ(req.ns, 7u);
  ASSERT_EQ(req.keys.size(), 3u);
  EXPECT_EQ(req.keys[1], b);
  EXPECT_FALSE(DecodeKeysRequest(p + "z", &req));
  // Empty batch is valid.
  EXPECT_TRUE(DecodeKeysRequest(EncodeKeysRequest(7, {}), &req));
  EXPECT_TRUE(req.keys.empty());
  // A huge count with no keys behind it is refused without allocating.
  std::string huge;
  Writer w(&huge);
  w.U64(1);
  w.U32(0xffffffffu);
  EXPECT_FALSE(DecodeKeysRequest(huge, &req));

  uint32_t prefix = 0;
  std::string lr = EncodeLookupResponse(123);
  ExpectAllPrefixesRefused(lr,
                           [&](std::string_view in) { return DecodeLookupResponse(in, &prefix); });
  EXPECT_EQ(prefix, 123u);
}

TEST(KvFrame, PinRequestRoundTrip) {
  std::string a = K('a');
  std::vector<std::string_view> keys = {a};
  std::string p = EncodePinRequest(3, 5000, keys);
  PinRequest req;
  ExpectAllPrefixesRefused(p, [&](std::string_view in) { return DecodePinRequest(in, &req); });
  EXPECT_EQ(req.ns, 3u);
  EXPECT_EQ(req.ttl_ms, 5000u);
  ASSERT_EQ(req.keys.size(), 1u);
  EXPECT_EQ(req.keys[0], a);
}

TEST(KvFrame, StatusList) {
  std::vector<WireStatus> st = {WireStatus::kOk, WireStatus::kExists, WireStatus::kTooLarge};
  std::string p = EncodeStatusList(st);
  std::vector<WireStatus> back;
  ASSERT_TRUE(DecodeStatusList(p, 3, &back));
  EXPECT_EQ(back, st);
  EXPECT_FALSE(DecodeStatusList(p, 2, &back));
  EXPECT_FALSE(DecodeStatusList(p, 4, &back));
  p[1] = 10;
  EXPECT_FALSE(DecodeStatusList(p, 3, &back));
}

TEST(KvFrame, GetRoundTrip) {
  std::string a = K('a'), b = K('b', 17);
  std::vector<GetItem> items = {{a, 0, 0}, {b, 100, 4096}};
  std::string p = EncodeGetRequest(11, items);
  GetRequest req;
  ExpectAllPrefixesRefused(p, [&](std::string_view in) { return DecodeGetRequest(in, &req); });
  EXPECT_EQ(req.ns, 11u);
  ASSERT_EQ(req.items.size(), 2u);
  EXPECT_EQ(req.items[1].key, b);
  EXPECT_EQ(req.items[1].offset, 100u);
  EXPECT_EQ(req.items[1].length, 4096u);

  std::vector<GetResult> res = {{WireStatus::kOk, 5}, {WireStatus::kNotFound, 0}};
  std::string head;
  AppendGetResponseHead(res, &head);
  ASSERT_EQ(head.size(), 2 * kGetResultBytes);
  std::string reply = head + "hello";
  std::vector<GetResult> back;
  ASSERT_TRUE(DecodeGetResponseHead(reply, 2, &back));
  EXPECT_EQ(back[0].length, 5u);
  EXPECT_EQ(back[1].status, WireStatus::kNotFound);
  for (size_t n = 0; n < head.size(); ++n) {
    EXPECT_FALSE(DecodeGetResponseHead(head.substr(0, n), 2, &back));
  }
  std::vector<GetResult> bad = {{WireStatus::kNotFound, 3}};
  std::string bad_head;
  AppendGetResponseHead(bad, &bad_head);
  EXPECT_FALSE(DecodeGetResponseHead(bad_head, 1, &back));
}

TEST(KvFrame, PutHeadRoundTripAndScan) {
  std::string a = K('a'), b = K('b', 32);
  std::vector<PutItem> items = {{a, "", 3}, {b, a, 2}};
  std::string head = EncodePutRequestHead(5, items);
  std::string payload = head + "abcde";
  PutRequestHead req;
  ASSERT_TRUE(DecodePutRequestHead(payload, &req));
  EXPECT_EQ(req.ns, 5u);
  EXPECT_EQ(req.head_bytes, head.size());
  ASSERT_EQ(req.items.size(), 2u);
  EXPECT_TRUE(req.items[0].parent.empty());
  EXPECT_EQ(req.items[1].parent, a);
  uint64_t total = 0;
  ASSERT_TRUE(PutBlockBytes(req.items, &total));
  EXPECT_EQ(total, 5u);
  for (size_t n = 0; n < head.size(); ++n) {
    EXPECT_FALSE(DecodePutRequestHead(head.substr(0, n), &req)) << n;
  }
  // The scanner asks for more until the head is complete, never past it.
  size_t have = 0, need = 0;
  int rounds = 0;
  PutHeadScanState state;
  while (true) {
    HeadScan s = ScanPutRequestHead(std::string_view(payload).substr(0, have), &need, &state);
    if (s == HeadScan::kComplete) break;
    ASSERT_EQ(s, HeadScan::kNeedMore);
    ASSERT_GT(need, have);
    ASSERT_LE(need, head.size());
    have = need;
    ASSERT_LT(++rounds, 100);
  }
  EXPECT_EQ(need, head.size());
  EXPECT_EQ(state.items_done, 2u);
  for (size_t n = 0; n < head.size(); ++n) {
    EXPECT_EQ(ScanPutRequestHead(head.substr(0, n), &need), HeadScan::kNeedMore) << n;
    EXPECT_GT(need, n);
  }
  std::string bad = head;
  bad[12] = 15;  // first key length
  EXPECT_EQ(ScanPutRequestHead(bad, &need), HeadScan::kMalformed);
  EXPECT_FALSE(DecodePutRequestHead(bad, &req));

  PutItem o1{a, "", ~0ull}, o2{a, "", 1};
  std::vector<PutItem> over = {o1, o2};
  EXPECT_FALSE(PutBlockBytes(over, &total));
}

TEST(KvFrame, Stats) {
  NamespaceStats s{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::string p = EncodeStatsResponse(s);
  EXPECT_EQ(p.size(), 80u);
  NamespaceStats back;
  ExpectAllPrefixesRefused(p, [&](std::string_view in) { return DecodeStatsResponse(in, &back); });
  EXPECT_EQ(back.bytes_served, 5u);
  EXPECT_EQ(back.lookups, 8u);
  EXPECT_EQ(back.lookup_keys, 9u);
  EXPECT_EQ(back.lookup_ns, 10u);
  uint64_t ns = 0;
  std::string nr = EncodeNamespaceRequest(44);
  ExpectAllPrefixesRefused(nr,
                           [&](std::string_view in) { return DecodeNamespaceRequest(in, &ns); });
  EXPECT_EQ(ns, 44u);
}

// ---- protocol v2 ----------------------------------------------------------

TEST(KvFrameV2, KeysUpTo64Bytes) {
  EXPECT_TRUE(ValidKey(K('k', 36)));  // vLLM's OffloadKey: SHA-256 + a 4-byte group index
  EXPECT_TRUE(ValidKey(K('k', 64)));
  EXPECT_FALSE(ValidKey(K('k', 65)));
  std::string a = K('a', 64), b = K('b', 36);
  std::vector<std::string_view> keys = {a, b};
  KeysRequest req;
  std::string payload = EncodeKeysRequest(1, keys);
  ASSERT_TRUE(DecodeKeysRequest(payload, &req));  // views into payload
  EXPECT_EQ(req.keys[0], a);
  std::string too_long = EncodeKeysRequest(1, keys);
  too_long[12] = 65;  // the first key's length byte
  EXPECT_FALSE(DecodeKeysRequest(too_long, &req));
}

TEST(KvFrameV2, ManifestTravelsWithTheDescriptorButIsNotIdentity) {
  NamespaceDescriptor d = SampleDescriptor();
  d.manifest = R"({"engine":"vllm","block_size":16})";
  std::string p;
  ASSERT_TRUE(EncodeNamespaceDescriptor(d, &p));
  NamespaceDescriptor back;
  ExpectAllPrefixesRefused(p,
                           [&](std::string_view in) { return DecodeNamespaceDescriptor(in, &back); });
  EXPECT_EQ(back.manifest, d.manifest);
  NamespaceDescriptor other = d;
  other.manifest = "something else";
  EXPECT_EQ(NamespaceDigest(d), NamespaceDigest(other));
  d.manifest.assign(kMaxManifestBytes + 1, 'x');
  EXPECT_FALSE(EncodeNamespaceDescriptor(d, &p));

  OpenNamespaceResponse r;
  r.handle = 2;
  r.bucket = "kv-0123456789abcdef";
  r.manifest = "stored";
  r.manifest_matches = false;
  OpenNamespaceResponse rb;
  std::string rp = EncodeOpenNamespaceResponse(r);
  ExpectAllPrefixesRefused(rp,
                           [&](std::string_view in) { return DecodeOpenNamespaceResponse(in, &rb); });
  EXPECT_EQ(rb.manifest, "stored");
  EXPECT_FALSE(rb.manifest_matches);
}

TEST(KvFrameV2, LookupEachBitmap) {
  std::vector<bool> present = {true, false, false, true, true, false, false, false, true, false};
  std::string p = EncodeLookupEachResponse(present);
  EXPECT_EQ(p.size(), 4u + 2u);
  EXPECT_EQ(static_cast<unsigned char>(p[4]), 0x19);  // bits 0, 3, 4
  EXPECT_EQ(static_cast<unsigned char>(p[5]), 0x01);  // bit 8
  std::vector<bool> back;
  ExpectAllPrefixesRefused(
      p, [&](std::string_view in) { return DecodeLookupEachResponse(in, present.size(), &back); });
  EXPECT_EQ(back, present);
  EXPECT_FALSE(DecodeLookupEachResponse(p, present.size() + 1, &back));
  std::string stray = p;
  stray[5] |= 0x04;  // a bit past the last key
  EXPECT_FALSE(DecodeLookupEachResponse(stray, present.size(), &back));
}

TEST(KvFrameV2, GetHeadCarriesCrcAndMetadata) {
  std::vector<GetResult> res = {{WireStatus::kOk, 5, kGetCrcValid, 0xdeadbeef, 3},
                                {WireStatus::kNotFound, 0}};
  std::string head;
  AppendGetResponseHead(res, &head);
  ASSERT_EQ(head.size(), 2 * kGetResultBytes);
  std::vector<GetResult> back;
  ASSERT_TRUE(DecodeGetResponseHead(head, 2, &back));
  EXPECT_EQ(back[0].crc32c, 0xdeadbeefu);
  EXPECT_EQ(back[0].flags, kGetCrcValid);
  EXPECT_EQ(back[0].meta_len, 3u);
  for (GetResult bad : {GetResult{WireStatus::kOk, 1, 2, 0, 0},  // unknown flag
                        GetResult{WireStatus::kOk, 1, 0, 0, kMaxBlockMetaBytes + 1},
                        GetResult{WireStatus::kNotFound, 0, 0, 7, 0}}) {  // a miss with a CRC
    std::string h;
    std::vector<GetResult> one = {bad};
    AppendGetResponseHead(one, &h);
    EXPECT_FALSE(DecodeGetResponseHead(h, 1, &back));
  }
}

TEST(KvFrameV2, PutHeadCarriesCrcAndMetadata) {
  std::string a = K('a', 36), b = K('b', 64);
  std::string meta(kMaxBlockMetaBytes, 'm');
  std::vector<PutItem> items = {{a, "", 3, 0x11223344, "shape=1x2"}, {b, a, 2, 7, meta}};
  std::string head = EncodePutRequestHead(5, items);
  PutRequestHead req;
  std::string payload = head + "abcde";
  ASSERT_TRUE(DecodePutRequestHead(payload, &req));  // views into payload
  EXPECT_EQ(req.items[0].crc32c, 0x11223344u);
  EXPECT_EQ(req.items[0].meta, "shape=1x2");
  EXPECT_EQ(req.items[1].meta, meta);
  size_t need = 0;
  EXPECT_EQ(ScanPutRequestHead(head, &need), HeadScan::kComplete);
  EXPECT_EQ(need, head.size());
  for (size_t n = 0; n < head.size(); ++n) {
    EXPECT_EQ(ScanPutRequestHead(head.substr(0, n), &need), HeadScan::kNeedMore) << n;
  }
  // A metadata length over the limit is malformed for the scanner and the decoder.
  std::vector<PutItem> one = {{a, "", 3, 0, "x"}};
  std::string bad = EncodePutRequestHead(5, one);
  size_t meta_len_at = 12 + 1 + a.size() + 1 + 8 + 4;
  bad[meta_len_at] = static_cast<char>(0x01);
  bad[meta_len_at + 1] = static_cast<char>(0x04);  // 1025
  EXPECT_EQ(ScanPutRequestHead(bad, &need), HeadScan::kMalformed);
  EXPECT_FALSE(DecodePutRequestHead(bad, &req));
}

TEST(KvFrameV2, EventsRoundTrip) {
  EventsRequest rq{3, 100, 50};
  EventsRequest rqb;
  std::string p = EncodeEventsRequest(rq);
  ExpectAllPrefixesRefused(p, [&](std::string_view in) { return DecodeEventsRequest(in, &rqb); });
  EXPECT_EQ(rqb.since, 100u);
  EventsResponse r;
  r.next = 102;
  r.lost = 1;
  r.events.push_back({EventKind::kStored, K('a', 36), K('p', 36)});
  r.events.push_back({EventKind::kRemoved, K('b', 32), ""});
  std::string rp = EncodeEventsResponse(r);
  EventsResponse back;
  ExpectAllPrefixesRefused(rp, [&](std::string_view in) { return DecodeEventsResponse(in, &back); });
  ASSERT_EQ(back.events.size(), 2u);
  EXPECT_EQ(back.events[0].parent, K('p', 36));
  EXPECT_EQ(back.events[1].kind, EventKind::kRemoved);
  EXPECT_EQ(back.next, 102u);
  std::string bad = rp;
  bad[20] = 3;  // unknown kind
  EXPECT_FALSE(DecodeEventsResponse(bad, &back));
}

}  // namespace
}  // namespace strata::kvcache::proto
