"""rollout's contacts (forces=True) are `quasistep run --forces`; its per-world parameters
are the scene with those values; quasistep.render draws the page `run --html` writes."""
import json
import os
import re

import numpy as np
import pytest

import quasistep
from conftest import example, number, read_csv, run_cli

S = quasistep.Status


def page_data(text):
    """The JSON a replay page carries (its <script id="qs-data">)."""
    m = re.search(r'<script id="qs-data" type="application/json">(.*?)</script>', text, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


@pytest.mark.parametrize("name", ["anitescu_grasp", "halm_posa_push", "pang_tedrake_grasp",
                                  "pang_tedrake_gripper", "ecp_box_tip"])
def test_forces_are_the_cli_run_forces_columns(tmp, name):
    scene = quasistep.load(example(name))
    path = tmp / "forces.csv"
    run_cli("run", example(name), "--forces", path)
    header, rows = read_csv(path)
    states, status, f = quasistep.rollout(scene, forces=True)
    plain, _ = quasistep.rollout(scene)
    np.testing.assert_array_equal(states, plain)  # stepped one by one: the same states
    assert status.tolist() == [S.solved]
    impulse = header[5].replace("normal_impulse", "")  # "" or "_times_k"
    assert header[4:7] == ["phi", "normal_impulse" + impulse, "tangent_impulse" + impulse]
    assert sorted(f) == sorted(["phi", "normal_impulse" + impulse, "tangent_impulse" + impulse, "active", "pair"])
    assert f["phi"].shape == (1, scene.steps, len(f["pair"]))
    assert int(f["active"].sum()) == len(rows)  # one CSV row per active slot and step
    for r in rows:
        step, slot = int(r[0]) - 1, int(r[2])
        assert f["active"][0, step, slot] and f["pair"][slot] == r[3]
        assert f["phi"][0, step, slot] == number(r[4])
        assert f["normal_impulse" + impulse][0, step, slot] == number(r[5])
        assert f["tangent_impulse" + impulse][0, step, slot] == number(r[6])
    assert np.isnan(f["phi"][~f["active"]]).all()
    if f["pair"]:  # (Xie & Chakraborty's body on a plane has a patch, no contact slots)
        assert np.nanmax(f["normal_impulse" + impulse]) > 0


def test_forces_of_a_failed_world_end_at_its_failed_step():
    gripper = quasistep.load(example("pang_tedrake_gripper"))
    c = np.zeros((2, 40, 3))
    c[1, :, 0], c[1, :, 1] = 0.2, -0.2  # rigid fingers squeeze: infeasible at step 11
    states, status, failed, f = quasistep.rollout(gripper, commands=c, return_failed_step=True, forces=True)
    assert failed.tolist() == [-1, 11] and status[1] == S.infeasible
    assert f["active"][1, 10].any()  # the failed step's gaps, as the CSV's last rows
    assert np.isnan(f["normal_impulse"][1, 10]).all()  # no impulses: not solved
    assert not f["active"][1, 11:].any()  # not run
    plain, _ = quasistep.rollout(gripper, commands=c)
    np.testing.assert_array_equal(states, plain)


def test_parameters_per_world_are_the_scene_with_those_values():
    with open(example("anitescu_grasp")) as fh:
        doc = json.load(fh)
    masses = np.array([0.4, 1.0, 2.5])
    states, status = quasistep.rollout(example("anitescu_grasp"), params={"bodies.cylinder.mass": masses})
    assert (status == S.solved).all() and states.shape[0] == 3
    for i, mass in enumerate(masses):
        doc["bodies"][1]["mass"] = float(mass)
        one, _ = quasistep.rollout(quasistep.load(json.dumps(doc)))
        np.testing.assert_array_equal(states[i], one[0])
    assert not np.array_equal(states[0], states[2])
    # One number is every world's; with commands for 4 worlds.
    scene = quasistep.load(example("anitescu_grasp"))
    c = np.tile(np.array([0.1, -0.1, 0.0]), (4, 20, 1))
    a, _ = quasistep.rollout(scene, commands=c, params={"pairs.left_finger/cylinder.friction": 0.2})
    b, _ = quasistep.rollout(scene, commands=c, params={"pairs.left_finger/cylinder.friction": np.full(4, 0.2)})
    np.testing.assert_array_equal(a, b)
    # One start is every world's, as for per-world commands.
    one, _ = quasistep.rollout(scene, q0=scene.state(), params={"bodies.cylinder.mass": masses})
    np.testing.assert_array_equal(one, states)
    # forces=True steps the same worlds with the same values.
    f_states, _, _ = quasistep.rollout(scene, params={"bodies.cylinder.mass": masses}, forces=True)
    np.testing.assert_array_equal(f_states, states)


@pytest.mark.parametrize("params, message", [
    ({"bodies.nothing.mass": 1.0}, 'parameter "bodies.nothing.mass": no body named "nothing"'),
    ({"bodies.cylinder.pose.x": 0.01}, "sets a world's start"),
    ({"bodies.cylinder.mass": [1.0, -1.0]}, 'world 1, parameter "bodies.cylinder.mass": a free body\'s mass must be > 0'),
    ({"bodies.cylinder.mass": [1.0, float("nan")]}, "not a finite number"),
    ({"bodies.cylinder.mass": np.ones((2, 2))}, "expected one value per world"),
    ({"bodies.cylinder.mass": "heavy"}, "must be an array of numbers"),
])
def test_bad_parameters_raise_one_line_value_errors(params, message):
    with pytest.raises(ValueError) as e:
        quasistep.rollout(example("anitescu_grasp"), params=params)
    assert message in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ValueError, match="one value per world"):
        quasistep.rollout(example("anitescu_grasp"), q0=np.zeros((3, 5)), params={"bodies.cylinder.mass": [1, 2]})
    with pytest.raises(ValueError, match="params must be a dict"):
        quasistep.rollout(example("anitescu_grasp"), params=[1.0])


def test_render_draws_the_page_run_html_writes(tmp):
    name = "anitescu_grasp"
    run_cli("run", example(name), "--html", tmp / "cli.html")
    with open(tmp / "cli.html", encoding="utf-8") as fh:
        cli = fh.read()
    scene = quasistep.load(example(name))
    states, _, f = quasistep.rollout(scene, forces=True)
    out = quasistep.render(scene, states, forces=f, path=tmp / "py.html")
    assert out == os.fspath(tmp / "py.html")
    with open(out, encoding="utf-8") as fh:
        page = fh.read()
    assert page_data(page) == page_data(cli)  # every number drawn, bitwise
    assert "frames: quasistep.render" in page
    assert not [p for p in os.listdir(tmp) if ".tmp-" in p]
    # As a str, one world of several, and from a list of States.
    text = quasistep.render(scene, states[0], forces={k: v[0] if k != "pair" else v for k, v in f.items()})
    assert page_data(text) == page_data(cli)
    assert page_data(quasistep.render(scene, states[0], forces=f, world=0)) == page_data(cli)
    s = scene.state()
    rows = [s]
    for _ in range(scene.steps):
        s, _ = scene.step(s)
        rows.append(s)
    assert page_data(quasistep.render(scene, rows))["poses"] == page_data(cli)["poses"]


def test_render_stops_at_a_failed_step_and_refuses_bad_input(tmp):
    gripper = quasistep.load(example("pang_tedrake_gripper"))
    c = np.zeros((2, 40, 3))
    c[1, :, 0], c[1, :, 1] = 0.2, -0.2
    states, status, f = quasistep.rollout(gripper, commands=c, forces=True)
    data = page_data(quasistep.render(gripper, states, forces=f, world=1))
    assert data["frames"] == 11 and "step 11" in data["stopped"]
    assert page_data(quasistep.render(gripper, states[1], forces=f, world=1)) == data  # one world's rows
    with pytest.raises(ValueError, match="forces hold 2 worlds"):
        quasistep.render(gripper, states[1], forces=f, world=5)
    with pytest.raises(ValueError, match="pass world=i"):
        quasistep.render(gripper, states)
    with pytest.raises(ValueError, match="expected"):
        quasistep.render(gripper, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="mass"):
        quasistep.render(gripper, states, world=0, params={"bodies.cylinder.mass": -1.0})
    missing = tmp / "no-such-folder" / "page.html"
    with pytest.raises(OSError):
        quasistep.render(gripper, states, world=0, path=missing)
    assert not os.path.exists(os.path.dirname(missing))
