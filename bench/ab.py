#!/usr/bin/python3
"""Side-by-side comparison of two strata binaries with s3bench, in one run.

    bench/ab.py --a /tmp/strata-old --b build/strata --rounds 5 -- --only put4k,get4k --duration-s 3

Each round runs `s3bench --runs 1 <args>` once against binary A and once
against binary B (the order alternates between rounds, so load drift hits
both alike) and the table prints, per case, the median over the rounds of
each binary's figure, B / A, and every round's figures. The s3bench used is
the one next to this script's build (`--s3bench`, default build/bench/s3bench).
"""
import argparse
import re
import statistics
import subprocess
import sys

RUN_LINE = re.compile(r"^\[s3bench\] (.+?)\s+run 1/1: ([0-9.]+) (\S+)")


def run_once(s3bench, binary, args):
    out = subprocess.run([s3bench, "--strata", binary, "--runs", "1", *args],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stdout)
        raise SystemExit(f"s3bench failed against {binary} (exit {out.returncode})")
    figures = {}
    for line in out.stdout.splitlines():
        m = RUN_LINE.match(line)
        if m:
            figures[m.group(1).strip()] = (float(m.group(2)), m.group(3))
    return figures


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", required=True, help="the baseline strata binary (e.g. the previous commit's)")
    p.add_argument("--b", required=True, help="the changed strata binary")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--s3bench", default="build/bench/s3bench")
    p.add_argument("args", nargs=argparse.REMAINDER, help="after --: s3bench options")
    opts = p.parse_args()
    args = [a for a in opts.args if a != "--"]
    results = {"a": [], "b": []}
    for r in range(opts.rounds):
        order = ("a", "b") if r % 2 == 0 else ("b", "a")
        for which in order:
            binary = opts.a if which == "a" else opts.b
            results[which].append(run_once(opts.s3bench, binary, args))
            print(f"round {r + 1}/{opts.rounds} {which} done", file=sys.stderr, flush=True)
    cases = list(results["a"][0].keys())
    print(f"A = {opts.a}\nB = {opts.b}\n{opts.rounds} rounds, alternating; s3bench {' '.join(args)}\n")
    print(f"{'case':40} {'A median':>14} {'B median':>14} {'B/A':>7}   rounds A | B")
    for case in cases:
        a = [f[case][0] for f in results["a"] if case in f]
        b = [f[case][0] for f in results["b"] if case in f]
        unit = results["a"][0][case][1]
        ma, mb = statistics.median(a), statistics.median(b)
        ratio = mb / ma if ma else float("nan")
        fa = " ".join(f"{x:g}" for x in a)
        fb = " ".join(f"{x:g}" for x in b)
        print(f"{case:40} {ma:>9g} {unit:<4} {mb:>9g} {unit:<4} {ratio:>6.2f}x   {fa} | {fb}")


if __name__ == "__main__":
    main()
