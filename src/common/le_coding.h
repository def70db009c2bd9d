// Little-endian fixed-width integers and a bounds-checked reader over a
// byte buffer: the byte order of the on-disk and on-wire footers (archive
// segment records, remote-pool objects). Header-only and small, so that the
// formats using it do not pull in, or rebuild with, common/encoding.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

inline void PutLe32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
inline void PutLe64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
// `bytes` (1..8) little-endian bytes of `s` at `at`; the caller checks bounds.
inline uint64_t GetLe(std::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

// Reads integers and byte runs off the front of `s`; the first read past the
// end turns `ok` false for good and yields zero / empty.
struct LeReader {
  std::string_view s;
  size_t at = 0;
  bool ok = true;
  uint64_t Int(int bytes) {
    if (!ok || s.size() - at < static_cast<size_t>(bytes)) {
      ok = false;
      return 0;
    }
    uint64_t v = GetLe(s, at, bytes);
    at += bytes;
    return v;
  }
  std::string Bytes(uint64_t n) {
    if (!ok || s.size() - at < n) {
      ok = false;
      return {};
    }
    std::string v(s.substr(at, n));
    at += n;
    return v;
  }
  std::string String() { return Bytes(Int(4)); }  // 4-byte length, then the bytes
  bool Done() const { return ok && at == s.size(); }
};

}  // namespace strata
