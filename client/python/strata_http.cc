// Python binding of the loader's native HTTP range reader: module `strata_http`
// (client/http/http_range.h).
//
//   c = strata_http.Connection("127.0.0.1", 9000, timeout_ms=1000)
//   status, headers, body, filled = c.exchange(head_bytes, memoryview_dest, exact=True)
//
// `head_bytes`: the whole signed request head. `dest`: a writable C-contiguous
// buffer (a memoryview slice of the loader's group buffer); a 200/206 body
// that fits lands there (`filled` bytes), with the GIL released from the send
// to the last byte. `headers`: a dict of lower-case names; `body`: the bytes
// of any other reply (at most 64 KiB). close() closes the socket (from any
// thread: one in exchange() then fails). Transport failures raise
// strata_http.Error (a ConnectionError; .code_name "IO_ERROR",
// "PROTOCOL_ERROR", "CLOSED"); the connection is then closed.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "http_range.h"

namespace py = pybind11;
using strata::kv::HttpConnectOptions;
using strata::kv::HttpRangeConnection;
using strata::kv::HttpReply;
using strata::kv::KvStatus;

namespace {

PyObject* g_error = nullptr;  // strata_http.Error, never released

[[noreturn]] void Raise(const KvStatus& s) {
  py::object type = py::reinterpret_borrow<py::object>(g_error);
  py::object exc = type(s.ToString());
  exc.attr("code_name") = strata::kv::KvCodeName(s.code());
  PyErr_SetObject(g_error, exc.ptr());
  throw py::error_already_set();
}

class Connection {
 public:
  Connection(const std::string& host, int port, int timeout_ms, bool tls,
             const std::string& ca_file, const std::string& server_name) {
    if (port <= 0 || port > 65535) throw py::value_error("port out of range");
    if (timeout_ms <= 0) throw py::value_error("timeout_ms must be positive");
    HttpConnectOptions o;
    o.host = host;
    o.port = static_cast<uint16_t>(port);
    o.timeout_ms = static_cast<uint32_t>(timeout_ms);
    o.tls = tls;
    o.tls_ca_file = ca_file;
    o.tls_server_name = server_name;
    KvStatus s;
    {
      py::gil_scoped_release release;
      s = HttpRangeConnection::Connect(o, &conn_);
    }
    if (!s.ok()) Raise(s);
  }

  py::tuple Exchange(py::bytes head, py::buffer dest, bool exact) {
    std::string_view h = head;  // kept alive by `head`
    py::buffer_info info = dest.request(/*writable=*/true);
    if (info.ndim != 1 || info.itemsize != 1 || info.strides[0] != 1) {
      throw py::value_error("dest must be a contiguous byte buffer");
    }
    if (busy_) throw std::runtime_error("strata_http.Connection used by two threads at once");
    HttpReply reply;
    KvStatus s;
    busy_ = true;  // set and cleared with the GIL held, as close() reads it
    {
      py::gil_scoped_release release;
      s = conn_->Exchange(h, static_cast<char*>(info.ptr), static_cast<size_t>(info.size), exact,
                          &reply);
    }
    busy_ = false;
    if (!s.ok()) Raise(s);
    py::dict headers;
    for (const auto& [k, v] : reply.headers) {
      // Latin-1, as http.client decodes header values: any byte is a character.
      // A repeated field is joined with ", " as http.client's getheader joins it, so that
      // two ETags or Content-Ranges fail the checks on both paths alike.
      py::str key = py::reinterpret_steal<py::str>(PyUnicode_DecodeLatin1(k.data(), k.size(), nullptr));
      py::str value = py::reinterpret_steal<py::str>(PyUnicode_DecodeLatin1(v.data(), v.size(), nullptr));
      if (headers.contains(key)) {
        headers[key] = py::str(headers[key]) + py::str(", ") + value;
      } else {
        headers[key] = value;
      }
    }
    return py::make_tuple(reply.status, headers, py::bytes(reply.body), reply.into_dest);
  }

  bool usable() const { return conn_->usable(); }
  // During another thread's exchange(): shuts the socket down (that exchange fails and
  // closes it); otherwise closes it.
  void Close() {
    if (busy_) {
      conn_->Shutdown();
    } else {
      conn_->Close();
    }
  }

 private:
  std::unique_ptr<HttpRangeConnection> conn_;
  bool busy_ = false;  // an exchange() is running (read and written with the GIL held)
};

}  // namespace

PYBIND11_MODULE(strata_http, m) {
  m.doc() = "strata's native HTTP range reader for the model loader (client/http/http_range.h)";
  g_error = PyErr_NewException("strata_http.Error", PyExc_ConnectionError, nullptr);
  m.attr("Error") = py::handle(g_error);
  py::class_<Connection>(m, "Connection")
      .def(py::init<const std::string&, int, int, bool, const std::string&, const std::string&>(),
           py::arg("host"), py::arg("port"), py::arg("timeout_ms") = 1000, py::arg("tls") = false,
           py::arg("ca_file") = "", py::arg("server_name") = "")
      .def("exchange", &Connection::Exchange, py::arg("head"), py::arg("dest"),
           py::arg("exact") = true)
      .def_property_readonly("usable", &Connection::usable)
      .def("close", &Connection::Close);
}
