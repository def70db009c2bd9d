#include "kms/kmip_ttlv.h"

namespace strata::kms::kmip {

namespace {

size_t Padded(size_t n) { return (n + 7) / 8 * 8; }

void PutBe(uint64_t v, int bytes, std::string* out) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetBe(std::string_view in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

Status Malformed(const std::string& why) {
  return Status(Code::kInvalidArgument, "malformed KMIP message: " + why);
}

// Decodes one item at the start of `in`; `*used` is its padded length.
Result<Item> DecodeOne(std::string_view in, int depth, size_t* used) {
  if (in.size() < kHeaderBytes) return Malformed("an item header is cut short");
  Item item;
  item.tag = static_cast<uint32_t>(GetBe(in, 3));
  const auto raw_type = static_cast<unsigned char>(in[3]);
  const uint64_t len = GetBe(in.substr(4), 4);
  if (raw_type < 0x01 || raw_type > 0x0A) return Malformed("unknown item type " + std::to_string(raw_type));
  item.type = static_cast<Type>(raw_type);
  const size_t padded = Padded(len);
  if (len > in.size() - kHeaderBytes || padded > in.size() - kHeaderBytes) {
    return Malformed("an item's length runs past the end");
  }
  std::string_view value = in.substr(kHeaderBytes, len);
  for (size_t i = kHeaderBytes + len; i < kHeaderBytes + padded; ++i) {
    if (in[i] != 0) return Malformed("non-zero padding");
  }
  *used = kHeaderBytes + padded;
  auto need = [&](uint64_t n) { return len == n ? Status::OK() : Malformed("an item of the wrong length"); };
  switch (item.type) {
    case Type::kStructure: {
      if (depth >= kMaxDepth) return Malformed("structures nested too deep");
      while (!value.empty()) {
        size_t n = 0;
        ASSIGN_OR_RETURN(Item child, DecodeOne(value, depth + 1, &n));
        item.children.push_back(std::move(child));
        value.remove_prefix(n);
      }
      // A child whose padding would run past `value` was refused above.
      break;
    }
    case Type::kInteger:
    case Type::kEnumeration:
    case Type::kInterval:
      RETURN_IF_ERROR(need(4));
      item.number = item.type == Type::kInteger ? static_cast<int32_t>(GetBe(value, 4))
                                                : static_cast<int64_t>(GetBe(value, 4));
      break;
    case Type::kLongInteger:
    case Type::kDateTime:
      RETURN_IF_ERROR(need(8));
      item.number = static_cast<int64_t>(GetBe(value, 8));
      break;
    case Type::kBoolean:
      RETURN_IF_ERROR(need(8));
      if (GetBe(value, 8) > 1) return Malformed("a boolean that is neither 0 nor 1");
      item.number = static_cast<int64_t>(GetBe(value, 8));
      break;
    case Type::kBigInteger:
      if (len % 8 != 0) return Malformed("a big integer not a multiple of 8 bytes");
      item.bytes = std::string(value);
      break;
    case Type::kTextString:
    case Type::kByteString:
      item.bytes = std::string(value);
      break;
  }
  return item;
}

}  // namespace

const Item* Item::Find(uint32_t t) const {
  for (const Item& c : children) {
    if (c.tag == t) return &c;
  }
  return nullptr;
}

namespace {
Item Make(uint32_t tag, Type type, int64_t number, std::string bytes = {}) {
  Item i;
  i.tag = tag;
  i.type = type;
  i.number = number;
  i.bytes = std::move(bytes);
  return i;
}
}  // namespace

Item Structure(uint32_t tag, std::vector<Item> children) {
  Item i = Make(tag, Type::kStructure, 0);
  i.children = std::move(children);
  return i;
}

Item Integer(uint32_t tag, int32_t v) { return Make(tag, Type::kInteger, v); }
Item Enumeration(uint32_t tag, uint32_t v) { return Make(tag, Type::kEnumeration, v); }
Item Boolean(uint32_t tag, bool v) { return Make(tag, Type::kBoolean, v ? 1 : 0); }
Item TextString(uint32_t tag, std::string v) { return Make(tag, Type::kTextString, 0, std::move(v)); }
Item ByteString(uint32_t tag, std::string v) { return Make(tag, Type::kByteString, 0, std::move(v)); }

void Encode(const Item& item, std::string* out) {
  PutBe(item.tag, 3, out);
  out->push_back(static_cast<char>(item.type));
  const size_t len_at = out->size();
  PutBe(0, 4, out);  // the length, filled in below
  const size_t start = out->size();
  switch (item.type) {
    case Type::kStructure:
      for (const Item& c : item.children) Encode(c, out);
      break;
    case Type::kInteger:
    case Type::kEnumeration:
    case Type::kInterval:
      PutBe(static_cast<uint32_t>(item.number), 4, out);
      break;
    case Type::kLongInteger:
    case Type::kDateTime:
    case Type::kBoolean:
      PutBe(static_cast<uint64_t>(item.number), 8, out);
      break;
    case Type::kBigInteger:
    case Type::kTextString:
    case Type::kByteString:
      out->append(item.bytes);
      break;
  }
  const size_t len = out->size() - start;
  for (int i = 0; i < 4; ++i) (*out)[len_at + i] = static_cast<char>((len >> (8 * (3 - i))) & 0xff);
  out->append(Padded(len) - len, '\0');
}

Result<size_t> MessageBytes(std::string_view header) {
  if (header.size() < kHeaderBytes) return Malformed("a message header is cut short");
  if (static_cast<unsigned char>(header[3]) != static_cast<unsigned char>(Type::kStructure)) {
    return Malformed("a message that is not a structure");
  }
  const uint64_t len = GetBe(header.substr(4), 4);
  if (len % 8 != 0) return Malformed("a message whose length is not a multiple of 8");
  if (len > kMaxMessageBytes - kHeaderBytes) {
    return Malformed("a message of " + std::to_string(len) + " bytes (at most " +
                     std::to_string(kMaxMessageBytes) + ")");
  }
  return kHeaderBytes + static_cast<size_t>(len);
}

Result<Item> Decode(std::string_view in) {
  size_t used = 0;
  ASSIGN_OR_RETURN(Item item, DecodeOne(in, 0, &used));
  if (used != in.size()) return Malformed("bytes after the message");
  return item;
}

}  // namespace strata::kms::kmip
