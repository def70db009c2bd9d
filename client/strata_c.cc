// The C ABI (include/strata/strata_c.h): thin shims over KvClient. Nothing
// here may throw across the boundary, so every entry point catches.
#include "strata/strata_c.h"

#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "strata/kv_client.h"

using strata::kv::GetItem;
using strata::kv::KeyView;
using strata::kv::KvClient;
using strata::kv::KvCode;
using strata::kv::KvStatus;
using strata::kv::PutItem;

struct strata_kv_client {
  std::unique_ptr<KvClient> impl;
};

namespace {

thread_local std::string t_last_error;

int Report(const KvStatus& s) {
  if (s.ok()) return STRATA_KV_OK;
  t_last_error = s.ToString();
  return static_cast<int>(s.code());
}

int Fail(int code, const char* message) {
  t_last_error = std::string(strata::kv::KvCodeName(static_cast<KvCode>(code))) + ": " + message;
  return code;
}

// Runs fn() and turns any escaping exception (allocation failure) into INTERNAL.
template <typename Fn>
int Guard(Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return Fail(STRATA_KV_INTERNAL, e.what());
  } catch (...) {
    return Fail(STRATA_KV_INTERNAL, "unknown exception");
  }
}

std::vector<KeyView> Keys(const uint8_t* const* keys, const uint8_t* key_lens, uint32_t n) {
  std::vector<KeyView> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    out.emplace_back(reinterpret_cast<const char*>(keys[i]), key_lens[i]);
  }
  return out;
}

const char* Str(const char* s) { return s ? s : ""; }

int StatusesOut(const KvStatus& s, const std::vector<KvCode>& codes, int* statuses, uint32_t n) {
  if (s.ok()) {
    for (uint32_t i = 0; i < n && i < codes.size(); ++i) statuses[i] = static_cast<int>(codes[i]);
  }
  return Report(s);
}

}  // namespace

extern "C" {

namespace {

int ConnectWith(const char* host, uint16_t port, const char* access_key, const char* secret_key,
                uint32_t timeout_ms, bool tls, const char* ca_file, const char* server_name,
                strata_kv_client** out) {
  return Guard([&] {
    if (!host || !access_key || !secret_key || !out) {
      return Fail(STRATA_KV_INVALID, "NULL argument");
    }
    *out = nullptr;
    strata::kv::ConnectOptions options;
    options.host = host;
    options.port = port;
    options.access_key = access_key;
    options.secret_key = secret_key;
    options.timeout_ms = timeout_ms;
    options.tls = tls;
    if (ca_file) options.tls_ca_file = ca_file;
    if (server_name) options.tls_server_name = server_name;
    auto client = std::make_unique<strata_kv_client>();
    int rc = Report(KvClient::Connect(options, &client->impl));
    if (rc == STRATA_KV_OK) *out = client.release();
    return rc;
  });
}

}  // namespace

int strata_kv_connect(const char* host, uint16_t port, const char* access_key,
                      const char* secret_key, uint32_t timeout_ms, strata_kv_client** out) {
  return ConnectWith(host, port, access_key, secret_key, timeout_ms, false, nullptr, nullptr, out);
}

int strata_kv_connect_tls(const char* host, uint16_t port, const char* access_key,
                          const char* secret_key, uint32_t timeout_ms, const char* ca_file,
                          const char* server_name, strata_kv_client** out) {
  return ConnectWith(host, port, access_key, secret_key, timeout_ms, true, ca_file, server_name,
                     out);
}

void strata_kv_close(strata_kv_client* client) { delete client; }

int strata_kv_ping(strata_kv_client* client) {
  return Guard([&] {
    if (!client) return Fail(STRATA_KV_INVALID, "NULL client");
    return Report(client->impl->Ping());
  });
}

int strata_kv_open_namespace(strata_kv_client* client, const strata_kv_ns_desc* desc,
                             strata_kv_ns* out) {
  return Guard([&] {
    if (!client || !desc || !out) return Fail(STRATA_KV_INVALID, "NULL argument");
    strata::kv::NamespaceDescriptor d;
    d.model_id = Str(desc->model_id);
    d.weights_fingerprint = Str(desc->weights_fingerprint);
    d.kv_dtype = Str(desc->kv_dtype);
    d.kv_layout = Str(desc->kv_layout);
    d.tokens_per_block = desc->tokens_per_block;
    d.block_bytes = desc->block_bytes;
    d.tp_size = desc->tp_size;
    d.tp_rank = desc->tp_rank;
    d.pp_size = desc->pp_size;
    d.pp_rank = desc->pp_rank;
    d.hash_algorithm = Str(desc->hash_algorithm);
    d.hash_seed = desc->hash_seed;
    d.tenant_salt = Str(desc->tenant_salt);
    d.quota_bytes = desc->quota_bytes;
    d.ttl_s = desc->ttl_s;
    strata::kv::NamespaceInfo info;
    int rc = Report(client->impl->OpenNamespace(d, &info));
    if (rc != STRATA_KV_OK) return rc;
    if (info.bucket.size() >= sizeof(out->bucket)) {
      return Fail(STRATA_KV_PROTOCOL_ERROR, "bucket name longer than 63 bytes");
    }
    out->handle = info.handle;
    std::memcpy(out->digest, info.digest.data(), sizeof(out->digest));
    std::memset(out->bucket, 0, sizeof(out->bucket));
    std::memcpy(out->bucket, info.bucket.data(), info.bucket.size());
    return rc;
  });
}

int strata_kv_lookup(strata_kv_client* client, uint64_t ns, const uint8_t* const* keys,
                     const uint8_t* key_lens, uint32_t n, uint32_t* prefix_len) {
  return Guard([&] {
    if (!client || !prefix_len || (n && (!keys || !key_lens))) {
      return Fail(STRATA_KV_INVALID, "NULL argument");
    }
    auto k = Keys(keys, key_lens, n);
    return Report(client->impl->Lookup(ns, k, prefix_len));
  });
}

int strata_kv_lookup_each(strata_kv_client* client, uint64_t ns, const uint8_t* const* keys,
                          const uint8_t* key_lens, uint32_t n, uint8_t* present) {
  return Guard([&] {
    if (!client || (n && (!keys || !key_lens || !present))) {
      return Fail(STRATA_KV_INVALID, "NULL argument");
    }
    auto k = Keys(keys, key_lens, n);
    std::vector<bool> bits;
    int rc = Report(client->impl->LookupEach(ns, k, &bits));
    if (rc == STRATA_KV_OK) {
      for (uint32_t i = 0; i < n; ++i) present[i] = bits[i] ? 1 : 0;
    }
    return rc;
  });
}

int strata_kv_get(strata_kv_client* client, uint64_t ns, strata_kv_get_item* items, uint32_t n) {
  return Guard([&] {
    if (!client || (n && !items)) return Fail(STRATA_KV_INVALID, "NULL argument");
    std::vector<GetItem> v(n);
    for (uint32_t i = 0; i < n; ++i) {
      v[i].key = KeyView(reinterpret_cast<const char*>(items[i].key), items[i].key_len);
      v[i].offset = items[i].offset;
      v[i].length = items[i].length;
      v[i].dst = items[i].dst;
      v[i].dst_capacity = items[i].dst_capacity;
    }
    int rc = Report(client->impl->Get(ns, v));
    for (uint32_t i = 0; i < n; ++i) {
      items[i].status = rc == STRATA_KV_OK ? static_cast<int>(v[i].status) : rc;
      items[i].bytes = rc == STRATA_KV_OK ? v[i].bytes : 0;
    }
    return rc;
  });
}

int strata_kv_put(strata_kv_client* client, uint64_t ns, strata_kv_put_item* items, uint32_t n) {
  return Guard([&] {
    if (!client || (n && !items)) return Fail(STRATA_KV_INVALID, "NULL argument");
    std::vector<PutItem> v(n);
    for (uint32_t i = 0; i < n; ++i) {
      v[i].key = KeyView(reinterpret_cast<const char*>(items[i].key), items[i].key_len);
      if (items[i].parent && items[i].parent_len) {
        v[i].parent = KeyView(reinterpret_cast<const char*>(items[i].parent), items[i].parent_len);
      }
      v[i].data = items[i].src;
      v[i].length = items[i].length;
    }
    int rc = Report(client->impl->Put(ns, v));
    for (uint32_t i = 0; i < n; ++i) {
      items[i].status = rc == STRATA_KV_OK ? static_cast<int>(v[i].status) : rc;
    }
    return rc;
  });
}

int strata_kv_delete(strata_kv_client* client, uint64_t ns, const uint8_t* const* keys,
                     const uint8_t* key_lens, uint32_t n, int* statuses) {
  return Guard([&] {
    if (!client || (n && (!keys || !key_lens || !statuses))) {
      return Fail(STRATA_KV_INVALID, "NULL argument");
    }
    auto k = Keys(keys, key_lens, n);
    std::vector<KvCode> codes;
    KvStatus s = client->impl->Delete(ns, k, &codes);
    return StatusesOut(s, codes, statuses, n);
  });
}

int strata_kv_pin(strata_kv_client* client, uint64_t ns, uint32_t ttl_ms,
                  const uint8_t* const* keys, const uint8_t* key_lens, uint32_t n, int* statuses) {
  return Guard([&] {
    if (!client || (n && (!keys || !key_lens || !statuses))) {
      return Fail(STRATA_KV_INVALID, "NULL argument");
    }
    auto k = Keys(keys, key_lens, n);
    std::vector<KvCode> codes;
    KvStatus s = client->impl->Pin(ns, ttl_ms, k, &codes);
    return StatusesOut(s, codes, statuses, n);
  });
}

int strata_kv_unpin(strata_kv_client* client, uint64_t ns, const uint8_t* const* keys,
                    const uint8_t* key_lens, uint32_t n, int* statuses) {
  return Guard([&] {
    if (!client || (n && (!keys || !key_lens || !statuses))) {
      return Fail(STRATA_KV_INVALID, "NULL argument");
    }
    auto k = Keys(keys, key_lens, n);
    std::vector<KvCode> codes;
    KvStatus s = client->impl->Unpin(ns, k, &codes);
    return StatusesOut(s, codes, statuses, n);
  });
}

int strata_kv_stats_get(strata_kv_client* client, uint64_t ns, strata_kv_stats* out) {
  return Guard([&] {
    if (!client || !out) return Fail(STRATA_KV_INVALID, "NULL argument");
    strata::kv::NamespaceStats st;
    int rc = Report(client->impl->Stats(ns, &st));
    if (rc != STRATA_KV_OK) return rc;
    *out = strata_kv_stats{st.blocks,       st.bytes,           st.hits,      st.misses,
                           st.bytes_served, st.bytes_requested, st.evictions, st.lookups};
    return rc;
  });
}

const char* strata_kv_code_name(int code) {
  if (code < 0 || code > 255) return "UNKNOWN";
  return strata::kv::KvCodeName(static_cast<KvCode>(code));
}

const char* strata_kv_last_error(const strata_kv_client*) { return t_last_error.c_str(); }

}  // extern "C"
