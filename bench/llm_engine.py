"""Bench the LLM engine against a fake OpenAI-compatible server with fixed latency.

    python bench/llm_engine.py                      # N=2000, concurrency 16 64 256, own server (200 ms)
    python bench/llm_engine.py --base-url URL --n 500 --concurrency 32

The server runs in its own process; each client run runs in a fresh process, so its peak RSS is its own.
Efficiency = (N x latency / concurrency) / wall: 1.0 means the client added no time of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def worker(url: str, n: int, concurrency: int, cache_dir: str) -> dict:
    from builder.llm import EngineConfig, RequestSpec, RunStats, run_requests
    from builder.llm.cache import Cache

    specs = [RequestSpec("bench-model", [{"role": "system", "content": "Answer briefly."},
                                         {"role": "user", "content": f"question number {i}"}],
                         {"temperature": 0, "max_tokens": 32}, SCHEMA) for i in range(n)]
    cfg = EngineConfig(base_url=url, cache_dir=cache_dir, concurrency=concurrency, timeout=60)
    stats = RunStats()
    cpu0, t0 = time.process_time(), time.perf_counter()
    results = run_requests(specs, cfg, stats)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cached = RunStats()
    t1 = time.perf_counter()
    rerun = run_requests(specs, cfg, cached)
    cached_wall = time.perf_counter() - t1
    # Cost of one autocommitted cache write (what every response pays), measured on a scratch db.
    scratch = Cache(Path(cache_dir) / "scratch" / "w.sqlite3")
    body = json.dumps({"content": '{"answer": "x"}', "finish_reason": "stop", "usage": {}, "model": "m"})
    t2 = time.perf_counter()
    for i in range(n):
        scratch.put(f"k{i}", body)
    put_us = (time.perf_counter() - t2) / n * 1e6
    scratch.close()
    return {"wall": wall, "cpu_ms_per_req": cpu / n * 1000, "rss_mb": rss_mb, "ok": sum(r.ok for r in results),
            "http": stats.http_requests, "cached_wall": cached_wall, "cached_http": cached.http_requests,
            "cached_ok": sum(r.ok for r in rerun), "put_us": put_us}


def server_stats(base: str, reset: bool = False) -> dict | None:
    root = base.rsplit("/v1", 1)[0]
    try:
        with urllib.request.urlopen(f"{root}/stats" + ("?reset=1" if reset else ""), timeout=5) as resp:
            return json.load(resp)
    except OSError:
        return None  # someone else's server: no in-flight figures


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fake_openai.py"), "--latency", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().split()
    if not line or line[0] != "PORT":
        proc.kill()
        sys.exit("error: the fake server did not start")
    return proc, f"http://127.0.0.1:{line[1]}/v1"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--latency", type=float, default=0.2, help="the server's added latency (own server only)")
    ap.add_argument("--worker", nargs=3, metavar=("URL", "CONCURRENCY", "CACHE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        url, conc, cache = args.worker
        print(json.dumps(worker(url, args.n, int(conc), cache)))
        return

    server, url = (None, args.base_url) if args.base_url else start_server(args.latency)
    print(f"N={args.n}  latency={args.latency * 1000:.0f} ms  server={url}  cpus={os.cpu_count()}")
    header = ("conc", "wall s", "ideal s", "effic.", "max in-flight", "dup req", "cpu ms/req", "peak RSS MB",
              "cached rerun s", "cached req", "commit us")
    print(" | ".join(header))
    print(" | ".join("-" * len(h) for h in header))
    try:
        for conc in args.concurrency:
            server_stats(url, reset=True)
            with tempfile.TemporaryDirectory() as cache:
                out = subprocess.run([sys.executable, __file__, "--n", str(args.n), "--worker", url, str(conc), cache],
                                     capture_output=True, text=True, cwd=ROOT)
            if out.returncode:
                sys.exit(f"error: worker failed:\n{out.stderr[-2000:]}")
            r = json.loads(out.stdout)
            seen = server_stats(url)
            ideal = args.n * args.latency / conc
            inflight = str(seen["max_in_flight"]) if seen else "n/a"
            dups = str(seen["requests"] - seen["unique"]) if seen else "n/a"
            print(f"{conc} | {r['wall']:.2f} | {ideal:.2f} | {ideal / r['wall']:.2f} | {inflight} | {dups} | "
                  f"{r['cpu_ms_per_req']:.2f} | {r['rss_mb']:.0f} | {r['cached_wall']:.2f} | {r['cached_http']} | "
                  f"{r['put_us']:.0f}")
            if r["ok"] != args.n or r["cached_ok"] != args.n:
                print(f"  warning: {r['ok']}/{args.n} ok, cached {r['cached_ok']}/{args.n} ok")
    finally:
        if server:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
