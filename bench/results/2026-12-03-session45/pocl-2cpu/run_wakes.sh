#!/bin/bash
B=$1; L=$2; N=${3:-5000}
echo $B/client/librgpu-icd.so > /tmp/probe/vend/rgpu.icd
$B/server/rgpud --listen $L --platform Portable --log-level warn > /tmp/probe/rgpud.log 2>&1 &
pid=$!
sleep 1.5
snap() { for t in /proc/$pid/task/*; do echo "$(cat $t/comm) $(grep ^voluntary $t/status | awk '{print $2}')"; done | sort | awk '{a[$1]+=$2} END {for (k in a) printf "%s=%d ", k, a[k]}'; echo; }
snap > /tmp/probe/s0
OCL_ICD_VENDORS=/tmp/probe/vend RGPU_SERVER=$L /tmp/probe/rt $N rgpu | grep -E "p50|after-lf"
echo "rgpud before: $(cat /tmp/probe/s0)"; echo "rgpud after:  $(snap)"
kill $pid; wait $pid 2>/dev/null
