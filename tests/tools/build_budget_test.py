#!/usr/bin/env python3
"""The build stays fast: the headers that nearly every file includes stay small, and each
heavy solver template is compiled in one place (ctest Build.Budget).

Most of a typical file's compile time is reading the headers it includes (Eigen,
<experimental/simd>, nlohmann/json and the project's own on top). For each public header in
tests/data/build_budget.json this preprocesses `#include "quasistep/<header>"` with the
flags the build compiles the library with and counts the non-blank lines; a header over its
budget fails, with what to do about it. Nothing is timed: the count is the same on every
machine with the same compiler and standard library, so the test runs only with the
compiler the budget was recorded with (exit 77, skipped, otherwise).

Then it reads the symbols of every object file the build compiles (nm): each solver listed under
"instantiated_once" (a function of a class template, for each capacity the header declares
`extern template`) must be defined in exactly one object, the one that instantiates it. A
file that defines it again has lost the `extern template` declaration, or includes a copy of
the definition inline, and pays the solver's compile time again.

usage: build_budget_test.py --build DIR      (DIR/compile_commands.json gives the flags)
"""

import argparse
import collections
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUDGET = os.path.join(ROOT, "tests", "data", "build_budget.json")
# A library file whose flags every header is preprocessed with.
REFERENCE_SOURCE = os.path.join("core", "model.cpp")


def library_command(build):
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        for entry in json.load(f):
            if os.path.normpath(entry["file"]).endswith(os.sep + REFERENCE_SOURCE):
                return entry
    raise SystemExit(f"build_budget_test: {REFERENCE_SOURCE} is not in {build}/compile_commands.json")


def command_args(entry):
    """A compile_commands.json entry's command as a list of arguments."""
    return entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])


def preprocess_flags(entry):
    """The compiler and its flags, without the output, the source and dependency options."""
    args = command_args(entry)
    keep, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ", "-c"):
            skip = a != "-c"
            continue
        if a in ("-MD", "-MMD") or a == entry["file"] or a.endswith(REFERENCE_SOURCE):
            continue
        keep.append(a)
    return keep


def compiler_version(compiler):
    out = subprocess.run([compiler, "-dumpfullversion"], capture_output=True, text=True, check=True)
    name = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=True).stdout
    kind = "clang" if "clang" in name else "gcc"
    return f"{kind} {out.stdout.strip()}"


def lines_of(flags, header, cwd):
    src = f'#include "quasistep/{header}"\n'
    r = subprocess.run(flags + ["-E", "-P", "-x", "c++", "-"], input=src, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        raise SystemExit(f"build_budget_test: preprocessing {header} failed:\n{r.stderr}")
    return sum(1 for line in r.stdout.splitlines() if line.strip())


def current_objects(build):
    """The objects this build's compile commands write (not a stale one of a removed file)."""
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    objects = set()
    for entry in entries:
        args = command_args(entry)
        if "-o" in args:
            obj = os.path.join(entry["directory"], args[args.index("-o") + 1])
            if os.path.exists(obj):
                objects.add(obj)
    return sorted(objects)


def objects_defining(build, patterns, needles):
    """{pattern: [objects whose defined symbols (demangled) match it]} over the build's objects.
    Only symbols whose mangled name holds one of `needles` are demangled (c++filt), which keeps
    this fast on large objects."""
    found = collections.defaultdict(list)
    for obj in current_objects(build):
        r = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True)
        if r.returncode != 0:
            continue
        lines = [line for line in r.stdout.splitlines() if any(n in line for n in needles)]
        if not lines:
            continue
        demangled = subprocess.run(["c++filt"], input="\n".join(lines), capture_output=True, text=True).stdout
        for pattern in patterns:
            if re.search(pattern, demangled, re.MULTILINE):
                found[pattern].append(os.path.relpath(obj, build))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    args = ap.parse_args()
    with open(BUDGET, encoding="utf-8") as f:
        budget = json.load(f)
    entry = library_command(args.build)
    flags = preprocess_flags(entry)
    have = compiler_version(flags[0])
    if have != budget["compiler"]:
        print(f"build_budget_test: the budget was recorded with {budget['compiler']}, this build uses {have}: skipped")
        return 77
    over = False
    for header, limit in sorted(budget["headers"].items()):
        n = lines_of(flags, header, entry.get("directory", args.build))
        verdict = "ok" if n <= limit else "OVER BUDGET"
        print(f"{header:40} {n:8d} lines (budget {limit}) {verdict}")
        over = over or n > limit
    if over:
        print("\nA header nearly every file includes grew past its budget: every file that includes it now\n"
              "compiles slower. Include the heavy header only in the .cpp files that need it (a forward\n"
              "declaration often does in the header), or, if the growth is worth its cost, raise the\n"
              "budget in tests/data/build_budget.json and say in the commit what it costs\n"
              "(tools/build-times before and after).\n", file=sys.stderr)
    again = False
    patterns = {f"^[0-9a-f]+ [TW] {re.escape(symbol)}\\(": symbol for symbol in budget["instantiated_once"]}
    # The class's name as the mangled symbols spell it (its length, then the name): Lemke -> 5Lemke.
    needles = {f"{len(c)}{c}" for c in (re.match(r"(?:\w+::)*(\w+)<", s).group(1) for s in budget["instantiated_once"])}
    found = objects_defining(args.build, patterns, needles)
    for pattern, symbol in sorted(patterns.items(), key=lambda kv: kv[1]):
        where = found.get(pattern, [])
        verdict = "ok" if len(where) == 1 else "NOT ONCE"
        print(f"{symbol:40} defined in {len(where)} object(s) {verdict}: {', '.join(where)}")
        again = again or len(where) != 1
    if again:
        print("\nA solver marked `extern template` in its header is compiled in more (or fewer) objects than\n"
              "the one that instantiates it: the header lost its `extern template` line, or a function of it\n"
              "became inline again, and every file that uses it pays its compile time (quasistep/kernels/lemke.hpp\n"
              "says how it is set up).", file=sys.stderr)
    return 1 if over or again else 0

if __name__ == "__main__":
    sys.exit(main())
