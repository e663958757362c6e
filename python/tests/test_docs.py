"""docs/python.md: every ```python block is a complete program, run from the repository's
root against the built package; a ```text block right after one is its exact output."""
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

PAGE = os.path.join(ROOT, "docs", "python.md")
BLOCK = re.compile(r"```python\n(.*?)```\n(?:\n```text\n(.*?)```\n)?", re.S)


def blocks():
    with open(PAGE) as f:
        return BLOCK.findall(f.read())


def test_the_page_has_programs():
    assert len(blocks()) >= 4


@pytest.mark.parametrize("index", range(len(blocks())))
def test_program_prints_what_the_page_says(index):
    program, expected = blocks()[index]
    r = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    if expected:
        assert r.stdout == expected
