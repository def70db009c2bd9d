"""A deterministic safetensors checkpoint generator in the Hugging Face layout (config.json,
model.safetensors.index.json, model-0000i-of-0000n.safetensors), for the loader's tests and
benchmark. Every tensor's bytes come from a stream seeded by (seed, tensor name), so any
reader can check any tensor without the generator's state: expected_bytes(seed, name, n).

Written from the format's description on its own (not with strata.safetensors_format, the code
under test), plus malformed variants: a truncated shard, overlapping offsets, a gap, a header
that is not JSON, a header length past the end of the object, a header over 100 MB claimed.
"""
import hashlib
import json
import struct

import numpy as np

ITEMSIZE = {"F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "U8": 1, "F64": 8, "I8": 1}


def expected_bytes(seed, name, n):
    s = int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:8], "little")
    return np.random.default_rng(s).bytes(n)


def shard_bytes(tensors, seed, metadata=None):
    """One safetensors file: tensors = [(name, dtype, shape)] laid out in that order."""
    header, pos, data = {}, 0, []
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape in tensors:
        n = ITEMSIZE[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [pos, pos + n]}
        data.append(expected_bytes(seed, name, n))
        pos += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + b"".join(data)


def layout(shards, tensors_per_shard, shape=(64, 64), dtypes=("F32", "BF16", "F16", "I64")):
    """[[(name, dtype, shape)] per shard]: layers spread over the shards like a real model."""
    out = []
    for s in range(shards):
        out.append([(f"model.layers.{s}.w{t}", dtypes[(s + t) % len(dtypes)],
                     shape if t % 3 else (shape[0],)) for t in range(tensors_per_shard)])
    return out


def checkpoint(shards, tensors_per_shard=4, seed=7, shape=(64, 64)):
    """{file name: bytes} of a checkpoint, and {tensor name: (dtype, shape)}."""
    lay = layout(shards, tensors_per_shard, shape)
    files, expect = {}, {}
    names = ([f"model-{i + 1:05d}-of-{shards:05d}.safetensors" for i in range(shards)]
             if shards > 1 else ["model.safetensors"])
    weight_map = {}
    for fname, tensors in zip(names, lay):
        files[fname] = shard_bytes(tensors, seed, {"format": "pt"})
        for name, dtype, shp in tensors:
            expect[name] = (dtype, tuple(shp))
            weight_map[name] = fname
    if shards > 1:
        files["model.safetensors.index.json"] = json.dumps(
            {"metadata": {"total_size": 0}, "weight_map": weight_map}).encode()
    files["config.json"] = json.dumps({"architectures": ["StrataTestModel"],
                                       "num_hidden_layers": shards}).encode()
    return files, expect


def _with_header(header, data):
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def malformed():
    """{variant: (file bytes, a phrase the loader's error must contain)}."""
    good = shard_bytes([("a", "F32", (4, 4)), ("b", "F32", (4,))], seed=1)
    return {
        "truncated": (good[:-5], "truncated"),
        "overlap": (_with_header({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                  "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}},
                                 bytes(24)), "overlaps"),
        "gap": (_with_header({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                              "b": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}},
                             bytes(24)), "gap"),
        "bad_json": (struct.pack("<Q", 10) + b"{not json}" + bytes(8), "not valid JSON"),
        "header_past_end": (struct.pack("<Q", 4096) + b'{"a":1}', "past the end"),
        "huge_header": (struct.pack("<Q", 200_000_000) + b"{}", "limit"),
        "shape_mismatch": (_with_header({"a": {"dtype": "F32", "shape": [3],
                                               "data_offsets": [0, 16]}}, bytes(16)), "needs"),
        "trailing_bytes": (good + b"xx", "after the last tensor"),
    }
