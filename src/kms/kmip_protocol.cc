#include "kms/kmip_protocol.h"

namespace strata::kms::kmip {

namespace {

// Tags (KMIP 1.4 spec, section 9.1.3.1).
constexpr uint32_t kAttribute = 0x420008;
constexpr uint32_t kAttributeName = 0x42000A;
constexpr uint32_t kAttributeValue = 0x42000B;
constexpr uint32_t kBatchCount = 0x42000D;
constexpr uint32_t kBatchItem = 0x42000F;
constexpr uint32_t kBlockCipherMode = 0x420011;
constexpr uint32_t kCryptographicAlgorithm = 0x420028;
constexpr uint32_t kCryptographicParameters = 0x42002B;
constexpr uint32_t kIvCounterNonce = 0x42003D;
constexpr uint32_t kName = 0x420053;
constexpr uint32_t kNameType = 0x420054;
constexpr uint32_t kNameValue = 0x420055;
constexpr uint32_t kObjectType = 0x420057;
constexpr uint32_t kOperation = 0x42005C;
constexpr uint32_t kProtocolVersion = 0x420069;
constexpr uint32_t kProtocolVersionMajor = 0x42006A;
constexpr uint32_t kProtocolVersionMinor = 0x42006B;
constexpr uint32_t kRequestHeader = 0x420077;
constexpr uint32_t kRequestMessage = 0x420078;
constexpr uint32_t kRequestPayload = 0x420079;
constexpr uint32_t kResponseMessage = 0x42007B;
constexpr uint32_t kResponsePayload = 0x42007C;
constexpr uint32_t kResultMessage = 0x42007D;
constexpr uint32_t kResultReason = 0x42007E;
constexpr uint32_t kResultStatus = 0x42007F;
constexpr uint32_t kTemplateAttribute = 0x420091;
constexpr uint32_t kUniqueIdentifier = 0x420094;
constexpr uint32_t kData = 0x4200C2;
constexpr uint32_t kTagLength = 0x4200CE;
constexpr uint32_t kAeadData = 0x4200FE;
constexpr uint32_t kAeadTag = 0x4200FF;

// Enumeration values.
constexpr uint32_t kSymmetricKey = 0x02;
constexpr uint32_t kAes = 0x03;
constexpr uint32_t kGcm = 0x09;
constexpr int32_t kUsageEncrypt = 0x04;
constexpr int32_t kUsageDecrypt = 0x08;
constexpr uint32_t kUninterpretedTextString = 0x01;
constexpr int64_t kSuccess = 0;
constexpr int64_t kItemNotFound = 0x01;
constexpr int64_t kCryptographicFailure = 0x0A;
constexpr int64_t kPermissionDenied = 0x0C;
constexpr int64_t kWrongKeyLifecycleState = 0x43;
constexpr int kTagBytes = 16;

Item Attribute(std::string name, Item value) {
  value.tag = kAttributeValue;
  return Structure(kAttribute, {TextString(kAttributeName, std::move(name)), std::move(value)});
}

Item GcmParameters() {
  return Structure(kCryptographicParameters, {Enumeration(kBlockCipherMode, kGcm),
                                              Enumeration(kCryptographicAlgorithm, kAes),
                                              Integer(kTagLength, kTagBytes)});
}

Status Malformed(const std::string& why) {
  return Status(Code::kInvalidArgument, "malformed KMIP response: " + why);
}

Result<std::string> BytesOf(const Item& payload, uint32_t tag, Type type, const char* what) {
  const Item* i = payload.Find(tag);
  if (!i || i->type != type) return Malformed(std::string("no ") + what + " in the payload");
  return i->bytes;
}

}  // namespace

std::string EncodeRequest(Operation op, Item payload) {
  payload.tag = kRequestPayload;
  Item header = Structure(
      kRequestHeader,
      {Structure(kProtocolVersion, {Integer(kProtocolVersionMajor, 1), Integer(kProtocolVersionMinor, 4)}),
       Integer(kBatchCount, 1)});
  Item batch = Structure(kBatchItem, {Enumeration(kOperation, static_cast<uint32_t>(op)), std::move(payload)});
  std::string out;
  Encode(Structure(kRequestMessage, {std::move(header), std::move(batch)}), &out);
  return out;
}

Item CreatePayload(std::string_view name) {
  Item name_value = Structure(0, {TextString(kNameValue, std::string(name)),
                                  Enumeration(kNameType, kUninterpretedTextString)});
  return Structure(
      kRequestPayload,
      {Enumeration(kObjectType, kSymmetricKey),
       Structure(kTemplateAttribute,
                 {Attribute("Cryptographic Algorithm", Enumeration(0, kAes)),
                  Attribute("Cryptographic Length", Integer(0, 256)),
                  Attribute("Cryptographic Usage Mask", Integer(0, kUsageEncrypt | kUsageDecrypt)),
                  Attribute("Name", std::move(name_value))})});
}

Item ActivatePayload(std::string_view uid) {
  return Structure(kRequestPayload, {TextString(kUniqueIdentifier, std::string(uid))});
}

Item EncryptPayload(std::string_view uid, std::string_view plain, std::string_view iv,
                    std::string_view aad) {
  return Structure(kRequestPayload,
                   {TextString(kUniqueIdentifier, std::string(uid)), GcmParameters(),
                    ByteString(kData, std::string(plain)), ByteString(kIvCounterNonce, std::string(iv)),
                    ByteString(kAeadData, std::string(aad))});
}

Item DecryptPayload(std::string_view uid, std::string_view ciphertext, std::string_view iv,
                    std::string_view aad, std::string_view tag) {
  return Structure(kRequestPayload,
                   {TextString(kUniqueIdentifier, std::string(uid)), GcmParameters(),
                    ByteString(kData, std::string(ciphertext)),
                    ByteString(kIvCounterNonce, std::string(iv)),
                    ByteString(kAeadData, std::string(aad)), ByteString(kAeadTag, std::string(tag))});
}

Result<Item> ResponsePayload(const Item& response, Operation op) {
  if (response.tag != kResponseMessage || response.type != Type::kStructure) {
    return Malformed("not a response message");
  }
  const Item* batch = response.Find(kBatchItem);
  if (!batch || batch->type != Type::kStructure) return Malformed("no batch item");
  const Item* status = batch->Find(kResultStatus);
  if (!status || status->type != Type::kEnumeration) return Malformed("no result status");
  if (status->number != kSuccess) {
    const Item* reason = batch->Find(kResultReason);
    const Item* message = batch->Find(kResultMessage);
    const int64_t why = reason && reason->type == Type::kEnumeration ? reason->number : -1;
    std::string text = "the KMIP server refused the request (reason " + std::to_string(why);
    if (message && message->type == Type::kTextString) text += ": " + message->bytes.substr(0, 512);
    text += ")";
    switch (why) {
      case kItemNotFound: return Status(Code::kNotFound, text, Detail::kKmsKey);
      case kPermissionDenied:
      case kWrongKeyLifecycleState: return Status(Code::kPreconditionFailed, text, Detail::kKmsDisabled);
      case kCryptographicFailure: return Status(Code::kPermissionDenied, text, Detail::kKmsCiphertext);
      default: return Status(Code::kUnavailable, text);
    }
  }
  const Item* operation = batch->Find(kOperation);
  if (!operation || operation->type != Type::kEnumeration ||
      operation->number != static_cast<int64_t>(op)) {
    return Malformed("the answer is not to the operation asked");
  }
  const Item* payload = batch->Find(kResponsePayload);
  if (!payload || payload->type != Type::kStructure) return Malformed("no response payload");
  return *payload;
}

Result<std::string> UniqueIdentifierOf(const Item& payload) {
  return BytesOf(payload, kUniqueIdentifier, Type::kTextString, "unique identifier");
}

Result<Sealed> EncryptResultOf(const Item& payload) {
  Sealed s;
  ASSIGN_OR_RETURN(s.ciphertext, BytesOf(payload, kData, Type::kByteString, "data"));
  ASSIGN_OR_RETURN(s.tag, BytesOf(payload, kAeadTag, Type::kByteString, "authentication tag"));
  if (s.tag.size() != kTagBytes) return Malformed("an authentication tag not of 16 bytes");
  if (const Item* iv = payload.Find(kIvCounterNonce); iv && iv->type == Type::kByteString) {
    s.iv = iv->bytes;
  }
  return s;
}

Result<std::string> DecryptResultOf(const Item& payload) {
  return BytesOf(payload, kData, Type::kByteString, "data");
}

}  // namespace strata::kms::kmip
