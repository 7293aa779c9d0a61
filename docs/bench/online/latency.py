#!/usr/bin/env python3
"""Time from a violating transaction's arrival to its report.

latency.py RATE FILE LEVEL LINE EVERY feeds FILE at RATE transaction lines a
second (feed.py) into `check --follow --unique-values --fail-fast`, and
prints when the first violation is reported against when line LINE (the
injected violation) was fed. HYPERISO names the binary (default hyperiso).
"""
import os
import subprocess
import sys
import time

rate, path, level, line, every = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
binary = os.environ.get("HYPERISO", "hyperiso")
here = os.path.dirname(os.path.abspath(__file__))
t0 = time.time()
feed = subprocess.Popen([sys.executable, os.path.join(here, "feed.py"), "--rate", str(rate), path], stdout=subprocess.PIPE)
chk = subprocess.Popen([binary, "check", "--follow", "--unique-values", "--fail-fast", "--every", every, "--level", level, "-"],
                       stdin=feed.stdout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
feed.stdout.close()
for out in chk.stdout:
    if "VIOLATED" in out:
        t = time.time() - t0
        print(f"{level}: reported at {t:.2f} s; line {line} fed at about {line / rate:.2f} s: latency {t - line / rate:.2f} s")
        break
chk.kill()
feed.kill()
