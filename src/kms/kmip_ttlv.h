// KMIP's wire encoding, TTLV (OASIS KMIP 1.4 spec, section 9.1): every item
// is a 3-byte tag, a 1-byte type, a 4-byte big-endian length, then the value
// padded with zeros to a multiple of 8 bytes; a structure's value is its
// items one after another. This file encodes and decodes items and nothing
// more; what the items mean is kms/kmip_protocol.h.
//
// Written here rather than taken from a library: Debian 12 packages no C or
// C++ KMIP library (PyKMIP, the one Debian has, is a Python server and
// client), and the subset strata needs is small.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::kms::kmip {

enum class Type : uint8_t {
  kStructure = 0x01,
  kInteger = 0x02,
  kLongInteger = 0x03,
  kBigInteger = 0x04,
  kEnumeration = 0x05,
  kBoolean = 0x06,
  kTextString = 0x07,
  kByteString = 0x08,
  kDateTime = 0x09,
  kInterval = 0x0A,
};

struct Item {
  uint32_t tag = 0;  // 0x42xxxx
  Type type = Type::kStructure;
  int64_t number = 0;          // Integer, LongInteger, Enumeration, Boolean, DateTime, Interval
  std::string bytes;           // TextString, ByteString, BigInteger
  std::vector<Item> children;  // Structure

  // The first child with `tag`, or nullptr.
  const Item* Find(uint32_t tag) const;
};

Item Structure(uint32_t tag, std::vector<Item> children);
Item Integer(uint32_t tag, int32_t v);
Item Enumeration(uint32_t tag, uint32_t v);
Item Boolean(uint32_t tag, bool v);
Item TextString(uint32_t tag, std::string v);
Item ByteString(uint32_t tag, std::string v);

// Appends the encoding of `item` to `out`.
void Encode(const Item& item, std::string* out);

inline constexpr size_t kHeaderBytes = 8;
// The largest message strata accepts from a key server (a response to a
// request about one 32-byte key is a few hundred bytes).
inline constexpr size_t kMaxMessageBytes = 64 * 1024;
// Structures nest at most this deep.
inline constexpr int kMaxDepth = 16;

// The whole length (header included) of the item whose first kHeaderBytes
// bytes are `header`; InvalidArgument when it is not a structure or longer
// than kMaxMessageBytes.
Result<size_t> MessageBytes(std::string_view header);

// Decodes the one item that fills `in` exactly. InvalidArgument on anything
// malformed: a length past the end, an item whose length does not fit its
// type, non-zero padding, unknown types, nesting past kMaxDepth, bytes left.
Result<Item> Decode(std::string_view in);

}  // namespace strata::kms::kmip
