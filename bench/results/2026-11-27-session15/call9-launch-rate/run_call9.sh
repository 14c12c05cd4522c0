#!/usr/bin/env bash
# Session 15, call 9: the launch rate at b8cfffb, three rounds of 100,000 launches and three of
# bursts of 100 (median of 101), Unix and TCP against native in each round.
#   bash .carry-s15/run_call9.sh .carry-s15 $OUT
C=$1 O=$2
bash bench/ab_on_device.sh $C $O/l100k 3 100000 cur= > /dev/null 2>&1
bash bench/ab_on_device.sh $C $O/b100 3 100 cur= > /dev/null 2>&1
cat $O/l100k/summary.md $O/b100/summary.md
cd $O && tar czf runs.tar.gz l100k b100 && cp l100k/summary.md summary-100k.md && cp b100/summary.md summary-b100.md && rm -rf l100k b100
