// Multipart uploads: Create, UploadPart, Complete, Abort, ListParts,
// ListMultipartUploads.
#include "common/encoding.h"
#include "common/time_util.h"
#include "s3/ops/acl_request.h"
#include "s3/ops/object_write.h"
#include "s3/ops/sse.h"
#include "s3/ops/versioning.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

constexpr uint64_t kMaxPartBytes = 5ull << 30;

std::variant<uint32_t, Error> PartNumber(const Route& r) {
  const std::string* s = r.Query("partNumber");
  if (!s || s->empty() || s->size() > 5 || s->find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(*s) < 1 || std::stoul(*s) > object::kMaxParts) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "Part number must be an integer between 1 and 10000, inclusive");
  }
  return static_cast<uint32_t>(std::stoul(*s));
}

const std::string& UploadId(const Route& r) {
  static const std::string kEmpty;
  const std::string* id = r.Query("uploadId");
  return id ? *id : kEmpty;
}

Error UploadNotFound(OpContext& ctx) {
  auto b = ctx.engine.GetBucket(ctx.route.bucket);
  if (!b.ok() && b.status().code() == Code::kNotFound) return MakeError(ErrorCode::kNoSuchBucket);
  return MakeError(ErrorCode::kNoSuchUpload);
}

int ParseMax(const Route& r, std::string_view name, int fallback) {
  const std::string* v = r.Query(name);
  if (!v || v->empty() || v->size() > 9 || v->find_first_not_of("0123456789") != std::string::npos) {
    return fallback;
  }
  return std::min(std::stoi(*v), 1000);
}

// The checksum of the whole object from its parts' checksums: COMPOSITE is
// the checksum of the concatenated part checksums plus "-N"; FULL_OBJECT (CRCs
// only) combines the part CRCs as if computed over the whole body.
Result<std::string> ObjectChecksum(const object::ObjectRecord& rec) {
  if (rec.checksum_algorithm.empty()) return std::string();
  auto alg = ParseChecksumAlgorithm(rec.checksum_algorithm);
  if (!alg) return std::string();
  std::vector<std::string> raws;
  for (const object::PartRef& p : rec.parts) {
    auto raw = Base64Decode(p.checksum);
    if (p.checksum.empty() || !raw || raw->size() != ChecksumSize(*alg)) {
      return std::string();  // a part without a usable checksum: the object has none
    }
    raws.push_back(std::move(*raw));
  }
  if (raws.empty()) return std::string();
  if (rec.checksum_type == "FULL_OBJECT") {
    std::string acc = raws[0];
    for (size_t i = 1; i < raws.size(); ++i) {
      acc = CombineCrc(*alg, acc, raws[i], rec.parts[i].size_bytes);
    }
    return Base64Encode(acc);
  }
  return Base64Encode(CompositeChecksum(*alg, raws)) + "-" + std::to_string(raws.size());
}

}  // namespace

OpResult CreateMultipartUpload(OpContext& ctx) {
  object::UploadRecord upload;
  auto headers = HeadersFromRequest(ctx.http);
  if (auto* e = std::get_if<Error>(&headers)) return *e;
  upload.headers = std::get<object::ObjectHeaders>(headers);
  auto storage_class = StorageClassFromRequest(ctx.http);
  if (auto* e = std::get_if<Error>(&storage_class)) return *e;
  upload.storage_class = std::get<std::string>(storage_class);
  upload.pool = PoolOfClass(ctx.config, upload.storage_class);
  if (const std::string* tagging = ctx.http.Header("x-amz-tagging")) {
    auto tags = ParseTaggingHeader(*tagging);
    if (auto* e = std::get_if<Error>(&tags)) return *e;
    upload.tags = std::get<object::Tags>(tags);
  }
  if (const std::string* a = ctx.http.Header("x-amz-checksum-algorithm")) {
    auto alg = ParseChecksumAlgorithm(*a);
    if (!alg) return MakeError(ErrorCode::kInvalidRequest, "Invalid x-amz-checksum-algorithm");
    upload.checksum_algorithm = std::string(ChecksumName(*alg));
    upload.checksum_type = *alg == ChecksumAlgorithm::kCrc64Nvme ? "FULL_OBJECT" : "COMPOSITE";
    if (const std::string* t = ctx.http.Header("x-amz-checksum-type")) {
      if (*t != "FULL_OBJECT" && *t != "COMPOSITE") {
        return MakeError(ErrorCode::kInvalidRequest, "Invalid x-amz-checksum-type");
      }
      if ((*t == "FULL_OBJECT") != IsCrc(*alg) && *t == "FULL_OBJECT") {
        return MakeError(ErrorCode::kInvalidRequest,
                         "The FULL_OBJECT checksum type requires a CRC algorithm");
      }
      if (*t == "COMPOSITE" && *alg == ChecksumAlgorithm::kCrc64Nvme) {
        return MakeError(ErrorCode::kInvalidRequest, "CRC64NVME supports only FULL_OBJECT");
      }
      upload.checksum_type = *t;
    }
  }
  upload.owner = ctx.caller->principal.canonical_id;
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  auto lock = LockFromRequest(ctx.http, *bucket, ctx.engine.NowNs());
  if (auto* e = std::get_if<Error>(&lock)) return *e;
  upload.lock = std::get<std::optional<object::ObjectLock>>(lock);
  auto acl = AclForNewObject(ctx, ctx.http, *bucket);
  if (auto* e = std::get_if<Error>(&acl)) return *e;
  upload.object_owner = std::move(std::get<NewObjectAcl>(acl).owner);
  upload.acl = std::move(std::get<NewObjectAcl>(acl).acl);
  auto sse = SseForWrite(ctx, ctx.http, *bucket);
  if (auto* e = std::get_if<Error>(&sse)) return *e;
  SseWrite& enc = std::get<SseWrite>(sse);
  upload.sse = enc.sse;  // S3 / KMS: the upload's data key, wrapped; every part uses it
  auto id = ctx.engine.CreateUpload(ctx.route.bucket, ctx.route.key, upload,
                                    enc.sse.mode == object::SseMode::kCustomer ? enc.data_key : "");
  if (!id.ok()) return FromStatus(id.status(), ErrorCode::kNoSuchBucket);
  XmlWriter w;
  w.Open("InitiateMultipartUploadResult");
  w.Element("Bucket", ctx.route.bucket);
  w.Element("Key", ctx.route.key);
  w.Element("UploadId", *id);
  w.Close("InitiateMultipartUploadResult");
  std::string xml = w.Finish();
  http::Headers h = BaseHeaders(ctx);
  h.emplace_back("Content-Type", "application/xml");
  if (!upload.checksum_algorithm.empty()) {
    h.emplace_back("x-amz-checksum-algorithm", upload.checksum_algorithm);
    h.emplace_back("x-amz-checksum-type", upload.checksum_type);
  }
  AddSseHeaders(upload.sse, enc.customer_key_md5, &h);
  if (ctx.out.Start(200, h, xml.size()).ok()) ctx.out.Write(xml).IgnoreError();
  return std::nullopt;
}

OpResult UploadPart(OpContext& ctx, bool copy) {
  if (copy) return UploadPartCopy(ctx);
  auto number = PartNumber(ctx.route);
  if (auto* e = std::get_if<Error>(&number)) return *e;
  auto content_md5 = ContentMd5(ctx.http);
  if (auto* e = std::get_if<Error>(&content_md5)) return *e;
  const std::optional<std::string>& want_md5 = std::get<std::optional<std::string>>(content_md5);
  auto upload = ctx.engine.GetUpload(ctx.route.bucket, ctx.route.key, UploadId(ctx.route));
  if (!upload.ok()) {
    if (upload.status().code() == Code::kNotFound) return UploadNotFound(ctx);
    return FromStatus(upload.status());
  }
  std::optional<ChecksumAlgorithm> upload_alg;
  if (!upload->checksum_algorithm.empty()) upload_alg = ParseChecksumAlgorithm(upload->checksum_algorithm);
  auto checksum = ChecksumCheck::FromRequest(ctx.http, upload_alg);
  if (auto* e = std::get_if<Error>(&checksum)) return *e;
  ChecksumCheck& check = std::get<ChecksumCheck>(checksum);
  if (upload_alg && check.algorithm() != upload_alg) {
    return MakeError(ErrorCode::kInvalidRequest,
                     "The upload was created with " + upload->checksum_algorithm +
                         "; parts must use the same checksum algorithm");
  }
  auto part_key = SseForPart(ctx, *upload);
  if (auto* e = std::get_if<Error>(&part_key)) return *e;
  const SseWrite& enc = std::get<SseWrite>(part_key);
  auto writer = ctx.engine.NewPartWriter(ctx.route.bucket, ctx.route.key, UploadId(ctx.route),
                                         std::get<uint32_t>(number), enc.data_key);
  if (!writer.ok()) {
    if (writer.status().code() == Code::kNotFound) return UploadNotFound(ctx);
    return FromStatus(writer.status());
  }
  if (auto e = StreamBodyInto(ctx, **writer, check, kMaxPartBytes)) return *e;
  if (want_md5 && *want_md5 != (*writer)->Md5()) return MakeError(ErrorCode::kBadDigest);
  if (upload_alg) (*writer)->SetChecksum(upload->checksum_algorithm, check.value_base64(), "");
  auto rec = (*writer)->Commit();
  if (!rec.ok()) {
    if (rec.status().code() == Code::kNotFound) return UploadNotFound(ctx);
    return FromStatus(rec.status());
  }
  http::Headers h = {{"ETag", "\"" + rec->etag + "\""}};
  if (check.algorithm()) {
    h.emplace_back(std::string(ChecksumHeader(*check.algorithm())), check.value_base64());
  }
  AddSseHeaders(upload->sse, enc.customer_key_md5, &h);
  return SendEmpty(ctx, 200, h);
}

OpResult CompleteMultipartUpload(OpContext& ctx) {
  // The upload's encryption applies; SSE-C headers are accepted (AWS wants
  // them with checksums), x-amz-server-side-encryption is not.
  if (auto e = RefuseSseHeaders(ctx.http)) return *e;
  auto body = ReadSmallBody(ctx, 4 << 20);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto parsed = ParseCompleteMultipartUpload(std::get<std::string>(body));
  if (!parsed || parsed->empty()) return MakeError(ErrorCode::kMalformedXML);
  std::vector<object::CompletePart> parts;
  for (const CompletePartXml& p : *parsed) {
    if (p.part_number < 1 || p.part_number > static_cast<long>(object::kMaxParts)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "Part number must be an integer between 1 and 10000, inclusive");
    }
    parts.push_back({static_cast<uint32_t>(p.part_number), p.etag});
  }
  // Part checksums named in the request must be the stored ones.
  auto stored_parts = ctx.engine.ListParts(UploadId(ctx.route));
  if (!stored_parts.ok()) return FromStatus(stored_parts.status());
  for (const CompletePartXml& p : *parsed) {
    if (p.checksum.empty()) continue;
    for (const object::PartInfo& s : *stored_parts) {
      if (s.part_number == static_cast<uint32_t>(p.part_number) && s.record.checksum != p.checksum) {
        return MakeError(ErrorCode::kInvalidPart, "The checksum of part " +
                                                      std::to_string(p.part_number) + " differs");
      }
    }
  }
  object::CompleteProblem problem;
  auto rec = ctx.engine.CompleteUpload(ctx.route.bucket, ctx.route.key, UploadId(ctx.route), parts,
                                       &problem, WriteConditions(ctx.http), ObjectChecksum);
  if (!rec.ok()) {
    switch (problem) {
      case object::CompleteProblem::kInvalidPart: return MakeError(ErrorCode::kInvalidPart);
      case object::CompleteProblem::kInvalidPartOrder: return MakeError(ErrorCode::kInvalidPartOrder);
      case object::CompleteProblem::kEntityTooSmall: return MakeError(ErrorCode::kEntityTooSmall);
      case object::CompleteProblem::kNone: break;
    }
    const Status& st = rec.status();
    // An unknown upload id may also mean an unknown bucket: UploadNotFound tells.
    if (st.code() == Code::kNotFound && st.detail() == Detail::kUpload) return UploadNotFound(ctx);
    return WriteConditionError(st);  // NotFound of the bucket: NoSuchBucket, by its Detail
  }
  XmlWriter w;
  w.Open("CompleteMultipartUploadResult");
  w.Element("Location", "/" + ctx.route.bucket + "/" + UriEncode(ctx.route.key, false));
  w.Element("Bucket", ctx.route.bucket);
  w.Element("Key", ctx.route.key);
  w.Element("ETag", "\"" + rec->etag + "\"");
  if (!rec->checksum_value.empty()) {
    w.Element("Checksum" + rec->checksum_algorithm, rec->checksum_value);
    w.Element("ChecksumType", rec->checksum_type);
  }
  w.Close("CompleteMultipartUploadResult");
  http::Headers h;
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (bucket.ok() && NamesVersions(*bucket)) h.emplace_back("x-amz-version-id", rec->VersionId());
  if (rec->sse.mode != object::SseMode::kCustomer) AddSseHeaders(rec->sse, "", &h);
  return SendXml(ctx, w.Finish(), 200, h);
}

OpResult AbortMultipartUpload(OpContext& ctx) {
  Status st = ctx.engine.AbortUpload(ctx.route.bucket, ctx.route.key, UploadId(ctx.route));
  if (st.code() == Code::kNotFound) return UploadNotFound(ctx);
  if (!st.ok()) return FromStatus(st);
  return SendEmpty(ctx, 204);
}

OpResult ListParts(OpContext& ctx) {
  if (auto e = RefuseSseHeaders(ctx.http)) return *e;
  auto upload = ctx.engine.GetUpload(ctx.route.bucket, ctx.route.key, UploadId(ctx.route));
  if (!upload.ok()) {
    if (upload.status().code() == Code::kNotFound) return UploadNotFound(ctx);
    return FromStatus(upload.status());
  }
  auto parts = ctx.engine.ListParts(UploadId(ctx.route));
  if (!parts.ok()) return FromStatus(parts.status());
  int max_parts = ParseMax(ctx.route, "max-parts", 1000);
  uint32_t marker = 0;
  if (const std::string* m = ctx.route.Query("part-number-marker")) {
    marker = static_cast<uint32_t>(std::strtoul(m->c_str(), nullptr, 10));
  }
  XmlWriter w;
  w.Open("ListPartsResult");
  w.Element("Bucket", ctx.route.bucket);
  w.Element("Key", ctx.route.key);
  w.Element("UploadId", UploadId(ctx.route));
  WriteOwner(ctx, w, "Initiator", upload->owner);
  WriteOwner(ctx, w, "Owner", upload->owner);
  w.Element("StorageClass", upload->storage_class.empty() ? "STANDARD" : upload->storage_class);
  w.Element("PartNumberMarker", std::to_string(marker));
  std::vector<const object::PartInfo*> page;
  bool truncated = false;
  for (const object::PartInfo& p : *parts) {
    if (p.part_number <= marker) continue;
    if (static_cast<int>(page.size()) == max_parts) {
      truncated = true;
      break;
    }
    page.push_back(&p);
  }
  w.Element("NextPartNumberMarker", std::to_string(page.empty() ? 0 : page.back()->part_number));
  w.Element("MaxParts", std::to_string(max_parts));
  w.Element("IsTruncated", truncated ? "true" : "false");
  if (!upload->checksum_algorithm.empty()) {
    w.Element("ChecksumAlgorithm", upload->checksum_algorithm);
    w.Element("ChecksumType", upload->checksum_type);
  }
  for (const object::PartInfo* p : page) {
    w.Open("Part");
    w.Element("PartNumber", std::to_string(p->part_number));
    w.Element("LastModified", FormatIso8601(p->record.mtime_ns));
    w.Element("ETag", "\"" + p->record.etag + "\"");
    w.Element("Size", std::to_string(p->record.size_bytes));
    if (!p->record.checksum.empty()) {
      w.Element("Checksum" + upload->checksum_algorithm, p->record.checksum);
    }
    w.Close("Part");
  }
  w.Close("ListPartsResult");
  std::string xml = w.Finish();
  return SendXml(ctx, xml);
}

OpResult ListMultipartUploads(OpContext& ctx) {
  const Route& r = ctx.route;
  object::ListUploadsParams params;
  auto get = [&](std::string_view name) {
    const std::string* v = r.Query(name);
    return v ? *v : std::string();
  };
  params.prefix = get("prefix");
  params.delimiter = get("delimiter");
  params.key_marker = get("key-marker");
  params.upload_id_marker = get("upload-id-marker");
  params.max_uploads = ParseMax(r, "max-uploads", 1000);
  bool url = get("encoding-type") == "url";
  auto enc = [url](const std::string& s) { return url ? UriEncode(s, false) : s; };
  auto result = ctx.engine.ListUploads(r.bucket, params);
  if (!result.ok()) return FromStatus(result.status(), ErrorCode::kNoSuchBucket);
  XmlWriter w;
  w.Open("ListMultipartUploadsResult");
  w.Element("Bucket", r.bucket);
  w.Element("KeyMarker", enc(params.key_marker));
  w.Element("UploadIdMarker", params.upload_id_marker);
  if (result->is_truncated) {
    w.Element("NextKeyMarker", enc(result->next_key_marker));
    w.Element("NextUploadIdMarker", result->next_upload_id_marker);
  }
  w.Element("Prefix", enc(params.prefix));
  if (!params.delimiter.empty()) w.Element("Delimiter", enc(params.delimiter));
  w.Element("MaxUploads", std::to_string(params.max_uploads));
  if (url) w.Element("EncodingType", "url");
  w.Element("IsTruncated", result->is_truncated ? "true" : "false");
  for (const object::UploadInfo& u : result->uploads) {
    w.Open("Upload");
    w.Element("Key", enc(u.key));
    w.Element("UploadId", u.upload_id);
    WriteOwner(ctx, w, "Initiator", u.record.owner);
    WriteOwner(ctx, w, "Owner", u.record.owner);
    w.Element("StorageClass", u.record.storage_class.empty() ? "STANDARD" : u.record.storage_class);
    w.Element("Initiated", FormatIso8601(u.record.initiated_ns));
    if (!u.record.checksum_algorithm.empty()) {
      w.Element("ChecksumAlgorithm", u.record.checksum_algorithm);
    }
    w.Close("Upload");
  }
  for (const std::string& p : result->common_prefixes) {
    w.Open("CommonPrefixes");
    w.Element("Prefix", enc(p));
    w.Close("CommonPrefixes");
  }
  w.Close("ListMultipartUploadsResult");
  return SendXml(ctx, w.Finish());
}

}  // namespace strata::s3
