"""Shared by bench/callgrind_*.py: strata under callgrind with instrumentation
off, and instructions per request of a phase, server side.

  with CallgrindServer(binary) as srv:
      s3 = srv.boto3()
      ...set up...
      srv.measure("phase name", n, lambda: one_request())
  srv.results: {phase: instructions per request}
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "integration"))
import harness  # noqa: E402


def cli_args(default_n):
    """STRATA_BIN N KEEP_DIR from the command line: (binary, n, keep_dir or None)."""
    a = sys.argv
    binary = a[1] if len(a) > 1 else os.path.join(root, "build", "strata")
    n = int(a[2]) if len(a) > 2 else default_n
    return binary, n, (a[3] if len(a) > 3 else None)


class CallgrindServer:
    def __init__(self, binary, keep_dir=None, extra_args=()):
        self.binary, self.keep_dir = binary, keep_dir
        self.extra_args = list(extra_args)
        self.work = tempfile.mkdtemp(prefix="strata-cg-")
        self.port = harness.free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.phases = []
        self.results = {}

    def __enter__(self):
        env = dict(os.environ, STRATA_ROOT_USER=harness.ACCESS_KEY, STRATA_ROOT_PASSWORD=harness.SECRET_KEY)
        out = os.path.join(self.work, "cg.out")
        self.proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
             self.binary, "server", "--data", os.path.join(self.work, "data"), "--listen",
             f"127.0.0.1:{self.port}", "--kv-listen", "off", "--workers", "4", *self.extra_args],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                break
            except OSError:
                time.sleep(0.2)
        return self

    def boto3(self, **kw):
        return harness.Server.boto3_client(self, **kw)

    def measure(self, name, n, request):
        ctl = lambda *a: subprocess.run(["callgrind_control", *a, str(self.proc.pid)],  # noqa: E731
                                        capture_output=True)
        ctl("-z")
        ctl("-i", "on")
        for _ in range(n):
            request()
        ctl("-i", "off")
        ctl("-d", name.replace(" ", "_"))
        self.phases.append((name.replace(" ", "_"), n))

    def __exit__(self, *exc):
        try:
            if exc[0] is None:
                self.proc.terminate()
                self.proc.wait()
                counts = dict(self.phases)
                for f in sorted(os.listdir(self.work)):
                    if not f.startswith("cg.out.") or f.endswith(str(self.proc.pid)):
                        continue
                    text = open(os.path.join(self.work, f)).read()
                    trigger = [l for l in text.splitlines() if l.startswith("desc: Trigger")]
                    total = [l for l in text.splitlines() if l.startswith("totals:")]
                    if trigger and total:
                        name = trigger[0].split("dump ", 1)[-1]
                        self.results[name.replace("_", " ")] = int(total[0].split()[1]) / counts.get(name, 1)
                    if self.keep_dir:
                        os.makedirs(self.keep_dir, exist_ok=True)
                        shutil.copy(os.path.join(self.work, f), self.keep_dir)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            shutil.rmtree(self.work, ignore_errors=True)
