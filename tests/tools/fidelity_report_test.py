#!/usr/bin/env python3
"""tools/fidelity-report on a short run (ctest Docs.FidelityReport).

Runs the generator with --quick on a copy of docs/fidelity.md and checks what it wrote: the
provenance line, a table per scene with a row per mode and step size whose errors are
numbers, the plots it links (valid SVG files), the friction map with every model's verdict,
Halm & Posa's pinch against MuJoCo;
the text outside the generated regions unchanged; and that a missing program or a page
without its regions stops the generator with one line and leaves the page as it was.

usage: fidelity_report_test.py [--build DIR]   (exit 77, skipped, when the build has no fidelity program)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "fidelity-report")
PAGE = os.path.join(ROOT, "docs", "fidelity.md")
BUILD = os.path.join(ROOT, "build")
REGION = re.compile(r"<!-- fidelity (\w+) -->\n.*?<!-- /fidelity \1 -->", re.S)


def outside_regions(text):
    return REGION.sub(lambda m: m.group(1), text)


class FidelityReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fidelity-report-")
        cls.page = os.path.join(cls.tmp, "fidelity.md")
        shutil.copy(PAGE, cls.page)
        r = subprocess.run([TOOL, "--quick", "--build", BUILD, "--out", cls.page], capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"fidelity-report failed: {r.stderr}")
        with open(cls.page) as f:
            cls.text = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_provenance_names_machine_commit_and_mujoco(self):
        self.assertRegex(self.text, r"Measured on .+, \d+ cores, \d{4}-\d\d-\d\d, commit \w+, MuJoCo \d+\.\d+\.\d+ "
                                    r"\(quick run: a subset\)\.")

    def test_every_scene_compares_the_cost_with_mujoco_at_both_steps(self):
        # The cost claim: the quasistatic run against MuJoCo's reference step and against a ten
        # times larger MuJoCo step, whose own error against the reference is printed beside it.
        for scene in ("anitescu_box_push", "anitescu_grasp"):
            section = self.text.split(f"examples/{scene}.json")[1].split("###")[0]
            self.assertRegex(section, r"MuJoCo at dt = 0\.001 s: [\d.]+ ms; against its dt = 0\.0001 s run the object "
                                      r"is [\d.]+ mm off on average and [\d.]+ mm at the end\.", scene)
            self.assertRegex(section, r"Cost: the quasistatic run at h = [\d.]+ s \([\d.]+ mm off MuJoCo's reference on "
                                      r"average\) takes [\d.]+ ms: [\d,]+ times less than MuJoCo at dt = 0\.0001 s and "
                                      r"[\d,]+ times less than MuJoCo at dt = 0\.001 s\.", scene)

    def test_every_scene_has_both_modes_with_numeric_errors(self):
        for scene in ("anitescu_box_push", "anitescu_grasp"):
            section = self.text.split(f"examples/{scene}.json")[1].split("###")[0]
            rows = [line for line in section.splitlines() if line.startswith("| quasi")]
            modes = {row.split("|")[1].strip() for row in rows}
            self.assertEqual(modes, {"quasistatic", "quasi-dynamic"}, scene)
            for row in rows:
                cells = [c.strip() for c in row.strip("|").split("|")]
                for cell in cells[1:6]:
                    self.assertRegex(cell, r"^\d+(\.\d+)?$", f"{scene}: {row}")

    def test_linked_plots_exist_and_are_svg(self):
        links = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", self.text)
        self.assertGreaterEqual(len(links), 4)
        for link in links:
            path = os.path.join(self.tmp, link)
            self.assertTrue(os.path.isfile(path), link)
            root = ET.parse(path).getroot()
            self.assertTrue(root.tag.endswith("svg"))
            self.assertTrue(root.findall(".//{http://www.w3.org/2000/svg}polyline"), f"{link} draws no line")

    def test_friction_map_gives_every_models_verdict(self):
        section = self.text.split("<!-- fidelity friction_map -->")[1].split("<!-- /fidelity friction_map -->")[0]
        rows = [line for line in section.splitlines() if re.match(r"^\| \d", line)]
        self.assertTrue(rows)
        for row in rows:
            for cell in [c.strip().strip("*") for c in row.strip("|").split("|")][1:]:
                self.assertRegex(cell, r"^[Mm]!?[Aa]!?[Dd]!? [-\d]+/[-\d]+/[-\d]+$", row)
        self.assertRegex(section, r"The models disagree in \d+ of \d+ cells\.")

    def test_pinch_compares_the_finite_gain_model_with_mujoco(self):
        section = self.text.split("<!-- fidelity pinch -->")[1].split("<!-- /fidelity pinch -->")[0]
        self.assertRegex(section, r"MuJoCo, dt = [\d.e-]+ s, servo gain [\d.]+: [\d.]+ ms for [\d.]+ s of motion; "
                                  r"the square ends at x = -?[\d.]+ mm, y = -?[\d.]+ mm, theta = -?[\d.]+ mrad; "
                                  r"deepest soft contact [\d.]+ mm\.")
        rows = [line for line in section.splitlines() if re.match(r"^\| [\d.e+-]+ \| \d+ \|", line)]
        self.assertTrue(rows, section)
        for row in rows:
            cells = [c.strip() for c in row.strip("|").split("|")]
            self.assertEqual(len(cells), 5, row)  # c, steps, wall time, position and angle errors
            for cell in cells[3:]:
                self.assertRegex(cell, r"^\d+\.\d+ / \d+\.\d+$", row)

    def test_text_outside_the_regions_is_kept(self):
        with open(PAGE) as f:
            original = f.read()
        self.assertEqual(outside_regions(self.text), outside_regions(original))


class FidelityReportRefuses(unittest.TestCase):
    def run_tool(self, build, page):
        return subprocess.run([TOOL, "--quick", "--build", build, "--out", page], capture_output=True, text=True)

    def test_missing_program_is_one_line_and_leaves_the_page(self):
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "fidelity.md")
            shutil.copy(PAGE, page)
            r = self.run_tool(tmp, page)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("fidelity", r.stderr)
            with open(page) as f, open(PAGE) as g:
                self.assertEqual(f.read(), g.read())

    def test_page_without_regions_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "fidelity.md")
            with open(page, "w") as f:
                f.write("# a page\n")
            r = self.run_tool(BUILD, page)
            self.assertEqual(r.returncode, 1)
            self.assertIn("no region", r.stderr)
            with open(page) as f:
                self.assertEqual(f.read(), "# a page\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=BUILD)
    args, rest = ap.parse_known_args()
    BUILD = os.path.abspath(args.build)
    if not os.access(os.path.join(BUILD, "bench", "fidelity"), os.X_OK):
        print("fidelity_report_test: no bench/fidelity in this build (MuJoCo not found): skipped")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0]] + rest)
