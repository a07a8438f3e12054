#!/usr/bin/env python3
"""SessionStart(startup) hook latency with project memory against the same without a project.

Usage: tools/bench_memory_startup.py target/release/sjournal

Seeds a temporary project with 20 accepted and 20 pending memory items, then runs
`sjournal hook` 60 times each way, alternating which goes first, and prints the medians
and their ratio. Figures in BENCHMARKS.md, "Webhooks, and memory at session start and at Stop"."""
import subprocess, tempfile, time, json, os, statistics, sys
B=sys.argv[1]
R=tempfile.mkdtemp(); P=tempfile.mkdtemp()
env=dict(os.environ); env.pop("CLAUDE_PROJECT_DIR",None)
for i in range(20):
    out=subprocess.run([B,"--root",R,"memory","propose","--project",P,"--json",f"rule number {i}: run `make check` before commit"],capture_output=True,text=True,env=env).stdout
    mid=json.loads(out)["id"]
    subprocess.run([B,"--root",R,"memory","accept","--project",P,mid],capture_output=True,env=env)
for i in range(20):
    subprocess.run([B,"--root",R,"memory","propose","--project",P,f"pending {i}"],capture_output=True,env=env)
def run(payload):
    t=time.perf_counter()
    p=subprocess.run([B,"--root",R,"hook","--host","claude","--deadline-ms","60000"],input=payload.encode(),capture_output=True,env=env)
    assert p.returncode==0
    return time.perf_counter()-t, p.stdout
a=[];b=[]
for k in range(60):
    with_p=json.dumps({"session_id":f"w-{k}","hook_event_name":"SessionStart","source":"startup","cwd":P,"transcript_path":"/t"})
    without=json.dumps({"session_id":f"n-{k}","hook_event_name":"SessionStart","source":"startup","transcript_path":"/t"})
    if k%2==0:
        ta,oa=run(with_p); tb,ob=run(without)
    else:
        tb,ob=run(without); ta,oa=run(with_p)
    a.append(ta);b.append(tb)
out=oa.decode()
assert "## Project memory (reviewed)" in out and "systemMessage" in out, out
ma,mb=statistics.median(a)*1e3,statistics.median(b)*1e3
print(f"SessionStart startup p50: with project memory (20 accepted, 20 pending) {ma:.2f} ms, without a project {mb:.2f} ms, ratio {ma/mb:.2f}x (n=60 each, alternating)")
