"""Energy (issue 15, docs/energy.md): joules per node and per workload, each labelled
measured or modelled. The measured path runs against a fake powercap tree
(`--powercap-root`): the RAPL counters advance and the node's measured joules follow them,
through a wraparound; this machine's own /sys/class/powercap has no readable RAPL, so a
default server reports modelled figures only. `strata admin energy` and the admin API
show the same figures, per bucket and identity."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness
from harness import Server, free_port, unique_name
from test_metrics import sample, scrape

RANGE_UJ = 262143328850


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def zone(root, name, label, uj):
    write(os.path.join(root, name, "name"), label + "\n")
    write(os.path.join(root, name, "energy_uj"), f"{uj}\n")
    write(os.path.join(root, name, "max_energy_range_uj"), f"{RANGE_UJ}\n")


def cli(server, *args):
    env = dict(os.environ, STRATA_ROOT_USER=harness.ACCESS_KEY,
               STRATA_ROOT_PASSWORD=harness.SECRET_KEY)
    return subprocess.run([server.bin, "admin", *args, "--endpoint", server.endpoint],
                          capture_output=True, text=True, env=env, timeout=60)


class EnergyTest(unittest.TestCase):
    def start(self, *extra):
        mport = free_port()
        server = Server(extra_args=["--metrics-listen", f"127.0.0.1:{mport}", "--kv-listen",
                                    "off", *extra]).start()
        self.addCleanup(server.cleanup)
        self.addCleanup(server.stop)
        return server, mport

    def test_measured_from_rapl_counters(self):
        root = tempfile.mkdtemp(prefix="strata-powercap-")
        self.addCleanup(shutil.rmtree, root, True)
        zone(root, "intel-rapl:0", "package-0", 1_000_000)
        zone(root, "intel-rapl:0:0", "core", 500_000)  # inside package 0: not added again
        zone(root, "intel-rapl:1", "package-1", RANGE_UJ - 1_000_000)  # about to wrap
        server, mport = self.start("--powercap-root", root)
        self.assertIn("energy: measured by the RAPL counters", server.read_log())
        s3 = server.boto3_client()
        b = unique_name("joules")
        s3.create_bucket(Bucket=b)
        for i in range(20):
            s3.put_object(Bucket=b, Key=f"k{i}", Body=os.urandom(256 << 10))
            s3.get_object(Bucket=b, Key=f"k{i}")["Body"].read()
        # 40 J on package 0, 3 J on package 1 across its wraparound; the subzone's 900 J
        # are part of package 0's already.
        write(os.path.join(root, "intel-rapl:0", "energy_uj"), "41000000\n")
        write(os.path.join(root, "intel-rapl:0:0", "energy_uj"), "900500000\n")
        write(os.path.join(root, "intel-rapl:1", "energy_uj"), "2000000\n")
        text = scrape(mport, token=None)[2]
        self.assertAlmostEqual(sample(text, "strata_energy_joules_total", source="measured"),
                               43.0, places=3)
        self.assertGreater(sample(text, "strata_energy_joules_total", source="modelled"), 0)
        bucket_j = sample(text, "strata_energy_workload_joules_total", kind="bucket", workload=b,
                          source="modelled")
        # At least the bytes moved: 20 x 256 KiB in and out, 3 nJ per byte.
        self.assertGreater(bucket_j, 2 * 20 * (256 << 10) * 3e-9)
        self.assertIsNotNone(sample(text, "strata_energy_workload_joules_total",
                                    kind="identity", source="modelled"))
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

        status, doc = harness.admin(server, "GET", "energy")
        self.assertEqual(status, 200, doc)
        self.assertEqual(doc["node"]["source"], "measured")
        self.assertAlmostEqual(doc["node"]["measured_joules"], 43.0, places=3)
        self.assertEqual(doc["rapl_domains"], ["intel-rapl:0 (package-0)",
                                               "intel-rapl:1 (package-1)"])
        mine = [w for w in doc["workloads"] if w["kind"] == "bucket" and w["name"] == b]
        self.assertEqual(len(mine), 1, doc["workloads"])
        w = mine[0]
        self.assertGreaterEqual(w["bytes"], 2 * 20 * (256 << 10))
        self.assertGreater(w["cpu_seconds"], 0)
        # Its measured figure is its share of the node's measured joules.
        self.assertAlmostEqual(w["measured_joules"],
                               43.0 * w["modelled_joules"] / doc["node"]["modelled_joules"],
                               places=2)
        self.assertLessEqual(w["measured_joules"], 43.0)
        out = cli(server, "energy")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("J measured (RAPL: intel-rapl:0 (package-0) intel-rapl:1 (package-1))",
                      out.stdout)
        self.assertIn(b, out.stdout)

    def test_modelled_without_rapl(self):
        empty = tempfile.mkdtemp(prefix="strata-powercap-")
        self.addCleanup(shutil.rmtree, empty, True)
        # Counters readable by root only look like this to the server: no energy_uj.
        write(os.path.join(empty, "intel-rapl:0", "name"), "package-0\n")
        server, mport = self.start("--powercap-root", empty)
        self.assertIn("energy: modelled (no readable RAPL counters", server.read_log())
        s3 = server.boto3_client()
        b = unique_name("model")
        s3.create_bucket(Bucket=b)
        s3.put_object(Bucket=b, Key="k", Body=b"x" * 100000)
        text = scrape(mport, token=None)[2]
        self.assertIsNone(sample(text, "strata_energy_joules_total", source="measured"))
        self.assertGreater(sample(text, "strata_energy_joules_total", source="modelled"), 0)
        status, doc = harness.admin(server, "GET", "energy")
        self.assertEqual(status, 200, doc)
        self.assertEqual(doc["node"]["source"], "modelled")
        self.assertNotIn("measured_joules", doc["node"])
        self.assertTrue(all("measured_joules" not in w for w in doc["workloads"]))
        self.assertEqual(doc["coefficients"]["cpu_joules_per_second"], 15.0)
        out = cli(server, "energy")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("no RAPL counters readable: modelled only", out.stdout)


if __name__ == "__main__":
    unittest.main()
