#!/usr/bin/env bash
# Session 26, call 1 (carry .carry-new = cb53f8e plus request stamps around clWaitForEvents):
# (a) the `tiny` BE tenant alone (30 us launches, two in flight, clWaitForEvents on the oldest)
#     natively and through rgpud, with request stamps on both ends (bench/stamps_waits.py);
# (b) the launch rate again with nine rounds per path (bursts of 100000 and of 100);
# (c) the 512 x 512 multiply's steps with stamps (what the TCP launch step waits for);
# (d) 05092b7's first-command gating, not measured before: depth-1 `tiny` beside the Poisson
#     370 us LC, --gate-first on and off.
set -u
N=.carry-new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
mkdir -p $OUT/st
for r in a b; do
  rm -rf /tmp/st && mkdir -p /tmp/st
  RGPU_STAMPS=/tmp/st/s timeout 150 bash bench/sharing_on_device.sh $N $OUT/tiny-$r --matrix \
    --scenarios mx_be_tiny --modes native,fair --duration 2 --timeout 25 > /dev/null 2>&1
  echo "tiny-$r rc=$?"; grep -A4 'solo runs' $OUT/tiny-$r/sharing.md | grep '^|' | grep -v '^|---'
  # the two largest files: the tenant (client) and its rgpud
  ls -S /tmp/st | head -4
  big=$(ls -S /tmp/st | head -2)
  c=""; s=""
  for f in $big; do if grep -q '^20 ' /tmp/st/$f; then c=/tmp/st/$f; else s=/tmp/st/$f; fi; done
  python3 bench/stamps_waits.py $c $s | tee $OUT/st/tiny-$r.md
  rm -rf $OUT/tiny-$r/device-log.txt $OUT/tiny-$r/progress.txt $OUT/tiny-$r/sharing.json
done
timeout 200 bash bench/on_device.sh $N $OUT/async --tasks async --async-launches 100000 \
  --async-rounds 9 --no-links --worker-timeout 150 > $OUT/async.log 2>&1
echo "async rc=$?"; grep -A6 'Asynchronous launches' $OUT/async/overhead.md
timeout 200 bash bench/on_device.sh $N $OUT/async100 --tasks async --async-launches 100 \
  --async-rounds 9 --no-links --worker-timeout 150 > $OUT/async100.log 2>&1
echo "async100 rc=$?"; grep -A6 'Asynchronous launches' $OUT/async100/overhead.md
rm -rf /tmp/st && mkdir -p /tmp/st
RGPU_STAMPS=/tmp/st/m timeout 200 bash bench/on_device.sh $N $OUT/mm --tasks matmul --matmul-sizes 512 \
  --matmul-budget 2 --no-links --worker-timeout 150 > $OUT/mm.log 2>&1
echo "mm rc=$?"; grep -A12 'Where a multiply' $OUT/mm/overhead.md
ls -la /tmp/st; (cd /tmp && tar czf $OUT/st/mm-stamps.tar.gz st)
M=native,fair,fair/--gate-first=0
timeout 200 bash bench/sharing_on_device.sh $N $OUT/d1tiny --matrix --scenarios mx_lc_poisson_370,mx_be_tiny,mx_poisson_370_tiny \
  --be-depth 1 --modes $M --duration 3 --timeout 25 > /dev/null 2>&1
echo "d1tiny rc=$?"
grep -B2 -A12 'Matrix (LC p99' $OUT/d1tiny/sharing.md | grep '^|' | grep -v '^|---' | grep -v options
mkdir -p $OUT/logs && tar -xzf $OUT/d1tiny/rgpud-logs.tar.gz -C $OUT/logs 2>/dev/null
grep -rh 'tenant be scheduling' $OUT/logs | cut -c1-400
rm -rf $OUT/logs $OUT/d1tiny/device-log.txt $OUT/d1tiny/progress.txt $OUT/d1tiny/rgpud-logs.tar.gz $OUT/d1tiny/sharing.json
cd $OUT && tar czf res.tar.gz tiny-a tiny-b async async100 mm d1tiny *.log && rm -rf tiny-a tiny-b async async100 mm d1tiny
