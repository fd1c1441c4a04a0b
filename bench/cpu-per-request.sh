#!/bin/bash
# bench/cpu-per-request.sh CHECKOUT SCENARIO
# Runs one bench scenario in the split layout (api and worker as separate
# processes) from the checkout CHECKOUT (another commit can be compared by
# copying bench/ into its worktree), samples /proc/<pid>/stat of both
# processes every 0.5 s, and prints the scenario's line and the CPU
# milliseconds per request of each process over the load window.
set -u
cd "$1"
export METRICS_PORT=0 BENCH_SECONDS=10 BENCH_LAYOUT=split
node bench/run.ts $2 > /tmp/cs.out 2>&1 &
BENCH=$!
: > /tmp/cs.samples
while kill -0 $BENCH 2>/dev/null; do
  A=$(pgrep -f "src/bin/main.ts api" | head -1); W=$(pgrep -f "src/bin/main.ts worker" | head -1)
  if [ -n "$A" ] && [ -n "$W" ]; then
    a=$(awk '{print $14+$15}' /proc/$A/stat 2>/dev/null); w=$(awk '{print $14+$15}' /proc/$W/stat 2>/dev/null)
    echo "$(date +%s.%N) $a $w" >> /tmp/cs.samples
  fi
  sleep 0.5
done
grep "^| $2" /tmp/cs.out
python3 - "$2" <<'PY'
import sys
rows=[l.split() for l in open('/tmp/cs.samples') if len(l.split())==3]
rows=[(float(t),int(a),int(w)) for t,a,w in rows]
out=open('/tmp/cs.out').read()
line=[l for l in out.splitlines() if l.startswith('| '+sys.argv[1])][0].split('|')
req=int(line[2])
# the scenario is the last 10 s before the processes stop: take the window ending 1 s before the last sample
end=rows[-1][0]-0.7; start=end-10
inside=[r for r in rows if start<=r[0]<=end]
a=(inside[-1][1]-inside[0][1])*10; w=(inside[-1][2]-inside[0][2])*10
span=inside[-1][0]-inside[0][0]
reqs=req*span/10
print(f"api {a/reqs:.2f} ms CPU/request, worker {w/reqs:.2f} ms CPU/request (window {span:.1f}s)")
PY
