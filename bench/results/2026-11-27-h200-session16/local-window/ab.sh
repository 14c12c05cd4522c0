#!/bin/bash
# ab.sh BUILD PORT [SIZES BYTES_PER_POINT]: starts BUILD's rgpud on 127.0.0.1:PORT, runs the
# overhead benchmark's worker (bandwidth task) through it over TCP, prints each size's read
# rates and rgpud's peak resident memory. SIZES is a JSON list of byte counts.
B=$1; P=$2; SIZES=${3:-[67108864,268435456]}; PER=${4:-1073741824}
$B/server/rgpud --listen 127.0.0.1:$P > /dev/null 2>&1 &
pid=$!; sleep 0.7
echo "{\"kind\":\"cl\",\"platform\":\"rgpu\",\"tasks\":[\"bandwidth\"],\"sizes\":$SIZES,\"bytes_per_point\":$PER}" > bwab.json
OCL_ICD_VENDORS=$B/icd RGPU_SERVER=127.0.0.1:$P /work/main/build/bench/rgpu-bench-overhead --worker bwab.json bwab-out.json
python3 -c "
import json; d=json.load(open('bwab-out.json'))
for r in d['bandwidth']: print(r['bytes']>>20, 'MiB read blk %.2f nb %.2f' % (r['read_blocking_gbps'], r['read_nonblocking_gbps']))"
grep VmHWM /proc/$pid/status
kill $pid; wait $pid 2>/dev/null
