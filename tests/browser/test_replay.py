"""`quasistep render` and `run --html` pages in a real browser (headless Chromium): every
example draws without a JavaScript error; the slider moves the bodies where the trajectory
says; every impulse of the forces file is drawn; the page reads plainly (the axes a grey
corner glyph, gravity and the bodies' names clear of the bodies, colours by body kind, the
T-bar drawn as a T, a plan's goal over the bodies); long replays stay small and fast; a
screenshot is not blank; and bad input is refused with one line."""
import glob
import json
import math
import os
import re

import pytest

from conftest import ROOT, cli, example, page_data, read_csv, screenshot, selftest

EXAMPLES = sorted(os.path.basename(f)[:-5] for f in glob.glob(os.path.join(ROOT, "examples", "*.json")))


def pose_of(transform):
    m = re.fullmatch(r"translate\(([^ ]+) ([^)]+)\) rotate\(([^)]+)\)", transform)
    assert m, transform
    return float(m.group(1)), float(m.group(2)), math.radians(float(m.group(3)))


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_renders_as_a_preview(tmp, name):
    page = tmp / f"{name}.html"
    r = cli("render", example(name), "--out", page)
    assert "1 frame" in r.stderr
    report, console = selftest(page)
    assert report["errors"] == [] and not [l for l in console if "Uncaught" in l], console
    assert report["frames"] == 1
    assert report["first"], "no body was drawn"
    assert_the_page_reads_plainly(report)


@pytest.mark.parametrize("name, body", [("anitescu_grasp", "cylinder"), ("halm_posa_push", "disk"),
                                        ("halm_posa_peg", "peg"), ("ecp_desk", "desk")])
def test_replays_move_the_bodies_as_the_trajectory_says(tmp, name, body):
    traj, forces, page = tmp / "t.csv", tmp / "f.csv", tmp / "r.html"
    cli("run", example(name), "--out", traj, "--forces", forces, "--html", page)
    report, console = selftest(page)
    assert report["errors"] == [], report["errors"]
    assert_the_page_reads_plainly(report)
    header, rows = read_csv(traj)
    assert report["frames"] == len(rows)
    assert report["first_label"].startswith("step 0 / ")
    assert report["last_label"].startswith(f"step {len(rows) - 1} / {len(rows) - 1}")
    if name == "ecp_desk":
        # From above, the hull's outline moves as the body's x, y do.
        assert report["first"][body] != report["last"][body]
        return
    x, y, theta = header.index(f"{body}.x"), header.index(f"{body}.y"), header.index(f"{body}.theta") \
        if f"{body}.theta" in header else None
    for key, row in (("first", rows[0]), ("last", rows[-1])):
        px, py, pt = pose_of(report[key][body])
        assert px == pytest.approx(float(row[x]), abs=1e-6) and py == pytest.approx(float(row[y]), abs=1e-6)
        if theta is not None:
            assert pt == pytest.approx(float(row[theta]), abs=1e-5)
    assert report["first"][body] != report["last"][body]
    # Every impulse of the forces file is drawn, once, in its step's frame.
    _, force_rows = read_csv(forces)
    assert report["contact_marks"] == sum(1 for r in force_rows if r[5] != "")


ORANGE, BROWN = "rgb(242, 185, 124)", "rgb(165, 96, 29)"  # linked bodies: fill, outline
COLOURS = {"fixed": ("rgb(185, 185, 185)", "rgb(102, 102, 102)"), "free": ("rgb(143, 184, 232)", "rgb(45, 95, 154)"),
           "linked": (ORANGE, BROWN)}


def assert_the_page_reads_plainly(report):
    """What a replay's self-test says of its look (over up to 60 of its frames): the world's
    axes are a grey corner glyph, not arrows at the origin; the gravity mark's box meets no
    body's drawn box; every body with a shape has its name, clear of its own shape; each
    shape has its body kind's colours (docs/cli.md); descriptions wrap between words."""
    assert report["axis_arrows"] == 0
    assert report["axes_glyphs"] in (["xy"], ["xy", "xz"])
    assert report["frames_checked"] >= min(report["frames"], 50)
    if report["world"] != "tabletop":
        assert report["gravity_text"].startswith("g = ")
        assert report["gravity_overlaps"] == 0
    assert sorted(report["labels"]) == sorted(report["bodies_with_shapes"])
    assert report["label_overlaps"] == 0
    for s in report["shapes"]:
        fill, stroke = COLOURS[s["kind"]]
        if s["element"] == "path.capsule-core":
            assert s["stroke"] == fill, s
        elif s["element"] == "path.capsule-edge":
            assert s["stroke"] == stroke, s
        else:
            assert (s["fill"], s["stroke"]) == (fill, stroke), s
    assert report["meta_wrap"]["word_break"] != "break-all" and report["meta_wrap"]["overflow_wrap"] == "anywhere"


def test_every_robot_link_is_orange(tmp):
    """Capsule and segment fingers have their body kind's colours as every other shape does:
    linked bodies (robot links) orange, fixed grey, free blue."""
    scene = tmp / "capsules.json"
    scene.write_text(json.dumps({
        "format": 1, "world": {"type": "vertical", "gravity": 9.81}, "model": {"formulation": "trinkle_lcp"},
        "step": {"h": 0.01, "steps": 5},
        "bodies": [{"name": "ground", "kind": "fixed", "shapes": [{"type": "half_plane", "normal": [0, 1]}]},
                   {"name": "shelf", "kind": "fixed", "shapes": [{"type": "segment", "a": [-0.3, 0], "b": [-0.15, 0]}]},
                   {"name": "rod", "kind": "free", "mass": 1, "pose": [0, 0.02, 0],
                    "shapes": [{"type": "capsule", "a": [-0.05, 0], "b": [0.05, 0], "radius": 0.02}]},
                   {"name": "carriage", "kind": "linked"},
                   {"name": "left_finger", "kind": "linked", "shapes": [{"type": "capsule", "a": [0, 0], "b": [0, 0.1], "radius": 0.01}]},
                   {"name": "right_finger", "kind": "linked", "shapes": [{"type": "segment", "a": [0, 0], "b": [0, 0.1]}]},
                   {"name": "tip", "kind": "linked", "shapes": [{"type": "disk", "radius": 0.01}]}],
        "joints": [{"name": "x_l", "type": "prismatic", "parent": "carriage", "child": "left_finger", "axis": [1, 0], "position": -0.1},
                   {"name": "x_r", "type": "prismatic", "parent": "carriage", "child": "right_finger", "axis": [1, 0], "position": 0.1},
                   {"name": "x_t", "type": "prismatic", "parent": "carriage", "child": "tip", "axis": [1, 0], "position": 0.2},
                   {"name": "y_g", "type": "prismatic", "parent": "world", "child": "carriage", "axis": [0, 1], "position": 0.05}],
        "contacts": {"friction": 0.5, "pairs": [{"bodies": ["ground", "rod"]}, {"bodies": ["left_finger", "rod"]}]}}))
    page = tmp / "capsules.html"
    cli("render", scene, "--out", page)
    report, _ = selftest(page)
    assert report["errors"] == []
    assert_the_page_reads_plainly(report)
    linked = [s for s in report["shapes"] if s["kind"] == "linked"]
    assert {s["body"] for s in linked} == {"left_finger", "right_finger", "tip"}
    assert {s["element"] for s in linked} == {"path.capsule-edge", "path.capsule-core", "circle"}
    assert {s["kind"] for s in report["shapes"]} == {"fixed", "free", "linked"}
    assert "carriage" not in report["labels"]  # no shape, nothing drawn to name


@pytest.mark.parametrize("name", ["ecp_tbar", "ecp_tbar_rocking"])
def test_the_t_bar_is_drawn_as_a_t(tmp, name):
    """The T-bar's listed corners are two boxes: from above it is drawn as the T (its 8
    corners, two of them reflex, where the stem meets the crossbar), not as the convex hull
    the stepper uses (which the page outlines dashed)."""
    page = tmp / "tbar.html"
    cli("run", example(name), "--steps", "60", "--html", page)
    report, _ = selftest(page)
    assert report["errors"] == []
    assert_the_page_reads_plainly(report)
    assert report["prism"] is True
    xy = report["outline_top"]
    corners = {(round(x, 6), round(y, 6)) for x, y in zip(xy[0::2], xy[1::2])}
    assert len(xy) == 16 and corners == {(-0.203333, -0.03), (-0.203333, 0.03), (0.036667, 0.03), (0.036667, 0.15),
                                         (0.096667, 0.15), (0.096667, -0.15), (0.036667, -0.15), (0.036667, -0.03)}
    pts = list(zip(xy[0::2], xy[1::2]))
    turns = [(b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0])
             for a, b, c in zip(pts, pts[1:] + pts[:1], pts[2:] + pts[:2])]
    assert sum(t > 0 for t in turns) == 6 and sum(t < 0 for t in turns) == 2 or \
        sum(t < 0 for t in turns) == 6 and sum(t > 0 for t in turns) == 2, turns


@pytest.mark.parametrize("name", EXAMPLES)
def test_render_reads_what_run_writes(tmp, name):
    """Every example's own trajectory and forces files (subnormal impulses included) render."""
    traj, forces, page = tmp / "t.csv", tmp / "f.csv", tmp / "r.html"
    cli("run", example(name), "--out", traj, "--forces", forces, "--steps", "60")
    r = cli("render", example(name), "--traj", traj, "--forces", forces, "--out", page)
    assert "61 frames" in r.stderr


def test_render_from_files_draws_what_run_html_draws(tmp):
    traj, forces, a, b = tmp / "t.csv", tmp / "f.csv", tmp / "a.html", tmp / "b.html"
    cli("run", example("halm_posa_peg"), "--out", traj, "--forces", forces, "--html", a)
    cli("render", example("halm_posa_peg"), "--traj", traj, "--forces", forces, "--out", b)
    da, db = page_data(a), page_data(b)
    for key in ("frames", "poses", "contacts", "penetrations", "impulse_scale", "bounds", "t0", "h"):
        assert da[key] == db[key], key
    assert da["penetrations"]["data"], "the peg's run overlaps a little: gaps below zero are marked"


def test_a_long_replay_is_small_and_draws_fast(tmp):
    page = tmp / "long.html"
    cli("run", example("anitescu_grasp"), "--steps", "10000", "--html", page)
    assert os.path.getsize(page) < 2_000_000
    report, _ = selftest(page)
    assert report["frames"] == 10001 and report["errors"] == []
    assert report["ms_per_frame"] < 16, report["ms_per_frame"]


def test_a_stopped_run_says_where(tmp):
    page = tmp / "stop.html"
    r = cli("run", example("pang_tedrake_gripper"), "--commands", os.path.join(ROOT, "tests", "browser", "squeeze.csv"),
            "--html", page, check=False)
    assert r.returncode == 2
    data = page_data(page)
    assert data["stopped"].startswith("step 11 ") and data["frames"] == 11
    report, _ = selftest(page)
    assert report["errors"] == []
    # The same run's files render too (the failed step's forces rows carry no impulse).
    traj, forces, again = tmp / "t.csv", tmp / "f.csv", tmp / "again.html"
    cli("run", example("pang_tedrake_gripper"), "--commands", os.path.join(ROOT, "tests", "browser", "squeeze.csv"),
        "--out", traj, "--forces", forces, check=False)
    cli("render", example("pang_tedrake_gripper"), "--traj", traj, "--forces", forces, "--out", again)
    assert page_data(again)["contacts"] == data["contacts"]


def test_text_from_files_cannot_break_the_page(tmp):
    traj, page = tmp / "t.csv", tmp / "r.html"
    cli("run", example("anitescu_grasp"), "--out", traj, "--steps", "5")
    with open(traj, "a") as f:
        f.write("# stopped: <!--<script> </script> \"quoted\" \u00e9\n")
    cli("render", example("anitescu_grasp"), "--traj", traj, "--out", page)
    assert "<!--<script>" not in open(page).read()
    report, _ = selftest(page)
    assert report["errors"] == [] and report["frames"] == 6


def test_a_posed_half_plane_is_drawn_where_it_is(tmp):
    scene = tmp / "tilted.json"
    scene.write_text(json.dumps({
        "format": 1, "world": {"type": "vertical"}, "model": {"formulation": "trinkle_lcp"},
        "step": {"h": 0.01, "steps": 5},
        "bodies": [{"name": "ground", "kind": "fixed", "pose": [0.1, -0.05, 0.3], "shapes": [{"type": "half_plane", "normal": [0, 1]}]},
                   {"name": "box", "kind": "free", "mass": 1, "pose": [0, 0.2, 0],
                    "shapes": [{"type": "box", "size": [0.1, 0.1]}]}],
        "contacts": {"friction": 0.5, "pairs": [{"bodies": ["ground", "box"]}]}}))
    page = tmp / "tilted.html"
    cli("render", scene, "--out", page)
    report, _ = selftest(page)
    assert report["errors"] == []
    x, y, theta = pose_of(report["halfplanes"][0])
    assert (x, y) == (0.1, -0.05) and theta == pytest.approx(0.3)


def test_a_run_too_long_to_replay_is_refused_before_it_runs(tmp):
    r = cli("run", example("anitescu_grasp"), "--steps", "100000000", "--html", tmp / "x.html", check=False)
    assert r.returncode == 1 and "more than one replay draws" in r.stderr
    assert not (tmp / "x.html").exists()


def test_files_of_another_scene_are_refused(tmp):
    traj, page = tmp / "t.csv", tmp / "r.html"
    cli("run", example("mc_grasp"), "--out", traj, "--steps", "3")
    r = cli("render", example("pang_tedrake_grasp"), "--traj", traj, "--out", page, check=False)
    assert r.returncode == 1 and "written for another scene" in r.stderr
    assert not page.exists()


def test_the_page_is_not_blank(tmp):
    page, png = tmp / "grasp.html", tmp / "grasp.png"
    cli("run", example("anitescu_grasp"), "--forces", tmp / "f.csv", "--html", page)
    width, height, rows = screenshot(page, png, fragment="#frame=45")
    colours = {}
    for row in rows:
        for p in row:
            colours[p] = colours.get(p, 0) + 1
    background = max(colours, key=colours.get)
    drawn = sum(n for c, n in colours.items() if c != background)
    assert drawn > 0.05 * width * height, f"only {drawn} of {width * height} pixels differ from the background"
    # The cylinder's blue and the impulse arrows' orange are on the page.
    assert any(abs(c[0] - 0x8f) < 12 and abs(c[1] - 0xb8) < 12 and abs(c[2] - 0xe8) < 12 for c in colours)
    assert any(abs(c[0] - 0xd3) < 16 and abs(c[1] - 0x54) < 16 and c[2] < 40 for c in colours)


@pytest.mark.parametrize("args, message", [
    (["render", "examples/anitescu_grasp.json", "--traj", "TRAJ_OF_PUSH", "--out", "OUT"],
     r"column 3 must be the scene's DOF cylinder.x"),
    (["render", "examples/anitescu_grasp.json", "--forces", "F", "--out", "OUT"], r"--forces needs --traj"),
    (["render", "examples/anitescu_grasp.json", "--traj", "missing.csv", "--out", "OUT"], r"missing.csv: cannot open"),
    (["render", "examples/anitescu_grasp.json", "--traj", "BROKEN", "--out", "OUT"], r"line 4: x_l \"abc\" is not a finite number"),
    (["render", "examples/anitescu_grasp.json", "--traj", "TRAJ", "--forces", "TRAJ", "--out", "OUT"],
     r"the header must be step,t,slot"),
    (["render", "examples/anitescu_grasp.json"], r"--out is required"),
])
def test_bad_input_is_refused_with_one_line(tmp, args, message):
    cli("run", example("anitescu_grasp"), "--out", tmp / "traj.csv", "--steps", "5")
    cli("run", example("halm_posa_push"), "--out", tmp / "push.csv", "--steps", "5")
    # Without its provenance line (a hand-made file), so that its columns are what is checked.
    push = [l for l in open(tmp / "push.csv").read().splitlines() if not l.startswith("#")]
    (tmp / "push.csv").write_text("\n".join(push) + "\n")
    lines = open(tmp / "traj.csv").read().splitlines()
    lines[3] = lines[3].replace(lines[3].split(",")[4], "abc", 1)
    (tmp / "broken.csv").write_text("\n".join(lines) + "\n")
    subst = {"TRAJ_OF_PUSH": tmp / "push.csv", "OUT": tmp / "out.html", "F": tmp / "traj.csv",
             "TRAJ": tmp / "traj.csv", "BROKEN": tmp / "broken.csv"}
    r = cli(*[subst.get(a, a) for a in args], check=False)
    assert r.returncode != 0
    assert re.search(message, r.stderr), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not os.path.exists(tmp / "out.html")


def test_strokes_are_pixels_not_metres(tmp):
    """Every stroke width is set in the view's units (a pixel is a few tenths of a mm):
    a point finger is a small dot, not a ring a metre thick."""
    page, png = tmp / "push.html", tmp / "push.png"
    cli("run", example("halm_posa_push"), "--html", page)
    width, height, rows = screenshot(page, png, size=(1000, 800), fragment="#frame=200")
    brown = sum(1 for row in rows for c in row if abs(c[0] - 0xa5) < 20 and abs(c[1] - 0x60) < 20 and abs(c[2] - 0x1d) < 20)
    assert 0 < brown < 0.002 * width * height, brown


def test_a_plan_shows_its_regions_and_the_goal_bodys_path(tmp):
    # examples/plan_push.json: one keep-out box at its size, with its 5 cm margin dashed around
    # it, and the goal region, drawn over the bodies (a puck that reaches it would hide it);
    # the puck's path has a point per frame. A scene without a plan section has none.
    commands, page = tmp / "c.csv", tmp / "r.html"
    with open(commands, "w") as f:
        f.write("step,pusher_x,pusher_y\n" + "".join(f"{l},0.1,0\n" for l in range(1, 41)))
    cli("run", example("plan_push"), "--commands", commands, "--html", page)
    report, console = selftest(page)
    assert report["errors"] == [], report["errors"]
    regions = {r["kind"]: r for r in report["regions"]}
    assert set(regions) == {"keep_out", "goal"} and len(report["regions"]) == 2
    assert regions["keep_out"]["body"] == "puck" and regions["goal"]["body"] == "puck"
    assert regions["keep_out"]["box"] == pytest.approx([0.12, -0.04, 0.06, 0.29])
    assert regions["keep_out"]["margin_box"] == pytest.approx([0.07, -0.09, 0.16, 0.39])
    assert regions["goal"]["box"] == pytest.approx([0.28, 0.08, 0.04, 0.04]) and regions["goal"]["margin_box"] is None
    assert report["goal_over_bodies"] is True
    assert_the_page_reads_plainly(report)
    assert report["trail_points"] == 41
    plain = tmp / "plain.html"
    cli("render", example("mpc_push"), "--out", plain)
    report, _ = selftest(plain)
    assert report["regions"] == [] and report["trail_points"] == 0 and report["goal_over_bodies"] is None
