#!/usr/bin/env python3
"""Scale a real HLO module up to any size by replicating its computations.

Usage:
  scale_module.py SRC.txt OUT.txt --size 1G        # as many replicas as fit in 1 GiB
  scale_module.py SRC.txt OUT.txt --replicas 8

SRC is one module in XLA's long text form (%-prefixed names), as XLA dumps
it. Replica k (k >= 1) of every computation gets the suffix ".r<k>" on every
name it defines or refers to, so all names stay unique. The entry
computations of the replicas become one entry: replica k's parameters are
renumbered by k * (parameter count), its root becomes an ordinary
instruction, and a new root tuple returns every replica's result. The header
follows: input_output_alias entries move under output index {k, ...},
entry_computation_layout lists every replica's parameters and results. The
result is a valid, scheduled module with the same mix of opcodes, shapes,
fusions and metadata as the original; XLA's own parser accepts it.

Only the standard library is used.
"""
import argparse
import os
import re
import sys

# A quoted string (left alone: metadata may contain '%') or a %name.
TOKEN_RE = re.compile(r'("(?:[^"\\]|\\.)*")|(%[A-Za-z_][\w.\-]*)')
PARAMETER_RE = re.compile(r"\bparameter\((\d+)\)")
ALIAS_RE = re.compile(r"\{([\d,\s]*)\}:\s*\((\d+),\s*\{([\d,\s]*)\}((?:,\s*[\w-]+)?)\)")


def parse_size(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMG]?)(?:i?B)?", text.strip(), re.I)
    if not m:
        raise argparse.ArgumentTypeError("bad size %r (use e.g. 500M, 1G)" % text)
    return int(float(m.group(1)) * units[m.group(2).upper()])


def balanced_end(text, start):
    """Index one past the bracket run opened at text[start], skipping strings."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced brackets at offset %d" % start)


def split_header(line):
    """'HloModule name, k=v, ...' -> (name, [(key, value), ...])."""
    rest = line[len("HloModule"):].strip()
    m = re.match(r"[\w.\-]+", rest)
    name, i = m.group(0), m.end()
    attrs = []
    while i < len(rest):
        if rest[i] in ", ":
            i += 1
            continue
        eq = rest.index("=", i)
        key = rest[i:eq]
        j = eq + 1
        if rest[j] in "({[":
            end = balanced_end(rest, j)
        else:
            end = j
            while end < len(rest) and rest[end] != ",":
                end += 1
        attrs.append((key, rest[j:end]))
        i = end
    return name, attrs


def read_module(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if not lines or not lines[0].startswith("HloModule"):
        sys.exit("%s: expected a module starting with 'HloModule'" % path)
    header = lines[0]
    preamble, computations = [], []
    current = None
    for line in lines[1:]:
        if current is None:
            stripped = line.rstrip()
            if stripped.endswith("{") and (line.startswith("%") or line.startswith("ENTRY")):
                current = {"entry": line.startswith("ENTRY"), "head": line, "body": []}
            elif not computations:
                preamble.append(line)
            continue
        if line.startswith("}"):
            current["tail"] = line
            computations.append(current)
            current = None
        else:
            current["body"].append(line)
    entries = [c for c in computations if c["entry"]]
    if len(entries) != 1:
        sys.exit("%s: expected exactly one ENTRY computation (a '// -----' file? split it first)"
                 % path)
    return header, preamble, computations


class Template:
    """Text whose %names get a suffix per replica, parsed once."""

    def __init__(self, text):
        self.parts = []
        self.names = []  # indices of %name parts
        pos = 0
        for m in TOKEN_RE.finditer(text):
            if m.group(2) is None:
                continue
            self.parts.append(text[pos:m.start()])
            self.names.append(len(self.parts))
            self.parts.append(m.group(2))
            pos = m.end()
        self.parts.append(text[pos:])

    def render(self, suffix):
        if not suffix:
            return "".join(self.parts)
        out = list(self.parts)
        for i in self.names:
            out[i] += suffix
        return "".join(out)


def root_of(body):
    """(index of the ROOT line, its name, its shape text)."""
    for k, line in enumerate(body):
        m = re.match(r"\s*ROOT\s+(%[\w.\-]+)\s*=\s*", line)
        if not m:
            continue
        start = m.end()
        end = balanced_end(line, start) if line[start] == "(" else line.index(" ", start)
        return k, m.group(1), line[start:end]
    sys.exit("entry computation has no ROOT")


def scaled_header(name, attrs, replicas, params):
    out = []
    for key, value in attrs:
        if key == "input_output_alias":
            entries = []
            for k in range(replicas):
                for m in ALIAS_RE.finditer(value):
                    out_index = ", ".join([str(k)] + [x.strip() for x in m.group(1).split(",")
                                                      if x.strip()])
                    entries.append("{%s}: (%d, {%s}%s)" % (out_index, int(m.group(2)) + k * params,
                                                          m.group(3), m.group(4)))
            value = "{ " + ", ".join(entries) + " }"
        elif key == "entry_computation_layout":
            inner = value[1:-1]  # strip the outer braces
            arrow = None
            depth = 0
            for i, c in enumerate(inner):
                if c in "({[":
                    depth += 1
                elif c in ")}]":
                    depth -= 1
                elif c == "-" and depth == 0 and inner[i + 1] == ">":
                    arrow = i
                    break
            args, result = inner[:arrow].strip(), inner[arrow + 2:].strip()
            value = "{(%s)->(%s)}" % (", ".join([args[1:-1]] * replicas),
                                      ", ".join([result] * replicas))
        elif key != "is_scheduled":
            continue  # per-parameter lists etc. would no longer match
        out.append("%s=%s" % (key, value))
    return "HloModule %s%s" % (name, "".join(", " + a for a in out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--replicas", type=int)
    group.add_argument("--size", type=parse_size, help="target size, e.g. 1G")
    args = ap.parse_args()

    header, preamble, computations = read_module(args.src)
    name, attrs = split_header(header)
    entry = next(c for c in computations if c["entry"])
    others = [c for c in computations if not c["entry"]]
    params = len({int(m.group(1)) for line in entry["body"] for m in PARAMETER_RE.finditer(line)})
    root_line, root_name, root_shape = root_of(entry["body"])
    body = list(entry["body"])
    body[root_line] = body[root_line].replace("ROOT ", "", 1)

    other_text = Template("".join(c["head"] + "\n" + "\n".join(c["body"]) + "\n" + c["tail"] +
                                  "\n\n" for c in others))
    entry_text = "\n".join(body) + "\n"
    entry_template = Template(entry_text)
    per_replica = len(other_text.render("")) + len(entry_text)
    replicas = args.replicas or max(1, round(args.size / per_replica))

    entry_name = re.match(r"ENTRY\s+(%[\w.\-]+)", entry["head"]).group(1)
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(scaled_header(name, attrs, replicas, params) + "\n")
        out.write("\n".join(preamble).rstrip("\n") + "\n\n")
        for k in range(replicas):
            out.write(other_text.render(".r%d" % k if k else ""))
        out.write("ENTRY %s.scaled {\n" % entry_name)
        for k in range(replicas):
            text = entry_template.render(".r%d" % k if k else "")
            if k:
                text = PARAMETER_RE.sub(lambda m: "parameter(%d)" % (int(m.group(1)) + k * params),
                                        text)
            out.write(text)
        roots = ", ".join(root_name + (".r%d" % k if k else "") for k in range(replicas))
        out.write("  ROOT %%tuple.scaled = (%s) tuple(%s)\n}\n\n" %
                  (", ".join([root_shape] * replicas), roots))
    size = os.path.getsize(args.out)
    print("%s: %d replicas of %s, %.1f MB" % (args.out, replicas, args.src, size / 1e6))


if __name__ == "__main__":
    main()
