#!/usr/bin/env python3
"""Rough fragmentation check for a case dir (jax 0.12 layout): max over time of the bytes
covered by live values in preallocated-temp allocations vs. the allocation sizes."""
import glob, re, sys

def main(d):
    ba = open(glob.glob(d + "/*-buffer-assignment.txt")[0]).read()
    lr = open((glob.glob(d + "/*-live-range.txt") or glob.glob(d + "/*-buffer-assignment.txt"))[0]).read()
    ranges = {}
    for m in re.finditer(r"^\s+(\S+?)(\{[^}]*\}):(\d+)-(\d+)$", lr, re.M):
        ranges[m.group(1) + m.group(2)] = (int(m.group(3)), int(m.group(4)))
    temp_total, peak_total = 0, 0
    for blk in re.split(r"^(?=allocation \d+:)", ba, flags=re.M):
        h = blk.split("\n", 1)[0]
        if "preallocated-temp" not in h:
            continue
        size = int(re.match(r"allocation \d+: size (\d+)", h).group(1))
        vals = []
        for m in re.finditer(r"value: <\d+ (\S+?)(\{[^}]*\})?(?: \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\)", blk):
            key = m.group(1) + (m.group(2) or "{}")
            if key not in ranges:
                continue
            s, e = ranges[key]
            vals.append((s, e, int(m.group(4)), int(m.group(3))))
        times = sorted({v[0] for v in vals})
        peak = 0
        for t in times:
            iv = sorted((o, o + sz) for s, e, o, sz in vals if s <= t <= e)
            cov, cur = 0, None
            for a, b in iv:
                if cur is None or a > cur[1]:
                    if cur: cov += cur[1] - cur[0]
                    cur = [a, b]
                else:
                    cur[1] = max(cur[1], b)
            if cur: cov += cur[1] - cur[0]
            peak = max(peak, cov)
        temp_total += size; peak_total += peak
        print("%s: temp allocation %d bytes, live peak %d bytes, ratio %.2f" % (h.split(",")[0], size, peak, size / max(peak, 1)))
    return temp_total, peak_total

if __name__ == "__main__":
    for d in sys.argv[1:]:
        print(d); main(d)
