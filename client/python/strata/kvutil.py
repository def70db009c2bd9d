"""Helpers shared by the adapters: engine keys -> wire keys, byte views of
engine buffers (no copies), and a reconnecting connection to one namespace."""
import hashlib
import os
import threading

import numpy as np

import strata_kv

# Errors after which the connection is gone (its namespace handle with it).
CONNECTION_LOST = (strata_kv.IO_ERROR, strata_kv.PROTOCOL_ERROR, strata_kv.CLOSED)


def wire_key(key):
    """Maps an engine's block key to a 16..32-byte wire key.

    bytes of 16..32 bytes (vLLM's sha256 BlockHash) pass unchanged; other bytes
    (e.g. vLLM's OffloadKey = 32-byte hash + 4-byte group index) are hashed
    with SHA-256; ints (older vLLM/LMCache hashes) are encoded injectively in
    32 bytes; strings (LMCache's CacheEngineKey.to_string()) are hashed. None
    of these mappings adds collisions beyond SHA-256's, but none can remove
    the ones a 64-bit engine hash already has.
    """
    if isinstance(key, (bytes, bytearray, memoryview)):
        key = bytes(key)
        if strata_kv.MIN_KEY_BYTES <= len(key) <= strata_kv.MAX_KEY_BYTES:
            return key
        return hashlib.sha256(key).digest()
    if isinstance(key, int):
        return key.to_bytes(32, "big", signed=True)
    if isinstance(key, str):
        return hashlib.sha256(key.encode()).digest()
    to_string = getattr(key, "to_string", None)
    if to_string is not None:
        return hashlib.sha256(to_string().encode()).digest()
    raise TypeError(f"cannot map a {type(key).__name__} to a strata key")


def byte_view(obj):
    """A flat, writable-if-possible uint8 numpy view of a C-contiguous buffer
    (numpy array, memoryview, bytearray) or CPU torch tensor (any dtype),
    sharing its memory."""
    if hasattr(obj, "data_ptr") and hasattr(obj, "element_size"):  # torch.Tensor
        import torch
        if obj.device.type != "cpu" or not obj.is_contiguous():
            raise ValueError("need a contiguous CPU tensor")
        return obj.reshape(-1).view(torch.uint8).numpy()
    arr = np.asarray(obj) if not isinstance(obj, np.ndarray) else obj
    if isinstance(obj, (memoryview, bytearray, bytes)):
        arr = np.frombuffer(obj, dtype=np.uint8)
    if not arr.flags.c_contiguous:
        raise ValueError("need a C-contiguous buffer")
    return arr.reshape(-1).view(np.uint8)


def tls_options(tls=False, ca_file="", server_name=""):
    """strata_kv.Client keyword arguments for a server started with --kv-tls
    ({} without TLS). ca_file: PEM bundle the server's certificate must chain
    to ('' = $STRATA_KV_TLS_CA_FILE, else the system's trust store);
    server_name: the name to check ('' = the host)."""
    if isinstance(tls, str):
        tls = tls.strip().lower() not in ("", "0", "false", "no", "off")
    if not tls:
        return {}
    return {"tls": True, "ca_file": ca_file or os.environ.get("STRATA_KV_TLS_CA_FILE", ""),
            "server_name": server_name or ""}


class NamespaceConnection:
    """One strata_kv.Client with its namespace opened; reconnects (and reopens
    the namespace, whose handle belongs to the connection) after the
    connection is lost. Not shared between threads: make one per thread."""

    def __init__(self, host, port, access_key, secret_key, namespace, timeout_ms=60000,
                 tls=None):
        self._args = (host, port, access_key, secret_key, timeout_ms)
        self._tls = dict(tls or {})  # tls_options()
        self._namespace = dict(namespace)
        self.client = None
        self.ns = None

    def ensure(self):
        if self.client is None or not self.client.connected:
            self.close()
            self.client = strata_kv.Client(*self._args, **self._tls)
            self.ns = self.client.open_namespace(**self._namespace)
        return self.client, self.ns

    def call(self, method, *args, **kwargs):
        """client.<method>(ns, *args); one retry on a fresh connection when the
        old one turns out to be dead (e.g. after a server restart)."""
        for attempt in (0, 1):
            client, ns = self.ensure()
            try:
                return getattr(client, method)(ns, *args, **kwargs)
            except strata_kv.Error as e:
                if e.code not in CONNECTION_LOST or attempt == 1:
                    raise
                self.close()

    def close(self):
        if self.client is not None:
            self.client.close()
        self.client = None
        self.ns = None


class PerThreadConnections:
    """A NamespaceConnection per calling thread (for executor pools)."""

    def __init__(self, *args, **kwargs):
        self._factory = lambda: NamespaceConnection(*args, **kwargs)
        self._local = threading.local()
        self._all = []
        self._lock = threading.Lock()

    def get(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._factory()
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def close_all(self):
        with self._lock:
            for c in self._all:
                c.close()
            self._all.clear()
