#include "remote/remote_store.h"

#include <algorithm>
#include <cstring>

#include "common/checksum.h"
#include "common/le_coding.h"
#include "common/encoding.h"
#include "common/log.h"

namespace strata::remote {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'R', 'O'};
constexpr size_t kMaxFooterBytes = 1 << 20;  // header (bucket, key) + record trailer

using Cursor = LeReader;

std::string HeaderBytes(const storage::DataHeader& h) {
  std::string out;
  for (const std::string* s : {&h.bucket, &h.key, &h.upload_id}) {
    PutLe32(out, static_cast<uint32_t>(s->size()));
    out += *s;
  }
  PutLe32(out, h.part_number);
  PutLe64(out, h.version_stamp);
  return out;
}

// What the remote side sees of an object besides its bytes: what it is (the
// names are URI-encoded and left out when long, to stay inside S3's 2 KB of
// user metadata).
// A multipart upload's size is not known when it starts: nullopt.
S3Client::Metadata Describing(const storage::DataHeader& h, std::optional<uint64_t> size) {
  S3Client::Metadata meta;
  if (size) meta.emplace_back("strata-size", std::to_string(*size));
  std::string bucket = UriEncode(h.bucket, true), key = UriEncode(h.key, true);
  if (bucket.size() + key.size() <= 1024) {
    meta.emplace_back("strata-bucket", bucket);
    meta.emplace_back("strata-key", key);
  }
  if (!h.upload_id.empty()) meta.emplace_back("strata-part", std::to_string(h.part_number));
  return meta;
}

class RemoteWriter : public storage::DataWriter {
 public:
  RemoteWriter(S3Client* client, std::string key, storage::DataHeader header, size_t part_bytes)
      : client_(client), key_(std::move(key)), header_(std::move(header)), part_bytes_(part_bytes) {}
  ~RemoteWriter() override {
    if (!done_) Abort();
  }

  Status Append(std::string_view data) override {
    if (done_) return Internal("append after finish");
    RETURN_IF_ERROR(failed_);
    size_ += data.size();
    while (!data.empty()) {
      size_t take = std::min(data.size(), part_bytes_ - buffer_.size());
      buffer_.append(data.substr(0, take));
      data.remove_prefix(take);
      if (buffer_.size() == part_bytes_) {
        failed_ = SendPart();
        RETURN_IF_ERROR(failed_);
      }
    }
    return Status::OK();
  }

  Status Finish(std::string_view trailer) override {
    if (done_) return Internal("finish twice");
    RETURN_IF_ERROR(failed_);
    buffer_ += EncodeFooter(header_, trailer, size_);
    Status st;
    if (upload_id_.empty()) {
      st = client_->PutObject(key_, std::move(buffer_), Describing(header_, size_));
    } else {
      st = SendPart();
      if (st.ok()) st = client_->CompleteMultipartUpload(key_, upload_id_, etags_);
    }
    if (!st.ok()) {
      Abort();
      return st;
    }
    done_ = true;
    return Status::OK();
  }

  void Abort() override {
    done_ = true;
    if (upload_id_.empty()) return;
    Status st = client_->AbortMultipartUpload(key_, upload_id_);
    if (!st.ok() && st.code() != Code::kNotFound) {
      // Left for AbortStaleUploads at the next start.
      STRATA_LOG("remote pool: cannot abort the upload of %s: %s", key_.c_str(),
                 st.ToString().c_str());
    }
    upload_id_.clear();
  }

 private:
  Status SendPart() {
    if (upload_id_.empty()) {
      ASSIGN_OR_RETURN(upload_id_, client_->CreateMultipartUpload(key_, Describing(header_, std::nullopt)));
    }
    std::string part;
    part.swap(buffer_);
    buffer_.reserve(part_bytes_);
    ASSIGN_OR_RETURN(std::string etag, client_->UploadPart(key_, upload_id_,
                                                           static_cast<int>(etags_.size() + 1),
                                                           std::move(part)));
    etags_.push_back(std::move(etag));
    return Status::OK();
  }

  S3Client* client_;
  std::string key_;
  storage::DataHeader header_;
  size_t part_bytes_;
  std::string buffer_;
  uint64_t size_ = 0;
  std::string upload_id_;
  std::vector<std::string> etags_;
  Status failed_;
  bool done_ = false;
};

// Opened without a round trip (HEAD of an archived object needs only its
// record, and must answer while the endpoint is away); the first read checks
// that the remote object holds the data the record describes.
class RemoteReader : public storage::DataReader {
 public:
  RemoteReader(S3Client* client, std::string key, uint64_t size)
      : client_(client), key_(std::move(key)), size_(size) {}
  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) override {
    if (!checked_) {
      RETURN_IF_ERROR(Check());
      checked_ = true;
    }
    if (offset >= size_) return size_t{0};
    n = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
    size_t done = 0;
    while (done < n) {
      ASSIGN_OR_RETURN(size_t got, client_->GetRange(key_, offset + done, buf + done, n - done));
      if (got == 0) {
        return Corruption("remote object " + key_ + " is shorter than its data (" +
                          std::to_string(size_) + " bytes)");
      }
      done += got;
    }
    return done;
  }
  uint64_t size() const override { return size_; }

 private:
  // The object holds the data and then its footer.
  Status Check() {
    ASSIGN_OR_RETURN(S3Client::Head head, client_->HeadObject(key_));
    if (head.size < size_ + kFooterTailBytes) {
      return Corruption("remote object " + key_ + " holds " + std::to_string(head.size) +
                        " bytes, fewer than its " + std::to_string(size_) + " bytes of data");
    }
    for (const auto& [name, value] : head.meta) {
      if (name == "strata-size" && value != std::to_string(size_)) {
        return Corruption("remote object " + key_ + " describes " + value +
                          " bytes of data, the record " + std::to_string(size_));
      }
    }
    return Status::OK();
  }

  S3Client* client_;
  std::string key_;
  uint64_t size_;
  bool checked_ = false;
};

}  // namespace

std::string EncodeFooter(const storage::DataHeader& header, std::string_view trailer,
                         uint64_t data_size) {
  std::string out = HeaderBytes(header);
  const uint32_t header_len = static_cast<uint32_t>(out.size());
  out += trailer;
  PutLe32(out, header_len);
  PutLe32(out, static_cast<uint32_t>(trailer.size()));
  PutLe64(out, data_size);
  PutLe32(out, Crc32c(out.data(), out.size()));
  out.append(kMagic, sizeof(kMagic));
  return out;
}

std::optional<size_t> FooterLength(std::string_view tail) {
  if (tail.size() != kFooterTailBytes) return std::nullopt;
  if (std::memcmp(tail.data() + 20, kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  const uint64_t total = GetLe(tail, 0, 4) + GetLe(tail, 4, 4) + kFooterTailBytes;
  if (total > kMaxFooterBytes) return std::nullopt;
  return static_cast<size_t>(total);
}

std::optional<Footer> DecodeFooter(std::string_view footer) {
  if (footer.size() < kFooterTailBytes) return std::nullopt;
  std::string_view tail = footer.substr(footer.size() - kFooterTailBytes);
  auto len = FooterLength(tail);
  if (!len || *len != footer.size()) return std::nullopt;
  const size_t covered = footer.size() - 12;  // everything before the CRC and the magic
  if (Crc32c(footer.data(), covered) != GetLe(tail, 16, 4)) return std::nullopt;
  const size_t header_len = GetLe(tail, 0, 4), trailer_len = GetLe(tail, 4, 4);
  Cursor c{footer.substr(0, header_len)};
  Footer f;
  f.header.bucket = c.String();
  f.header.key = c.String();
  f.header.upload_id = c.String();
  f.header.part_number = static_cast<uint32_t>(c.Int(4));
  f.header.version_stamp = c.Int(8);
  if (!c.ok || c.at != header_len) return std::nullopt;
  f.trailer = std::string(footer.substr(header_len, trailer_len));
  f.data_size = GetLe(tail, 8, 8);
  return f;
}

Result<std::unique_ptr<RemoteDataStore>> RemoteDataStore::Open(RemoteOptions options) {
  if (options.part_bytes < (5u << 20)) {
    return InvalidArgument("a remote pool's part size must be at least 5 MiB");
  }
  ASSIGN_OR_RETURN(auto client, S3Client::Create(options.endpoint));
  return std::unique_ptr<RemoteDataStore>(new RemoteDataStore(std::move(options), std::move(client)));
}

RemoteDataStore::~RemoteDataStore() = default;

std::string RemoteDataStore::Describe() const {
  return client_->Describe() + "/" + options_.prefix;
}

Status RemoteDataStore::Check() { return client_->HeadBucket(); }

Result<std::unique_ptr<storage::DataWriter>> RemoteDataStore::Create(
    const std::string& id, const storage::DataHeader& header) {
  return std::unique_ptr<storage::DataWriter>(
      new RemoteWriter(client_.get(), KeyOf(id), header, options_.part_bytes));
}

Result<std::unique_ptr<storage::DataReader>> RemoteDataStore::Open(const std::string& id,
                                                                    uint64_t size) {
  return std::unique_ptr<storage::DataReader>(new RemoteReader(client_.get(), KeyOf(id), size));
}

Status RemoteDataStore::Remove(const std::string& id) { return client_->DeleteObject(KeyOf(id)); }

Result<std::vector<std::string>> RemoteDataStore::ListIds() {
  std::vector<std::string> ids;
  std::string token;
  do {
    ASSIGN_OR_RETURN(ListPage page, client_->ListObjects(options_.prefix, token));
    for (const ListedObject& o : page.objects) {
      if (!o.key.starts_with(options_.prefix)) continue;
      std::string id = o.key.substr(options_.prefix.size());
      // Only names strata gives data (hex ids): anything else under the
      // prefix is not this store's to remove.
      if (id.empty() || id.size() > 64 ||
          !std::all_of(id.begin(), id.end(), [](char ch) {
            return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
          })) {
        continue;
      }
      ids.push_back(std::move(id));
    }
    token = page.next_token;
  } while (!token.empty());
  return ids;
}

Result<std::pair<storage::DataHeader, std::string>> RemoteDataStore::ReadHeaderAndTrailer(
    const std::string& id) {
  const std::string key = KeyOf(id);
  ASSIGN_OR_RETURN(S3Client::Head head, client_->HeadObject(key));
  auto bad = [&](const char* what) {
    return Corruption("remote object " + key + ": " + what);
  };
  if (head.size < kFooterTailBytes) return bad("too short for a footer");
  std::string tail(kFooterTailBytes, '\0');
  ASSIGN_OR_RETURN(size_t got, client_->GetRange(key, head.size - kFooterTailBytes, tail.data(),
                                                 tail.size()));
  if (got != tail.size()) return bad("its tail cannot be read");
  auto len = FooterLength(tail);
  if (!len || *len > head.size) return bad("no strata footer");
  std::string footer(*len, '\0');
  ASSIGN_OR_RETURN(got, client_->GetRange(key, head.size - *len, footer.data(), footer.size()));
  if (got != footer.size()) return bad("its footer cannot be read");
  auto f = DecodeFooter(footer);
  if (!f) return bad("a damaged footer");
  if (f->data_size + footer.size() != head.size) return bad("a footer that does not fit");
  return std::make_pair(std::move(f->header), std::move(f->trailer));
}

Result<size_t> RemoteDataStore::AbortStaleUploads() {
  ASSIGN_OR_RETURN(std::vector<ListedUpload> uploads, client_->ListMultipartUploads(options_.prefix));
  size_t aborted = 0;
  for (const ListedUpload& u : uploads) {
    if (!u.key.starts_with(options_.prefix)) continue;
    Status st = client_->AbortMultipartUpload(u.key, u.upload_id);
    if (!st.ok() && st.code() != Code::kNotFound) return st;
    ++aborted;
  }
  return aborted;
}

}  // namespace strata::remote
