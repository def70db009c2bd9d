"""strata.lmcache_connector as LMCache (pinned 0.5.6) loads and drives it:
the interface (subclassing, abstract methods, signatures, the adapter's URL
schemes), the plugin loader building it from an LMCache config, and
RemoteBackend's call sequence against a real strata server. Runs against the
real LMCache when it is installed, else against the interface stubs
(tests/kv/stubs)."""
import asyncio
import inspect
import os
import unittest
from unittest import mock

import numpy as np

import strata_kv
from kvtest import ACCESS_KEY, SECRET_KEY, KvTestCase
from lmcache_fixtures import (USING_STUBS, ConnectorAdapter, ConnectorContext, Engine,
                              RemoteBackendDriver, RemoteConnector, lmcache, plugin_extra,
                              torch)
from strata import lmcache_connector as lc
from strata.lmcache_connector import StrataConnectorAdapter, StrataRemoteConnector

HAVE_V2 = hasattr(strata_kv, "MAX_META_BYTES")


def tokens(n, seed):
    return list(np.random.default_rng(seed).integers(0, 32000, n))


class InterfaceTest(unittest.TestCase):
    """No server: what LMCache checks when it loads the plugin."""

    def test_real_subclasses_of_lmcache_bases(self):
        self.assertTrue(lc.HAVE_LMCACHE)
        self.assertTrue(issubclass(StrataRemoteConnector, RemoteConnector))
        self.assertTrue(issubclass(StrataConnectorAdapter, ConnectorAdapter))
        self.assertEqual(StrataRemoteConnector.__abstractmethods__, frozenset())
        self.assertEqual(StrataConnectorAdapter.__abstractmethods__, frozenset())

    def test_pinned_version_stated(self):
        import strata
        self.assertEqual(lc.PINNED_LMCACHE_VERSION, "0.5.6")
        self.assertEqual(strata.PINNED_VERSIONS["lmcache"], lc.PINNED_LMCACHE_VERSION)
        if USING_STUBS:
            self.assertEqual(lmcache.__version__, lc.PINNED_LMCACHE_VERSION)

    def test_signatures_match_remote_connector(self):
        checked = 0
        for name, base in inspect.getmembers(RemoteConnector, inspect.isfunction):
            if name.startswith("_") or name in ("post_init", "init_chunk_meta",
                                                "reshape_partial_chunk"):
                continue
            ours = getattr(StrataRemoteConnector, name)
            with self.subTest(method=name):
                self.assertIsNot(ours, base, f"{name} is not implemented")
                b = [(p.name, p.kind, p.default) for p in
                     inspect.signature(base).parameters.values()]
                o = [(p.name, p.kind, p.default) for p in
                     inspect.signature(ours).parameters.values()]
                self.assertEqual(o, b)
                self.assertEqual(inspect.iscoroutinefunction(ours),
                                 inspect.iscoroutinefunction(base), name)
                checked += 1
        # exists, exists_sync, get, put, list, close, ping, batched_* and
        # their support_* flags, remove_sync.
        self.assertGreaterEqual(checked, 19)

    def test_adapter_url_schemes(self):
        a = StrataConnectorAdapter()
        self.assertEqual(a.schema, "strata://")
        for url, ok in [("strata://h:9400", True), ("plugin://strata", True),
                        ("plugin://strata.replica", True), ("plugin://stratax", False),
                        ("plugin://redis", False), ("redis://h:6379", False),
                        ("fs:///tmp/x", False)]:
            self.assertEqual(a.can_parse(url), ok, url)

    def test_missing_url_or_credentials_is_a_clear_error(self):
        eng = Engine(plugins=["strata"], extra={})
        ctx = ConnectorContext("plugin://strata", None, eng.local, eng.config, eng.metadata,
                               "strata")
        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaisesRegex(ValueError, "remote_storage_plugin.strata.url"):
                StrataConnectorAdapter().create_connector(ctx)
            ctx.url = "strata://127.0.0.1:1"
            with self.assertRaisesRegex(ValueError, "STRATA_KV_ACCESS_KEY"):
                StrataConnectorAdapter().create_connector(ctx)

    def test_wire_keys_and_namespace(self):
        eng = Engine(world_size=2, worker_id=1)
        (k, _), = eng.keys(tokens(16, 1))
        w = lc.wire_key(k)
        self.assertEqual(len(w), 32)
        self.assertEqual(w, lc.wire_key(eng.keys(tokens(16, 1))[0][0]))
        self.assertNotEqual(w, lc.wire_key(k.with_new_worker_id(0)))
        ns = lc.namespace_for(eng.config, eng.metadata, "KV_2LTD", {"tenant_salt": "t"})
        self.assertEqual((ns["model_id"], ns["block_bytes"], ns["tp_size"], ns["tp_rank"],
                          ns["tokens_per_block"], ns["kv_layout"], ns["tenant_salt"]),
                         ("lmc-test-model", 0, 2, 0, 16, "lmcache:KV_2LTD", "t"))
        a = lc.manifest_for(eng.config, eng.metadata, "KV_2LTD", True)
        b = lc.manifest_for(Engine(world_size=2, worker_id=1, heads=4).config,
                            Engine(world_size=2, worker_id=1, heads=4).metadata, "KV_2LTD",
                            True)
        self.assertNotEqual(a, b, "the manifest names the KV geometry")


class ConnectorTest(KvTestCase):

    def url(self):
        return f"strata://127.0.0.1:{self.server.kv_port}"

    def engine(self, **kw):
        kw.setdefault("model", f"lmc-{self.id()}")
        kw.setdefault("plugins", ["strata"])
        kw.setdefault("extra", plugin_extra("strata", self.url(), ACCESS_KEY, SECRET_KEY))
        return Engine(**kw)

    def driver(self, eng=None, url="plugin://strata", plugin_name="strata", **kw):
        eng = eng or self.engine(**kw)
        d = RemoteBackendDriver(eng, url, plugin_name)
        self.addCleanup(d.close)
        return d

    def assertNoLeaks(self, eng):
        if USING_STUBS:
            self.assertEqual(eng.live(), 0, "MemoryObjs still referenced")

    # ---- loading ------------------------------------------------------------
    def test_plugin_loader_builds_the_connector(self):
        d = self.driver()
        self.assertIsInstance(d.connector, StrataRemoteConnector)
        for flag in ("ping", "batched_get", "batched_put", "batched_contains",
                     "batched_async_contains", "batched_get_non_blocking"):
            self.assertTrue(getattr(d.connector, "support_" + flag)(), flag)
        self.assertEqual(d._run(d.connector.ping()), 0)
        self.assertIs(d.connector.loop, d.loop)
        self.assertIs(d.connector.local_cpu_backend, d.engine.local)

    def test_remote_url_with_credentials_from_the_environment(self):
        eng = self.engine(remote_url=self.url(), extra={
            "remote_storage_plugin.strata.module_path": "strata.lmcache_connector",
            "remote_storage_plugin.strata.class_name": "StrataConnectorAdapter"})
        env = {"STRATA_KV_ACCESS_KEY": ACCESS_KEY, "STRATA_KV_SECRET_KEY": SECRET_KEY}
        with mock.patch.dict(os.environ, env):
            d = self.driver(eng, url=eng.config.remote_url, plugin_name=None)
        pairs = d.store(tokens(40, 1))
        d.wait_puts()
        self.assertEqual(d.batched_contains([k for k, _ in pairs]), 3)

    def test_bad_credentials_fail_at_load(self):
        eng = self.engine(extra=plugin_extra("strata", self.url(), ACCESS_KEY, "wrong"))
        with self.assertRaises(strata_kv.Error) as cm:
            self.driver(eng)
        self.assertEqual(cm.exception.code, strata_kv.AUTH_FAILED)

    def test_plugin_instances_have_their_own_settings(self):
        extra = plugin_extra("strata.a", self.url(), ACCESS_KEY, SECRET_KEY, tenant_salt="A")
        extra.update(plugin_extra("strata.b", self.url(), ACCESS_KEY, SECRET_KEY,
                                  tenant_salt="B"))
        eng = self.engine(plugins=["strata.a", "strata.b"], extra=extra)
        a = self.driver(eng, url="plugin://strata.a", plugin_name="strata.a")
        b = self.driver(eng, url="plugin://strata.b", plugin_name="strata.b")
        self.assertEqual((a.connector.namespace["tenant_salt"],
                          b.connector.namespace["tenant_salt"]), ("A", "B"))
        pairs = a.store(tokens(32, 2))
        a.wait_puts()
        keys = [k for k, _ in pairs]
        self.assertEqual(a.batched_contains(keys), 2)
        self.assertEqual(b.batched_contains(keys), 0, "another tenant's namespace")

    # ---- RemoteBackend's call sequence -------------------------------------
    def test_store_then_lookup_and_retrieve_in_another_engine(self):
        t = tokens(10 * 16 + 5, seed=3)
        a = self.driver()
        pairs = a.store(t)
        a.wait_puts()
        self.assertEqual(len(pairs), 11)
        self.assertNoLeaks(a.engine)  # batched_put released the serializer's references

        b = self.driver()
        keys = [k for k, _ in pairs]
        hits, objs = b.lookup_and_retrieve(keys, pin=True)
        self.assertEqual((hits, len(objs)), (11, 11))
        for (k, n), o in zip(pairs, objs):
            self.assertTrue(b.engine.matches(o, k, n), f"chunk of {n} tokens differs")
        self.assertEqual(tuple(objs[-1].meta.shape), b.engine.shape_for(5))
        self.assertEqual(b.connector._pinned, {}, "pins released after the fetch")
        for o in objs:
            o.ref_count_down()
        self.assertNoLeaks(b.engine)

    def test_pin_protects_the_hit_prefix_until_fetched(self):
        a = self.driver()
        pairs = a.store(tokens(48, seed=4))
        a.wait_puts()
        keys = [k for k, _ in pairs]
        b = self.driver()
        hits = b._run(b.connector.batched_async_contains("L1", keys, True))
        self.assertEqual(hits, 3)
        self.assertEqual(len(b.connector._pinned["L1"]), 3)
        with self.server.client() as c:  # the server holds the pins
            ns = c.open_namespace(**{k: v for k, v in b.connector.namespace.items()})
            self.assertEqual(c.unpin(ns, [lc.wire_key(k) for k in keys]), [strata_kv.OK] * 3)
        objs = b._run(b.connector.batched_get_non_blocking("L1", keys))
        self.assertNotIn("L1", b.connector._pinned)
        self.assertEqual(len(objs), 3)
        for o in objs:
            o.ref_count_down()

    def test_prefix_stops_at_a_missing_chunk_and_remove(self):
        a = self.driver()
        pairs = a.store(tokens(6 * 16, seed=5))
        a.wait_puts()
        keys = [k for k, _ in pairs]
        self.assertTrue(a.remove(keys[4]))
        self.assertFalse(a.remove(keys[4]), "already removed")
        # strata's DELETE takes the chain below keys[4] (keys[5]) with it.
        self.assertEqual(a.batched_contains(keys), 4)
        self.assertEqual(a.batched_contains(keys[1:]), 3)
        self.assertEqual(a.batched_contains(keys[5:]), 0)
        self.assertFalse(a.contains(keys[5]))
        self.assertTrue(a.contains(keys[3], use_exists_sync=True))
        b = self.driver()
        hits, objs = b.lookup_and_retrieve(keys)
        self.assertEqual((hits, len(objs)), (4, 4))
        for o in objs:
            o.ref_count_down()
        self.assertNoLeaks(b.engine)

    def test_non_blocking_get_returns_the_leading_run_and_releases_the_rest(self):
        a = self.driver()
        pairs = a.store(tokens(3 * 16, seed=6))
        a.wait_puts()
        k0, k1, k2 = [k for k, _ in pairs]
        missing = k1.with_new_worker_id(7)
        b = self.driver()
        objs = b._run(b.connector.batched_get_non_blocking("L2", [k0, missing, k2]))
        self.assertEqual(len(objs), 1)
        self.assertTrue(b.engine.matches(objs[0], k0, 16))
        if USING_STUBS:
            self.assertEqual(b.engine.live(), 1, "k2's chunk must be released")
        objs[0].ref_count_down()
        self.assertNoLeaks(b.engine)

    def test_single_key_path(self):
        t = tokens(4 * 16, seed=7)
        a = self.driver()
        pairs = a.store(t, batched=False)
        a.wait_puts()
        self.assertNoLeaks(a.engine)  # put() released each reference
        b = self.driver()
        for k, n in pairs:
            self.assertTrue(b.contains(k))
            o = b.get_blocking(k)
            self.assertTrue(b.engine.matches(o, k, n))
            o.ref_count_down()
        missing = pairs[0][0].with_new_worker_id(9)
        self.assertFalse(b.contains(missing, use_exists_sync=True))
        self.assertIsNone(b.get_blocking(missing))
        self.assertNoLeaks(b.engine)

    def test_full_local_backend_returns_what_fits(self):
        a = self.driver()
        pairs = a.store(tokens(6 * 16, seed=8))
        a.wait_puts()
        b = self.driver(capacity_chunks=2)
        got = b.batched_get_blocking([k for k, _ in pairs])
        self.assertEqual([g is not None for g in got], [True, True] + [False] * 4)
        for g in got[:2]:
            g.ref_count_down()
        self.assertNoLeaks(b.engine)

    def test_without_chunk_meta_the_shape_comes_from_the_length(self):
        extra = plugin_extra("strata", self.url(), ACCESS_KEY, SECRET_KEY)
        extra["save_chunk_meta"] = False
        a = self.driver(extra=extra)
        self.assertFalse(a.connector._use_metas)
        pairs = a.store(tokens(2 * 16 + 3, seed=9))
        a.wait_puts()
        b = self.driver(extra=extra)
        hits, objs = b.lookup_and_retrieve([k for k, _ in pairs])
        self.assertEqual(hits, 3)
        self.assertEqual([tuple(o.meta.shape)[2] for o in objs], [16, 16, 3])
        for (k, n), o in zip(pairs, objs):
            self.assertTrue(b.engine.matches(o, k, n))
            o.ref_count_down()

    def test_a_block_that_is_no_whole_token_count_is_a_miss(self):
        a = self.driver()
        (k, _), = a.engine.keys(tokens(16, seed=10))
        with self.server.client() as c:
            ns = c.open_namespace(**a.connector.namespace)
            junk = np.zeros(a.engine.full_bytes - 1, dtype=np.uint8)
            self.assertEqual(c.put(ns, [lc.wire_key(k)], None, [junk]), [strata_kv.OK])
        self.assertTrue(a.contains(k))
        if not a.connector._use_metas:  # with metas the meta check catches it first
            self.assertIsNone(a.get_blocking(k))
        self.assertNoLeaks(a.engine)

    def test_list_and_ping(self):
        d = self.driver()
        pairs = d.store(tokens(32, seed=11))
        d.wait_puts()
        listed = d._run(d.connector.list())
        if hasattr(strata_kv.Client, "events"):
            self.assertEqual(sorted(listed), sorted(lc.wire_key(k).hex() for k, _ in pairs))
        else:
            self.assertEqual(listed, [])
        self.assertEqual(d._run(d.connector.ping()), 0)

    # ---- v2: per-block chunk metadata and the manifest ---------------------
    @unittest.skipUnless(HAVE_V2, "needs the v2 strata_kv (per-block metadata)")
    def test_chunk_meta_describes_a_serialized_chunk(self):
        from lmcache.v1.memory_management import MemoryFormat
        a = self.driver()
        self.assertTrue(a.connector._use_metas)
        (k, _), = a.engine.keys(tokens(16, seed=12))
        u8 = torch.uint8 if torch is not None else np.uint8
        blob = a.engine.local.allocate([(100,)], [u8], MemoryFormat.BINARY)
        lc._memory_bytes(blob)[:] = np.arange(100, dtype=np.uint8)
        a.submit_put([k], [blob])
        blob.ref_count_down()
        a.wait_puts()
        o = a.get_blocking(k)
        self.assertEqual((o.meta.fmt, tuple(o.meta.shape)), (MemoryFormat.BINARY, (100,)))
        self.assertEqual(bytes(lc._memory_bytes(o)), bytes(range(100)))
        o.ref_count_down()

    @unittest.skipUnless(HAVE_V2, "needs the v2 strata_kv (namespace manifests)")
    def test_manifest_mismatch_warns_or_refuses(self):
        self.driver()  # creates the namespace with its manifest
        with self.assertLogs("strata.lmcache", "WARNING") as logs:
            self.driver(heads=4)  # same namespace, other KV geometry
        self.assertIn("stored manifest", "\n".join(logs.output))
        extra = plugin_extra("strata", self.url(), ACCESS_KEY, SECRET_KEY,
                             strict_manifest=True)
        with self.assertRaisesRegex(ValueError, "stored manifest"):
            self.driver(heads=4, extra=extra)


if __name__ == "__main__":
    unittest.main()
