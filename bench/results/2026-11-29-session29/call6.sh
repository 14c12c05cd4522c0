#!/usr/bin/env bash
# Session 29, call 6: the launch thread also taking the launches the scheduler samples for
# its accounting (an event every 64th launch; "new", this commit), against cc32ba5's launch
# thread, which waited for the thread and made those itself ("old"), and no launch thread
# ("none", new build with --launch-thread=0): bursts of 100 and of 100,000, three rounds,
# alternating; each invocation times three rounds per path (--async-rounds 3).
set -u
for d in bench client icd lib COMMIT; do [ -e .carry-old/$d ] || cp -r .carry-new/$d .carry-old/; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c6 && rm -rf $W && mkdir -p $W
for n in 100 100000; do
  for round in 1 2 3; do
    for v in new old none; do
      c=.carry-new; o=1
      [ $v = old ] && c=.carry-old
      [ $v = none ] && o=0
      timeout 100 bash bench/on_device.sh $c $W/n$n-r$round-$v --tasks async --no-links --iterations 100 \
        --async-launches $n --async-rounds 3 --worker-timeout 90 --rgpud-arg=--launch-thread=$o > /dev/null 2>&1
      echo "n$n r$round $v rc=$?"
    done
  done
done
rm -f $W/*/rgpud-*.log
(cd /tmp && tar czf $OUT/c6.tar.gz c6)
