#!/usr/bin/env bash
# What an optional feature (`remote` unless named: `viewer`) costs every process start
# (BENCHMARKS.md, "Start-up, remote shipping and indexing"): builds sjournal in release mode
# without and with the feature, then
# runs, interleaved, `sjournal --version` (process start alone), `sjournal hook` and
# `sjournal-hook hook` (what hosts run) on a real PostToolUse payload (same session, 10 prior
# events), and prints medians and ratios.
#   tools/bench-startup.sh [RUNS [FEATURE]]     default 500 remote
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-500}
feature=${2:-remote}
work=$(mktemp -d "${TMPDIR:-/tmp}/sjournal-startup.XXXXXX")
trap 'rm -rf "$work"' EXIT
cargo build --release --quiet
cp target/release/sjournal "$work/without"
cp target/release/sjournal-hook "$work/without-hook"
cargo build --release --quiet --features "$feature"
cp target/release/sjournal "$work/with"
cp target/release/sjournal-hook "$work/with-hook"
grep '"event": "PostToolUse", "variant": null' tests/fixtures/claude-code/payloads-2.1.332.jsonl \
  | head -1 | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["payload"]))' > "$work/post.json"
python3 - "$work" "$runs" "$feature" <<'PY'
import os, statistics, subprocess, sys, time
work, runs, feature = sys.argv[1], int(sys.argv[2]), sys.argv[3]
bins = {"without": f"{work}/without", "with": f"{work}/with"}
hook_bins = {"without": f"{work}/without-hook", "with": f"{work}/with-hook"}
payload = open(f"{work}/post.json", "rb").read()
roots = {k: f"{work}/root-{i}" for i, k in enumerate(bins)}
for k, b in bins.items():
    for _ in range(10):
        subprocess.run([b, "--root", roots[k], "hook"], input=payload, capture_output=True, check=True)
def measure(args, stdin, bins=bins):
    t = {k: [] for k in bins}
    for i in range(runs):
        order = list(bins.items()) if i % 2 == 0 else list(reversed(list(bins.items())))
        for k, b in order:
            a = [b] + [x.replace("ROOT", roots[k]) for x in args]
            s = time.perf_counter()
            subprocess.run(a, input=stdin, capture_output=True, check=True)
            t[k].append((time.perf_counter() - s) * 1000)
    return {k: statistics.median(v) for k, v in t.items()}
for name, args, stdin, b in [("sjournal --version", ["--version"], None, bins),
                             ("sjournal hook, PostToolUse", ["--root", "ROOT", "hook"], payload, bins),
                             ("sjournal-hook hook, PostToolUse", ["--root", "ROOT", "hook"], payload, hook_bins)]:
    m = measure(args, stdin, b)
    print(f"| {name}, p50 of {runs} | with {feature} {m['with']:.2f} ms | without {m['without']:.2f} ms | {m['with']/m['without']:.2f}x |")
for k, b in bins.items():
    print(f"{k} {feature}: {os.path.getsize(b)/1e6:.1f} MB on disk (with debug info)")
PY
