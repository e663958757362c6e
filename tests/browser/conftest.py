"""Helpers of the browser tests (ctest Browser.*): the CLI writes pages, headless Chromium
loads them and runs their self-test (#selftest), whose report the tests read from the DOM.

Environment: QUASISTEP_CLI (the built CLI), CHROMIUM (the browser), set by ctest.
"""
import json
import os
import re
import subprocess
import sys
import zlib

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from cli_helpers import CLI, ROOT, example, read_csv, run_cli as cli  # noqa: E402,F401

CHROMIUM = os.environ.get("CHROMIUM", "chromium")
# As root Chromium needs --no-sandbox; no GPU in CI; no first-run chatter.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
         "--enable-logging=stderr", "--v=0"]


def page_data(path):
    """The JSON a page carries (its <script id="qs-data">)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'<script id="qs-data" type="application/json">(.*?)</script>', text, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def selftest(path, timeout=120):
    """Loads the page with #selftest in headless Chromium; returns (report dict, console
    errors). The report is what the page's script wrote into <pre id="qs-selftest">."""
    r = subprocess.run([CHROMIUM, *FLAGS, "--dump-dom", "file://" + os.path.abspath(path) + "#selftest"],
                       capture_output=True, text=True, timeout=timeout)
    m = re.search(r'<pre id="qs-selftest"[^>]*>(.*?)</pre>', r.stdout, re.S)
    console = [l for l in r.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    assert m and m.group(1).strip(), f"the page wrote no self-test report; console: {console}\n{r.stderr[-2000:]}"
    text = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return json.loads(text), console


def screenshot(path, out, size=(1100, 900), fragment=""):
    subprocess.run([CHROMIUM, *FLAGS, f"--screenshot={out}", f"--window-size={size[0]},{size[1]}",
                    "file://" + os.path.abspath(path) + fragment], capture_output=True, timeout=120, check=True)
    return read_png(out)


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG (what Chromium
    writes), decoded with zlib alone."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big"), body[8], body[9]
            assert depth == 8 and color in (2, 6), f"PNG of depth {depth}, color type {color}"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        prev = line
    return width, height, rows


@pytest.fixture
def tmp(tmp_path):
    return tmp_path
