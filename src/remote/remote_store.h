// RemoteDataStore: a pool whose data lives in a bucket of another S3
// endpoint (the cold tier as a remote bucket; docs/tiers.md). Each data id
// is one ordinary object PREFIX<id> there: the data's bytes, then a footer
// with the header and trailer strata needs to describe them (format in
// docs/formats/remote-object.md), so that the remote side can list, copy and
// back them up as objects and strata can rebuild what it keeps about them.
//
// A write is buffered up to part_bytes and sent as one PUT, or as a
// multipart upload of part_bytes parts when it is larger; Finish returns
// when the endpoint has acknowledged the whole object (the remote side's
// durability stands in for fsync). Open makes no request (a record's HEAD
// answers while the endpoint is away); the first read checks the object
// against the record, and reads are ranged GETs. Uploads left
// incomplete by a crash are aborted by AbortStaleUploads at start-up.
//
// The prefix must be this server's alone: the orphan sweep removes objects
// under it that no record names.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "remote/s3_client.h"
#include "storage/data_store.h"

namespace strata::remote {

struct RemoteOptions {
  Endpoint endpoint;
  std::string prefix;                 // "" or ending in '/' is usual; any string works
  size_t part_bytes = 8u << 20;       // >= 5 MiB (S3's smallest non-final part)
};

class RemoteDataStore : public storage::DataStore {
 public:
  static Result<std::unique_ptr<RemoteDataStore>> Open(RemoteOptions options);
  ~RemoteDataStore() override;

  Result<std::unique_ptr<storage::DataWriter>> Create(const std::string& id,
                                                      const storage::DataHeader& header) override;
  Result<std::unique_ptr<storage::DataReader>> Open(const std::string& id, uint64_t size) override;
  Status Remove(const std::string& id) override;
  size_t inline_max_bytes() const override { return 0; }
  bool remote() const override { return true; }
  Result<std::vector<std::string>> ListIds() override;
  Result<std::pair<storage::DataHeader, std::string>> ReadHeaderAndTrailer(
      const std::string& id) override;

  // Whether the endpoint answers and the bucket is there.
  Status Check();
  // Aborts multipart uploads under the prefix (what a crash mid-write left);
  // the number aborted.
  Result<size_t> AbortStaleUploads();

  // "http://host:port/bucket/prefix", for messages and `admin tiers`.
  std::string Describe() const;

 private:
  explicit RemoteDataStore(RemoteOptions o, std::unique_ptr<S3Client> c)
      : options_(std::move(o)), client_(std::move(c)) {}
  std::string KeyOf(const std::string& id) const { return options_.prefix + id; }

  RemoteOptions options_;
  std::unique_ptr<S3Client> client_;
};

// The footer format (exposed for tests and the fuzz target).
std::string EncodeFooter(const storage::DataHeader& header, std::string_view trailer,
                         uint64_t data_size);
inline constexpr size_t kFooterTailBytes = 28;  // lengths, data size, CRC32C, magic
struct Footer {
  storage::DataHeader header;
  std::string trailer;
  uint64_t data_size = 0;
};
// From the last kFooterTailBytes of an object: the footer's whole length
// (nullopt if the tail is not one).
std::optional<size_t> FooterLength(std::string_view tail);
// The whole footer (its last bytes the tail); nullopt if malformed.
std::optional<Footer> DecodeFooter(std::string_view footer);

}  // namespace strata::remote
