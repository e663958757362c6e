#!/usr/bin/env python3
"""tools/bench-report on a short run (ctest Docs.BenchReport).

Runs the generator with --quick into a temporary file and checks the page: the machine,
date and commit lines, every figure the papers publish in its row beside a number measured
here (and the ratio where it is a timing), Siconos' Lemke beside quasistep's when bench_lemke
has it; and that a missing bench program stops the generator with one line and no page.

usage: bench_report_test.py [--build DIR]   (exit 77, skipped, when the build has no benchmarks)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "bench-report")
BENCHES = ["bench_steppers", "bench_miqp", "bench_ecp", "bench_lemke"]
BUILD = os.path.join(ROOT, "build")

TIME = re.compile(r"^\d[\d.,]*(e[+-]?\d+)? (µs|ms|s)\b")
RATIO = re.compile(r"^\d[\d.,]*x$")
NUMBER = re.compile(r"\d")

# (the start of a row's first cell, the published cell, kind of this machine's cell)
TIMINGS = [
    ("peg-in-hole, mean time per step", "1.51 ms"),
    ("cylinder (36 binary variables): mean", "2.7 ms"),
    ("cylinder (36 binary variables): worst", "11.8 ms"),
    ("cylinder (36 binary variables): standard deviation", "0.83 ms"),
    ("rounded box (72 binary variables): mean", "6.6 ms"),
    ("rounded box (72 binary variables): worst", "118.7 ms"),
    ("rounded box (72 binary variables): standard deviation", "9.7 ms"),
    ("the ECP model", "5.3 ms"),
    ("planar sliding", "2.2 ms"),
]
def tables(text):
    """Every markdown table of the page: (header cells, rows of cells)."""
    found, block = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            block.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])])
        elif block:
            if len(block) >= 2:
                found.append((block[0], block[2:]))
            block = []
    return found


def row_with(text, first):
    """(header, row) of the one table row whose first cell starts with `first`."""
    hits = [(h, r) for h, rows in tables(text) for r in rows if r[0].startswith(first)]
    if len(hits) != 1:
        raise AssertionError(f"{len(hits)} rows start with {first!r}")
    return hits[0]


def cell(header, row, starts):
    cols = [i for i, h in enumerate(header) if h.startswith(starts)]
    if not cols:
        raise AssertionError(f"no column {starts!r} in {header}")
    return row[cols[0]]


class BenchReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="bench_report_test_")
        cls.out = os.path.join(cls.tmp, "benchmarks.md")
        cls.proc = subprocess.run([sys.executable, TOOL, "--build", BUILD, "--quick", "--out", cls.out],
                                 cwd=ROOT, capture_output=True, text=True, timeout=600)
        cls.text = ""
        if cls.proc.returncode == 0:
            with open(cls.out, encoding="utf-8") as f:
                cls.text = f.read()
        version = subprocess.run([os.path.join(BUILD, "tools", "quasistep"), "--version"], capture_output=True,
                                 text=True).stdout
        cls.isa = re.search(r"\(([^)]*)\)", version.split("lanes:")[1]).group(1)
        listed = subprocess.run([os.path.join(BUILD, "bench", "bench_lemke"), "--benchmark_list_tests"],
                                capture_output=True, text=True).stdout
        cls.siconos = "BM_SiconosLexicoLemke" in listed

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def setUp(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)

    def test_page_names_the_machine_date_and_commit(self):
        self.assertTrue(self.text.startswith("# quasistep against the published timings\n"))
        self.assertIn("tools/bench-report", self.text)
        machine = re.search(r"^- \*\*Machine:\*\* (.*)$", self.text, re.M)
        self.assertIsNotNone(machine)
        self.assertRegex(machine.group(1), r", \d+ cores; the build's instruction set ")
        self.assertIn(self.isa, machine.group(1))
        self.assertRegex(self.text, r"(?m)^- \*\*Date:\*\* \d{4}-\d\d-\d\d \d\d:\d\d UTC$")
        self.assertRegex(self.text, r"(?m)^- \*\*Commit:\*\* ([0-9a-f]{7,}( \+ changes)?|not a git checkout)$")
        self.assertIn("quick run", self.text)  # a --quick page says so
        self.assertNotRegex(self.text, r"(?i)\bissue\b|#\d")
        self.assertNotRegex(self.text, r"\bnan\b|\binf\b|\bNone\b(?! of)")

    def test_every_published_timing_has_this_machines_figure_and_ratio(self):
        for first, published in TIMINGS:
            with self.subTest(row=first):
                header, row = row_with(self.text, first)
                self.assertTrue(cell(header, row, "published").startswith(published), row)
                self.assertRegex(cell(header, row, "this machine"), TIME)
                self.assertRegex(cell(header, row, "published / this machine"), RATIO)

    def test_a_published_timing_without_a_matching_method_says_so(self):
        header, row = row_with(self.text, "one patch per foot")
        self.assertEqual(cell(header, row, "published"), "48.7 ms")
        self.assertIn("not in quasistep", row[-1])

    def test_the_ucp_paper_has_no_timings_and_points_to_the_counts(self):
        # Pang, Trinkle & Lo 1996 publish pair counts, not times: the counts beside ours live
        # once, in ucp.md (tools/regen-docs), and this page links there.
        section = self.text.split("## Pang, Trinkle & Lo 1996", 1)[1].split("\n## ", 1)[0]
        self.assertIn("publishes no times", section)
        self.assertIn("(ucp.md#", section)
        self.assertNotIn("|", section)

    def test_siconos_lemke_is_beside_quasistep_lemke(self):
        for k in (2, 4, 8, 16):
            header, row = row_with(self.text, f"{k} ({4 * k})")
            self.assertRegex(cell(header, row, "quasistep Lemke"), TIME)
            if self.siconos:
                self.assertRegex(cell(header, row, "Siconos"), TIME)
                self.assertRegex(row[-1], RATIO)
        if not self.siconos:
            self.assertIn("has no Siconos", self.text)

    def test_a_missing_bench_program_stops_it_with_one_line_and_no_page(self):
        fake = os.path.join(self.tmp, "fake_build")
        os.makedirs(os.path.join(fake, "bench"))
        os.symlink(os.path.join(BUILD, "tools"), os.path.join(fake, "tools"))
        for b in BENCHES:
            if b != "bench_ecp":
                os.symlink(os.path.join(BUILD, "bench", b), os.path.join(fake, "bench", b))
        out = os.path.join(self.tmp, "never.md")
        r = subprocess.run([sys.executable, TOOL, "--build", fake, "--quick", "--out", out], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertRegex(r.stderr, r"^bench-report: .*bench_ecp not found")
        self.assertFalse(os.path.exists(out))


def main():
    global BUILD
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=BUILD)
    a, rest = ap.parse_known_args()
    BUILD = os.path.abspath(a.build)
    missing = [b for b in BENCHES if not os.access(os.path.join(BUILD, "bench", b), os.X_OK)]
    if missing:
        print(f"bench_report_test: skipped, {BUILD} has no {', '.join(missing)} (QUASISTEP_BUILD_BENCH)")
        return 77
    r = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if r.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
