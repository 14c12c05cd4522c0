#!/bin/bash
# $1 = build dir, $2 = port
B=$1; P=$2
$B/server/rgpud --listen 127.0.0.1:$P > /dev/null 2>&1 &
pid=$!; sleep 0.7
echo '{"kind":"cl","platform":"rgpu","tasks":["bandwidth"],"sizes":[16777216,67108864],"bytes_per_point":268435456}' > bwab.json
OCL_ICD_VENDORS=$B/icd RGPU_SERVER=127.0.0.1:$P /work/main/build/bench/rgpu-bench-overhead --worker bwab.json bwab-out.json
python3 -c "
import json; d=json.load(open('bwab-out.json'))
for r in d['bandwidth']: print(r['bytes']>>20, 'MiB read blk %.2f nb %.2f' % (r['read_blocking_gbps'], r['read_nonblocking_gbps']))"
grep VmHWM /proc/$pid/status
kill $pid; wait $pid 2>/dev/null
