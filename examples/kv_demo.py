#!/usr/bin/python3
"""KV-cache restore from strata, end to end, with a real (small) transformer.

A decoder-only transformer in PyTorch on the CPU, random weights from a fixed
seed (8 layers, d_model 512, 8 query heads sharing 2 KV heads (GQA), head dim
64, fp32: 8 KiB of K+V per token, 128 KiB per 16-token block), keeps its KV
cache in a paged tensor, the way vLLM does: cache[block] is one contiguous
128 KiB block holding [layer][K|V][token][kv_head][head_dim].

  1. Recompute: prefill the whole prompt, produce the first token (TTFT), then
     store every full 16-token block in strata under a 32-byte key chained
     over the token prefix: key_i = SHA-256(key_{i-1} || token ids of block
     i), key_{-1} = SHA-256("strata-kv-demo-root" || the namespace's hash
     seed), in a namespace whose descriptor names the model, a SHA-256
     fingerprint of its weights, dtype, layout, block geometry, hash
     algorithm and seed, and a tenant salt.
  2. Restore, on a new connection with a fresh (preallocated, zeroed) KV
     cache: hash the prompt, one LOOKUP -> P cached blocks, one batched GET
     of exactly those P blocks straight into cache[0..P-1] (get_into with the
     tensors' own memory: no staging buffer, no copy), prefill only the
     uncached suffix (at least the last token, so there is a query), first
     token (TTFT).
  3. Checks: first-token logits equal within 1e-4, 32 greedy tokens
     identical, restored blocks byte-identical, one LOOKUP per restore, bytes
     served == P x block_bytes == bytes requested.
  Every store and restore goes through vLLM's offloading interface:
     strata.vllm_tier.StrataSecondaryTier, built by vLLM's
     SecondaryTierFactory from a kv_connector_extra_config "secondary_tiers"
     entry (vLLM when installed, else its interface stubs in tests/kv/stubs),
     over the KV cache tensor as the primary view, and driven with the
     engine's calls (per-key lookup with RETRY until the step ends, a
     TransferJob per load/store, get_finished_jobs); the namespace comes from
     the engine configuration (the tier derives it; LOOKUP is the tier's one
     round trip per step).
  4. Partial hit: a prompt sharing the first 75 % with another suffix; LOOKUP
     finds only the shared full blocks, GET loads only those, the result
     equals that prompt's full recompute; storing it afterwards answers
     EXISTS for the shared blocks and stores only the new ones.

  5. Disaggregated: a prefill process computes a prompt's KV and stores it
     through the tier; a separate decode process (fresh KV cache, its own
     connection) restores it through the tier, prefills only the last token
     and must produce the prefill process's greedy tokens (--quick: a
     256-token prompt, 8 tokens; --disagg-tokens 0 skips it).

Run with Debian's python (it has python3-torch and python3-numpy):

  PYTHONPATH=BUILD/client/python:client/python \\
    /usr/bin/python3 examples/kv_demo.py --strata BUILD/strata [--tokens N] [--quick]

Without --kv it starts its own `strata server` (binary from --strata or
$STRATA_BIN) on free loopback ports with a temporary data directory and
generated credentials, and removes it at the end. With --kv HOST:PORT it uses
a running server; the credentials come from STRATA_KV_ACCESS_KEY /
STRATA_KV_SECRET_KEY (or STRATA_ROOT_USER / STRATA_ROOT_PASSWORD).

TTFT runs from the prompt's token ids to the first token's id; both paths
start warm (an untimed short prefill first), with the connection open and the
KV cache allocated, as in a serving engine. Each TTFT is the median of --runs
runs (default 3; --quick: 1024 tokens and 1 run, for CI).

The times are CPU figures: PyTorch prefill on this CPU is orders of magnitude
slower than on a GPU, so the recompute/restore ratio here overstates what a
GPU would gain. Exit status: 0 when every check passed, 1 otherwise, 2 on a
setup error.
"""
import argparse
import hashlib
import itertools
import json
import os
import platform
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

try:
    import numpy  # noqa: F401  (Tensor.numpy() needs it)
    import torch
except ImportError as e:  # an environment problem, not a failed check
    print(f"kv_demo: {e}; run with Debian's /usr/bin/python3 after "
          "`apt-get install python3-torch python3-numpy`", file=sys.stderr)
    sys.exit(2)
try:
    import strata_kv
except ImportError as e:
    print(f"kv_demo: {e}; put BUILD/client/python (the built strata_kv module) on PYTHONPATH",
          file=sys.stderr)
    sys.exit(2)
# vLLM's interface (vLLM itself when installed, else the stubs of its interface
# in tests/kv/stubs) and the factory-side helpers of tests/kv/vllm_driver.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "kv"))
import vllm_driver  # noqa: E402
from vllm_driver import (LookupResult, ReqContext, ScheduleEndContext, TransferJob,  # noqa: E402
                         make_offload_key)

# ---- the model ---------------------------------------------------------------------
N_LAYERS = 8
D_MODEL = 512
N_HEADS = 8
N_KV_HEADS = 2
HEAD_DIM = 64
GROUP = N_HEADS // N_KV_HEADS
D_FF = 1536
VOCAB = 32000
TOKENS_PER_BLOCK = 16
ROPE_BASE = 10000.0
DTYPE = torch.float32
BYTES_PER_TOKEN = N_LAYERS * 2 * N_KV_HEADS * HEAD_DIM * 4  # K and V, fp32: 8 KiB
BLOCK_BYTES = TOKENS_PER_BLOCK * BYTES_PER_TOKEN  # 128 KiB
KV_LAYOUT = "paged:block[layer][k,v][token][kv_head][head_dim]"
MODEL_ID = "strata-kv-demo/tiny-decoder-8L-512d-gqa"
QUERY_CHUNK = 256  # queries per attention matmul (bounds the score matrix)
N_DECODE = 32
LOGIT_TOLERANCE = 1e-4

F = torch.nn.functional


def mm(w, x):
    """w @ x for a weight w stored as [out, in, 1] and activations x [in, S].

    Debian's torch sends matmul to the reference BLAS (a few GFLOP/s here) but
    runs convolutions in oneDNN (~100 GFLOP/s on 2 cores), so a prefill's
    matmuls are 1x1 convolutions. oneDNN re-lays out the weight on every call,
    which costs more than the product itself for a handful of tokens: decode
    steps use the plain matrix-vector product."""
    if x.shape[1] <= 4:
        return w.view(w.shape[0], w.shape[1]) @ x
    return F.conv1d(x.unsqueeze(0), w).squeeze(0)


def rms_norm(x, weight, eps=1e-6):
    """x [D, S] (channels first), normalized over D."""
    return x * torch.rsqrt(x.pow(2).mean(0, keepdim=True) + eps) * weight[:, None]


class Layer:
    pass


class TinyDecoder:
    """Llama-shaped decoder (RMSNorm, RoPE, GQA attention, SwiGLU MLP), random
    weights from `seed`. Activations are channels-first ([D, tokens]).
    forward() reads and writes a paged KV cache."""

    def __init__(self, seed, max_positions):
        g = torch.Generator().manual_seed(seed)

        def w(n_out, n_in, std):  # a [n_out, n_in] weight, stored as a 1x1 convolution's
            return (torch.randn(n_out, n_in, 1, generator=g, dtype=DTYPE) * std).contiguous()

        s = D_MODEL ** -0.5
        self.embedding = torch.randn(VOCAB, D_MODEL, generator=g, dtype=DTYPE)
        self.layers = []
        for _ in range(N_LAYERS):
            L = Layer()
            L.attn_norm = torch.ones(D_MODEL, dtype=DTYPE)
            L.wq = w(N_HEADS * HEAD_DIM, D_MODEL, s)
            L.wk = w(N_KV_HEADS * HEAD_DIM, D_MODEL, s)
            L.wv = w(N_KV_HEADS * HEAD_DIM, D_MODEL, s)
            L.wo = w(D_MODEL, N_HEADS * HEAD_DIM, (N_HEADS * HEAD_DIM * N_LAYERS) ** -0.5)
            L.mlp_norm = torch.ones(D_MODEL, dtype=DTYPE)
            L.w1 = w(D_FF, D_MODEL, s)
            L.w3 = w(D_FF, D_MODEL, s)
            L.w2 = w(D_MODEL, D_FF, (D_FF * N_LAYERS) ** -0.5)
            self.layers.append(L)
        self.final_norm = torch.ones(D_MODEL, dtype=DTYPE)
        self.lm_head = w(VOCAB, D_MODEL, s)
        # RoPE tables for every position, computed once: both paths use the same values.
        inv_freq = 1.0 / (ROPE_BASE ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM))
        angles = inv_freq[:, None] * torch.arange(max_positions, dtype=torch.float64)[None, :]
        self.cos = angles.cos().to(DTYPE)  # [HEAD_DIM/2, positions]
        self.sin = angles.sin().to(DTYPE)

    def tensors(self):
        yield "embedding", self.embedding
        for i, L in enumerate(self.layers):
            for name in ("attn_norm", "wq", "wk", "wv", "wo", "mlp_norm", "w1", "w3", "w2"):
                yield f"layers.{i}.{name}", getattr(L, name)
        yield "final_norm", self.final_norm
        yield "lm_head", self.lm_head

    def fingerprint(self):
        """SHA-256 over every weight tensor's name, shape, dtype and bytes."""
        h = hashlib.sha256()
        for name, t in self.tensors():
            h.update(f"{name}:{tuple(t.shape)}:{t.dtype};".encode())
            h.update(memoryview(t.contiguous().numpy()).cast("B"))
        return "sha256:" + h.hexdigest()

    def _rope(self, x, pos):
        """x [heads, HEAD_DIM, S] rotated by the angles of positions `pos`."""
        cos, sin = self.cos[:, pos], self.sin[:, pos]
        x1, x2 = x[:, : HEAD_DIM // 2], x[:, HEAD_DIM // 2:]
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=1)

    def forward(self, tokens, start, cache):
        """Runs `tokens` at positions start, start+1, ... with the K/V of
        positions [0, start) already in `cache` ([blocks, layers, 2, 16,
        kv_heads, head_dim]); writes their own K/V into the cache; returns the
        logits of the last position."""
        S = tokens.numel()
        end = start + S
        pos = torch.arange(start, end)
        blk, slot = pos // TOKENS_PER_BLOCK, pos % TOKENS_PER_BLOCK
        nb = (end + TOKENS_PER_BLOCK - 1) // TOKENS_PER_BLOCK
        key_pos = torch.arange(end)
        scale = HEAD_DIM ** -0.5
        x = self.embedding[tokens].t().contiguous()  # [D, S]
        for li, L in enumerate(self.layers):
            h = rms_norm(x, L.attn_norm)
            q = self._rope(mm(L.wq, h).view(N_HEADS, HEAD_DIM, S), pos)
            k = self._rope(mm(L.wk, h).view(N_KV_HEADS, HEAD_DIM, S), pos)
            v = mm(L.wv, h).view(N_KV_HEADS, HEAD_DIM, S)
            cache[blk, li, 0, slot] = k.permute(2, 0, 1)
            cache[blk, li, 1, slot] = v.permute(2, 0, 1)
            # Gather this layer's K and V from the paged blocks (what a paged-attention kernel reads).
            Kt = cache[:nb, li, 0].reshape(-1, N_KV_HEADS, HEAD_DIM)[:end].permute(1, 2, 0).contiguous()
            V = cache[:nb, li, 1].reshape(-1, N_KV_HEADS, HEAD_DIM)[:end].permute(1, 0, 2).contiguous()
            out = torch.empty(N_KV_HEADS, GROUP, HEAD_DIM, S, dtype=DTYPE)
            qg = q.view(N_KV_HEADS, GROUP, HEAD_DIM, S)  # query head = kv_head * GROUP + g
            for c0 in range(0, S, QUERY_CHUNK):
                c1 = min(S, c0 + QUERY_CHUNK)
                C, kend = c1 - c0, start + c1  # causal: these queries see keys [0, start + c1)
                # scores[kv, g*C + i, key] = q . k, a grouped 1x1 convolution over the keys
                wq = qg[:, :, :, c0:c1].permute(0, 1, 3, 2).reshape(N_KV_HEADS * GROUP * C, HEAD_DIM, 1)
                keys = Kt[:, :, :kend].reshape(1, N_KV_HEADS * HEAD_DIM, kend)
                scores = F.conv1d(keys, wq, groups=N_KV_HEADS).view(N_KV_HEADS, GROUP, C, kend)
                scores.mul_(scale).masked_fill_(key_pos[None, :kend] > pos[c0:c1, None], float("-inf"))
                p = torch.softmax(scores, dim=-1).view(N_KV_HEADS * GROUP * C, kend, 1)
                # out[kv, g*C + i, :] = sum over keys of p * v
                vals = V[:, :kend].reshape(1, N_KV_HEADS * kend, HEAD_DIM)
                o = F.conv1d(vals, p, groups=N_KV_HEADS).view(N_KV_HEADS, GROUP, C, HEAD_DIM)
                out[:, :, :, c0:c1] = o.permute(0, 1, 3, 2)
            x = x + mm(L.wo, out.view(N_HEADS * HEAD_DIM, S))
            h = rms_norm(x, L.mlp_norm)
            x = x + mm(L.w2, F.silu(mm(L.w1, h)) * mm(L.w3, h))
        return mm(self.lm_head, rms_norm(x[:, -1:], self.final_norm)).view(VOCAB)


def new_cache(n_tokens):
    blocks = (n_tokens + TOKENS_PER_BLOCK - 1) // TOKENS_PER_BLOCK
    cache = torch.zeros(blocks, N_LAYERS, 2, TOKENS_PER_BLOCK, N_KV_HEADS, HEAD_DIM, dtype=DTYPE)
    assert cache[0].numel() * cache.element_size() == BLOCK_BYTES
    return cache


def greedy_decode(model, first_token, start, cache, n):
    """n greedy tokens: the first one given (from the prefill), then n-1 decode steps."""
    out = [first_token]
    for i in range(n - 1):
        logits = model.forward(torch.tensor([out[-1]]), start + i, cache)
        out.append(int(torch.argmax(logits)))
    return out


# ---- keys ------------------------------------------------------------------------------
def root_key(hash_seed):
    return hashlib.sha256(b"strata-kv-demo-root" + hash_seed.to_bytes(8, "little")).digest()


def block_keys(tokens, hash_seed):
    """32-byte key of every full 16-token block, chained: SHA-256(parent || token ids)."""
    ids = tokens.to(torch.int32).numpy()
    keys, parent = [], root_key(hash_seed)
    for b in range(len(ids) // TOKENS_PER_BLOCK):
        chunk = ids[b * TOKENS_PER_BLOCK:(b + 1) * TOKENS_PER_BLOCK].astype("<i4").tobytes()
        parent = hashlib.sha256(parent + chunk).digest()
        keys.append(parent)
    return keys


# ---- the server ----------------------------------------------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OwnServer:
    """A strata server on free loopback ports, temp data dir, generated creds."""

    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="strata-kv-demo-")
        self.s3_port = free_port()
        self.kv_port = free_port()
        while self.kv_port == self.s3_port:
            self.kv_port = free_port()
        self.access_key = "kvdemo" + secrets.token_hex(4)
        self.secret_key = secrets.token_hex(20)
        env = dict(os.environ, STRATA_ROOT_USER=self.access_key, STRATA_ROOT_PASSWORD=self.secret_key)
        self.log_path = os.path.join(self.dir, "server.log")
        self.log = open(self.log_path, "wb")
        args = [binary, "server", "--listen", f"127.0.0.1:{self.s3_port}",
                "--data", os.path.join(self.dir, "data"), "--kv-listen", f"127.0.0.1:{self.kv_port}"]
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"strata exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.kv_port), timeout=1):
                    break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError("strata's KV listener did not come up:\n" + self.log_tail())
                time.sleep(0.05)

    def log_tail(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-3000:].decode(errors="replace")
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- the demo ---------------------------------------------------------------------------------
class Checks:
    def __init__(self):
        self.failed = []

    def check(self, ok, what):
        print(f"  [{'ok' if ok else 'FAIL'}] {what}")
        if not ok:
            self.failed.append(what)
        return ok


def stats_delta(after, before):
    return {k: after[k] - before[k] for k in after}


class VllmSide:
    """vLLM's scheduler side of one KV cache, as far as the offloading tier
    sees it: StrataSecondaryTier built by vLLM's SecondaryTierFactory from a
    kv_connector_extra_config "secondary_tiers" entry, over the cache's own
    memory as the primary view (cache[block] = slot block: loads land in the
    KV tensor, stores are sent from it, no staging copy), then driven with
    the engine's calls: on_new_request, per-key lookup (RETRY until the step
    ends with on_schedule_end), submit_load / submit_store with a
    TransferJob, get_finished_jobs, on_request_finished."""

    _job_ids = itertools.count(1)

    def __init__(self, cache, host, port, access, secret, fingerprint, hash_seed, tenant_salt):
        tier_config = vllm_driver.strata_tier_config(
            dict(host=host, port=port, access_key=access, secret_key=secret),
            weights_fingerprint=fingerprint, hash_seed=hash_seed, tenant_salt=tenant_salt)
        config = vllm_driver.offloading_config(
            model=MODEL_ID, dtype="float32", tokens_per_block=TOKENS_PER_BLOCK,
            worker_kv_bytes_per_block=BLOCK_BYTES,
            extra_config={"spec_name": "TieringOffloadingSpec", "secondary_tiers": [tier_config]})
        self.spec = vllm_driver.DriverSpec(config)
        slots = cache.view(cache.shape[0], -1).view(torch.uint8).numpy()  # shares the memory
        self.tier = vllm_driver.build_tier(self.spec, memoryview(slots))
        self.hash_seed = hash_seed
        self._req = itertools.count()

    def request(self, tokens):
        keys = [make_offload_key(h, 0) for h in block_keys(tokens, self.hash_seed)]
        ctx = ReqContext(req_id=f"req-{next(self._req)}")
        for i, k in enumerate(keys):
            ctx.set_offload_key_position(k, (i + 1) * TOKENS_PER_BLOCK)
        self.tier.on_new_request(ctx)
        return keys, ctx

    def lookup(self, keys, ctx):
        """Leading blocks stored: the engine asks every key each step until
        no verdict before the first miss is RETRY."""
        while True:
            verdicts = [self.tier.lookup(k, ctx) for k in keys]
            n = 0
            while n < len(keys) and verdicts[n] is LookupResult.HIT:
                n += 1
            if n == len(keys) or verdicts[n] is not LookupResult.RETRY:
                return n
            self.tier.on_schedule_end(ScheduleEndContext((ctx.req_id,), ()))
            time.sleep(0.0002)

    def transfer(self, keys, ctx, is_load):
        """Blocks i of keys to / from slot i; waits (polling, as engine steps
        do) for the job's result."""
        job_id = next(self._job_ids)
        job = TransferJob(job_id=job_id, keys=keys, chunk_ids=numpy.arange(len(keys)),
                          is_promotion=is_load, req_context=ctx)
        (self.tier.submit_load if is_load else self.tier.submit_store)(job)
        while True:
            for r in self.tier.get_finished_jobs():
                if r.job_id == job_id:
                    return r
            time.sleep(0.0002)

    def close(self):
        self.tier.shutdown()


def restore(model, side, tokens, cache):
    """The restore path, timed from the prompt to the first token.
    Returns (ttft_s, logits, first_token, P, past, timings)."""
    T = tokens.numel()
    t0 = time.perf_counter()
    keys, ctx = side.request(tokens)
    t_hash = time.perf_counter()
    P = side.lookup(keys, ctx)  # one round trip for the step's probes
    t_lookup = time.perf_counter()
    if P:
        # One load job of exactly the P blocks, each straight into its block of the cache.
        r = side.transfer(keys[:P], ctx, is_load=True)
        if not r.success:  # recompute from the first block that did not arrive
            ok = set(r.successful_keys or ())
            P = next((i for i, k in enumerate(keys[:P]) if k not in ok), P)
    side.tier.on_request_finished(ctx)
    t_get = time.perf_counter()
    past = min(P * TOKENS_PER_BLOCK, T - 1)  # at least one token to prefill, so there is a query
    logits = model.forward(tokens[past:], past, cache)
    first = int(torch.argmax(logits))
    t1 = time.perf_counter()
    timings = dict(hash=t_hash - t0, lookup=t_lookup - t_hash, get=t_get - t_lookup, prefill=t1 - t_get)
    return t1 - t0, logits, first, P, past, timings


def recompute(model, tokens, cache):
    t0 = time.perf_counter()
    logits = model.forward(tokens, 0, cache)
    first = int(torch.argmax(logits))
    return time.perf_counter() - t0, logits, first


def store(side, tokens):
    """Stores every full block of the prompt, sent from the cache's own memory
    (put-if-absent: blocks already there count as stored). Returns
    (JobResult, seconds)."""
    keys, ctx = side.request(tokens)
    t0 = time.perf_counter()
    r = side.transfer(keys, ctx, is_load=False)
    side.tier.on_request_finished(ctx)
    return r, time.perf_counter() - t0


def machine_line():
    model = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"]
    return (f"{os.cpu_count()} CPUs ({model}), torch {torch.__version__} with "
            f"{torch.get_num_threads()} threads, load average {' '.join(load)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, help="prompt length (default 4096; --quick: 1024)")
    ap.add_argument("--quick", action="store_true", help="CI mode: 1024 tokens unless --tokens is given")
    ap.add_argument("--seed", type=int, default=1234, help="weights and prompt seed")
    ap.add_argument("--hash-seed", type=int, default=0, help="seed of the key chain (namespace field)")
    ap.add_argument("--tenant-salt", default="kv-demo-tenant", help="namespace tenant salt")
    ap.add_argument("--strata", default=os.environ.get("STRATA_BIN"), help="strata binary (default $STRATA_BIN)")
    ap.add_argument("--kv", metavar="HOST:PORT", help="use a running server's KV listener")
    ap.add_argument("--runs", type=int, help="timed runs per figure, median printed (default 3; --quick: 1)")
    ap.add_argument("--threads", type=int, help="torch threads (default: all CPUs of this process)")
    ap.add_argument("--disagg-tokens", type=int,
                    help="prompt length of the disaggregated run (default 1024; --quick: 256; 0: skip it)")
    ap.add_argument("--role", choices=("prefill", "decode"), help=argparse.SUPPRESS)
    ap.add_argument("--decode", type=int, default=N_DECODE, help=argparse.SUPPRESS)
    ap.add_argument("--prompt-seed", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.role:  # one side of the disaggregated run (started by the demo itself)
        return role_main(args)
    T = args.tokens or (1024 if args.quick else 4096)
    if T < 2 * TOKENS_PER_BLOCK:
        ap.error(f"--tokens must be at least {2 * TOKENS_PER_BLOCK}")

    server = None
    if args.kv:
        host, _, port = args.kv.rpartition(":")
        access = os.environ.get("STRATA_KV_ACCESS_KEY") or os.environ.get("STRATA_ROOT_USER")
        secret = os.environ.get("STRATA_KV_SECRET_KEY") or os.environ.get("STRATA_ROOT_PASSWORD")
        if not (host and port.isdigit() and access and secret):
            print("kv_demo: --kv HOST:PORT needs STRATA_KV_ACCESS_KEY/STRATA_KV_SECRET_KEY "
                  "(or STRATA_ROOT_USER/STRATA_ROOT_PASSWORD)", file=sys.stderr)
            return 2
        port = int(port)
    else:
        if not args.strata or not os.access(args.strata, os.X_OK):
            print("kv_demo: no strata binary: pass --strata PATH or set STRATA_BIN "
                  "(or --kv HOST:PORT for a running server)", file=sys.stderr)
            return 2
        try:
            server = OwnServer(args.strata)
        except RuntimeError as e:
            print(f"kv_demo: {e}", file=sys.stderr)
            return 2
        host, port, access, secret = "127.0.0.1", server.kv_port, server.access_key, server.secret_key
    try:
        # Against a long-lived server (--kv) an earlier run may have stored the partial-hit
        # prompt's blocks already; a fresh suffix each run keeps that check meaningful.
        suffix_seed = args.seed + 2 if server else secrets.randbelow(2**62)
        rc = run(args, T, host, port, access, secret, suffix_seed)
        D = args.disagg_tokens if args.disagg_tokens is not None else (256 if args.quick else 1024)
        if D:
            rc = max(rc, disaggregated(args, D, host, port, access, secret, suffix_seed))
        return rc
    finally:
        if server:
            server.stop()


def role_main(args):
    """One process of the disaggregated run: `prefill` computes the prompt's
    KV and stores it through the tier; `decode` restores it through the tier
    (a fresh KV cache, another process and connection) and decodes. Both
    print one line RESULT {json}."""
    T, n = args.tokens, args.decode
    host, _, port = args.kv.rpartition(":")
    access, secret = os.environ["STRATA_KV_ACCESS_KEY"], os.environ["STRATA_KV_SECRET_KEY"]
    torch.set_num_threads(args.threads or len(os.sched_getaffinity(0)))
    model = TinyDecoder(args.seed, max_positions=T + n + 1)
    prompt = torch.randint(0, VOCAB, (T,), generator=torch.Generator().manual_seed(args.prompt_seed))
    cache = new_cache(T + n)
    side = VllmSide(cache, host, int(port), access, secret, model.fingerprint(), args.hash_seed,
                    args.tenant_salt)
    out = dict(role=args.role, pid=os.getpid())
    with torch.inference_mode():
        t0 = time.perf_counter()
        if args.role == "prefill":
            logits = model.forward(prompt, 0, cache)
            first = int(torch.argmax(logits))
            out["prefill_ms"] = (time.perf_counter() - t0) * 1e3
            res, put_s = store(side, prompt)  # offloaded before the handoff
            out.update(stored=bool(res.success), store_ms=put_s * 1e3)
        else:
            ttft, logits, first, P, past, tm = restore(model, side, prompt, cache)
            out.update(ttft_ms=ttft * 1e3, loaded_blocks=P, prefilled_tokens=T - past,
                       load_ms=(tm["lookup"] + tm["get"]) * 1e3)
        out["tokens"] = greedy_decode(model, first, T, cache, n)
    side.close()
    print("RESULT " + json.dumps(out), flush=True)
    return 0


def disaggregated(args, T, host, port, access, secret, prompt_seed):
    """Prefill in one process, decode in another: the decode process restores
    the prefill process's KV from strata and must produce its tokens."""
    n = 8 if args.quick else N_DECODE
    print(f"\n== disaggregated: a prefill process stores the KV of a {T}-token prompt, a separate "
          f"decode process restores it and decodes {n} tokens")
    checks = Checks()
    env = dict(os.environ, STRATA_KV_ACCESS_KEY=access, STRATA_KV_SECRET_KEY=secret)
    results = {}
    for role in ("prefill", "decode"):
        cmd = [sys.executable, os.path.abspath(__file__), "--role", role, "--kv", f"{host}:{port}",
               "--tokens", str(T), "--decode", str(n), "--seed", str(args.seed),
               "--prompt-seed", str(prompt_seed + 7), "--hash-seed", str(args.hash_seed),
               "--tenant-salt", args.tenant_salt]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if p.returncode != 0 or line is None:
            checks.check(False, f"{role} process exited {p.returncode}: {p.stderr[-2000:]}")
            return 1
        results[role] = r = json.loads(line[len("RESULT "):])
        r["wall_s"] = time.perf_counter() - t0
    pre, dec = results["prefill"], results["decode"]
    full = T // TOKENS_PER_BLOCK
    print(f"  prefill process (pid {pre['pid']}): prefill {pre['prefill_ms']:.0f} ms, store "
          f"{pre['store_ms']:.1f} ms, {pre['wall_s']:.1f} s wall")
    print(f"  decode process (pid {dec['pid']}): {dec['loaded_blocks']} blocks loaded in "
          f"{dec['load_ms']:.1f} ms, prefilled {dec['prefilled_tokens']} token(s), TTFT "
          f"{dec['ttft_ms']:.0f} ms, {dec['wall_s']:.1f} s wall")
    checks.check(pre["stored"], "prefill process: its store job succeeded")
    checks.check(pre["pid"] != dec["pid"] != os.getpid(), "prefill and decode ran in separate processes")
    checks.check(dec["loaded_blocks"] == full, f"decode process loaded all {full} full blocks "
                 f"(got {dec['loaded_blocks']})")
    checks.check(dec["prefilled_tokens"] == T - min(full * TOKENS_PER_BLOCK, T - 1),
                 f"decode process prefilled only the {dec['prefilled_tokens']} uncached token(s)")
    checks.check(dec["tokens"] == pre["tokens"], f"decode process produced the prefill process's "
                 f"{n} tokens ({pre['tokens'][:6]}...)")
    if checks.failed:
        print(f"\nkv_demo: disaggregated run: {len(checks.failed)} check(s) FAILED", file=sys.stderr)
        return 1
    print("kv_demo: disaggregated run passed")
    return 0


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def fmt_runs(xs):
    return " ".join(f"{x * 1e3:.0f}" if x >= 0.1 else f"{x * 1e3:.1f}" for x in xs)


def run(args, T, host, port, access, secret, suffix_seed):
    checks = Checks()
    torch.manual_seed(args.seed)
    # Debian's torch starts with one thread here; use every CPU we may run on.
    torch.set_num_threads(args.threads or len(os.sched_getaffinity(0)))
    runs = args.runs or (1 if args.quick else 3)
    print(f"kv_demo: {N_LAYERS} layers, d_model {D_MODEL}, {N_HEADS} query / {N_KV_HEADS} KV heads "
          f"x {HEAD_DIM}, fp32 -> {BYTES_PER_TOKEN // 1024} KiB/token, {TOKENS_PER_BLOCK} tokens = "
          f"{BLOCK_BYTES // 1024} KiB per block; prompt {T} tokens; KV server {host}:{port}; "
          f"{runs} timed run(s) per figure (median)")
    print(f"machine: {machine_line()}")
    t = time.perf_counter()
    model = TinyDecoder(args.seed, max_positions=T + N_DECODE + 1)
    fingerprint = model.fingerprint()
    print(f"model built in {time.perf_counter() - t:.1f} s, weights {fingerprint[:23]}...")
    g = torch.Generator().manual_seed(args.seed + 1)
    prompt = torch.randint(0, VOCAB, (T,), generator=g)
    conn = (host, port, access, secret, fingerprint, args.hash_seed, args.tenant_salt)
    full_blocks = T // TOKENS_PER_BLOCK
    cap = T + N_DECODE

    with torch.inference_mode():
        # Warm-up, untimed: the first calls set up oneDNN and the thread pool. A serving engine
        # is warm; timing its first request would charge that to whichever path ran first.
        t = time.perf_counter()
        n = min(T, 2 * QUERY_CHUNK)
        warm = new_cache(n + 1)
        model.forward(prompt[:n], 0, warm)
        model.forward(prompt[n - 1:n], n - 1, warm)
        print(f"warm-up (untimed {n}-token prefill and one step): {time.perf_counter() - t:.1f} s")

        # ---- path 1: recompute, then save -------------------------------------------------------
        print("\n== path 1: recompute (full prefill), then save the KV blocks")
        cache_r = new_cache(cap)
        writer = VllmSide(cache_r, *conn)
        print(f"  tier: {type(writer.tier).__name__} via SecondaryTierFactory "
              f"({'vLLM' if vllm_driver.REAL_VLLM else 'vLLM 0.33 interface stubs'}), namespace "
              f"{writer.tier.namespace['kv_layout']}")
        ttfts_r = []
        for _ in range(runs):
            cache_r.zero_()
            ttft, logits_r, first_r = recompute(model, prompt, cache_r)
            ttfts_r.append(ttft)
        ttft_r = median(ttfts_r)
        print(f"  prefill {T} tokens + first token: {ttft_r * 1e3:.0f} ms median ({T / ttft_r:.0f} tokens/s); "
              f"runs {fmt_runs(ttfts_r)} ms")
        res, put_s = store(writer, prompt)
        print(f"  submit_store of {full_blocks} blocks ({full_blocks * BLOCK_BYTES / 2**20:.1f} MiB) in one "
              f"job, sent from the cache tensor: {put_s * 1e3:.1f} ms")
        checks.check(res.success, "every block stored (store job succeeded)")
        tokens_r = greedy_decode(model, first_r, T, cache_r, N_DECODE)
        writer.close()

        # ---- path 2: restore on a new connection ---------------------------------------------------
        print("\n== path 2: restore (new connection, fresh KV cache): LOOKUP, one GET, prefill the suffix")
        reader = strata_kv.Client(host, port, access, secret)  # for STATS only
        cache_s = new_cache(cap)
        side_s = VllmSide(cache_s, *conn)
        ns = reader.open_namespace(**side_s.tier.namespace)
        ptr = cache_s.data_ptr()
        ttfts_s, diffs, tms = [], [], []
        for i in range(runs):
            cache_s.zero_()  # nothing left from an earlier run
            before = reader.stats(ns)
            ttft, logits_s, first_s, P, past, tm = restore(model, side_s, prompt, cache_s)
            d = stats_delta(reader.stats(ns), before)
            ttfts_s.append(ttft)
            tms.append(tm)
            diffs.append(float((logits_s - logits_r).abs().max()))
            if i == 0:
                checks.check(P == full_blocks, f"LOOKUP found all {full_blocks} full blocks (got {P})")
            ok = (d["lookups"] == 1 and d["hits"] == P and d["misses"] == 0
                  and d["bytes_served"] == P * BLOCK_BYTES == d["bytes_requested"])
            if not ok or i == 0:
                checks.check(ok, f"run {i + 1}: one LOOKUP ({d['lookups']}), GET hit exactly {P} blocks "
                             f"(hits {d['hits']}, misses {d['misses']}), bytes served {d['bytes_served']} "
                             f"== requested {d['bytes_requested']} == P x block_bytes {P * BLOCK_BYTES}")
        ttft_s = median(ttfts_s)
        tm = {k: median([x[k] for x in tms]) for k in tms[0]}
        print(f"  hash {tm['hash'] * 1e3:.1f} ms, LOOKUP {tm['lookup'] * 1e3:.2f} ms, GET {P} blocks "
              f"({P * BLOCK_BYTES / 2**20:.1f} MiB) {tm['get'] * 1e3:.1f} ms "
              f"({P * BLOCK_BYTES / max(tm['get'], 1e-9) / 1e9:.2f} GB/s), prefill {T - past} token(s) "
              f"{tm['prefill'] * 1e3:.1f} ms (medians); TTFT runs {fmt_runs(ttfts_s)} ms")
        intact = past // TOKENS_PER_BLOCK  # blocks the suffix prefill did not write into
        checks.check(cache_s.data_ptr() == ptr and
                     torch.equal(cache_s[:intact].view(torch.uint8), cache_r[:intact].view(torch.uint8)),
                     f"GET filled the preallocated KV tensor in place: blocks 0..{intact - 1} "
                     "byte-identical to the recomputed ones")
        checks.check(max(diffs) <= LOGIT_TOLERANCE,
                     f"first-token logits equal: max |diff| {max(diffs):.2e} <= {LOGIT_TOLERANCE:g}")
        tokens_s = greedy_decode(model, first_s, T, cache_s, N_DECODE)
        checks.check(tokens_s == tokens_r, f"{N_DECODE} greedy tokens identical ({tokens_r[:6]}...)")

        # ---- partial hit: same first 75 %, different suffix ---------------------------------------
        shared = (3 * T) // 4
        expect = shared // TOKENS_PER_BLOCK
        print(f"\n== partial hit: first {shared} tokens shared, {T - shared} different")
        g2 = torch.Generator().manual_seed(suffix_seed)
        # Every suffix token differs from the original's.
        other = (prompt[shared:] + torch.randint(1, VOCAB, (T - shared,), generator=g2)) % VOCAB
        prompt_b = torch.cat((prompt[:shared], other))
        cache_b = new_cache(cap)
        ttfts_br = []
        for _ in range(runs):
            cache_b.zero_()
            ttft, logits_br, first_br = recompute(model, prompt_b, cache_b)
            ttfts_br.append(ttft)
        ttft_br = median(ttfts_br)
        tokens_br = greedy_decode(model, first_br, T, cache_b, N_DECODE)
        cache_bs = new_cache(cap)
        side_bs = VllmSide(cache_bs, *conn)
        ttfts_bs, diffs_b = [], []
        for i in range(runs):
            cache_bs.zero_()
            before = reader.stats(ns)
            ttft, logits_bs, first_bs, Pb, past_b, tmb = restore(model, side_bs, prompt_b, cache_bs)
            d = stats_delta(reader.stats(ns), before)
            ttfts_bs.append(ttft)
            diffs_b.append(float((logits_bs - logits_br).abs().max()))
            ok = d["hits"] == Pb and d["bytes_served"] == Pb * BLOCK_BYTES == d["bytes_requested"]
            if i == 0:
                print(f"  LOOKUP -> {Pb} of {len(block_keys(prompt_b, args.hash_seed))} blocks, GET {Pb} blocks "
                      f"{tmb['get'] * 1e3:.1f} ms, prefill {T - past_b} tokens {tmb['prefill'] * 1e3:.0f} ms")
                checks.check(Pb == expect, f"LOOKUP hit only the {expect} shared full blocks (got {Pb})")
            if not ok or i == 0:
                checks.check(ok, f"GET loaded only those: bytes served {d['bytes_served']} == hits {d['hits']} "
                             f"x {BLOCK_BYTES} (requested {d['bytes_requested']})")
        ttft_bs = median(ttfts_bs)
        print(f"  TTFT recompute runs {fmt_runs(ttfts_br)} ms; restore runs {fmt_runs(ttfts_bs)} ms")
        checks.check(max(diffs_b) <= LOGIT_TOLERANCE,
                     f"first-token logits equal to full recompute: max |diff| {max(diffs_b):.2e}")
        tokens_bs = greedy_decode(model, first_bs, T, cache_bs, N_DECODE)
        checks.check(tokens_bs == tokens_br, f"{N_DECODE} greedy tokens identical to full recompute")
        checks.check(tokens_br != tokens_r, "and they differ from the first prompt's (the suffix matters)")
        nb = len(block_keys(prompt_b, args.hash_seed))
        before = reader.stats(ns)
        side_b = VllmSide(cache_b, *conn)
        res, _ = store(side_b, prompt_b)
        added = reader.stats(ns)["blocks"] - before["blocks"]
        checks.check(res.success and added == nb - expect,
                     f"storing it: the job succeeds, {expect} shared blocks were there (put-if-absent), "
                     f"{added} new blocks stored (expected {nb - expect})")
        total = reader.stats(ns)
        for side in (writer, side_s, side_bs, side_b):
            side.close()
        reader.close()

    ratio = total["bytes_served"] / total["bytes_requested"] if total["bytes_requested"] else float("nan")
    checks.check(ratio == 1.0, f"namespace STATS: bytes_served / bytes_requested = {ratio:.2f}")
    print(f"\n== CPU figures (PyTorch on this CPU; GPU ratios differ); medians of {runs} run(s)")
    print(f"  machine: {machine_line()}")
    print(f"  prompt {T} tokens, all {full_blocks} blocks cached:")
    print(f"    TTFT recompute {ttft_r * 1e3:9.1f} ms   (prefill {T} tokens, {T / ttft_r:.0f} tokens/s)")
    print(f"    TTFT restore   {ttft_s * 1e3:9.1f} ms   (LOOKUP + GET {P * BLOCK_BYTES / 2**20:.0f} MiB "
          f"{(tm['lookup'] + tm['get']) * 1e3:.1f} ms, prefill {T - past} token(s) {tm['prefill'] * 1e3:.1f} ms)")
    print(f"    ratio          {ttft_r / ttft_s:9.1f}x")
    print(f"  partial hit, {Pb}/{T // TOKENS_PER_BLOCK} blocks cached ({Pb * TOKENS_PER_BLOCK} of {T} tokens):")
    print(f"    TTFT recompute {ttft_br * 1e3:9.1f} ms")
    print(f"    TTFT restore   {ttft_bs * 1e3:9.1f} ms   (prefill {T - past_b} tokens)")
    print(f"    ratio          {ttft_br / ttft_bs:9.1f}x")
    print(f"  STATS: blocks {total['blocks']}, hits {total['hits']}, misses {total['misses']}, "
          f"lookups {total['lookups']}, bytes_served {total['bytes_served']}, bytes_requested "
          f"{total['bytes_requested']}: served/requested = {ratio:.2f}")
    if checks.failed:
        print(f"\nkv_demo: {len(checks.failed)} check(s) FAILED:", file=sys.stderr)
        for f in checks.failed:
            print(f"  {f}", file=sys.stderr)
        return 1
    print("\nkv_demo: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
