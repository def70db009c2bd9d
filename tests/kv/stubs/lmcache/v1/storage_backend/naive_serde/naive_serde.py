"""Stub of lmcache/v1/storage_backend/naive_serde/naive_serde.py."""


class NaiveSerializer:
    def serialize(self, memory_obj):
        memory_obj.ref_count_up()  # the connector's put releases it
        return memory_obj


class NaiveDeserializer:
    def deserialize(self, memory_obj):
        return memory_obj
