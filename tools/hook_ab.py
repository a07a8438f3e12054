#!/usr/bin/env python3
"""Hook latency of two sjournal binaries, interleaved in one run (A/B).

    tools/hook_ab.py BASELINE_BIN CANDIDATE_BIN [RUNS] [EVENT] [--index] [--redact-off]

Each binary gets its own root on the same filesystem, seeded with 10 events of the session;
then, RUNS times, each binary runs `sjournal hook` once (spawn to exit, the payload on stdin),
alternating which goes first. EVENT is PostToolUse (journaled only; the default) or
UserPromptSubmit (the hook also folds and renders context). Prints the median and p90 of
each (wall, and CPU: user + system time of the process, which a loaded machine moves less),
and the candidate's ratio to the baseline. The payloads are the real Claude Code ones
of tests/fixtures/claude-code. Both run with --deadline-ms 10000, so that a slow moment of a
loaded machine does not turn a run into a spool.

With --index, the candidate's root has a search index (`sjournal search --reindex` after the
seeding), so a turn-ending event (Stop, SessionEnd) starts the index's detached update as it
does for a user who searches: give the same build twice (two copies of one binary) to measure
what an index costs the hook. With --redact-off, the baseline's root has `[redact] enabled =
false` in its config.toml (the same build twice measures what redaction costs the hook).
"""
import json, os, statistics, subprocess, sys, tempfile, time

with_index = "--index" in sys.argv[1:]
redact_off = "--redact-off" in sys.argv[1:]
args = [a for a in sys.argv[1:] if a not in ("--index", "--redact-off")]
base, cand = args[0], args[1]
runs = int(args[2]) if len(args) > 2 else 300
event = args[3] if len(args) > 3 else "PostToolUse"
here = os.path.dirname(os.path.abspath(__file__))
fixture = os.path.join(here, "..", "tests", "fixtures", "claude-code", "payloads-2.1.332.jsonl")
payload = None
for line in open(fixture, encoding="utf-8"):
    v = json.loads(line)
    if v["event"] == event and v.get("variant") is None:
        payload = json.dumps(v["payload"]).encode()
        break
assert payload, f"no {event} payload in the fixture"

work = tempfile.mkdtemp(prefix="sjournal-hook-ab-", dir=os.environ.get("TMPDIR", "/tmp"))
roots = {b: os.path.join(work, name) for b, name in ((base, "a"), (cand, "b"))}

cpu = {}

def hook(binary):
    t = time.perf_counter()
    # A long deadline: on a loaded machine a hook past the default 250 ms would spool, and
    # this measures the ordinary path.
    p = subprocess.Popen([binary, "--root", roots[binary], "hook", "--host", "claude",
                          "--deadline-ms", "10000"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(payload)
    p.stdin.close()
    p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    took = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0 and not err, err
    cpu.setdefault(binary, []).append(ru.ru_utime + ru.ru_stime)
    return took

if redact_off:
    os.makedirs(roots[base], mode=0o700)
    with open(os.path.join(roots[base], "config.toml"), "w") as f:
        f.write("[redact]\nenabled = false\n")
    os.chmod(os.path.join(roots[base], "config.toml"), 0o600)
for b in (base, cand):
    for _ in range(10):
        hook(b)
if with_index:
    subprocess.run([cand, "--root", roots[cand], "search", "--reindex"], check=True,
                   capture_output=True)
times = {base: [], cand: []}
cpu.clear()
for i in range(runs):
    order = (base, cand) if i % 2 == 0 else (cand, base)
    for b in order:
        times[b].append(hook(b))

def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]

fs = subprocess.run(["df", "-T", work], capture_output=True, text=True).stdout.split("\n")[1].split()[1]
print(f"{event}, {runs} runs each, interleaved; work dir on {fs}"
      + ("; the candidate's root has a search index" if with_index else "")
      + ("; the baseline's root has redaction off" if redact_off else ""))
for name, b in (("baseline", base), ("candidate", cand)):
    print(f"{name:10} p50 {statistics.median(times[b])*1e3:7.3f} ms   p90 {q(times[b], 0.9)*1e3:7.3f} ms   "
          f"CPU p50 {statistics.median(cpu[b])*1e3:6.3f} ms   ({b})")
r50 = statistics.median(times[cand]) / statistics.median(times[base])
r90 = q(times[cand], 0.9) / q(times[base], 0.9)
rc = statistics.median(cpu[cand]) / statistics.median(cpu[base])
print(f"ratio candidate/baseline: p50 {r50:.3f}x, p90 {r90:.3f}x, CPU p50 {rc:.3f}x")
subprocess.run(["rm", "-rf", work])
