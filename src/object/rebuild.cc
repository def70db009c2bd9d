#include "object/rebuild.h"

#include <map>
#include <set>

#include "common/log.h"
#include "meta/keys.h"
#include "object/record.h"

namespace strata::object {

namespace {

struct Scan {
  std::map<std::string, BucketRecord> buckets;
  std::map<std::pair<std::string, std::string>, ObjectRecord> latest;  // (bucket, key)
  std::vector<std::string> losers;  // data ids of replaced versions
  std::set<std::string> parts;      // data ids of parts
};

void Consider(Scan& scan, const std::string& bucket, const std::string& key, ObjectRecord rec,
              RebuildReport& report) {
  auto [it, inserted] = scan.latest.try_emplace({bucket, key}, rec);
  if (inserted) return;
  ++report.replaced_versions;
  if (rec.version_stamp > it->second.version_stamp) std::swap(it->second, rec);
  for (const std::string& id : rec.DataFiles()) scan.losers.push_back(id);
}

Status Flush(meta::KvStore& kv, meta::WriteBatch& batch, bool sync) {
  if (batch.empty()) return Status::OK();
  Status st = kv.Write(batch, sync);
  batch = meta::WriteBatch();
  return st;
}

}  // namespace

Result<RebuildReport> RebuildIndex(storage::ErasureDataStore& store, meta::KvStore& kv,
                                   const std::function<void(uint64_t, uint64_t)>& progress) {
  auto it = kv.NewIterator();
  it->Seek("");
  if (it->Valid()) return PreconditionFailed("the metadata store is not empty");

  RebuildReport report;
  ASSIGN_OR_RETURN(auto ids, store.ListIds());
  Scan scan;
  for (const std::string& id : ids) {
    if (++report.ids_scanned % 256 == 0 && progress) progress(report.ids_scanned, ids.size());
    auto ht = store.ReadHeaderAndTrailer(id);
    auto trailer = ht.ok() ? DecodeTrailer(ht->second) : std::nullopt;
    if (!trailer) {
      ++report.unreadable;
      STRATA_LOG("rebuild: %s has no readable header/trailer; kept", id.c_str());
      continue;
    }
    const storage::DataHeader& header = ht->first;
    auto [kind, payload] = *trailer;
    if (kind == TrailerKind::kBucket) {
      auto rec = DecodeBucketRecord(payload);
      if (rec) scan.buckets[header.bucket] = *rec;
      continue;
    }
    if (kind == TrailerKind::kPart) {
      scan.parts.insert(id);
      continue;
    }
    auto rec = DecodeObjectRecord(payload);
    if (!rec) {
      ++report.unreadable;
      continue;
    }
    Consider(scan, header.bucket, header.key, std::move(*rec), report);
  }
  if (progress) progress(ids.size(), ids.size());

  meta::WriteBatch batch;
  for (const auto& [key, rec] : scan.latest) {
    if (!scan.buckets.count(key.first)) {  // a bucket whose marker is gone
      BucketRecord b;
      b.created_ns = rec.mtime_ns;
      b.region = "us-east-1";
      scan.buckets[key.first] = b;
    }
    for (const PartRef& p : rec.parts) scan.parts.erase(p.file_id);
    batch.Put(meta::ObjectVersionKey(key.first, key.second, rec.version_stamp),
              EncodeObjectRecord(rec));
    ++report.objects;
    if (batch.ops().size() >= 1000) RETURN_IF_ERROR(Flush(kv, batch, false));
  }
  for (const auto& [name, rec] : scan.buckets) {
    batch.Put(meta::BucketKey(name), EncodeBucketRecord(rec));
    ++report.buckets;
  }
  // What no surviving record references is garbage: collected through G
  // records, exactly as the engine does at start-up.
  for (const std::string& id : scan.losers) batch.Put(meta::GarbageKey(id), "");
  for (const std::string& id : scan.parts) {
    batch.Put(meta::GarbageKey(id), "");
    ++report.orphan_parts;
  }
  RETURN_IF_ERROR(Flush(kv, batch, true));
  return report;
}

}  // namespace strata::object
