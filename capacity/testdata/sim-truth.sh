#!/bin/bash
# Dense brute-force sweep of the running simulator, the ground truth the
# capacity tests compare against (docs/CAPACITY.md, "Ground truth").
# Every level runs ROUNDS probe rounds exactly as `llmreplay capacity`
# does: C closed-loop users start together, 51 + C requests, each user's
# first request skipped; the measured TTFTs of all rounds are pooled and
# their p90 printed with its 99% order-statistic interval.
#
#   usage: sim-truth.sh PROFILE "LEVELS" [ROUNDS] > sim-truth-PROFILE.txt
#   e.g.   sim-truth.sh llamacpp-rtx5090-q4km "1 2 3 4 5 6 7 8 9 10" 20
#
# With RULE=rounds each round is the concurrency axis's round of today
# (C users x (1 + max(2, ceil(20/C))) requests, each user's first
# skipped) and each level prints the median over its rounds of each
# round's own TTFT p90 with the 99% order-statistic interval of that
# median: what the search estimates.
set -e
P=$1; LEVELS=$2; ROUNDS=${3:-20}; SCALE=${SCALE:-0.1}; PORT=${PORT:-18931}
B=${LLMREPLAY:-llmreplay}
D=$(mktemp -d); trap 'kill $SIM 2>/dev/null; rm -rf $D' EXIT
$B sim --profile $P --time-scale $SCALE --addr 127.0.0.1:$PORT > $D/sim.log 2>&1 &
SIM=$!
# ci99(x, pmf): the 99% order-statistic interval of sorted x by
# analyze.OrderCI's ranks: l the largest with P(B < l) <= 0.005, h the
# smallest with P(B >= h) <= 0.005, pmf being B's distribution.
cat > $D/ci.py <<'PY'
def ci99(x, pmf):
    n = len(x)
    l, cum = 0, 0.0
    while cum + pmf[l] <= 0.005: cum += pmf[l]; l += 1
    h, cum = n + 1, 0.0
    while cum + pmf[h - 1] <= 0.005: cum += pmf[h - 1]; h -= 1
    return x[max(l, 1) - 1], x[min(h, n) - 1]
PY
sleep 2
RULE=${RULE:-pooled}
if [ "$RULE" = rounds ]; then
echo "# profile $P, time scale $SCALE, $ROUNDS rounds of C x (1 + max(2, ceil(20/C))) requests per level, per-round p90, $(date -u +%F), loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# median over rounds of each round's TTFT p90 in ms at time scale $SCALE with its 99% interval"
for c in $LEVELS; do
  k=$(( (20 + c - 1) / c )); [ $k -lt 2 ] && k=2
  $B workload build --schedule closed:$c --requests $((c * (1 + k))) --repeats $ROUNDS --max-tokens 256 --seed $c -o $D/w.workload.zst --force > /dev/null
  $B replay $D/w.workload.zst --url http://127.0.0.1:$PORT -q -o $D/t.trace.zst --force > /dev/null 2>&1
  $B trace cat --requests $D/t.trace.zst | python3 -c "
import sys, json, math
sys.path.insert(0, '$D'); from ci import ci99
rounds = {}
for l in sys.stdin:
    r = json.loads(l)
    ph, i = r['id'].split('-')
    if int(i) >= $c and r['ok']: rounds.setdefault(ph, []).append(r['ttft_s'] * 1000)
v = sorted(sorted(x)[math.ceil(0.9 * len(x)) - 1] for x in rounds.values())
n = len(v)
lo, hi = ci99(v, [math.comb(n, i) * 0.5 ** n for i in range(n + 1)])
print(f'users $c rounds {n} median_round_p90_ms {v[(n + 1) // 2 - 1]:.1f} ci99 {lo:.1f} {hi:.1f}')
"
done
echo "# done $(date -u +%FT%TZ), loadavg $(cut -d" " -f1-3 /proc/loadavg)"
exit 0
fi
echo "# profile $P, time scale $SCALE, $ROUNDS rounds of 51+C requests per level, $(date -u +%F), loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# TTFT p90 in ms at time scale $SCALE (x$(python3 -c "print(round(1/$SCALE,3))") for the profile's pace) with its 99% interval"
for c in $LEVELS; do
  # One workload per level: ROUNDS closed-loop phases (--repeats), each a
  # round whose users start together; request ids are pNNN-XXXX with
  # XXXX counting within the round, so XXXX < C is the warm-up.
  $B workload build --schedule closed:$c --requests $((51 + c)) --repeats $ROUNDS --max-tokens 256 --seed $c -o $D/w.workload.zst --force > /dev/null
  $B replay $D/w.workload.zst --url http://127.0.0.1:$PORT -q -o $D/t.trace.zst --force > /dev/null 2>&1
  $B trace cat --requests $D/t.trace.zst | python3 -c "
import sys,json
for l in sys.stdin:
    r=json.loads(l)
    if int(r['id'].split('-')[1])>=$c and r['ok']: print(r['ttft_s']*1000)
" > $D/ttft$c
  python3 - $c $D/ttft$c $D <<'PY'
import sys, math
sys.path.insert(0, sys.argv[3]); from ci import ci99
c = sys.argv[1]
x = sorted(float(v) for v in open(sys.argv[2]))
n = len(x)
pmf = [math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * math.log(0.9) + (n - i) * math.log(0.1)) for i in range(n + 1)]
lo, hi = ci99(x, pmf)  # B ~ Binomial(n, 0.9)
print(f"users {c} n {n} ttft_p90_ms {x[math.ceil(0.9*n)-1]:.1f} ci99 {lo:.1f} {hi:.1f}")
PY
done
echo "# done $(date -u +%FT%TZ), loadavg $(cut -d" " -f1-3 /proc/loadavg)"
