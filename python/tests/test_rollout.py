"""rollout's shapes, failures and errors; Scene.step's; the GIL is released while stepping."""
import os
import threading
import time

import numpy as np
import pytest

import quasistep
from conftest import ROOT, example

S = quasistep.Status


@pytest.fixture(scope="module")
def gripper():
    return quasistep.load(example("pang_tedrake_gripper"))


def squeeze(T=40):
    """World 0 holds still; world 1 squeezes the cylinder with rigid fingers at 0.2 m/s
    each, which Trinkle's LCP cannot resolve: it fails at step 11 (infeasible)."""
    c = np.zeros((2, T, 3))
    c[1, :, 0], c[1, :, 1] = 0.2, -0.2
    return c


def test_a_failed_world_stops_and_the_others_go_on(gripper):
    states, status, failed = quasistep.rollout(gripper, commands=squeeze(), return_failed_step=True)
    assert status.dtype == np.int8 and failed.dtype == np.int32
    assert status.tolist() == [S.solved, S.infeasible] and failed.tolist() == [-1, 11]
    assert not np.isnan(states[0]).any()
    assert not np.isnan(states[1, :11]).any() and np.isnan(states[1, 11:]).all()
    last, status2 = quasistep.rollout(gripper, commands=squeeze(), trajectory=False)
    np.testing.assert_array_equal(last[0], states[0, -1])
    assert np.isnan(last[1]).all() and status2.tolist() == status.tolist()
    # The same failure one step at a time: the state is kept, the status says why.
    state = gripper.state()
    for l in range(10):
        state, st = gripper.step(state, squeeze()[1, l])
        assert st == S.solved
    after, st = gripper.step(state, squeeze()[1, 10])
    assert st == S.infeasible and after.step == 10 and after.q.tolist() == state.q.tolist()
    assert "no solution" in gripper.last_step_detail() or gripper.last_step_detail()


def test_shapes_and_defaults(gripper):
    states, status = quasistep.rollout(gripper)
    assert states.shape == (1, 61, 5) and status.shape == (1,)
    states, _ = quasistep.rollout(gripper, steps=7)
    assert states.shape == (1, 8, 5)
    states, _ = quasistep.rollout(gripper, q0=np.tile(gripper.initial_state(), (4, 1)), steps=3, trajectory=False)
    assert states.shape == (4, 5)
    states, _ = quasistep.rollout(gripper, commands=np.zeros((6, 9, 3)))  # N from the commands
    assert states.shape == (6, 10, 5)
    states, _ = quasistep.rollout(gripper, steps=0)
    assert states.shape == (1, 1, 5) and states[0, 0].tolist() == gripper.initial_state().tolist()
    states, _ = quasistep.rollout(example("pang_tedrake_gripper"), steps=2)  # a path is loaded
    assert states.shape == (1, 3, 5)
    # A shorter step size than the scene's, for a planner's own control period.
    a, _ = quasistep.rollout(gripper, steps=10, h=0.005)
    b, _ = quasistep.rollout(gripper, steps=10)
    assert a[0, -1, 4] != b[0, -1, 4]
    # Inputs of any float layout or dtype are converted.
    c = np.zeros((3, 9, 2), dtype=np.float32)[:, :, :1]
    with pytest.raises(ValueError, match="n_commands = 3"):
        quasistep.rollout(gripper, commands=c)
    q = np.asfortranarray(np.tile(gripper.initial_state(), (2, 1)))
    s1, _ = quasistep.rollout(gripper, q0=q, steps=5)
    s2, _ = quasistep.rollout(gripper, q0=np.ascontiguousarray(q), steps=5)
    np.testing.assert_array_equal(s1, s2)


@pytest.mark.parametrize("kwargs, message", [
    (dict(q0=np.zeros((2, 4))), r"q0 has shape \(2, 4\)"),
    (dict(q0=np.zeros((0, 5))), r"N >= 1"),
    (dict(q0=np.zeros((2, 2, 5))), r"q0 has shape"),
    (dict(q0=[[0, 0.05, np.nan, 0.07, 0.01]]), r"q0\[0, 2\] \(x_l\) is not finite"),
    (dict(commands=np.zeros((2, 5, 2))), r"n_commands = 3"),
    (dict(commands=np.zeros(3)), r"commands has shape \(3,\)"),
    (dict(q0=np.zeros((2, 5)), commands=np.zeros((3, 5, 3))), r"3 worlds and q0 2"),
    (dict(commands=np.zeros((5, 3)), steps=4), r"5 steps and steps = 4"),
    (dict(commands=np.full((1, 2, 3), np.inf)), r"commands\[0, 0, 0\] is not finite"),
    (dict(steps=-1), r"steps must be >= 0"),
    (dict(steps=2.5), r"steps must be an integer"),
    (dict(h=0.0), r"h must be a finite number > 0"),
    (dict(h=float("nan")), r"h must be a finite number > 0"),
    (dict(threads=-2), r"threads must be >= 0"),
    (dict(commands=[["a", "b", "c"]]), r"."),
])
def test_bad_rollout_input_raises_value_error(gripper, kwargs, message):
    with pytest.raises(ValueError, match=message) as e:
        quasistep.rollout(gripper, **kwargs)
    assert "\n" not in str(e.value)


def test_bad_step_input_raises_value_error(gripper):
    with pytest.raises(ValueError, match=r"command has shape \(2,\)"):
        gripper.step(gripper.state(), [0.0, 0.0])
    with pytest.raises(ValueError, match=r"command\[1\] \(x_r\) is not finite"):
        gripper.step(gripper.state(), [0.0, np.nan, 0.0])
    with pytest.raises(ValueError, match=r"nq = 5"):
        gripper.step(np.zeros(4))
    other = quasistep.load(example("halm_posa_push")).state()
    with pytest.raises(ValueError, match="another scene"):
        gripper.step(other)
    with pytest.raises(ValueError, match="h must be"):
        gripper.step(gripper.state(), h=-1.0)
    # A q array is a start: t = 0 and the stepper's memory started there.
    state, st = gripper.step(gripper.initial_state())
    assert st == S.solved and state.step == 1


def test_a_scene_without_a_time_step_is_refused():
    """An instantaneous problem (Pang, Trinkle & Lo 1996) has no stepper."""
    scene = quasistep.load(os.path.join(ROOT, "tests", "scenes", "two_link_arms.json"))
    assert scene.formulation == "ucp"
    with pytest.raises(ValueError, match="ucp"):
        quasistep.rollout(scene, steps=1, h=0.01)
    with pytest.raises(ValueError, match="without a time step"):
        scene.step(scene.state(), h=0.01)


def test_the_gil_is_released_while_stepping():
    """Another Python thread runs while a long rollout steps (with the GIL held it could
    not run until the rollout returned)."""
    scene = quasistep.load(example("halm_posa_push"))
    q0 = np.tile(scene.initial_state(), (2048, 1))
    done = threading.Event()

    def work():
        quasistep.rollout(scene, q0, threads=1)
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(0.02)  # the worker is inside the library by now
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert ticks >= 5


def test_two_threads_may_share_a_scene():
    scene = quasistep.load(example("halm_posa_push"))
    expected, _ = quasistep.rollout(scene)
    results = [None] * 4

    def work(k):
        if k % 2:
            results[k] = quasistep.rollout(scene)[0]
        else:
            s = scene.state()
            for _ in range(scene.steps):
                s, _ = scene.step(s)
            results[k] = s.q
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        np.testing.assert_array_equal(results[k] if k % 2 == 0 else results[k][0, -1], expected[0, -1])


def test_a_scene_without_a_step_size_needs_h():
    import json
    from test_scene import PUSH
    doc = json.loads(PUSH)
    del doc["step"]
    scene = quasistep.load(json.dumps(doc))
    assert scene.h is None
    with pytest.raises(ValueError, match="no step.h: pass h"):
        scene.step(scene.state(), [0.1, 0.0])
    with pytest.raises(ValueError, match="no step.h: pass h"):
        quasistep.rollout(scene, commands=np.zeros((3, 2)))
    state, status = scene.step(scene.state(), [0.1, 0.0], h=0.025)
    assert status == S.solved and state.t == 0.025
    states, status = quasistep.rollout(scene, commands=np.zeros((3, 2)), h=0.025)
    assert states.shape == (1, 4, 5) and status[0] == S.solved
