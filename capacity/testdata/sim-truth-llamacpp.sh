#!/bin/bash
# Dense brute-force sweep of the simulator (llama.cpp profile, time scale 0.1):
# closed-loop 3..9 users, 400 requests per level after each user's first.
set -e
B=${LLMREPLAY:-llmreplay}
D=${OUT:-/tmp/llmreplay-capacity-truth}; rm -rf $D; mkdir -p $D; cd $D
$B sim --profile llamacpp-rtx5090-q4km --time-scale 0.1 --addr 127.0.0.1:18931 > sim.log 2>&1 &
SIM=$!
sleep 2
for c in 3 4 5 6 7 8 9; do
  $B workload build --schedule closed:$c --requests $((400 + c)) --max-tokens 256 --seed $c -o w$c.workload.zst > /dev/null
  $B replay w$c.workload.zst --url http://127.0.0.1:18931 -q -o t$c.trace.zst > /dev/null 2>&1
  $B trace cat --requests t$c.trace.zst | python3 -c "
import sys,json,math
rows=[json.loads(l) for l in sys.stdin]
rows=[r for r in rows if r['index']>=$c and r['ok']]
x=sorted(r['ttft_s']*1000 for r in rows)
n=len(x); print('users $c', 'n', n, 'ttft_p90_ms', round(x[math.ceil(0.9*n)-1],1))
"
done
kill $SIM
