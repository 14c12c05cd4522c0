#!/usr/bin/env bash
# Session 15, call 4: the whole matrix with this session's build (reads without events,
# bounded reaping; modes native, fair, fair+shared), then HEAD 363adbb's rgpud and ICD
# (.carry-old) under fair on every cell against this run's native (--baseline).
#   bash .carry-s15/run_call4.sh .carry-s15 .carry-old $OUT
NEW=$(cd $1 && pwd) OLD=$(cd $2 && pwd) O=$3
mkdir -p $O
bash bench/sharing_on_device.sh $NEW $O/new --matrix --modes native,fair,fair+shared --duration 2 --timeout 25 > /dev/null 2>&1
cp $O/new/sharing.json $OLD/native-sharing.json
bash bench/sharing_on_device.sh $OLD $O/old --matrix --modes fair --duration 2 --timeout 25 --baseline $OLD/native-sharing.json > /dev/null 2>&1
for x in new old; do grep -A 40 "^## Matrix (" $O/$x/sharing.md | grep "^|\|^- "; done
cd $O && tar czf old.tar.gz old && rm -rf old
