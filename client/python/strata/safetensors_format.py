"""The safetensors file format, checked as strictly as the reference reader checks it.

A file is: 8 bytes little-endian N, then N bytes of UTF-8 JSON (the header, padded with
spaces), then the data region. The header maps each tensor name to {"dtype", "shape",
"data_offsets": [begin, end]} (offsets relative to the data region) and may hold a
"__metadata__" object of string values. The data region must be covered exactly: no gaps,
no overlaps, nothing after the last tensor (the reference implementation refuses all three).

Nothing here does I/O: the loader (strata.loader) hands in bytes and gets a plan or an error.
"""
import json
import math

MAX_HEADER_BYTES = 100_000_000  # the reference reader's limit

# dtype -> (bytes per element, torch attribute name or None where torch has none)
DTYPES = {
    "BOOL": (1, "bool"), "U8": (1, "uint8"), "I8": (1, "int8"), "I16": (2, "int16"),
    "U16": (2, "uint16"), "I32": (4, "int32"), "U32": (4, "uint32"), "I64": (8, "int64"),
    "U64": (8, "uint64"), "F16": (2, "float16"), "BF16": (2, "bfloat16"),
    "F32": (4, "float32"), "F64": (8, "float64"),
    "F8_E4M3": (1, "float8_e4m3fn"), "F8_E5M2": (1, "float8_e5m2"),
}


class FormatError(ValueError):
    """The bytes are not a valid safetensors file; the message says where and why."""


class TensorInfo:
    __slots__ = ("name", "dtype", "shape", "begin", "end")

    def __init__(self, name, dtype, shape, begin, end):
        self.name, self.dtype, self.shape, self.begin, self.end = name, dtype, shape, begin, end

    @property
    def nbytes(self):
        return self.end - self.begin

    def __repr__(self):
        return f"TensorInfo({self.name!r}, {self.dtype}, {self.shape}, [{self.begin}, {self.end}))"


class Header:
    """A parsed header: tensors in data order, the metadata, where the data region starts."""

    def __init__(self, tensors, metadata, data_start):
        self.tensors = tensors          # sorted by begin
        self.metadata = metadata        # dict of str -> str, or {}
        self.data_start = data_start    # 8 + N
        self.data_bytes = tensors[-1].end if tensors else 0

    @property
    def file_bytes(self):
        return self.data_start + self.data_bytes


def header_length(first8, where="file"):
    """N from the first 8 bytes; FormatError when it cannot be a header."""
    if len(first8) < 8:
        raise FormatError(f"{where}: {len(first8)} bytes, shorter than the 8-byte header length")
    n = int.from_bytes(first8[:8], "little")
    if n > MAX_HEADER_BYTES:
        raise FormatError(f"{where}: header of {n} bytes is over the {MAX_HEADER_BYTES}-byte limit")
    if n < 2:
        raise FormatError(f"{where}: header of {n} bytes cannot hold a JSON object")
    return n


def parse_header(header_bytes, file_bytes, where="file"):
    """Parses and validates the N header bytes of a file of `file_bytes` bytes."""
    data_start = 8 + len(header_bytes)
    if data_start > file_bytes:
        raise FormatError(f"{where}: header length {len(header_bytes)} runs past the end of the "
                          f"{file_bytes}-byte file (truncated?)")
    try:
        doc = json.loads(bytes(header_bytes).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FormatError(f"{where}: header is not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise FormatError(f"{where}: header is not a JSON object")
    metadata = doc.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise FormatError(f"{where}: __metadata__ must map strings to strings")
    tensors = []
    for name, info in doc.items():
        tensors.append(_tensor(name, info, where))
    tensors.sort(key=lambda t: (t.begin, t.end))
    pos = 0
    for t in tensors:
        if t.begin < pos:
            raise FormatError(f"{where}: tensor {t.name!r} at [{t.begin}, {t.end}) overlaps the "
                              f"one before it (which ends at {pos})")
        if t.begin > pos:
            raise FormatError(f"{where}: a gap of {t.begin - pos} bytes before tensor {t.name!r} "
                              f"(the data region must be covered exactly)")
        pos = t.end
    h = Header(tensors, metadata, data_start)
    if h.file_bytes > file_bytes:
        raise FormatError(f"{where}: the tensors need {h.file_bytes} bytes but the file has "
                          f"{file_bytes} (truncated)")
    if h.file_bytes < file_bytes:
        raise FormatError(f"{where}: {file_bytes - h.file_bytes} bytes after the last tensor "
                          f"(the data region must be covered exactly)")
    return h


def _tensor(name, info, where):
    if not isinstance(info, dict):
        raise FormatError(f"{where}: entry {name!r} is not an object")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if dtype not in DTYPES:
        raise FormatError(f"{where}: tensor {name!r} has unknown dtype {dtype!r}")
    if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise FormatError(f"{where}: tensor {name!r} has a bad shape {shape!r}")
    if (not isinstance(offsets, list) or len(offsets) != 2 or
            not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets) or
            offsets[0] > offsets[1]):
        raise FormatError(f"{where}: tensor {name!r} has bad data_offsets {offsets!r}")
    need = math.prod(shape) * DTYPES[dtype][0]
    if offsets[1] - offsets[0] != need:
        raise FormatError(f"{where}: tensor {name!r} ({dtype} {shape}) needs {need} bytes but "
                          f"its data_offsets span {offsets[1] - offsets[0]}")
    return TensorInfo(name, dtype, tuple(shape), offsets[0], offsets[1])


def build_header(entries, metadata=None):
    """The header bytes (length prefix included) for [(name, dtype, shape, nbytes)] laid out in
    that order, padded with spaces so that the data region starts 8-byte aligned."""
    doc = {}
    if metadata:
        doc["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    pos = 0
    for name, dtype, shape, nbytes in entries:
        if dtype not in DTYPES:
            raise FormatError(f"tensor {name!r}: dtype {dtype!r} has no safetensors name")
        doc[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [pos, pos + nbytes]}
        pos += nbytes
    raw = json.dumps(doc, separators=(",", ":")).encode()
    raw += b" " * (-(8 + len(raw)) % 8)
    return len(raw).to_bytes(8, "little") + raw
