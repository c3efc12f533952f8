"""Times whole processes, round-robin: each named command once per round, ROUNDS rounds;
prints per command the median wall time and the median CPU time (user + system of the
process and its waited-for children, from wait4), and each against the first command: the
difference in wall milliseconds and the ratio of times (other / first: above 1, the first
is faster). Exit codes 0 and 1 count as finished runs; any other stops the benchmark.

Usage: python3 time_processes.py ROUNDS -- NAME ARGV... [-- NAME ARGV...]..."""
import os
import statistics
import subprocess
import sys
import time


def run(argv):
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{argv[0]} exited {code}: {err.decode(errors='replace')[:800]}")
    return wall, usage.ru_utime + usage.ru_stime


def main():
    rounds = int(sys.argv[1])
    groups, current = [], None
    for arg in sys.argv[2:]:
        if arg == "--":
            current = []
            groups.append(current)
        else:
            current.append(arg)
    commands = [(group[0], group[1:]) for group in groups]
    samples = {name: [] for name, _ in commands}
    for _ in range(rounds):
        for name, argv in commands:
            samples[name].append(run(argv))
    first = None
    for name, _ in commands:
        wall = statistics.median(s[0] for s in samples[name]) * 1000
        cpu = statistics.median(s[1] for s in samples[name]) * 1000
        line = f"{name:44} wall {wall:8.2f} ms  cpu {cpu:8.2f} ms"
        if first is None:
            first = (wall, cpu)
        else:
            line += f"  | vs first: wall {wall - first[0]:+8.2f} ms ({wall / first[0]:.2f}x), cpu {cpu / first[1]:.2f}x"
        print(line, flush=True)
    print(f"({rounds} rounds, medians)")


main()
