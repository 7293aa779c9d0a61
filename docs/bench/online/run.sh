#!/bin/bash
# Feed a JSONL history to check --follow at a steady rate and record the
# checker's wall and CPU time, peak RSS, and its RSS every 5 s.
#   run.sh NAME RATE FILE LEVELS   (e.g. run.sh ser5m 20000 f5m.jsonl ser)
# Writes NAME.out (the report), NAME.log (feed.py's and the checker's
# standard error, the time line last) and NAME.rss ("t_s rss_mb" lines).
# HYPERISO names the binary (default: hyperiso on the PATH).
set -e
name=$1 rate=$2 file=$3 levels=$4
here=$(dirname "$0")
bin=${HYPERISO:-hyperiso}
fifo=$(mktemp -u)
mkfifo "$fifo"
python3 "$here/feed.py" --rate "$rate" "$file" 2>"$name.feed" >"$fifo" &
/usr/bin/time -f "%e s wall %U s user %S s sys %M KB peak" \
  "$bin" check --follow --unique-values --level "$levels" - <"$fifo" >"$name.out" 2>"$name.err" &
timer=$!
sleep 0.5
pid=$(pgrep -P "$timer")
start=$(date +%s)
echo "t_s rss_mb" >"$name.rss"
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/VmRSS/{print int($2/1024)}' "/proc/$pid/status" 2>/dev/null || true)
  echo "$(($(date +%s) - start)) $rss" >>"$name.rss"
  sleep 5
done
wait
cat "$name.feed" "$name.err" >"$name.log"
rm -f "$fifo" "$name.feed" "$name.err"
