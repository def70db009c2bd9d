"""Stub of lmcache/v1/storage_backend/naive_serde: CreateSerde (naive only)."""
from lmcache.v1.storage_backend.naive_serde.naive_serde import (NaiveDeserializer,
                                                                NaiveSerializer)


def CreateSerde(serde_type, metadata, config):
    if serde_type != "naive":
        raise ValueError(f"the LMCache stub has only the naive serde, not {serde_type!r}")
    return NaiveSerializer(), NaiveDeserializer()
