#!/usr/bin/env python3
"""Stop hook latency in a project (memory looks for standing instructions to propose) against
the same with no project. Usage: tools/bench_memory_stop.py target/release/sjournal"""
import subprocess, tempfile, time, json, os, statistics, sys
B=sys.argv[1]; R=tempfile.mkdtemp(); P=tempfile.mkdtemp()
env=dict(os.environ); env.pop("CLAUDE_PROJECT_DIR",None)
def run(p):
    t=time.perf_counter(); r=subprocess.run([B,"--root",R,"hook","--host","claude","--deadline-ms","60000"],input=json.dumps(p).encode(),capture_output=True,env=env); assert r.returncode==0; return time.perf_counter()-t
for sid,cwd in [("w",P),("n",None)]:
    base={"session_id":sid,"transcript_path":"/t"}
    if cwd: base["cwd"]=cwd
    run({**base,"hook_event_name":"SessionStart","source":"startup"})
    run({**base,"hook_event_name":"UserPromptSubmit","prompt":"Never touch vendor/. Always run make check before committing."})
a=[];b=[]
for k in range(60):
    for sid,cwd,acc in ([("w",P,a),("n",None,b)] if k%2==0 else [("n",None,b),("w",P,a)]):
        base={"session_id":sid,"transcript_path":"/t","hook_event_name":"Stop","stop_hook_active":False}
        if cwd: base["cwd"]=cwd
        acc.append(run(base))
ma,mb=statistics.median(a)*1e3,statistics.median(b)*1e3
print(f"Stop p50: in a project {ma:.2f} ms, no project {mb:.2f} ms, ratio {ma/mb:.2f}x (n=60 each)")
