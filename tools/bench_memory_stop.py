#!/usr/bin/env python3
"""Stop hook latency in a project (memory looks for standing instructions and passing variants
to propose) against the same with no project. Usage: tools/bench_memory_stop.py
target/release/sjournal [N]. Prints the medians of wall time and of the hook's CPU time (user +
sys, from wait4: less sensitive to a loaded machine) and their ratios; N runs each (default 60),
interleaved."""
import subprocess, tempfile, time, json, os, statistics, sys
B=sys.argv[1]; N=int(sys.argv[2]) if len(sys.argv)>2 else 60; R=tempfile.mkdtemp(); P=tempfile.mkdtemp()
env=dict(os.environ); env.pop("CLAUDE_PROJECT_DIR",None)
def run(p):
    t=time.perf_counter()
    c=subprocess.Popen([B,"--root",R,"hook","--host","claude","--deadline-ms","60000"],stdin=subprocess.PIPE,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,env=env)
    c.stdin.write(json.dumps(p).encode()); c.stdin.close()
    _,status,ru=os.wait4(c.pid,0); c.returncode=os.waitstatus_to_exitcode(status)
    assert c.returncode==0; return time.perf_counter()-t, ru.ru_utime+ru.ru_stime
for sid,cwd in [("w",P),("n",None)]:
    base={"session_id":sid,"transcript_path":"/t"}
    if cwd: base["cwd"]=cwd
    run({**base,"hook_event_name":"SessionStart","source":"startup"})
    run({**base,"hook_event_name":"UserPromptSubmit","prompt":"Never touch vendor/. Always run make check before committing."})
a=[];b=[]
for k in range(N):
    for sid,cwd,acc in ([("w",P,a),("n",None,b)] if k%2==0 else [("n",None,b),("w",P,a)]):
        base={"session_id":sid,"transcript_path":"/t","hook_event_name":"Stop","stop_hook_active":False}
        if cwd: base["cwd"]=cwd
        acc.append(run(base))
med=lambda xs,i: statistics.median(x[i] for x in xs)*1e3
ma,mb,ca,cb=med(a,0),med(b,0),med(a,1),med(b,1)
print(f"Stop p50 wall: in a project {ma:.2f} ms, no project {mb:.2f} ms, ratio {ma/mb:.2f}x; "
      f"CPU: {ca:.2f} ms vs {cb:.2f} ms, ratio {ca/cb:.2f}x (n={N} each)")
