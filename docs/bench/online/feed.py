#!/usr/bin/env python3
"""Write a JSONL history to standard output at a steady rate of
transaction lines per second (docs/bench/online/README.md).

    feed.py --rate 20000 history.jsonl | hyperiso check --follow --level ser,si -

Lines go out in batches every 10 ms; other lines (header, end line) go
with the batch they fall in. At the end it prints to standard error the
transactions written and the rate achieved.
"""
import argparse
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=20000, help="transaction lines per second")
    ap.add_argument("path")
    a = ap.parse_args()
    out = sys.stdout.buffer
    tick = 0.01
    per_tick = a.rate * tick
    start = time.monotonic()
    sent, batch = 0, []
    with open(a.path, "rb") as f:
        for line in f:
            batch.append(line)
            if b'"session"' in line:
                sent += 1
                if sent % max(1, int(per_tick)) == 0:
                    out.write(b"".join(batch))
                    out.flush()
                    batch = []
                    due = start + sent / a.rate
                    now = time.monotonic()
                    if due > now:
                        time.sleep(due - now)
    out.write(b"".join(batch))
    out.flush()
    took = time.monotonic() - start
    print(f"feed.py: {sent} transactions in {took:.1f} s ({sent / took:.0f}/s)", file=sys.stderr)


if __name__ == "__main__":
    main()
