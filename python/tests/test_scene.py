"""quasistep.load, Scene's properties, State values, and errors on bad scenes."""
import json
import pathlib

import numpy as np
import pytest

import quasistep
from conftest import example

PUSH = json.dumps({
    "format": 1,
    "world": {"type": "tabletop"},
    "model": {"formulation": "halm_posa_lcp", "B": 1, "c": 0.01, "A": [[1, 0, 0], [0, 1, 0], [0, 0, 900]]},
    "step": {"h": 0.025, "steps": 40},
    "bodies": [
        {"name": "puck", "kind": "free", "mass": 0.1, "shapes": [{"type": "disk", "radius": 0.05}]},
        {"name": "carriage", "kind": "linked"},
        {"name": "finger", "kind": "linked", "shapes": [{"type": "point"}]},
    ],
    "joints": [
        {"name": "finger_x", "type": "prismatic", "parent": "world", "child": "carriage", "axis": [1, 0], "position": -0.1},
        {"name": "finger_y", "type": "prismatic", "parent": "carriage", "child": "finger", "axis": [0, 1], "position": 0},
    ],
    "contacts": {"friction": 0.3, "pairs": [{"bodies": ["finger", "puck"]}]},
})


def test_load_a_file_and_read_its_properties():
    s = quasistep.load(example("anitescu_grasp"))
    assert s.nq == 5
    assert s.dof_names == ["cylinder.x", "cylinder.y", "x_l", "x_r", "y_g"]
    assert s.command_names == ["x_l", "x_r", "y_g"]
    assert s.h == 0.01 and s.steps == 80
    assert s.formulation == "anitescu_qp"
    assert s.description  # the example says what it shows
    q = s.initial_state()
    assert q.dtype == np.float64 and q.shape == (5,)
    assert q.tolist() == [0.0, 0.05, -0.07, 0.07, 0.01]
    assert "anitescu_qp" in repr(s)


def test_dof_names_are_the_trajectory_csv_columns(tmp):
    from conftest import run_cli, read_csv
    out = tmp / "t.csv"
    run_cli("run", example("halm_posa_push"), "--steps", "1", "--out", out)
    header, _ = read_csv(out)
    assert header[2:] == quasistep.load(example("halm_posa_push")).dof_names


def test_load_a_json_string_and_a_path_object():
    s = quasistep.load(PUSH)
    assert s.command_names == ["finger_x", "finger_y"] and s.source == "<string>"
    assert quasistep.load(pathlib.Path(example("halm_posa_push"))).nq == 7
    assert quasistep.load("  \n" + PUSH).nq == s.nq  # leading blanks: still a document


def test_bad_scenes_raise_value_error_with_the_field_and_cause():
    bad = json.loads(PUSH)
    bad["bodies"][0]["mass"] = -1
    with pytest.raises(ValueError, match=r"mass"):
        quasistep.load(json.dumps(bad))
    bad = json.loads(PUSH)
    bad["step"]["hh"] = 1
    with pytest.raises(ValueError, match=r"hh"):
        quasistep.load(json.dumps(bad))
    with pytest.raises(ValueError, match=r"no_such_file\.json"):
        quasistep.load("no_such_file.json")
    with pytest.raises(ValueError):
        quasistep.load("{ not json")
    with pytest.raises(TypeError):
        quasistep.load(42)


def test_messages_are_one_line():
    for text in ["{", '{"format": 2}', PUSH.replace('"mass": 0.1', '"mass": "heavy"')]:
        with pytest.raises(ValueError) as e:
            quasistep.load(text)
        assert "\n" not in str(e.value) and str(e.value)


def test_state_is_a_value():
    import copy
    import pickle
    s = quasistep.load(example("anitescu_grasp"))
    a = s.state()
    assert a.step == 0 and a.t == 0.0 and a.q.tolist() == s.initial_state().tolist()
    assert a.memory.size > 0  # the Anitescu step carries its impedance reference
    b, _ = s.step(a, [0.1, -0.1, 0.0])
    assert a.step == 0 and b.step == 1 and a != b  # the given State is not changed
    for c in (b.copy(), copy.copy(b), copy.deepcopy(b), pickle.loads(pickle.dumps(b))):
        assert c == b and c is not b
        assert s.step(c)[0] == s.step(b)[0]  # the memory travels with it
    q = b.q
    q[0] = 5.0  # q is a copy
    assert b.q[0] != 5.0
    with pytest.raises(AttributeError):
        b.q = np.zeros(5)  # a State at another q is Scene.state(q)
    assert np.asarray(b).tolist() == b.q.tolist()
    assert np.asarray(b, dtype=np.float32).dtype == np.float32
    c = s.state([0.0, 0.05, -0.06, 0.06, 0.02])  # memory started at that q
    assert c.q[2] == -0.06 and c.memory[0] == -0.06
    with pytest.raises(ValueError, match="nq = 5"):
        s.state([1.0, 2.0])
    with pytest.raises(ValueError, match=r"state\[1\] \(cylinder.y\) is not finite"):
        s.state([0.0, np.inf, 0, 0, 0])


def test_load_edge_cases():
    assert quasistep.load("\ufeff" + PUSH).nq == 5  # a BOM
    assert quasistep.load("\f\n" + PUSH).nq == 5
    for bad, message in [("", "empty path"), ("a\0b", "NUL"), ("   ", "empty path")]:
        with pytest.raises(ValueError, match=message):
            quasistep.load(bad)
    with pytest.raises(TypeError):
        quasistep.load(PUSH.encode())


def test_version_and_status_names():
    assert quasistep.__version__.count(".") == 2
    assert quasistep.Status.solved == 0 and quasistep.Status(7) is quasistep.Status.not_run
