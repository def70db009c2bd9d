#include "auth/aws_chunked.h"

#include <algorithm>
#include <cstring>

#include "auth/auth_util.h"
#include "common/encoding.h"
#include "common/hash.h"

namespace strata::auth {

using detail::IsHexDigits;
using detail::JoinLines;
using detail::kEmptySha256Hex;
using detail::kSignatureHexChars;

// ---- aws-chunked ----------------------------------------------------------
//
// Wire format, one chunk:  <hex size>[;chunk-signature=<64 hex>]\r\n<size bytes>\r\n
// The last chunk has size 0 and no data. Without trailers it is followed by
// "\r\n". With trailers, by lines "name:value\r\n" (signed mode: the last one
// is "x-amz-trailer-signature:<64 hex>"), then "\r\n".
// Signed modes buffer and verify a whole chunk before handing out any of its
// bytes; the unsigned-trailer mode passes data straight through.

namespace {

constexpr size_t kMaxChunkLineBytes = 4096;
constexpr uint64_t kMaxSignedChunkBytes = 16 << 20;
constexpr size_t kRawReadBytes = 16 << 10;
constexpr size_t kMaxTrailers = 16;
constexpr std::string_view kChunkSignaturePrefix = "chunk-signature=";
constexpr std::string_view kTrailerSignatureName = "x-amz-trailer-signature";

struct ChunkHeader {
  uint64_t size = 0;
  std::string_view signature;  // empty in unsigned mode
};

Status ParseChunkHeader(std::string_view line, bool signed_chunks, ChunkHeader* out) {
  size_t semi = line.find(';');
  std::string_view size_hex = line.substr(0, semi);
  if (size_hex.empty() || size_hex.size() > 8 || !IsHexDigits(size_hex, size_hex.size())) {
    return InvalidArgument("aws-chunked: invalid chunk size");
  }
  out->size = std::stoull(std::string(size_hex), nullptr, 16);
  if (!signed_chunks) return Status::OK();  // extensions, if any, carry nothing to verify
  if (out->size > kMaxSignedChunkBytes) {
    return InvalidArgument("aws-chunked: signed chunk larger than 16 MiB");
  }
  std::string_view extension = semi == std::string_view::npos ? "" : line.substr(semi + 1);
  if (extension.substr(0, kChunkSignaturePrefix.size()) != kChunkSignaturePrefix ||
      !IsHexDigits(extension.substr(kChunkSignaturePrefix.size()), kSignatureHexChars)) {
    return InvalidArgument("aws-chunked: chunk needs ;chunk-signature=<64 hex>");
  }
  out->signature = extension.substr(kChunkSignaturePrefix.size());
  return Status::OK();
}

bool IsSigned(PayloadMode mode) {
  return mode == PayloadMode::kStreamingSigned || mode == PayloadMode::kStreamingSignedTrailer;
}

bool HasTrailers(PayloadMode mode) {
  return mode == PayloadMode::kStreamingSignedTrailer ||
         mode == PayloadMode::kStreamingUnsignedTrailer;
}

}  // namespace

struct AwsChunkedSource::State {
  State(ByteSource* raw_source, const AuthContext& ctx, uint64_t length)
      : raw(raw_source),
        signed_chunks(IsSigned(ctx.payload_mode)),
        has_trailers(HasTrailers(ctx.payload_mode)),
        signing_key(ctx.signing_key),
        amz_date(ctx.amz_date),
        scope(ctx.scope),
        previous_signature(ctx.seed_signature_hex),
        decoded_length(length) {
    if (!signed_chunks && !has_trailers) {
      failure = InvalidArgument("aws-chunked: payload mode is not a streaming mode");
    }
  }

  Result<size_t> Read(char* buf, size_t n);

  ByteSource* const raw;
  const bool signed_chunks;
  const bool has_trailers;
  const std::string signing_key;
  const std::string amz_date;
  const std::string scope;
  std::string previous_signature;  // the chain: seed, then each chunk's signature
  const uint64_t decoded_length;
  uint64_t declared_bytes = 0;  // sum of the chunk sizes seen so far
  std::string in;               // raw bytes read ahead, parsed from in_pos
  size_t in_pos = 0;
  std::string chunk;  // signed modes: verified bytes not yet returned, from chunk_pos
  size_t chunk_pos = 0;
  uint64_t unsigned_left = 0;   // unsigned mode: data bytes of this chunk still to pass
  bool need_chunk_end = false;  // unsigned mode: the CRLF after the data is unread
  bool done = false;
  Status failure;  // sticky: once the body is bad, every later Read says so
  std::vector<std::pair<std::string, std::string>> trailers;

 private:
  Status Advance();
  Status ReadSignedChunk(const ChunkHeader& header);
  Status FinishBody(std::string_view final_signature);
  Status ReadTrailers();
  Status VerifyChained(const std::string& string_to_sign, std::string_view given,
                       std::string_view what);
  Result<size_t> PassThrough(char* buf, size_t n);
  Status Fill();
  Status ReadLine(std::string* line, bool allow_bare_lf);
  Status ExpectCrlf();
};

Result<size_t> AwsChunkedSource::State::Read(char* buf, size_t n) {
  if (!failure.ok()) return failure;
  if (n == 0) return size_t{0};
  while (true) {
    if (chunk_pos < chunk.size()) {
      size_t k = std::min(n, chunk.size() - chunk_pos);
      std::memcpy(buf, chunk.data() + chunk_pos, k);
      chunk_pos += k;
      return k;
    }
    if (unsigned_left > 0) {
      Result<size_t> r = PassThrough(buf, n);
      if (!r.ok()) failure = r.status();
      return r;
    }
    if (done) return size_t{0};
    Status s = Advance();
    if (!s.ok()) {
      failure = s;
      return s;
    }
  }
}

// Parses the next chunk header and, in signed modes, reads and verifies the
// chunk; the final chunk also consumes the trailers.
Status AwsChunkedSource::State::Advance() {
  if (need_chunk_end) {
    RETURN_IF_ERROR(ExpectCrlf());
    need_chunk_end = false;
  }
  std::string line;
  RETURN_IF_ERROR(ReadLine(&line, /*allow_bare_lf=*/false));
  ChunkHeader header;
  RETURN_IF_ERROR(ParseChunkHeader(line, signed_chunks, &header));
  if (header.size > decoded_length - declared_bytes) {
    return OutOfRange("aws-chunked: body is longer than x-amz-decoded-content-length");
  }
  declared_bytes += header.size;
  if (header.size == 0) return FinishBody(header.signature);
  if (!signed_chunks) {
    unsigned_left = header.size;
    return Status::OK();
  }
  Status s = ReadSignedChunk(header);
  if (!s.ok()) chunk.clear();  // never hand out unverified bytes
  return s;
}

// The chunk is verified before any of it is handed out, so it is held whole;
// but the buffer grows only as its bytes arrive (a client that declares 16 MiB
// and stalls pins what it sent, not what it declared), and it is hashed on
// the way in.
Status AwsChunkedSource::State::ReadSignedChunk(const ChunkHeader& header) {
  chunk.clear();
  chunk_pos = 0;
  StreamHash hash(StreamHash::Kind::kSha256);
  while (chunk.size() < header.size) {
    const size_t old_size = chunk.size();
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(header.size - old_size, kRawReadBytes));
    if (in_pos < in.size()) {
      const size_t k = std::min(want, in.size() - in_pos);
      chunk.append(in, in_pos, k);
      in_pos += k;
    } else {
      chunk.resize(old_size + want);
      Result<size_t> got = raw->Read(chunk.data() + old_size, want);
      chunk.resize(old_size + (got.ok() ? *got : 0));
      if (!got.ok()) return got.status();
      if (*got == 0) return OutOfRange("aws-chunked: body ended early");
    }
    hash.Update(chunk.data() + old_size, chunk.size() - old_size);
  }
  RETURN_IF_ERROR(ExpectCrlf());
  return VerifyChained(JoinLines({"AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, previous_signature,
                                  kEmptySha256Hex, HexEncode(hash.Final())}),
                       header.signature, "chunk");
}

Status AwsChunkedSource::State::FinishBody(std::string_view final_signature) {
  if (signed_chunks) {
    RETURN_IF_ERROR(VerifyChained(JoinLines({"AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope,
                                             previous_signature, kEmptySha256Hex, kEmptySha256Hex}),
                                  final_signature, "final chunk"));
  }
  if (declared_bytes != decoded_length) {
    return OutOfRange("aws-chunked: body is shorter than x-amz-decoded-content-length");
  }
  if (has_trailers) {
    RETURN_IF_ERROR(ReadTrailers());
  } else {
    std::string line;
    RETURN_IF_ERROR(ReadLine(&line, /*allow_bare_lf=*/false));
    if (!line.empty()) return InvalidArgument("aws-chunked: unexpected data after final chunk");
  }
  done = true;
  return Status::OK();
}

// Trailer lines up to an empty line. Bare LF line ends are tolerated here
// because some clients end trailer lines that way.
Status AwsChunkedSource::State::ReadTrailers() {
  std::string canonical;  // "name:value\n" per trailer: what the trailer signature covers
  std::string signature;
  while (true) {
    std::string line;
    RETURN_IF_ERROR(ReadLine(&line, /*allow_bare_lf=*/true));
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0 || !signature.empty()) {
      return InvalidArgument(Detail::kTrailer,
                             "aws-chunked: malformed trailer (or trailer after its signature)");
    }
    std::string name = AsciiLower(TrimBlanks(std::string_view(line).substr(0, colon)));
    std::string value(TrimBlanks(std::string_view(line).substr(colon + 1)));
    if (name == kTrailerSignatureName) {
      // Unsigned mode has no chain to check a trailer signature against.
      if (!signed_chunks) {
        return InvalidArgument(Detail::kTrailer, "aws-chunked: unexpected trailer signature");
      }
      signature = std::move(value);
      continue;
    }
    if (trailers.size() >= kMaxTrailers) {
      return InvalidArgument(Detail::kTrailer, "aws-chunked: too many trailers");
    }
    canonical.append(name).append(":").append(value).append("\n");
    trailers.emplace_back(std::move(name), std::move(value));
  }
  if (!signed_chunks) return Status::OK();
  if (!IsHexDigits(signature, kSignatureHexChars)) {
    return InvalidArgument(Detail::kTrailer,
                           "aws-chunked: missing or malformed x-amz-trailer-signature");
  }
  return VerifyChained(JoinLines({"AWS4-HMAC-SHA256-TRAILER", amz_date, scope, previous_signature,
                                  Sha256Hex(canonical)}),
                       signature, "trailer");
}

// Checks one link of the signature chain and advances it.
Status AwsChunkedSource::State::VerifyChained(const std::string& string_to_sign,
                                              std::string_view given, std::string_view what) {
  std::string expected = detail::Hex(HmacSha256(signing_key, string_to_sign));
  if (!detail::SignaturesEqual(expected, given)) {
    return PermissionDenied("aws-chunked: " + std::string(what) + " signature does not match");
  }
  previous_signature = std::move(expected);
  return Status::OK();
}

Result<size_t> AwsChunkedSource::State::PassThrough(char* buf, size_t n) {
  size_t want = static_cast<size_t>(std::min<uint64_t>(n, unsigned_left));
  size_t got;
  if (in_pos < in.size()) {
    got = std::min(want, in.size() - in_pos);
    std::memcpy(buf, in.data() + in_pos, got);
    in_pos += got;
  } else {
    ASSIGN_OR_RETURN(got, raw->Read(buf, want));
    if (got == 0) return OutOfRange("aws-chunked: body ended early");
  }
  unsigned_left -= got;
  need_chunk_end = unsigned_left == 0;
  return got;
}

// Appends at least one raw byte to `in`; the unparsed tail kept is at most a
// line, since Fill is only needed while looking for a line end or a CRLF.
Status AwsChunkedSource::State::Fill() {
  in.erase(0, in_pos);
  in_pos = 0;
  size_t old_size = in.size();
  in.resize(old_size + kRawReadBytes);
  Result<size_t> got = raw->Read(in.data() + old_size, kRawReadBytes);
  in.resize(old_size + (got.ok() ? *got : 0));
  if (!got.ok()) return got.status();
  if (*got == 0) return OutOfRange("aws-chunked: body ended early");
  return Status::OK();
}

Status AwsChunkedSource::State::ReadLine(std::string* line, bool allow_bare_lf) {
  while (true) {
    size_t lf = in.find('\n', in_pos);
    size_t length = (lf == std::string::npos ? in.size() : lf) - in_pos;
    if (length > kMaxChunkLineBytes) return InvalidArgument("aws-chunked: line too long");
    if (lf == std::string::npos) {
      RETURN_IF_ERROR(Fill());
      continue;
    }
    std::string_view text(in.data() + in_pos, length);
    in_pos = lf + 1;
    if (!text.empty() && text.back() == '\r') {
      text.remove_suffix(1);
    } else if (!allow_bare_lf) {
      return InvalidArgument("aws-chunked: line does not end with CRLF");
    }
    line->assign(text);
    return Status::OK();
  }
}

Status AwsChunkedSource::State::ExpectCrlf() {
  while (in.size() - in_pos < 2) RETURN_IF_ERROR(Fill());
  if (in.compare(in_pos, 2, "\r\n") != 0) {
    return InvalidArgument("aws-chunked: chunk data is not followed by CRLF");
  }
  in_pos += 2;
  return Status::OK();
}

AwsChunkedSource::AwsChunkedSource(ByteSource* raw, const AuthContext& ctx, uint64_t decoded_length)
    : raw_(raw),
      ctx_(ctx),
      decoded_length_(decoded_length),
      state_(std::make_shared<State>(raw_, ctx_, decoded_length_)) {}

Result<size_t> AwsChunkedSource::Read(char* buf, size_t n) {
  Result<size_t> r = state_->Read(buf, n);
  if (r.ok()) {
    produced_ += *r;
    if (state_->done && trailers_.empty()) trailers_ = state_->trailers;
  }
  return r;
}

size_t AwsChunkedSource::buffer_capacity() const {
  return state_->in.capacity() + state_->chunk.capacity();
}

}  // namespace strata::auth
