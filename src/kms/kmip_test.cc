// The KMIP codec against the spec's own encodings, the request and response
// shapes, and the key service's external keys over an in-memory key server.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <map>
#include <string>

#include "common/encoding.h"
#include "common/hash.h"
#include "kms/key_service.h"
#include "kms/kmip_protocol.h"
#include "kms/kmip_ttlv.h"
#include "meta/kv_store.h"

namespace strata::kms {
namespace {

using kmip::Item;

std::string Hex(const std::string& bytes) { return HexEncode(bytes); }
std::string Bytes(std::string_view hex) { return *HexDecode(std::string(hex)); }

std::string Encoded(const Item& item) {
  std::string out;
  kmip::Encode(item, &out);
  return out;
}

// KMIP 1.4 spec, 9.1.2 "Examples".
TEST(KmipTtlvTest, EncodesAsTheSpecsExamples) {
  EXPECT_EQ(Hex(Encoded(kmip::Integer(0x420020, 8))), "42002002000000040000000800000000");
  EXPECT_EQ(Hex(Encoded(kmip::Enumeration(0x420020, 255))), "420020050000000400000" "0ff00000000");
  EXPECT_EQ(Hex(Encoded(kmip::Boolean(0x420020, true))), "42002006000000080000000000000001");
  EXPECT_EQ(Hex(Encoded(kmip::TextString(0x420020, "Hello World"))),
            "420020070000000b48656c6c6f20576f726c640000000000");
  EXPECT_EQ(Hex(Encoded(kmip::ByteString(0x420020, std::string("\x01\x02\x03", 3)))),
            "42002008000000030102030000000000");
  EXPECT_EQ(Hex(Encoded(kmip::Structure(0x420020, {kmip::Enumeration(0x420004, 254),
                                                    kmip::Integer(0x420005, 255)}))),
            "42002001000000204200040500000004000000fe000000004200050200000004000000ff00000000");
}

TEST(KmipTtlvTest, DecodesWhatItEncodes) {
  Item msg = kmip::Structure(
      0x420078, {kmip::Integer(0x42006A, -3), kmip::TextString(0x420094, "uid-1"),
                 kmip::ByteString(0x4200C2, std::string(33, '\xab')),
                 kmip::Structure(0x42000F, {kmip::Boolean(0x420001, false)})});
  const std::string wire = Encoded(msg);
  ASSERT_EQ(wire.size() % 8, 0u);
  auto back = kmip::Decode(wire);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->children.size(), 4u);
  EXPECT_EQ(back->Find(0x42006A)->number, -3);
  EXPECT_EQ(back->Find(0x420094)->bytes, "uid-1");
  EXPECT_EQ(back->Find(0x4200C2)->bytes, std::string(33, '\xab'));
  EXPECT_EQ(Encoded(*back), wire);
  auto total = kmip::MessageBytes(wire.substr(0, 8));
  ASSERT_TRUE(total.ok());
  EXPECT_EQ(*total, wire.size());
}

TEST(KmipTtlvTest, RefusesMalformedItems) {
  const std::string good = Encoded(kmip::Structure(0x420078, {kmip::Integer(0x42006A, 1)}));
  auto refused = [](const std::string& in) { return !kmip::Decode(in).ok(); };
  EXPECT_TRUE(refused(good.substr(0, good.size() - 1)));       // cut short
  EXPECT_TRUE(refused(good + std::string(8, '\0')));           // bytes after it
  std::string padding = good;
  padding.back() = 1;                                          // non-zero padding
  EXPECT_TRUE(refused(padding));
  std::string type = good;
  type[3] = 0x0B;                                              // no such type
  EXPECT_TRUE(refused(type));
  std::string int_len = Bytes("42002001000000104200200200000008000000000000000" "1");
  EXPECT_TRUE(refused(int_len));                               // an Integer of 8 bytes
  EXPECT_TRUE(refused(Bytes("42002006000000080000000000000002")));  // a boolean of 2
  EXPECT_TRUE(refused(Bytes("4200200100000004" "00000000")));  // a child header cut short
  auto nested = [](int levels) {
    Item item = kmip::Integer(0x420020, 1);
    for (int i = 0; i < levels; ++i) item = kmip::Structure(0x420020, {item});
    return Encoded(item);
  };
  EXPECT_TRUE(kmip::Decode(nested(kmip::kMaxDepth)).ok());
  EXPECT_TRUE(refused(nested(kmip::kMaxDepth + 1)));
  // A message announced past the cap, or not a structure.
  EXPECT_FALSE(kmip::MessageBytes(Bytes("42007b0100100000")).ok());
  EXPECT_FALSE(kmip::MessageBytes(Bytes("42007b0200000008")).ok());
  EXPECT_FALSE(kmip::MessageBytes(Bytes("42007b0100000009")).ok());
}

Item Response(kmip::Operation op, int64_t status, std::vector<Item> payload, int64_t reason = -1) {
  std::vector<Item> batch = {kmip::Enumeration(0x42005C, static_cast<uint32_t>(op)),
                             kmip::Enumeration(0x42007F, static_cast<uint32_t>(status))};
  if (reason >= 0) {
    batch.push_back(kmip::Enumeration(0x42007E, static_cast<uint32_t>(reason)));
    batch.push_back(kmip::TextString(0x42007D, "said the server"));
  }
  if (!payload.empty()) batch.push_back(kmip::Structure(0x42007C, std::move(payload)));
  return kmip::Structure(0x42007B, {kmip::Structure(0x42007A, {}), kmip::Structure(0x42000F, batch)});
}

TEST(KmipProtocolTest, RequestsCarryOneBatchItemOfProtocol14) {
  const std::string wire = kmip::EncodeRequest(
      kmip::Operation::kEncrypt, kmip::EncryptPayload("7", std::string(32, 'k'), std::string(12, 'n'), "aad"));
  auto msg = kmip::Decode(wire);
  ASSERT_TRUE(msg.ok());
  EXPECT_EQ(msg->tag, 0x420078u);
  const Item* header = msg->Find(0x420077);
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(header->Find(0x420069)->Find(0x42006A)->number, 1);
  EXPECT_EQ(header->Find(0x420069)->Find(0x42006B)->number, 4);
  EXPECT_EQ(header->Find(0x42000D)->number, 1);
  const Item* batch = msg->Find(0x42000F);
  EXPECT_EQ(batch->Find(0x42005C)->number, 0x1F);
  const Item* payload = batch->Find(0x420079);
  EXPECT_EQ(payload->Find(0x420094)->bytes, "7");
  EXPECT_EQ(payload->Find(0x4200C2)->bytes, std::string(32, 'k'));
  EXPECT_EQ(payload->Find(0x42003D)->bytes, std::string(12, 'n'));
  EXPECT_EQ(payload->Find(0x4200FE)->bytes, "aad");
  const Item* params = payload->Find(0x42002B);
  EXPECT_EQ(params->Find(0x420011)->number, 0x09);  // GCM
  EXPECT_EQ(params->Find(0x420028)->number, 0x03);  // AES
  EXPECT_EQ(params->Find(0x4200CE)->number, 16);

  auto create = kmip::Decode(kmip::EncodeRequest(kmip::Operation::kCreate, kmip::CreatePayload("n")));
  ASSERT_TRUE(create.ok());
  const Item* template_attr = create->Find(0x42000F)->Find(0x420079)->Find(0x420091);
  ASSERT_NE(template_attr, nullptr);
  std::map<std::string, const Item*> attrs;
  for (const Item& a : template_attr->children) attrs[a.Find(0x42000A)->bytes] = a.Find(0x42000B);
  EXPECT_EQ(attrs.at("Cryptographic Algorithm")->number, 3);
  EXPECT_EQ(attrs.at("Cryptographic Length")->number, 256);
  EXPECT_EQ(attrs.at("Cryptographic Usage Mask")->number, 12);
  EXPECT_EQ(attrs.at("Name")->Find(0x420055)->bytes, "n");
}

TEST(KmipProtocolTest, ResponsesGiveTheirPayloadOrWhatTheRefusalMeans) {
  auto ok = kmip::ResponsePayload(
      Response(kmip::Operation::kCreate, 0, {kmip::Enumeration(0x420057, 2), kmip::TextString(0x420094, "42")}),
      kmip::Operation::kCreate);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*kmip::UniqueIdentifierOf(*ok), "42");
  // An answer to another operation, or without a payload, is malformed.
  EXPECT_EQ(kmip::ResponsePayload(Response(kmip::Operation::kCreate, 0, {kmip::TextString(0x420094, "4")}),
                                  kmip::Operation::kDecrypt)
                .status()
                .code(),
            Code::kInvalidArgument);
  EXPECT_EQ(kmip::ResponsePayload(Response(kmip::Operation::kCreate, 0, {}), kmip::Operation::kCreate)
                .status()
                .code(),
            Code::kInvalidArgument);
  struct Case {
    int64_t reason;
    Code code;
    Detail detail;
  };
  for (const Case& c : {Case{0x01, Code::kNotFound, Detail::kKmsKey},
                        Case{0x0C, Code::kPreconditionFailed, Detail::kKmsDisabled},
                        Case{0x43, Code::kPreconditionFailed, Detail::kKmsDisabled},
                        Case{0x0A, Code::kPermissionDenied, Detail::kKmsCiphertext},
                        Case{0x07, Code::kUnavailable, Detail::kNone}}) {
    auto r = kmip::ResponsePayload(Response(kmip::Operation::kDecrypt, 1, {}, c.reason),
                                   kmip::Operation::kDecrypt);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), c.code) << c.reason;
    EXPECT_EQ(r.status().detail(), c.detail) << c.reason;
    EXPECT_NE(r.status().message().find("said the server"), std::string::npos);
  }
  auto sealed = kmip::EncryptResultOf(*kmip::ResponsePayload(
      Response(kmip::Operation::kEncrypt, 0,
               {kmip::TextString(0x420094, "1"), kmip::ByteString(0x4200C2, "ct"),
                kmip::ByteString(0x4200FF, std::string(15, 't'))}),
      kmip::Operation::kEncrypt));
  EXPECT_FALSE(sealed.ok());  // a 15-byte tag
}

// An in-memory key server: AES-256-GCM under keys it never shows.
class FakeKeyServer : public ExternalKeys {
 public:
  Result<std::string> CreateKey(std::string_view name) override {
    if (down) return Status(Code::kUnavailable, "down");
    const std::string uid = std::to_string(keys_.size() + 1);
    keys_[uid] = RandomBytes(32);
    names.push_back(std::string(name));
    return uid;
  }
  Result<ExternalSealed> Encrypt(std::string_view uid, std::string_view plain, std::string_view iv,
                                 std::string_view aad) override {
    ++encrypts;
    ExternalSealed out;
    out.ciphertext.resize(plain.size());
    out.tag.resize(16);
    RETURN_IF_ERROR(Run(true, uid, iv, aad, plain, out.ciphertext.data(), &out.tag));
    return out;
  }
  Result<std::string> Decrypt(std::string_view uid, const ExternalSealed& sealed, std::string_view iv,
                              std::string_view aad) override {
    ++decrypts;
    std::string plain(sealed.ciphertext.size(), '\0');
    std::string tag = sealed.tag;
    RETURN_IF_ERROR(Run(false, uid, iv, aad, sealed.ciphertext, plain.data(), &tag));
    return plain;
  }
  std::string Describe() const override { return "fake"; }

  bool down = false;
  std::map<std::string, bool> revoked;
  std::vector<std::string> names;
  int encrypts = 0, decrypts = 0;

 private:
  Status Run(bool seal, std::string_view uid, std::string_view iv, std::string_view aad,
             std::string_view in, char* out, std::string* tag) {
    if (down) return Status(Code::kUnavailable, "down");
    auto k = keys_.find(std::string(uid));
    if (k == keys_.end()) return Status(Code::kNotFound, "no key", Detail::kKmsKey);
    if (revoked[std::string(uid)]) return Status(Code::kPreconditionFailed, "revoked", Detail::kKmsDisabled);
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    auto u = [](const auto* p) { return reinterpret_cast<const unsigned char*>(p); };
    int n = 0;
    bool ok = EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr, seal) == 1 &&
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr) == 1 &&
              EVP_CipherInit_ex(ctx, nullptr, nullptr, u(k->second.data()), u(iv.data()), seal) == 1 &&
              EVP_CipherUpdate(ctx, nullptr, &n, u(aad.data()), static_cast<int>(aad.size())) == 1 &&
              EVP_CipherUpdate(ctx, reinterpret_cast<unsigned char*>(out), &n, u(in.data()),
                               static_cast<int>(in.size())) == 1;
    if (ok && !seal) ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag->data()) == 1;
    unsigned char tail[16];
    ok = ok && EVP_CipherFinal_ex(ctx, tail, &n) == 1;
    if (ok && seal) ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag->data()) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) return Status(Code::kPermissionDenied, "does not open", Detail::kKmsCiphertext);
    return Status::OK();
  }
  std::map<std::string, std::string> keys_;
};

class ExternalKeyTest : public ::testing::Test {
 protected:
  std::unique_ptr<KeyService> OpenService(ExternalKeys* external) {
    auto s = KeyService::Open(kv_.get(), operator_key_, "us-east-1", "123456789012", external);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  std::unique_ptr<meta::KvStore> kv_ = meta::NewMemStore();
  std::string operator_key_ = RandomBytes(kOperatorKeyBytes);
  FakeKeyServer server_;
};

TEST_F(ExternalKeyTest, DataKeysAreWrappedByTheServerAndOpenAfterARestart) {
  auto s = OpenService(&server_);
  auto key = s->CreateKey("alias/hsm", "held outside", /*external=*/true);
  ASSERT_TRUE(key.ok()) << key.status().message();
  EXPECT_TRUE(key->external);
  ASSERT_EQ(server_.names.size(), 1u);
  EXPECT_EQ(server_.names[0], "strata/" + key->id);
  auto dk = s->GenerateDataKey("alias/hsm", "ctx");
  ASSERT_TRUE(dk.ok()) << dk.status().message();
  EXPECT_EQ(server_.encrypts, 1);
  EXPECT_EQ(dk->wrapped.find(dk->plaintext), std::string::npos);
  EXPECT_EQ(KeyService::KeyIdOf(dk->wrapped), key->id);
  // No key material of an external key is stored.
  auto it = kv_->NewIterator();
  for (it->Seek(""); it->Valid(); it->Next()) {
    EXPECT_EQ(std::string(it->value()).find(dk->plaintext), std::string::npos);
  }
  // A restarted service opens it through the server (and only once: cached).
  auto again = OpenService(&server_);
  EXPECT_TRUE(again->Describe("alias/hsm")->external);
  auto back = again->Decrypt(dk->wrapped, "ctx");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, dk->plaintext);
  ASSERT_TRUE(again->Decrypt(dk->wrapped, "ctx").ok());
  EXPECT_EQ(server_.decrypts, 1);
  // Another context, an altered blob: refused by the server's tag check.
  EXPECT_EQ(again->Decrypt(dk->wrapped, "other").status().detail(), Detail::kKmsCiphertext);
  std::string altered = dk->wrapped;
  altered.back() ^= 1;
  EXPECT_EQ(again->Decrypt(altered, "ctx").status().detail(), Detail::kKmsCiphertext);
  // A blob cut short never reaches the server.
  const int before = server_.decrypts;
  EXPECT_EQ(again->Decrypt(dk->wrapped.substr(0, dk->wrapped.size() - 1), "ctx").status().detail(),
            Detail::kKmsCiphertext);
  EXPECT_EQ(server_.decrypts, before);
}

TEST_F(ExternalKeyTest, RotationDisablingAndTheServersRefusals) {
  auto s = OpenService(&server_);
  auto key = s->CreateKey("alias/hsm", "", true);
  ASSERT_TRUE(key.ok());
  auto old_dk = s->GenerateDataKey(key->id, "c");
  ASSERT_TRUE(old_dk.ok());
  auto rotated = s->Rotate("alias/hsm");
  ASSERT_TRUE(rotated.ok()) << rotated.status().message();
  EXPECT_EQ(rotated->materials, 2u);
  EXPECT_EQ(server_.names.size(), 2u);
  auto new_dk = s->GenerateDataKey(key->id, "c");
  ASSERT_TRUE(new_dk.ok());
  auto fresh = OpenService(&server_);
  EXPECT_EQ(*fresh->Decrypt(old_dk->wrapped, "c"), old_dk->plaintext);
  EXPECT_EQ(*fresh->Decrypt(new_dk->wrapped, "c"), new_dk->plaintext);
  // Disabled here: refused before the server is asked, cache or not.
  ASSERT_TRUE(fresh->SetEnabled(key->id, false).ok());
  EXPECT_EQ(fresh->Decrypt(old_dk->wrapped, "c").status().detail(), Detail::kKmsDisabled);
  EXPECT_EQ(fresh->GenerateDataKey(key->id, "c").status().detail(), Detail::kKmsDisabled);
  ASSERT_TRUE(fresh->SetEnabled(key->id, true).ok());
  // Revoked at the server (the first material): its data keys no longer open.
  server_.revoked["1"] = true;
  auto other = OpenService(&server_);
  auto refused = other->Decrypt(old_dk->wrapped, "c");
  EXPECT_EQ(refused.status().code(), Code::kPreconditionFailed);
  EXPECT_EQ(refused.status().detail(), Detail::kKmsDisabled);
  EXPECT_TRUE(other->Decrypt(new_dk->wrapped, "c").ok());
  // The server down: Unavailable, nothing cached wrongly.
  server_.down = true;
  auto third = OpenService(&server_);
  EXPECT_EQ(third->Decrypt(new_dk->wrapped, "c").status().code(), Code::kUnavailable);
  EXPECT_EQ(third->CreateKey("alias/more", "", true).status().code(), Code::kUnavailable);
  EXPECT_FALSE(third->Describe("alias/more").ok());
  server_.down = false;
  EXPECT_EQ(*third->Decrypt(new_dk->wrapped, "c"), new_dk->plaintext);
}

TEST_F(ExternalKeyTest, WithoutAServerExternalKeysLoadButDoNotServe) {
  std::string wrapped;
  {
    auto s = OpenService(&server_);
    ASSERT_TRUE(s->CreateKey("alias/hsm", "", true).ok());
    wrapped = s->GenerateDataKey("alias/hsm", "c")->wrapped;
  }
  auto s = OpenService(nullptr);
  ASSERT_TRUE(s->Describe("alias/hsm").ok());
  EXPECT_EQ(s->Decrypt(wrapped, "c").status().code(), Code::kUnavailable);
  EXPECT_EQ(s->GenerateDataKey("alias/hsm", "c").status().code(), Code::kUnavailable);
  EXPECT_EQ(s->CreateKey("alias/x", "", true).status().code(), Code::kPreconditionFailed);
  // Local keys are unaffected, and a local blob cannot pose as an external one.
  auto local = s->CreateKey("alias/local", "");
  ASSERT_TRUE(local.ok());
  auto dk = s->GenerateDataKey("alias/local", "c");
  ASSERT_TRUE(dk.ok());
  std::string posing = dk->wrapped;
  posing[0] = 2;
  EXPECT_EQ(s->Decrypt(posing, "c").status().detail(), Detail::kKmsCiphertext);
}

}  // namespace
}  // namespace strata::kms
