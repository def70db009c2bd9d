"""Runs integration test modules as separate processes, JOBS at a time.

    parallel.py [-j JOBS] [MODULE ...]     (default: every test_*.py here)

Every module starts its own strata servers on free loopback ports in their own
temporary directories (harness.py), so modules do not share state; running
two at once keeps both cores of a small machine busy while one module waits on
a client or a sync. Each module's output is printed whole when it ends (never
interleaved), then a summary; the exit status is 1 if any module failed.
JOBS defaults to $STRATA_IT_JOBS, else the CPU count, at most 2.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# The longest modules start first so that the last ones to finish are short
# (only the order; every module runs).
SLOW_FIRST = ["test_durability", "test_cli_tools", "test_tiers", "test_remote_tier",
              "test_crash", "test_listing_scale", "test_kmip", "test_multipart",
              "test_tls", "test_console", "test_versioning_durability", "test_advisor",
              "test_object_lock", "test_loader", "test_encryption", "test_memory"]


def default_jobs():
    env = os.environ.get("STRATA_IT_JOBS")
    if env:
        return max(1, int(env))
    return max(1, min(2, os.cpu_count() or 1))


def modules_here():
    return sorted(f[:-3] for f in os.listdir(HERE) if f.startswith("test_") and f.endswith(".py"))


def ordered(modules):
    first = [m for m in SLOW_FIRST if m in modules]
    return first + [m for m in modules if m not in first]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--jobs", type=int, default=default_jobs())
    parser.add_argument("modules", nargs="*")
    args = parser.parse_args()
    modules = [m[:-3] if m.endswith(".py") else m for m in args.modules] or modules_here()
    pending = ordered(modules)
    running = []  # (module, process, log file, start time)
    failed, durations, tests = [], {}, 0
    start_all = time.time()
    print(f"integration: {len(pending)} module(s), {args.jobs} at a time", flush=True)
    while pending or running:
        while pending and len(running) < args.jobs:
            module = pending.pop(0)
            log = tempfile.TemporaryFile()
            proc = subprocess.Popen([sys.executable, "-m", "unittest", "-v", module], cwd=HERE,
                                    stdout=log, stderr=subprocess.STDOUT)
            running.append((module, proc, log, time.time()))
        time.sleep(0.1)
        for entry in list(running):
            module, proc, log, started = entry
            if proc.poll() is None:
                continue
            running.remove(entry)
            durations[module] = time.time() - started
            verdict = "ok" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
            if proc.returncode != 0:
                failed.append(module)
            log.seek(0)
            output = log.read()
            ran = re.search(rb"^Ran (\d+) tests? in", output, re.M)
            tests += int(ran.group(1)) if ran else 0
            sys.stdout.write(f"\n===== {module}: {verdict}, {durations[module]:.1f} s =====\n")
            sys.stdout.flush()
            sys.stdout.buffer.write(output)
            sys.stdout.flush()
            log.close()
    total = time.time() - start_all
    print(f"\nintegration: {tests} tests in {len(durations)} module(s) in {total:.0f} s "
          f"(sum of module times {sum(durations.values()):.0f} s)")
    if failed:
        print("integration: FAILED modules: " + " ".join(failed))
        return 1
    print("integration: all modules passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
