/*
 * strata_c.h — the C ABI of the strata KV-cache client.
 *
 * A narrow, stable surface over the C++ client (strata/kv_client.h) for
 * engines and bindings that cannot link C++: opaque handles, int return
 * codes, caller-owned buffers, no callbacks, no exceptions. Protocol:
 * docs/formats/kv-protocol.md.
 *
 * Usage
 *
 *   strata_kv_client* c;
 *   int rc = strata_kv_connect("127.0.0.1", 7450, ak, sk, 60000, &c);
 *   if (rc) { fprintf(stderr, "%s\n", strata_kv_last_error(NULL)); ... }
 *   strata_kv_ns_desc d = {0};
 *   d.model_id = "llama-3-8b"; d.weights_fingerprint = "sha256:..."; d.kv_dtype = "float16";
 *   d.kv_layout = "NHD"; d.tokens_per_block = 16; d.block_bytes = 2 << 20;
 *   d.tp_size = 1; d.pp_size = 1; d.hash_algorithm = "sha256";
 *   strata_kv_ns ns;
 *   rc = strata_kv_open_namespace(c, &d, &ns);
 *   rc = strata_kv_lookup(c, ns.handle, keys, key_lens, n, &hits);
 *   strata_kv_get_item items[n];  -- key, dst, dst_capacity filled in
 *   rc = strata_kv_get(c, ns.handle, items, n);   -- items[i].status per key
 *   strata_kv_close(c);
 *
 * Return codes
 *   Every function returning int returns 0 (STRATA_KV_OK) on success and a
 *   positive STRATA_KV_* code otherwise. Codes 1..8 come from the server
 *   (the protocol's status byte, 1..9); 100 and up arise in the client. Batch calls
 *   return 0 when the request as a whole succeeded and report each item's
 *   outcome in its `status` field (or in the `statuses` array).
 *   strata_kv_last_error() returns a message for the calling thread's last
 *   failed call (valid until that thread's next call).
 *
 * Threads
 *   A client may be used from several threads; their calls are pipelined on
 *   the one connection (each waits for its own reply). After STRATA_KV_IO_ERROR or STRATA_KV_PROTOCOL_ERROR the
 *   connection is closed and every later call returns STRATA_KV_CLOSED;
 *   namespace handles belong to their connection.
 *
 * Memory
 *   All buffers are the caller's. Get writes straight into dst (no staging
 *   copy); Put sends straight from src (no copy) and src must stay unchanged
 *   until strata_kv_put returns. Keys are 16..64 bytes. Put sends each block's
 *   CRC32C; Get verifies whole-block reads against the stored CRC32C (a
 *   mismatch is STRATA_KV_CORRUPT for that item).
 */
#ifndef STRATA_STRATA_C_H_
#define STRATA_STRATA_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STRATA_KV_API __attribute__((visibility("default")))
#else
#define STRATA_KV_API
#endif

/* Result codes (the values of strata::kv::KvCode). */
enum {
  STRATA_KV_OK = 0,
  STRATA_KV_NOT_FOUND = 1,         /* key or namespace absent */
  STRATA_KV_EXISTS = 2,            /* put-if-absent: already stored */
  STRATA_KV_INVALID = 3,           /* malformed request or bad argument */
  STRATA_KV_AUTH_FAILED = 4,       /* wrong access key or secret */
  STRATA_KV_DENIED = 5,            /* not authenticated / namespace not allowed */
  STRATA_KV_TOO_LARGE = 6,         /* length != block_bytes, or over quota */
  STRATA_KV_UNAVAILABLE = 7,       /* storage failure, retry later */
  STRATA_KV_INTERNAL = 8,          /* server bug */
  STRATA_KV_BAD_CHECKSUM = 9,      /* put: the bytes do not match their CRC32C */
  STRATA_KV_IO_ERROR = 100,        /* socket error/timeout; connection closed */
  STRATA_KV_PROTOCOL_ERROR = 101,  /* unparsable reply; connection closed */
  STRATA_KV_CLOSED = 102,          /* connection closed earlier */
  STRATA_KV_BUFFER_TOO_SMALL = 103, /* a GET item longer than its dst */
  STRATA_KV_CORRUPT = 104           /* a GET item failed its CRC32C: a miss */
};

typedef struct strata_kv_client strata_kv_client; /* opaque */

/* Namespace descriptor; every string must be non-NULL (use "" for none).
 * Descriptors differing in any field but quota_bytes/ttl_s are different
 * namespaces: a clean miss, never a wrong hit. */
typedef struct strata_kv_ns_desc {
  const char* model_id;
  const char* weights_fingerprint;
  const char* kv_dtype;
  const char* kv_layout;
  uint32_t tokens_per_block;
  uint64_t block_bytes; /* exact size of every block */
  uint16_t tp_size, tp_rank, pp_size, pp_rank;
  const char* hash_algorithm;
  uint64_t hash_seed;
  const char* tenant_salt;
  uint64_t quota_bytes; /* 0: server default */
  uint32_t ttl_s;       /* 0: none */
} strata_kv_ns_desc;

typedef struct strata_kv_ns {
  uint64_t handle;    /* pass to the calls below; valid on this connection */
  uint8_t digest[32]; /* SHA-256 of the descriptor's identity fields */
  char bucket[64];    /* S3 bucket holding the blocks (NUL-terminated) */
} strata_kv_ns;

typedef struct strata_kv_get_item {
  const uint8_t* key;    /* in */
  uint8_t key_len;       /* in: 16..64 */
  uint64_t offset;       /* in: byte offset within the block */
  uint64_t length;       /* in: bytes wanted, 0 = to the end of the block */
  void* dst;             /* in: destination */
  uint64_t dst_capacity; /* in */
  int status;            /* out: STRATA_KV_OK, _NOT_FOUND, _BUFFER_TOO_SMALL, ... */
  uint64_t bytes;        /* out: bytes written into dst */
} strata_kv_get_item;

typedef struct strata_kv_put_item {
  const uint8_t* key;    /* in */
  uint8_t key_len;       /* in: 16..64 */
  const uint8_t* parent; /* in: previous block of the chain, NULL = root */
  uint8_t parent_len;    /* in: 0 = root */
  const void* src;       /* in: block bytes (unchanged until the call returns) */
  uint64_t length;       /* in: must equal the namespace's block_bytes */
  int status;            /* out: STRATA_KV_OK (stored), _EXISTS, _TOO_LARGE, ... */
} strata_kv_put_item;

typedef struct strata_kv_stats {
  uint64_t blocks, bytes, hits, misses;
  uint64_t bytes_served, bytes_requested, evictions, lookups;
} strata_kv_stats;

/* Connects and authenticates. timeout_ms bounds each send/recv (0 = none). */
STRATA_KV_API int strata_kv_connect(const char* host, uint16_t port, const char* access_key,
                                    const char* secret_key, uint32_t timeout_ms,
                                    strata_kv_client** out);
/* The same over TLS (a server started with --kv-tls): the server's
 * certificate must chain to ca_file (PEM; NULL or "" = the system's trust
 * store) and name server_name (NULL or "" = host). */
STRATA_KV_API int strata_kv_connect_tls(const char* host, uint16_t port, const char* access_key,
                                        const char* secret_key, uint32_t timeout_ms,
                                        const char* ca_file, const char* server_name,
                                        strata_kv_client** out);
/* Closes the connection and frees the client (NULL is ignored). */
STRATA_KV_API void strata_kv_close(strata_kv_client* client);

STRATA_KV_API int strata_kv_ping(strata_kv_client* client);
STRATA_KV_API int strata_kv_open_namespace(strata_kv_client* client, const strata_kv_ns_desc* desc,
                                           strata_kv_ns* out);

/* keys[i] points at key_lens[i] bytes. *prefix_len = leading stored keys. */
STRATA_KV_API int strata_kv_lookup(strata_kv_client* client, uint64_t ns,
                                   const uint8_t* const* keys, const uint8_t* key_lens, uint32_t n,
                                   uint32_t* prefix_len);
/* present: caller array of n bytes, 1 where keys[i] is stored, else 0. */
STRATA_KV_API int strata_kv_lookup_each(strata_kv_client* client, uint64_t ns,
                                        const uint8_t* const* keys, const uint8_t* key_lens,
                                        uint32_t n, uint8_t* present);
STRATA_KV_API int strata_kv_get(strata_kv_client* client, uint64_t ns, strata_kv_get_item* items,
                                uint32_t n);
STRATA_KV_API int strata_kv_put(strata_kv_client* client, uint64_t ns, strata_kv_put_item* items,
                                uint32_t n);
/* statuses: caller array of n ints, filled per key. */
STRATA_KV_API int strata_kv_delete(strata_kv_client* client, uint64_t ns,
                                   const uint8_t* const* keys, const uint8_t* key_lens, uint32_t n,
                                   int* statuses);
STRATA_KV_API int strata_kv_pin(strata_kv_client* client, uint64_t ns, uint32_t ttl_ms,
                                const uint8_t* const* keys, const uint8_t* key_lens, uint32_t n,
                                int* statuses);
STRATA_KV_API int strata_kv_unpin(strata_kv_client* client, uint64_t ns, const uint8_t* const* keys,
                                  const uint8_t* key_lens, uint32_t n, int* statuses);
STRATA_KV_API int strata_kv_stats_get(strata_kv_client* client, uint64_t ns, strata_kv_stats* out);

/* "OK", "NOT_FOUND", ...; "UNKNOWN" for other values. Static storage. */
STRATA_KV_API const char* strata_kv_code_name(int code);
/* Message of this thread's last failed call ("" if none). The client
 * argument is accepted for symmetry and may be NULL. */
STRATA_KV_API const char* strata_kv_last_error(const strata_kv_client* client);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_STRATA_C_H_ */
