"""The Monte Carlo report (`quasistep mc --report`, `mc-merge --report`) in headless
Chromium: the scene's picture and replays of samples draw without a JavaScript error and
end where the study's samples ended; every plot has its marks (one point per sample, a
line per replay, the criterion, a bar and an interval per bin, a path per kept sample) and
axes with ticks; the scatter's axes are chosen with --report-axes; merged shards replay
samples only with --scene."""
import json
import re

import pytest

from conftest import cli, example, read_csv, selftest


def rows_of(csv):
    header, rows = read_csv(csv)
    return header, [dict(zip(header, r)) for r in rows]


def expected_replays(rows, per_outcome=2):
    seen = {}
    for r in rows:
        seen[r["outcome"]] = seen.get(r["outcome"], 0) + 1
    return sum(min(per_outcome, n) for n in seen.values())


@pytest.mark.parametrize("study, object_body, lifted", [("mc_grasp", "cylinder", True), ("mc_push", "puck", False)])
def test_the_report_draws_the_study(tmp, study, object_body, lifted):
    csv, page = tmp / "s.csv", tmp / "r.html"
    cli("mc", example(study), "--samples", "600", "--seed", "4", "--out", csv, "--report", page)
    header, rows = rows_of(csv)
    report, _ = selftest(page)
    assert report["errors"] == []
    # The success rate with its interval is on the first screen, before the provenance.
    assert report["rate_before_provenance"] is True
    assert 0 < report["rate_bottom"] <= min(600, report["viewport_height"]), report
    n = expected_replays(rows)
    assert report["replays"] == 1 + n  # the scene's picture, then the samples
    assert report["replay_frames"][0] == 1
    params = [h for h in header if h not in ("sample", "outcome", "x", "y", "theta", "failed_step", "status")]
    assert report["scatter_points"] == 600
    assert report["series"] == n
    assert report["marks"] == (2 if lifted else 1)  # threshold and hold time, or the goal band
    assert report["bin_bars"] == 10 * len(params)
    assert 0 < report["bin_intervals"] <= 10 * len(params)
    assert report["paths"] == 8
    assert report["plots_without_ticks"] == 0
    if not lifted:
        assert report["goal_marks"] == 2  # over time and in the plane
    # Each replayed sample ends where the study's sample ended (float32 in the page).
    html = open(page).read()
    samples = [int(s) for s in re.findall(r'data-replay="(\d+)"', html)]
    assert len(samples) == n
    by_sample = {int(r["sample"]): r for r in rows}
    for sample, rep in zip(samples, report["replay_reports"][1:]):
        x, y = re.fullmatch(r"translate\(([^ ]+) ([^)]+)\) rotate\(([^)]+)\)", rep["last"][object_body]).groups()[:2]
        assert float(x) == pytest.approx(float(by_sample[sample]["x"]), abs=2e-6)
        assert float(y) == pytest.approx(float(by_sample[sample]["y"]), abs=2e-6)


def test_report_axes_choose_the_scatter(tmp):
    page = tmp / "r.html"
    cli("mc", example("mc_grasp"), "--samples", "50", "--report", page, "--report-axes",
        "pairs.right_finger/cylinder.friction,1")
    html = open(page).read()
    assert "Outcome by <code>pairs.right_finger/cylinder.friction</code> and <code>bodies.cylinder.pose.x</code>" in html
    for args, message in [(["--report-axes", "1,1"], "names one parameter twice"),
                          (["--report-axes", "mass,2"], "mass is not an uncertain parameter"),
                          (["--report-axes", "1"], "expected A,B")]:
        r = cli("mc", example("mc_grasp"), "--samples", "50", "--report", tmp / "x.html", *args, check=False)
        assert r.returncode == 1 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert not (tmp / "x.html").exists()
    r = cli("mc", example("mc_grasp"), "--samples", "50", "--report-axes", "1,2", check=False)
    assert r.returncode == 1 and "needs --report" in r.stderr


def test_merged_shards_replay_samples_only_with_the_scene(tmp):
    a, b = tmp / "a.csv", tmp / "b.csv"
    cli("mc", example("mc_push"), "--samples", "300", "--seed", "2", "--shard", "0/2", "--out", a)
    cli("mc", example("mc_push"), "--samples", "300", "--seed", "2", "--shard", "1/2", "--out", b)
    bare, full = tmp / "bare.html", tmp / "full.html"
    cli("mc-merge", a, b, "--report", bare)
    report, _ = selftest(bare)
    assert report["errors"] == [] and report["replays"] == 0 and report["scatter_points"] == 300
    assert "No replays" in open(bare).read()
    cli("mc-merge", a, b, "--report", full, "--scene", example("mc_push"))
    report, _ = selftest(full)
    assert report["errors"] == [] and report["replays"] > 1 and report["series"] == report["replays"] - 1
    r = cli("mc-merge", a, b, "--report", tmp / "x.html", "--scene", example("mc_grasp"), check=False)
    assert r.returncode == 1 and "is not the study's scene" in r.stderr and r.stdout == ""
    assert not (tmp / "x.html").exists()
    r = cli("mc-merge", a, b, "--report", tmp / "x.html", "--report-axes", "1,9", check=False)
    assert r.returncode == 1 and "not an uncertain parameter" in r.stderr and r.stdout == ""


def test_replays_draw_each_samples_own_sizes(tmp):
    """A study that shrinks the cylinder (scale 0.8 to 1, about its centre: it never
    overlaps the table or the fingers): each replay draws the sample's own cylinder, so no
    contact is marked as a penetration, and the radii drawn are the samples'."""
    study = json.load(open(example("mc_grasp")))
    study["uncertainty"]["parameters"].append(
        {"parameter": "bodies.cylinder.scale", "distribution": "uniform", "low": 0.8, "high": 1.0})
    scene = tmp / "scaled.json"
    scene.write_text(json.dumps(study))
    page = tmp / "r.html"
    cli("mc", scene, "--samples", "200", "--seed", "3", "--report", page)
    report, _ = selftest(page)
    assert report["errors"] == [] and report["replays"] > 2
    assert [r["penetration_marks"] for r in report["replay_reports"]] == [0] * report["replays"]
    html = open(page).read()
    data = [json.loads(d) for d in re.findall(r'class="qs-replay-data">(.*?)</script>', html, re.S)]
    radii = [next(s["radius"] for b in d["bodies"] if b["name"] == "cylinder" for s in b["shapes"]) for d in data]
    assert radii[0] == 0.05  # the scene's picture
    assert all(0.04 <= r < 0.05 for r in radii[1:]) and len(set(radii[1:])) == len(radii) - 1
