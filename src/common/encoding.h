// Byte/text encodings: hex, base64, URI percent-encoding (AWS rules), and
// the little binary coding helpers used by on-disk and metadata formats.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

std::string HexEncode(std::string_view bytes);  // lowercase
std::optional<std::string> HexDecode(std::string_view hex);
std::string Base64Encode(std::string_view bytes);
std::optional<std::string> Base64Decode(std::string_view b64);  // strict, padded

// AWS URI encoding: every byte except A-Z a-z 0-9 - _ . ~ becomes %XX (uppercase);
// '/' is kept when encode_slash is false (canonical URI of S3 paths).
std::string UriEncode(std::string_view s, bool encode_slash);
// Percent-decoding; '+' stays '+' unless plus_as_space. nullopt on a bad escape.
std::optional<std::string> UriDecode(std::string_view s, bool plus_as_space = false);

// ASCII lower-casing (HTTP header names, form field names).
std::string AsciiLower(std::string_view s);
// ASCII case-insensitive equality (header names, policy operators, "true").
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
// `s` without leading/trailing spaces and tabs (HTTP header values).
std::string_view TrimBlanks(std::string_view s);

// True if `s` is well-formed UTF-8 (no overlongs, no surrogates).
bool IsValidUtf8(std::string_view s);

// RFC 2047 encoded-words, as S3 uses them for non-ASCII user metadata: the
// decoder replaces each "=?UTF-8?B?...?=" / "=?UTF-8?Q?...?=" (charset UTF-8
// or US-ASCII, any case) with its bytes and leaves anything else as it is;
// the encoder returns `s` unchanged when it is printable ASCII, else one
// "=?UTF-8?B?<base64>?=" word.
std::string Rfc2047Decode(std::string_view s);
std::string Rfc2047EncodeIfNeeded(std::string_view s);

// Binary coding (little-endian fixed, LEB128 varints, length-prefixed strings).
void PutFixed64BE(std::string* dst, uint64_t v);
uint64_t DecodeFixed64BE(const char* p);
void PutVarint64(std::string* dst, uint64_t v);
void PutLengthPrefixed(std::string* dst, std::string_view s);
// Decoders consume from the front of *in; false on truncated/corrupt input.
bool GetVarint64(std::string_view* in, uint64_t* v);
bool GetLengthPrefixed(std::string_view* in, std::string_view* out);

// Whether an XML document holds a NUL: the byte itself or a character
// reference to U+0000 ("&#0;", "&#x00;", any number of zeros). pugixml
// decodes the reference to a NUL and hands values out as C strings, so
// "<Key>a&#0;b</Key>" would read as "a"; XML cannot carry U+0000 at all, so
// the XML parsers (s3/xml.cc, tier/lifecycle.cc) refuse such documents.
bool XmlHasNul(std::string_view xml);

}  // namespace strata
