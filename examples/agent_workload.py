#!/usr/bin/python3
"""A multi-agent KV-cache workload against strata, swept over cache capacity.

N simulated agent sessions take turns round-robin. Each turn an agent
re-sends its whole conversation, grown by a new user message and the
previous reply, so turn t+1 reuses 85-99 % of turn t's tokens as its prefix
(the growth per turn is drawn so that the reused share is uniform in
[--reuse-min, --reuse-max]). Every conversation starts with one system prompt
shared by all agents. Tokens are cut into --block-tokens blocks keyed by a
chained hash (key_i = SHA-256(key_{i-1} || token ids of block i)); only full
blocks are cached.

A turn: one LOOKUP of the conversation's block keys -> P cached leading
blocks; one batched GET of those P blocks into a preallocated buffer
(restore, timed); the rest is recomputed (cost below); the new blocks are
PUT (chained to their parents). The KV payload of a block is --block-bytes
(default 32 KiB: e.g. 2 KiB/token of a small GQA model).

Capacity sweep: for each point a fresh namespace whose descriptor sets
quota_bytes = capacity x block_bytes (strata evicts tail-first, least
recently used, to stay under it); points are fractions of the workload's
distinct blocks (--capacities). Per point it reports the hit rate (blocks
restored / blocks needed, over all turns), restore time vs the time to
recompute the same tokens, the time of all turns with and without the
cache, and server-side evictions; then names the smallest capacity at which
the hit rate is within 2 % of the largest one's (where thrashing stops).

Recompute cost: by default measured on this CPU with a tiny numpy model (4
layers of a d_model=512 MLP block, fp32: per-token seconds of a batched
prefill-shaped pass); --recompute-us-per-token sets a modeled cost instead
(e.g. from a GPU's measured prefill throughput). The table says which.

--quick (CI, < 60 s): 6 agents x 8 turns, 16 KiB blocks, 5 capacity points;
exit status 1 unless the hit rate does not fall as capacity grows (within
0.02) and is >= 0.8 at the largest capacity. Without --kv it starts its own
server (binary from --strata or $STRATA_BIN, via tests/kv/kvtest.py).
"""
import argparse
import hashlib
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for p in (os.path.join(ROOT, "client", "python"), os.path.join(ROOT, "tests", "integration"),
          os.path.join(ROOT, "tests", "kv")):
    if p not in sys.path:
        sys.path.append(p)

import strata_kv  # noqa: E402


def block_keys(tokens, block_tokens, root):
    keys, prev = [], root
    for start in range(0, len(tokens) - block_tokens + 1, block_tokens):
        chunk = np.asarray(tokens[start:start + block_tokens], dtype=np.int32)
        prev = hashlib.sha256(prev + chunk.tobytes()).digest()
        keys.append(prev)
    return keys


def make_sessions(args, rng):
    """Per agent, the token lists it sends turn by turn."""
    system = list(rng.integers(0, 50000, args.system_tokens))
    sessions = []
    for _ in range(args.agents):
        conv = system + list(rng.integers(0, 50000, args.first_tokens))
        turns = [list(conv)]
        for _ in range(args.turns - 1):
            reuse = rng.uniform(args.reuse_min, args.reuse_max)
            grow = max(1, int(round(len(conv) * (1 - reuse) / reuse)))
            conv = conv + list(rng.integers(0, 50000, grow))
            turns.append(list(conv))
        sessions.append(turns)
    return sessions


def measure_recompute_s_per_token(d_model=512, layers=4, tokens=256, reps=2):
    """Seconds per token of a tiny numpy prefill (MLP blocks, fp32)."""
    rng = np.random.default_rng(0)
    w1 = [rng.standard_normal((d_model, 4 * d_model), dtype=np.float32) for _ in range(layers)]
    w2 = [rng.standard_normal((4 * d_model, d_model), dtype=np.float32) for _ in range(layers)]
    x0 = rng.standard_normal((tokens, d_model), dtype=np.float32)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        x = x0
        for a, b in zip(w1, w2):
            x = x + np.maximum(x @ a, 0) @ b * 1e-3
        best = min(best, time.perf_counter() - t0)
    return best / tokens


def run_point(client, args, sessions, capacity_blocks, point, s_per_token):
    desc = dict(model_id=f"agent-workload-{os.getpid()}-{point}",
                weights_fingerprint="sha256:" + "00" * 32, kv_dtype="float16",
                kv_layout="NHD", tokens_per_block=args.block_tokens,
                block_bytes=args.block_bytes, tp_size=1, tp_rank=0, pp_size=1, pp_rank=0,
                hash_algorithm="sha256", hash_seed=0, tenant_salt="",
                quota_bytes=capacity_blocks * args.block_bytes)
    ns = client.open_namespace(**desc)
    root = hashlib.sha256(b"agent-workload-root").digest()
    max_blocks = max(len(block_keys(t[-1], args.block_tokens, root)) for t in sessions)
    buf = np.zeros((max_blocks, args.block_bytes), dtype=np.uint8)
    payload = np.random.default_rng(1).integers(0, 256, (max_blocks, args.block_bytes),
                                                dtype=np.uint8)
    needed = restored = 0
    restore_s = recompute_s = 0.0
    for turn in range(args.turns):
        for agent in range(args.agents):
            tokens = sessions[agent][turn]
            keys = block_keys(tokens, args.block_tokens, root)
            t0 = time.perf_counter()
            hits = client.lookup(ns, keys)
            if hits:
                st = client.get_into(ns, keys[:hits], [buf[i] for i in range(hits)])
                ok = 0
                while ok < hits and st[ok] == strata_kv.OK:
                    ok += 1
                hits = ok  # a block evicted between LOOKUP and GET is recomputed
            restore_s += time.perf_counter() - t0
            needed += len(keys)
            restored += hits
            # Recompute what was not restored (the tokens after the hit prefix).
            recompute_s += (len(tokens) - hits * args.block_tokens) * s_per_token
            new = keys[hits:]
            if new:
                parents = [keys[hits - 1] if hits else None] + new[:-1]
                client.put(ns, new, parents, [payload[i] for i in range(len(new))])
    stats = client.stats(ns)
    tokens_total = sum(len(s[t]) for s in sessions for t in range(args.turns))
    restored_tokens = restored * args.block_tokens
    return dict(capacity=capacity_blocks, hit_rate=restored / needed if needed else 0.0,
                restore_s=restore_s, restored_tokens=restored_tokens,
                recompute_same_s=restored_tokens * s_per_token,
                with_cache_s=restore_s + recompute_s,
                without_cache_s=tokens_total * s_per_token,
                evictions=stats["evictions"], stored=stats["blocks"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, default=16)
    ap.add_argument("--turns", type=int, default=12)
    ap.add_argument("--system-tokens", type=int, default=512)
    ap.add_argument("--first-tokens", type=int, default=256)
    ap.add_argument("--reuse-min", type=float, default=0.85)
    ap.add_argument("--reuse-max", type=float, default=0.99)
    ap.add_argument("--block-tokens", type=int, default=16)
    ap.add_argument("--block-bytes", type=int, default=32 << 10)
    ap.add_argument("--capacities", default=None,
                    help="fractions of the workload's distinct blocks "
                    "(default 0.1,0.25,0.5,0.75,1.0,1.5; --quick: 0.1,0.25,0.5,1.0,1.5)")
    ap.add_argument("--recompute-us-per-token", type=float, default=None,
                    help="modeled recompute cost (default: measured numpy model)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--kv", help="HOST:PORT of a running server (credentials from "
                    "STRATA_KV_ACCESS_KEY / STRATA_KV_SECRET_KEY)")
    ap.add_argument("--strata", help="strata binary (default $STRATA_BIN)")
    args = ap.parse_args()
    if args.quick:
        args.agents, args.turns, args.block_bytes = 6, 8, 16 << 10
        args.capacities = args.capacities or "0.1,0.25,0.5,1.0,1.5"
    args.capacities = args.capacities or "0.1,0.25,0.5,0.75,1.0,1.5"

    if args.recompute_us_per_token is not None:
        s_per_token = args.recompute_us_per_token * 1e-6
        cost_note = f"modeled: {args.recompute_us_per_token:g} us/token"
    else:
        s_per_token = measure_recompute_s_per_token()
        cost_note = (f"measured: numpy 4-layer d_model=512 MLP prefill on this CPU, "
                     f"{s_per_token * 1e6:.1f} us/token")

    rng = np.random.default_rng(args.seed)
    sessions = make_sessions(args, rng)
    root = hashlib.sha256(b"agent-workload-root").digest()
    distinct = set()
    for s in sessions:
        distinct.update(block_keys(s[-1], args.block_tokens, root))
    working = len(distinct)
    reuse = [len(s[t - 1]) / len(s[t]) for s in sessions for t in range(1, args.turns)]

    server = None
    if args.kv:
        host, port = args.kv.rsplit(":", 1)
        creds = (os.environ["STRATA_KV_ACCESS_KEY"], os.environ["STRATA_KV_SECRET_KEY"])
    else:
        if args.strata:
            os.environ["STRATA_BIN"] = args.strata
        if not os.environ.get("STRATA_BIN"):
            print("need --kv, --strata or $STRATA_BIN", file=sys.stderr)
            return 2
        import kvtest
        server = kvtest.KvServer().start()
        host, port, creds = "127.0.0.1", server.kv_port, (kvtest.ACCESS_KEY, kvtest.SECRET_KEY)
    try:
        t_start = time.perf_counter()
        rows = []
        with strata_kv.Client(host, int(port), *creds) as client:
            for i, frac in enumerate(sorted(float(x) for x in args.capacities.split(","))):
                cap = max(1, int(round(frac * working)))
                rows.append((frac, run_point(client, args, sessions, cap, i, s_per_token)))
        elapsed = time.perf_counter() - t_start
    finally:
        if server is not None:
            server.cleanup()

    print(f"{args.agents} agents x {args.turns} turns, {args.block_tokens}-token blocks of "
          f"{args.block_bytes >> 10} KiB, prefix reuse per turn {min(reuse):.1%}..{max(reuse):.1%}"
          f" (mean {np.mean(reuse):.1%}), {working} distinct blocks "
          f"({working * args.block_bytes / 2**20:.1f} MiB)")
    print(f"recompute cost {cost_note}; restore = LOOKUP + batched GET, measured")
    hdr = (f"{'capacity':>16} {'hit rate':>8} {'restore':>9} {'recompute':>10} "
           f"{'x faster':>8} {'turns w/':>9} {'turns w/o':>9} {'evicted':>8}")
    print(hdr)
    print(f"{'(blocks, share)':>16} {'':>8} {'(s)':>9} {'same (s)':>10} {'':>8} "
          f"{'cache (s)':>9} {'cache (s)':>9} {'blocks':>8}")
    for frac, r in rows:
        speed = r["recompute_same_s"] / r["restore_s"] if r["restore_s"] else float("inf")
        print(f"{r['capacity']:>8} {frac:>6.0%}  {r['hit_rate']:>8.3f} {r['restore_s']:>9.3f} "
              f"{r['recompute_same_s']:>10.3f} {speed:>8.1f} {r['with_cache_s']:>9.3f} "
              f"{r['without_cache_s']:>9.3f} {r['evictions']:>8}")
    best = rows[-1][1]["hit_rate"]
    knee = next((f, r) for f, r in rows if r["hit_rate"] >= best - 0.02)
    print(f"thrashing stops at about {knee[1]['capacity']} blocks ({knee[0]:.0%} of the "
          f"distinct blocks): hit rate {knee[1]['hit_rate']:.3f} vs {best:.3f} at the largest "
          f"capacity; sweep took {elapsed:.1f} s")

    rates = [r["hit_rate"] for _, r in rows]
    failures = []
    if any(b < a - 0.02 for a, b in zip(rates, rates[1:])):
        failures.append(f"hit rate falls as capacity grows: {rates}")
    if best < 0.8:
        failures.append(f"hit rate at the largest capacity {best:.3f} < 0.8")
    if rows[0][1]["evictions"] == 0:
        failures.append("the smallest capacity evicted nothing (quota not applied?)")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
