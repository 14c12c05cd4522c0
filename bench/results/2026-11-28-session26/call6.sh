#!/usr/bin/env bash
# Session 26, call 6 (carry .carry-new as call 4, and .carry-perf: a tar of Debian's perf 6.1 with
# its libraries): where rgpud's threads spend their time, (a) beside the LC with the `tiny` BE
# tenant (fair, 3 s), (b) during 100,000 asynchronous launches (overhead bench, unix and TCP).
set -u
N=.carry-new
tar -C /tmp -xJf .carry-perf/perf.tar.xz   # perf and its libraries (.carry-perf/perf.tar.xz: Debian's linux-perf 6.1)
P="env LD_LIBRARY_PATH=/tmp/perfpkg/lib /tmp/perfpkg/perf"
$P --version; cat /proc/sys/kernel/perf_event_paranoid
attach() {  # name, seconds, delay: profile the rgpud that lives past the delay
  pid=""
  for i in $(seq 1 100); do
    p=$(pgrep -n -x rgpud) || { sleep 0.2; continue; }
    sleep ${3:-1}
    kill -0 $p 2>/dev/null && { pid=$p; break; }
  done
  echo "profiling rgpud pid $pid: $(tr '\0' ' ' < /proc/$pid/cmdline | cut -c1-200)"
  $P record -F 4999 -g -p $pid -o /tmp/$1.data -- sleep $2 > /tmp/$1.rec.log 2>&1
  tail -3 /tmp/$1.rec.log
  $P report -i /tmp/$1.data --no-children --sort dso,sym --stdio -g none 2>/dev/null | grep -v '^$' | head -150 > $OUT/$1-flat.txt
  $P report -i /tmp/$1.data --no-children --sort tid,dso --stdio -g none 2>/dev/null | grep '%' | head -40 > $OUT/$1-threads.txt
  $P report -i /tmp/$1.data --children --sort sym --stdio -g none 2>/dev/null | grep '%' | head -120 > $OUT/$1-children.txt
}
attach tiny 2.5 3 &
timeout 150 bash bench/sharing_on_device.sh $N $OUT/tiny --matrix --scenarios mx_poisson_370_tiny \
  --modes fair --duration 8 --timeout 25 > /dev/null 2>&1
echo "tiny rc=$?"; wait; grep '^| fair | mx_' $OUT/tiny/sharing.md; head -30 $OUT/tiny-threads.txt; head -60 $OUT/tiny-flat.txt
rm -rf $OUT/tiny/device-log.txt $OUT/tiny/progress.txt $OUT/tiny/sharing.json
