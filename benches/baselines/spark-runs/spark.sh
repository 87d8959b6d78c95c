#!/bin/bash
# usage: spark.sh BIN OUTDIR NAME "SPARK" [--to STAGE]  -- a micro project from a spark, run with --yes, timed
bin=$1; out=$2; name=$3; spark=$4; shift 4
mkdir -p $out
rm -rf $out/$name
$bin author new $out/$name --spark "$spark" --scope micro > $out/$name.log 2>&1
start=$(date +%s)
$bin author run $out/$name --yes --render priority-2 "$@" >> $out/$name.log 2>&1
rc=$?
end=$(date +%s)
echo "RC $rc SECONDS $((end-start))" >> $out/$name.log
python3 /work/runs/metrics.py $out/$name/graph.db >> $out/$name.log 2>&1
$bin validate $out/$name >> $out/$name.log 2>&1
