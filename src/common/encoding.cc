#include "common/encoding.h"

#include <algorithm>
#include <cctype>

#include <openssl/evp.h>

namespace strata {

namespace {
constexpr char kHex[] = "0123456789abcdef";
constexpr char kHexUpper[] = "0123456789ABCDEF";
int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string HexEncode(std::string_view bytes) {
  std::string out;
  out.resize(bytes.size() * 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    unsigned char b = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = kHex[b >> 4];
    out[2 * i + 1] = kHex[b & 15];
  }
  return out;
}

std::optional<std::string> HexDecode(std::string_view hex) {
  if (hex.size() % 2) return std::nullopt;
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = HexVal(hex[2 * i]), lo = HexVal(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<char>(hi << 4 | lo);
  }
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(n);
  return out;
}

std::optional<std::string> Base64Decode(std::string_view b64) {
  if (b64.size() % 4) return std::nullopt;
  for (char c : b64) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '='))
      return std::nullopt;
  }
  std::string out(3 * b64.size() / 4, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  if (n < 0) return std::nullopt;
  size_t pad = 0;
  if (!b64.empty() && b64.back() == '=') ++pad;
  if (b64.size() > 1 && b64[b64.size() - 2] == '=') ++pad;
  out.resize(n - pad);
  return out;
}

std::string UriEncode(std::string_view s, bool encode_slash) {
  std::string out;
  out.reserve(s.size() * 3 / 2);
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (c == '/' && !encode_slash)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHexUpper[c >> 4]);
      out.push_back(kHexUpper[c & 15]);
    }
  }
  return out;
}

std::optional<std::string> UriDecode(std::string_view s, bool plus_as_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      int hi = HexVal(s[i + 1]), lo = HexVal(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi << 4 | lo));
      i += 2;
    } else if (c == '+' && plus_as_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string AsciiLower(std::string_view s) {
  // ASCII only, as the name says (std::tolower was a libc call per byte).
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    if (c < 0x80) { ++i; continue; }
    int n;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) { n = 1; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { n = 2; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { n = 3; cp = c & 0x07; }
    else return false;
    if (i + n >= s.size()) return false;
    for (int k = 1; k <= n; ++k) {
      unsigned char cc = s[i + k];
      if ((cc & 0xC0) != 0x80) return false;
      cp = cp << 6 | (cc & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000)) return false;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

void PutFixed64BE(std::string* dst, uint64_t v) {
  for (int i = 7; i >= 0; --i) dst->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t DecodeFixed64BE(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

void PutVarint64(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

void PutLengthPrefixed(std::string* dst, std::string_view s) {
  PutVarint64(dst, s.size());
  dst->append(s);
}

bool GetVarint64(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    unsigned char b = static_cast<unsigned char>((*in)[0]);
    in->remove_prefix(1);
    // Only the shortest form is accepted: a last byte of zero after the first
    // (an overlong encoding) or bits past 64 would let two byte strings decode
    // to the same record, so what decodes always re-encodes to the same bytes.
    if (shift == 63 && b > 1) return false;
    result |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      if (b == 0 && shift > 0) return false;
      *v = result;
      return true;
    }
  }
  return false;
}

bool GetLengthPrefixed(std::string_view* in, std::string_view* out) {
  uint64_t len;
  if (!GetVarint64(in, &len) || len > in->size()) return false;
  *out = in->substr(0, len);
  in->remove_prefix(len);
  return true;
}

namespace {

// One encoded-word at the start of `s` ("=?charset?enc?text?="): its decoded
// bytes and length, or nullopt when it is not one this decoder takes.
std::optional<std::pair<std::string, size_t>> DecodeEncodedWord(std::string_view s) {
  if (!s.starts_with("=?")) return std::nullopt;
  size_t q1 = s.find('?', 2);
  if (q1 == std::string_view::npos || q1 + 2 >= s.size() || s[q1 + 2] != '?') return std::nullopt;
  std::string charset = AsciiLower(s.substr(2, q1 - 2));
  if (charset != "utf-8" && charset != "us-ascii") return std::nullopt;
  char enc = static_cast<char>(s[q1 + 1] | 0x20);
  size_t text_start = q1 + 3;
  size_t end = s.find("?=", text_start);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view text = s.substr(text_start, end - text_start);
  std::string out;
  if (enc == 'b') {
    auto decoded = Base64Decode(text);
    if (!decoded) return std::nullopt;
    out = std::move(*decoded);
  } else if (enc == 'q') {
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '_') {
        out.push_back(' ');
      } else if (text[i] == '=') {
        if (i + 2 >= text.size()) return std::nullopt;
        auto byte = HexDecode(AsciiLower(text.substr(i + 1, 2)));
        if (!byte) return std::nullopt;
        out.append(*byte);
        i += 2;
      } else {
        out.push_back(text[i]);
      }
    }
  } else {
    return std::nullopt;
  }
  return std::make_pair(std::move(out), end + 2);
}

}  // namespace

std::string Rfc2047Decode(std::string_view s) {
  std::string out;
  bool last_was_word = false;
  size_t pending_blanks = 0;  // blanks between two encoded-words are dropped (RFC 2047 §6.2)
  while (!s.empty()) {
    if (auto word = DecodeEncodedWord(s)) {
      if (!last_was_word) out.append(pending_blanks, ' ');
      pending_blanks = 0;
      out.append(word->first);
      s.remove_prefix(word->second);
      last_was_word = true;
      continue;
    }
    if (s.front() == ' ' && last_was_word) {
      ++pending_blanks;
      s.remove_prefix(1);
      continue;
    }
    out.append(pending_blanks, ' ');
    pending_blanks = 0;
    out.push_back(s.front());
    s.remove_prefix(1);
    last_was_word = false;
  }
  out.append(pending_blanks, ' ');
  return out;
}

std::string Rfc2047EncodeIfNeeded(std::string_view s) {
  bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f;
  });
  if (plain) return std::string(s);
  return "=?UTF-8?B?" + Base64Encode(s) + "?=";
}

bool XmlHasNul(std::string_view xml) {
  if (xml.find('\0') != std::string_view::npos) return true;
  for (size_t i = xml.find("&#"); i != std::string_view::npos; i = xml.find("&#", i + 2)) {
    size_t j = i + 2;
    if (j < xml.size() && (xml[j] == 'x' || xml[j] == 'X')) ++j;
    size_t digits = j;
    while (j < xml.size() && xml[j] == '0') ++j;
    if (j > digits && j < xml.size() && xml[j] == ';') return true;
  }
  return false;
}

}  // namespace strata
