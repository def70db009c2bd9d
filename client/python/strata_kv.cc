// Python binding of the KV-cache client: module `strata_kv`.
//
//   c = strata_kv.Client("127.0.0.1", 7450, access_key, secret_key)
//   ns = c.open_namespace(model_id="m", weights_fingerprint="w", kv_dtype="float16",
//                         kv_layout="NHD", tokens_per_block=16, block_bytes=1 << 20)
//   hits = c.lookup(ns, [k0, k1, ...])                 # leading stored keys
//   st = c.get_into(ns, keys, [arr0, arr1, ...])        # filled in place
//   st = c.put(ns, keys, parents, [arr0, arr1, ...])    # sent from the arrays
//
// Buffers are any C-contiguous buffer-protocol objects (numpy arrays,
// memoryview slices, bytearray; bytes for put) or CPU torch tensors (any dtype,
// via data_ptr()); no copy is made on either path, and the GIL is released
// during the network I/O. Failures of a whole call raise strata_kv.Error
// (attributes .code, .code_name); per-key outcomes are status ints
// (strata_kv.OK, NOT_FOUND, EXISTS, ...).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kvcache/proto/frame.h"
#include "strata/kv_client.h"

namespace py = pybind11;
using strata::kv::GetItem;
using strata::kv::KeyView;
using strata::kv::KvClient;
using strata::kv::KvCode;
using strata::kv::KvStatus;
using strata::kv::PutItem;

namespace {

// strata_kv.Error; never released (a static py::object would be decref'd
// after the interpreter has gone).
PyObject* g_error = nullptr;

[[noreturn]] void Raise(const KvStatus& s) {
  py::object type = py::reinterpret_borrow<py::object>(g_error);
  py::object exc = type(s.ToString());
  exc.attr("code") = static_cast<int>(s.code());
  exc.attr("code_name") = strata::kv::KvCodeName(s.code());
  PyErr_SetObject(g_error, exc.ptr());
  throw py::error_already_set();
}

void Check(const KvStatus& s) {
  if (!s.ok()) Raise(s);
}

// A caller's memory region, held for the duration of one call. Buffer
// protocol first; otherwise a CPU torch tensor through data_ptr(). Must be
// released with the GIL held (the destructor runs PyBuffer_Release).
class Region {
 public:
  Region(py::handle obj, bool writable) {
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_CheckBuffer(obj.ptr())) {
      if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) throw py::error_already_set();
      has_view_ = true;
      data_ = view_.buf;
      size_ = static_cast<uint64_t>(view_.len);
      return;
    }
    if (py::hasattr(obj, "data_ptr") && py::hasattr(obj, "element_size")) {
      if (py::str(obj.attr("device").attr("type")).cast<std::string>() != "cpu") {
        throw py::type_error("strata_kv: only CPU tensors can be read into or sent from");
      }
      if (!obj.attr("is_contiguous")().cast<bool>()) {
        throw py::type_error("strata_kv: tensor is not contiguous");
      }
      keep_ = py::reinterpret_borrow<py::object>(obj);
      data_ = reinterpret_cast<void*>(obj.attr("data_ptr")().cast<uintptr_t>());
      size_ = obj.attr("numel")().cast<uint64_t>() * obj.attr("element_size")().cast<uint64_t>();
      return;
    }
    throw py::type_error(std::string("strata_kv: expected a buffer or a CPU tensor, got ") +
                         std::string(py::str(obj.get_type().attr("__name__"))));
  }
  ~Region() {
    if (has_view_) PyBuffer_Release(&view_);
  }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  void* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  Py_buffer view_{};
  bool has_view_ = false;
  py::object keep_;
  void* data_ = nullptr;
  uint64_t size_ = 0;
};

// Keys are copied (16..32 bytes each); block data never is.
std::vector<std::string> KeyList(py::handle seq, const char* what) {
  std::vector<std::string> out;
  for (py::handle k : seq) {
    if (k.is_none()) {
      out.emplace_back();
      continue;
    }
    if (PyBytes_Check(k.ptr())) {
      out.emplace_back(PyBytes_AS_STRING(k.ptr()), PyBytes_GET_SIZE(k.ptr()));
    } else if (PyObject_CheckBuffer(k.ptr())) {
      Py_buffer v;
      if (PyObject_GetBuffer(k.ptr(), &v, PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
      out.emplace_back(static_cast<const char*>(v.buf), v.len);
      PyBuffer_Release(&v);
    } else {
      throw py::type_error(std::string("strata_kv: ") + what + " must be bytes");
    }
  }
  return out;
}

std::vector<KeyView> Views(const std::vector<std::string>& keys) {
  return std::vector<KeyView>(keys.begin(), keys.end());
}

struct Namespace {
  uint64_t handle = 0;
  py::bytes digest;
  std::string bucket;
  uint64_t block_bytes = 0;
  py::dict descriptor;
  py::bytes manifest;
  bool manifest_matches = true;
};

uint64_t Handle(py::handle ns) {
  if (py::isinstance<Namespace>(ns)) return ns.cast<const Namespace&>().handle;
  return ns.cast<uint64_t>();
}

py::list StatusList(const std::vector<KvCode>& codes) {
  py::list out;
  for (KvCode c : codes) out.append(static_cast<int>(c));
  return out;
}

// Set by the client's receiver thread (no GIL), waited for by Python.
class Completion {
 public:
  void Set(const KvStatus& s) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = s;
    done_ = true;
    cv_.notify_all();
  }
  bool done() {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  // False on timeout; call without the GIL.
  bool WaitFor(std::chrono::microseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, d, [this] { return done_; });
  }
  bool Wait(double timeout_s) {
    std::unique_lock<std::mutex> lock(mu_);
    if (timeout_s < 0) {
      cv_.wait(lock, [this] { return done_; });
      return true;
    }
    return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [this] { return done_; });
  }
  KvStatus status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  KvStatus status_;
};

// One asynchronous call and everything it needs alive until it completes:
// its keys, items and the callers' buffers. Dropping a Future that has not
// completed waits for it (the buffers may not be released under the I/O).
class Future {
 public:
  Future() : completion(std::make_shared<Completion>()) {}
  ~Future() {
    if (submitted && !completion->done()) {
      py::gil_scoped_release nogil;
      completion->Wait(-1);
    }
    regions.clear();  // GIL held: PyBuffer_Release
  }
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;

  // Marks the call submitted (from here on the buffers are in use).
  strata::kv::KvCallback Callback() {
    submitted = true;
    return [c = completion](const KvStatus& s) { c->Set(s); };
  }
  bool done() { return completion->done(); }
  py::object Result(py::object timeout) {
    double t = timeout.is_none() ? -1.0 : timeout.cast<double>();
    bool finished = true;
    {
      py::gil_scoped_release nogil;
      if (t < 0 && client && submitted) {
        // Read our own reply on this thread (no hand-off to the receiver).
        auto c = completion;
        client->WaitUntil([c](std::chrono::microseconds d) { return c->WaitFor(d); });
      } else {
        finished = completion->Wait(t);
      }
    }
    if (!finished) throw py::value_error("strata_kv.Future.result: timed out");  // TimeoutError below
    if (!result_) {
      regions.clear();
      Check(completion->status());
      result_ = make_result(*this);
    }
    return result_;
  }

  std::shared_ptr<Completion> completion;
  std::shared_ptr<KvClient> client;  // kept alive while the call may be in flight
  std::vector<std::string> keys, parents, metas;
  std::vector<KeyView> views;
  std::vector<std::unique_ptr<Region>> regions;
  std::vector<GetItem> get_items;
  std::vector<PutItem> put_items;
  std::vector<bool> present;
  std::vector<std::string> meta_out;  // GET: per-item metadata buffers
  bool with_lengths = false, with_meta = false;
  bool submitted = false;
  std::function<py::object(Future&)> make_result;

 private:
  py::object result_;
};

std::string BytesArg(py::handle v, const char* what) {
  if (py::isinstance<py::bytes>(v)) return v.cast<std::string>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();  // UTF-8
  if (PyObject_CheckBuffer(v.ptr())) {
    Py_buffer b;
    if (PyObject_GetBuffer(v.ptr(), &b, PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
    std::string out(static_cast<const char*>(b.buf), b.len);
    PyBuffer_Release(&b);
    return out;
  }
  throw py::type_error(std::string("strata_kv: ") + what + " must be bytes or str");
}

class Client {
 public:
  Client(const std::string& host, uint16_t port, const std::string& access_key,
         const std::string& secret_key, uint32_t timeout_ms, bool tls, const std::string& ca_file,
         const std::string& server_name) {
    strata::kv::ConnectOptions o;
    o.tls = tls;
    o.tls_ca_file = ca_file;
    o.tls_server_name = server_name;
    o.host = host;
    o.port = port;
    o.access_key = access_key;
    o.secret_key = secret_key;
    o.timeout_ms = timeout_ms;
    KvStatus s;
    std::unique_ptr<KvClient> client;
    {
      py::gil_scoped_release nogil;
      s = KvClient::Connect(o, &client);
    }
    Check(s);
    client_ = std::move(client);
  }

  KvClient& c() {
    if (!client_) Raise(KvStatus(KvCode::kClosed, "client is closed"));
    return *client_;
  }
  // A new Future bound to this connection.
  std::shared_ptr<Future> NewFuture() {
    c();
    auto f = std::make_shared<Future>();
    f->client = client_;
    return f;
  }

  void Ping() {
    KvClient& cl = c();
    KvStatus s;
    {
      py::gil_scoped_release nogil;
      s = cl.Ping();
    }
    Check(s);
  }

  Namespace Open(py::kwargs fields) {
    strata::kv::NamespaceDescriptor d;
    py::dict used;
    for (auto [k, v] : fields) {
      std::string key = py::str(k);
      if (key != "manifest") used[k] = v;
      if (key == "model_id")
        d.model_id = v.cast<std::string>();
      else if (key == "weights_fingerprint")
        d.weights_fingerprint = v.cast<std::string>();
      else if (key == "kv_dtype")
        d.kv_dtype = v.cast<std::string>();
      else if (key == "kv_layout")
        d.kv_layout = v.cast<std::string>();
      else if (key == "tokens_per_block")
        d.tokens_per_block = v.cast<uint32_t>();
      else if (key == "block_bytes")
        d.block_bytes = v.cast<uint64_t>();
      else if (key == "tp_size")
        d.tp_size = v.cast<uint16_t>();
      else if (key == "tp_rank")
        d.tp_rank = v.cast<uint16_t>();
      else if (key == "pp_size")
        d.pp_size = v.cast<uint16_t>();
      else if (key == "pp_rank")
        d.pp_rank = v.cast<uint16_t>();
      else if (key == "hash_algorithm")
        d.hash_algorithm = v.cast<std::string>();
      else if (key == "hash_seed")
        d.hash_seed = v.cast<uint64_t>();
      else if (key == "tenant_salt")
        d.tenant_salt = v.cast<std::string>();
      else if (key == "quota_bytes")
        d.quota_bytes = v.cast<uint64_t>();
      else if (key == "ttl_s")
        d.ttl_s = v.cast<uint32_t>();
      else if (key == "manifest")
        d.manifest = v.is_none() ? std::string() : BytesArg(v, "manifest");
      // A misspelt identity field must not silently fall back to a default.
      else
        throw py::type_error("open_namespace: unknown field '" + key + "'");
    }
    KvClient& cl = c();
    strata::kv::NamespaceInfo info;
    KvStatus s;
    {
      py::gil_scoped_release nogil;
      s = cl.OpenNamespace(d, &info);
    }
    Check(s);
    Namespace ns;
    ns.handle = info.handle;
    ns.digest = py::bytes(reinterpret_cast<const char*>(info.digest.data()), info.digest.size());
    ns.bucket = info.bucket;
    ns.block_bytes = d.block_bytes;
    ns.descriptor = used;
    ns.manifest = py::bytes(info.manifest);
    ns.manifest_matches = info.manifest_matches;
    return ns;
  }

  uint32_t Lookup(py::handle ns, py::iterable keys) {
    uint64_t h = Handle(ns);
    auto k = KeyList(keys, "keys");
    auto v = Views(k);
    KvClient& cl = c();
    uint32_t hits = 0;
    KvStatus s;
    {
      py::gil_scoped_release nogil;
      s = cl.Lookup(h, v, &hits);
    }
    Check(s);
    return hits;
  }

  std::shared_ptr<Future> SubmitLookupEach(py::handle ns, py::iterable keys) {
    uint64_t h = Handle(ns);
    auto f = NewFuture();
    f->keys = KeyList(keys, "keys");
    f->views = Views(f->keys);
    f->make_result = [](Future& fu) {
      py::list out;
      for (bool b : fu.present) out.append(py::bool_(b));
      return py::object(out);
    };
    KvClient& cl = c();
    {
      py::gil_scoped_release nogil;
      cl.LookupEachAsync(h, f->views, &f->present, f->Callback());
    }
    return f;
  }

  py::object LookupEach(py::handle ns, py::iterable keys) {
    return SubmitLookupEach(ns, keys)->Result(py::none());
  }

  std::shared_ptr<Future> SubmitGet(py::handle ns, py::sequence keys, py::sequence buffers,
                                    py::object offsets, py::object lengths, bool with_lengths,
                                    bool with_meta) {
    uint64_t h = Handle(ns);
    auto f = NewFuture();
    f->keys = KeyList(keys, "keys");
    size_t n = f->keys.size();
    if (py::len(buffers) != n) throw py::value_error("get_into: len(buffers) != len(keys)");
    if (!offsets.is_none() && py::len(offsets) != n) {
      throw py::value_error("get_into: len(offsets) != len(keys)");
    }
    if (!lengths.is_none() && py::len(lengths) != n) {
      throw py::value_error("get_into: len(lengths) != len(keys)");
    }
    f->with_lengths = with_lengths;
    f->with_meta = with_meta;
    f->regions.reserve(n);
    f->get_items.resize(n);
    if (with_meta) f->meta_out.assign(n, std::string(strata::kv::kMaxMetaBytes, '\0'));
    for (size_t i = 0; i < n; ++i) {
      f->regions.push_back(std::make_unique<Region>(buffers[i], /*writable=*/true));
      GetItem& it = f->get_items[i];
      it.key = f->keys[i];
      it.dst = f->regions.back()->data();
      it.dst_capacity = f->regions.back()->size();
      it.offset = offsets.is_none() ? 0 : py::cast<uint64_t>(offsets[py::int_(i)]);
      // Default: exactly the buffer's size (a buffer smaller than the block reads a prefix).
      it.length = lengths.is_none() ? it.dst_capacity : py::cast<uint64_t>(lengths[py::int_(i)]);
      if (with_meta) {
        it.meta_dst = f->meta_out[i].data();
        it.meta_capacity = static_cast<uint32_t>(f->meta_out[i].size());
      }
    }
    f->make_result = [](Future& fu) {
      py::list st, len, metas;
      for (size_t i = 0; i < fu.get_items.size(); ++i) {
        const GetItem& it = fu.get_items[i];
        st.append(static_cast<int>(it.status));
        len.append(it.bytes);
        if (fu.with_meta) {
          metas.append(py::bytes(it.status == KvCode::kOk ? fu.meta_out[i].substr(0, it.meta_len)
                                                          : std::string()));
        }
      }
      if (fu.with_meta) return py::object(py::make_tuple(st, len, metas));
      if (fu.with_lengths) return py::object(py::make_tuple(st, len));
      return py::object(st);
    };
    KvClient& cl = c();
    {
      py::gil_scoped_release nogil;
      cl.GetAsync(h, f->get_items, f->Callback());
    }
    return f;
  }

  py::object GetInto(py::handle ns, py::sequence keys, py::sequence buffers, py::object offsets,
                     py::object lengths, bool with_lengths, bool with_meta) {
    return SubmitGet(ns, keys, buffers, offsets, lengths, with_lengths, with_meta)
        ->Result(py::none());
  }

  std::shared_ptr<Future> SubmitPut(py::handle ns, py::sequence keys, py::object parents,
                                    py::sequence buffers, py::object metas) {
    uint64_t h = Handle(ns);
    auto f = NewFuture();
    f->keys = KeyList(keys, "keys");
    size_t n = f->keys.size();
    if (py::len(buffers) != n) throw py::value_error("put: len(buffers) != len(keys)");
    if (!parents.is_none()) {
      f->parents = KeyList(parents, "parents");
      if (f->parents.size() != n) throw py::value_error("put: len(parents) != len(keys)");
    } else {
      f->parents.resize(n);
    }
    f->metas.resize(n);
    if (!metas.is_none()) {
      if (py::len(metas) != n) throw py::value_error("put: len(metas) != len(keys)");
      size_t i = 0;
      for (py::handle m : metas) {
        if (!m.is_none()) f->metas[i] = BytesArg(m, "metas");
        ++i;
      }
    }
    f->regions.reserve(n);
    f->put_items.resize(n);
    for (size_t i = 0; i < n; ++i) {
      f->regions.push_back(std::make_unique<Region>(buffers[i], /*writable=*/false));
      PutItem& it = f->put_items[i];
      it.key = f->keys[i];
      it.parent = f->parents[i];
      it.data = f->regions.back()->data();
      it.length = f->regions.back()->size();
      it.meta = f->metas[i];
    }
    f->make_result = [](Future& fu) {
      py::list st;
      for (const PutItem& it : fu.put_items) st.append(static_cast<int>(it.status));
      return py::object(st);
    };
    KvClient& cl = c();
    {
      py::gil_scoped_release nogil;  // also while the blocks' CRC32Cs are computed
      cl.PutAsync(h, f->put_items, f->Callback());
    }
    return f;
  }

  py::object Put(py::handle ns, py::sequence keys, py::object parents, py::sequence buffers,
                 py::object metas) {
    return SubmitPut(ns, keys, parents, buffers, metas)->Result(py::none());
  }

  template <typename Fn>
  py::list KeysOp(py::handle ns, py::iterable keys, Fn fn) {
    uint64_t h = Handle(ns);
    auto k = KeyList(keys, "keys");
    auto v = Views(k);
    KvClient& cl = c();
    std::vector<KvCode> codes;
    KvStatus s;
    {
      py::gil_scoped_release nogil;
      s = fn(cl, h, v, &codes);
    }
    Check(s);
    return StatusList(codes);
  }

  py::list Delete(py::handle ns, py::iterable keys) {
    return KeysOp(ns, keys,
                  [](KvClient& cl, uint64_t h, const std::vector<KeyView>& v,
                     std::vector<KvCode>* out) { return cl.Delete(h, v, out); });
  }
  py::list Pin(py::handle ns, py::iterable keys, uint32_t ttl_ms) {
    return KeysOp(ns, keys,
                  [ttl_ms](KvClient& cl, uint64_t h, const std::vector<KeyView>& v,
                           std::vector<KvCode>* out) { return cl.Pin(h, ttl_ms, v, out); });
  }
  py::list Unpin(py::handle ns, py::iterable keys) {
    return KeysOp(ns, keys,
                  [](KvClient& cl, uint64_t h, const std::vector<KeyView>& v,
                     std::vector<KvCode>* out) { return cl.Unpin(h, v, out); });
  }

  py::dict Stats(py::handle ns) {
    uint64_t h = Handle(ns);
    KvClient& cl = c();
    strata::kv::NamespaceStats st;
    KvStatus s;
    {
      py::gil_scoped_release nogil;
      s = cl.Stats(h, &st);
    }
    Check(s);
    py::dict d;
    d["blocks"] = st.blocks;
    d["bytes"] = st.bytes;
    d["hits"] = st.hits;
    d["misses"] = st.misses;
    d["bytes_served"] = st.bytes_served;
    d["bytes_requested"] = st.bytes_requested;
    d["evictions"] = st.evictions;
    d["lookups"] = st.lookups;
    d["lookup_keys"] = st.lookup_keys;
    d["lookup_ns"] = st.lookup_ns;
    return d;
  }

  py::tuple Events(py::handle ns, uint64_t since, uint32_t max_events) {
    uint64_t h = Handle(ns);
    KvClient& cl = c();
    strata::kv::EventsResult r;
    KvStatus s;
    {
      py::gil_scoped_release nogil;
      s = cl.Events(h, since, max_events, &r);
    }
    Check(s);
    py::list events;
    for (const strata::kv::KvEvent& e : r.events) {
      bool stored = e.kind == strata::kv::KvEvent::Kind::kStored;
      events.append(py::make_tuple(stored ? "stored" : "removed", py::bytes(e.key),
                                   e.parent.empty() ? py::object(py::none())
                                                    : py::object(py::bytes(e.parent))));
    }
    return py::make_tuple(r.next, r.lost, events);
  }

  size_t in_flight() const { return client_ ? client_->in_flight() : 0; }

  void Close() {
    if (!client_) return;
    py::gil_scoped_release nogil;  // fails what is in flight, joins the receiver
    client_->Close();
  }
  bool connected() const { return client_ && client_->connected(); }

 private:
  std::shared_ptr<KvClient> client_;
};

}  // namespace

PYBIND11_MODULE(strata_kv, m) {
  m.doc() = "strata KV-cache client (docs/formats/kv-protocol.md)";
  g_error = PyErr_NewExceptionWithDoc("strata_kv.Error",
                                      "A strata KV call failed as a whole; .code is the status "
                                      "int, .code_name its name.",
                                      PyExc_RuntimeError, nullptr);
  if (!g_error) throw py::error_already_set();
  m.attr("Error") = py::reinterpret_borrow<py::object>(g_error);

  for (KvCode c :
       {KvCode::kOk, KvCode::kNotFound, KvCode::kExists, KvCode::kInvalid, KvCode::kAuthFailed,
        KvCode::kDenied, KvCode::kTooLarge, KvCode::kUnavailable, KvCode::kInternal,
        KvCode::kBadChecksum, KvCode::kIoError, KvCode::kProtocolError, KvCode::kClosed,
        KvCode::kBufferTooSmall, KvCode::kCorrupt}) {
    m.attr(strata::kv::KvCodeName(c)) = static_cast<int>(c);
  }
  m.def(
      "crc32c",
      [](py::buffer data, uint32_t crc) {
        py::buffer_info info = data.request();
        ssize_t expect = info.itemsize;
        for (ssize_t i = info.ndim - 1; i >= 0; --i) {
          if (info.strides[i] != expect) throw py::value_error("crc32c: buffer is not contiguous");
          expect *= info.shape[i];
        }
        const auto n = static_cast<size_t>(info.size * info.itemsize);
        py::gil_scoped_release unlocked;
        return strata::kv::ExtendCrc32c(crc, info.ptr, n);
      },
      py::arg("data"), py::arg("crc") = 0,
      "CRC32C of a contiguous buffer, extending `crc` (the GIL is released while it runs)");
  m.def("status_name",
        [](int code) { return std::string(strata::kv::KvCodeName(static_cast<KvCode>(code))); });
  m.attr("MIN_KEY_BYTES") = strata::kvcache::proto::kMinKeyBytes;
  m.attr("MAX_KEY_BYTES") = strata::kvcache::proto::kMaxKeyBytes;
  m.attr("MAX_META_BYTES") = strata::kvcache::proto::kMaxBlockMetaBytes;
  m.attr("MAX_MANIFEST_BYTES") = strata::kvcache::proto::kMaxManifestBytes;
  m.attr("PROTOCOL_VERSION") = strata::kvcache::proto::kVersion;

  py::class_<Future, std::shared_ptr<Future>>(m, "Future",
                                              "An asynchronous call in flight (submit_*).")
      .def("done", &Future::done)
      .def("result", &Future::Result, py::arg("timeout") = py::none(),
           "Waits (GIL released) and returns what the synchronous call returns; raises "
           "strata_kv.Error if the call failed, ValueError on timeout.");

  py::class_<Namespace>(m, "Namespace")
      .def_readonly("handle", &Namespace::handle)
      .def_readonly("digest", &Namespace::digest)
      .def_readonly("bucket", &Namespace::bucket)
      .def_readonly("block_bytes", &Namespace::block_bytes)
      .def_readonly("descriptor", &Namespace::descriptor)
      .def_readonly("manifest", &Namespace::manifest)
      .def_readonly("manifest_matches", &Namespace::manifest_matches)
      .def(
          "object_key",
          [](const Namespace& ns, py::bytes key) {
            // The S3 object name of a block (kv-protocol.md "Blocks are objects").
            std::string d = ns.digest;
            strata::Sha256Digest digest{};
            std::copy(d.begin(), d.end(), digest.begin());
            return strata::kvcache::proto::BlockObjectKey(digest, std::string(key));
          },
          py::arg("key"))
      .def("__repr__", [](const Namespace& ns) {
        return "<strata_kv.Namespace handle=" + std::to_string(ns.handle) + " bucket=" + ns.bucket +
               ">";
      });

  py::class_<Client>(m, "Client")
      .def(py::init<const std::string&, uint16_t, const std::string&, const std::string&,
                    uint32_t, bool, const std::string&, const std::string&>(),
           py::arg("host"), py::arg("port"), py::arg("access_key"), py::arg("secret_key"),
           py::arg("timeout_ms") = 60000, py::kw_only(), py::arg("tls") = false,
           py::arg("ca_file") = "", py::arg("server_name") = "",
           "Connects and authenticates; raises strata_kv.Error (code AUTH_FAILED on a bad key). "
           "tls=True for a server started with --kv-tls: its certificate must chain to ca_file "
           "(PEM; '' = the system's trust store) and name server_name ('' = host).")
      .def("ping", &Client::Ping)
      .def("open_namespace", &Client::Open,
           "open_namespace(**fields) -> Namespace. Fields: model_id, weights_fingerprint, "
           "kv_dtype, kv_layout, tokens_per_block, block_bytes (0: any length), tp_size, tp_rank, "
           "pp_size, pp_rank, hash_algorithm, hash_seed, tenant_salt, quota_bytes, ttl_s; "
           "manifest (bytes/str, not identity: stored by the first opener, returned as "
           "ns.manifest, compared in ns.manifest_matches).")
      .def("lookup", &Client::Lookup, py::arg("ns"), py::arg("keys"),
           "Number of leading keys that are stored (one round trip, no side effects).")
      .def("lookup_each", &Client::LookupEach, py::arg("ns"), py::arg("keys"),
           "Whether each key is stored: list of bool (one round trip, no side effects).")
      .def("submit_lookup_each", &Client::SubmitLookupEach, py::arg("ns"), py::arg("keys"))
      .def("get_into", &Client::GetInto, py::arg("ns"), py::arg("keys"), py::arg("buffers"),
           py::arg("offsets") = py::none(), py::arg("lengths") = py::none(),
           py::arg("with_lengths") = false, py::arg("with_meta") = false,
           "Reads each key's block (from offsets[i], len(buffers[i]) bytes unless lengths "
           "says otherwise; 0 = to the end) straight into buffers[i]; whole-block reads are "
           "checked against the block's CRC32C (a mismatch: status CORRUPT). Returns per-key "
           "statuses, (statuses, byte_counts) with with_lengths=True, or (statuses, "
           "byte_counts, metas) with with_meta=True.")
      .def("submit_get_into", &Client::SubmitGet, py::arg("ns"), py::arg("keys"),
           py::arg("buffers"), py::arg("offsets") = py::none(), py::arg("lengths") = py::none(),
           py::arg("with_lengths") = false, py::arg("with_meta") = false,
           "get_into, asynchronously: returns a Future (buffers must stay alive until done).")
      .def("put", &Client::Put, py::arg("ns"), py::arg("keys"), py::arg("parents"),
           py::arg("buffers"), py::arg("metas") = py::none(),
           "Stores blocks put-if-absent; parents[i] is the previous block's key (None/b'' = "
           "chain root), parents=None makes all roots; metas[i] (bytes <= MAX_META_BYTES or "
           "None) is stored with the block. Each block's CRC32C is sent with it. Returns "
           "per-key statuses (OK, EXISTS, TOO_LARGE, BAD_CHECKSUM, ...).")
      .def("submit_put", &Client::SubmitPut, py::arg("ns"), py::arg("keys"), py::arg("parents"),
           py::arg("buffers"), py::arg("metas") = py::none(),
           "put, asynchronously: returns a Future (buffers must stay unchanged until done).")
      .def("events", &Client::Events, py::arg("ns"), py::arg("since") = 0,
           py::arg("max_events") = 4096,
           "(next_cursor, lost, [(kind, key, parent)]): the namespace's 'stored'/'removed' "
           "block events from cursor `since`; poll again from next_cursor.")
      .def_property_readonly("in_flight", &Client::in_flight)
      .def("delete", &Client::Delete, py::arg("ns"), py::arg("keys"))
      .def("pin", &Client::Pin, py::arg("ns"), py::arg("keys"), py::arg("ttl_ms") = 30000)
      .def("unpin", &Client::Unpin, py::arg("ns"), py::arg("keys"))
      .def("stats", &Client::Stats, py::arg("ns"))
      .def("close", &Client::Close)
      .def_property_readonly("connected", &Client::connected)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Client& c, py::args) { c.Close(); });
}
