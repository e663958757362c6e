#!/usr/bin/env python3
"""README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md (ctest Docs.Readme).

- The README's picture, docs/images/replay.png (made by `tools/regen-docs --picture`), is
  there, is a PNG of a sensible size, is the file tools/regen-docs writes, and the README
  shows it with a description.
- Every link to a section (`#anchor`, `PAGE.md#anchor`) in these pages names a heading that
  exists, as GitHub makes anchors from headings, and every relative link names a file that
  exists (a page that moves or a heading renamed cannot leave a dead link).

Reads files only: no build needed.

usage: readme_test.py
"""

import os
import re
import struct
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PICTURE = "docs/images/replay.png"
PAGES = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"] + sorted(
    "docs/" + f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))


def read(page):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return f.read()


def anchors(page):
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to
    hyphens (code blocks skipped)."""
    text = re.sub(r"^```.*?^```", "", read(page), flags=re.S | re.M)
    result = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        result.add(slug)
    return result


class Picture(unittest.TestCase):
    def test_the_picture_is_a_png_of_a_sensible_size(self):
        path = os.path.join(ROOT, PICTURE)
        self.assertTrue(os.path.isfile(path), f"{PICTURE} is missing: make it with tools/regen-docs --picture")
        with open(path, "rb") as f:
            head = f.read(24)
        self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n", f"{PICTURE} is not a PNG")
        self.assertEqual(head[12:16], b"IHDR", f"{PICTURE}: no PNG header chunk")
        width, height = struct.unpack(">II", head[16:24])
        self.assertTrue(400 <= width <= 2000 and 300 <= height <= 2000, f"{PICTURE} is {width} x {height}")

    def test_tools_regen_docs_writes_that_file(self):
        tool = read(os.path.join("tools", "regen-docs"))
        m = re.search(r'^PICTURE = os\.path\.join\(([^)]*)\)$', tool, re.M)
        self.assertIsNotNone(m, "tools/regen-docs has no PICTURE")
        parts = re.findall(r'"([^"]+)"', m.group(1))
        self.assertEqual("/".join(parts), PICTURE)

    def test_the_readme_shows_it_with_a_description(self):
        shown = re.findall(r"!\[([^\]]*)\]\(" + re.escape(PICTURE) + r"\)", read("README.md"))
        self.assertEqual(len(shown), 1, f"README.md should show {PICTURE} once as ![description]({PICTURE})")
        self.assertGreater(len(shown[0].split()), 3, "the picture's description (alt text) is too short")


class Links(unittest.TestCase):
    def test_every_section_link_names_a_heading(self):
        for page in PAGES:
            folder = os.path.dirname(page)
            for target, anchor in re.findall(r"\]\(([^)#\s]*\.md)?#([^)\s]+)\)", read(page)):
                with self.subTest(page=page, link=f"{target}#{anchor}"):
                    path = os.path.normpath(os.path.join(folder, target)) if target else page
                    self.assertTrue(os.path.isfile(os.path.join(ROOT, path)), f"{page}: no page {target}")
                    self.assertIn(anchor, anchors(path), f"{page}: no heading for {target}#{anchor}")

    def test_every_relative_link_names_a_file(self):
        for page in PAGES:
            folder = os.path.dirname(page)
            # ](path) with a path-like target: a dot or a slash, no scheme (math such as
            # "[A B](kappa)" is not a link).
            for target in re.findall(r"\]\(([^)#\s:]*[./][^)#\s:]*)(?:#[^)\s]*)?\)", read(page)):
                with self.subTest(page=page, link=target):
                    path = os.path.normpath(os.path.join(ROOT, folder, target))
                    self.assertTrue(os.path.exists(path), f"{page}: {target} does not exist")

    def test_the_readme_links_to_contributing(self):
        self.assertIn("](CONTRIBUTING.md", read("README.md"))


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=1).result.wasSuccessful() else 1)
