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
    assert st == S.infeasible and after == state
    assert "no solution" in gripper.last_step_detail()


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
    # Inputs of any layout, alignment or float dtype give the same numbers as float64 C arrays.
    rng = np.random.default_rng(5)
    c64 = rng.uniform(-0.02, 0.02, size=(3, 9, 3)).astype(np.float32).astype(np.float64)
    expected, _ = quasistep.rollout(gripper, commands=c64)
    wide = np.zeros((3, 9, 6), dtype=np.float32)
    wide[:, :, ::2] = c64
    raw = np.zeros(c64.nbytes + 1, dtype=np.uint8)
    misaligned = np.frombuffer(raw.data, dtype=np.float64, count=c64.size, offset=1).reshape(c64.shape)
    misaligned.flags.writeable or None
    for c in (wide[:, :, ::2], np.asfortranarray(c64), c64.tolist()):
        got, _ = quasistep.rollout(gripper, commands=c)
        np.testing.assert_array_equal(got, expected)
    buffer = bytearray(c64.nbytes + 1)
    m = np.frombuffer(buffer, dtype=np.float64, count=c64.size, offset=1).reshape(c64.shape)
    m[...] = c64
    got, _ = quasistep.rollout(gripper, commands=m)
    np.testing.assert_array_equal(got, expected)


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
    (dict(steps=-1), r"steps must be in 0..2147483646, got -1"),
    (dict(steps=2.5), r"steps must be an integer"),
    (dict(h=0.0), r"h must be a finite number > 0"),
    (dict(h=float("nan")), r"h must be a finite number > 0"),
    (dict(threads=-2), r"threads must be in 0..\d+, got -2"),
    (dict(commands=[["a", "b", "c"]]), r"commands must be an array of numbers"),
    (dict(steps=2**31), r"steps must be in 0..2147483646"),
    (dict(threads=2**70), r"threads must be in 0"),
    (dict(threads="2"), r"threads must be an integer"),
    (dict(h="0.1"), r"h must be a number"),
    (dict(q0=[]), r"q0 has shape \(0,\)"),
    (dict(commands=np.zeros((0, 5, 3))), r"no world"),
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


def test_rollout_continues_from_states_as_step_does():
    """A State carries the stepper's memory (the Anitescu impedance reference) and its time:
    a rollout from it continues exactly as Scene.step would."""
    scene = quasistep.load(example("anitescu_grasp"))
    state = scene.state()
    for _ in range(30):
        state, _ = scene.step(state)
    c = np.tile([0.0, 0.0, 0.1], (10, 1))
    expected = state
    for l in range(10):
        expected, _ = scene.step(expected, c[l])
    states, status = quasistep.rollout(scene, q0=state, commands=c)
    assert status[0] == S.solved and states[0, -1].tolist() == expected.q.tolist()
    states, _ = quasistep.rollout(scene, q0=[state, state], commands=np.stack([c, c]))
    assert states[1, -1].tolist() == expected.q.tolist()
    # The scene's schedules from the State's own time, as `run` goes on from step 30.
    full, _ = quasistep.rollout(scene)
    rest, _ = quasistep.rollout(scene, q0=state, steps=scene.steps - 30)
    np.testing.assert_array_equal(rest[0], full[0, 30:])
    # A bare q starts afresh: a different reference, so different numbers.
    fresh, _ = quasistep.rollout(scene, q0=state.q, commands=c)
    assert fresh[0, -1].tolist() != expected.q.tolist()
    with pytest.raises(ValueError, match="must hold States"):
        quasistep.rollout(scene, q0=[state, 3])
    other = quasistep.load(example("halm_posa_push")).state()
    with pytest.raises(ValueError, match="does not fit the scene"):
        quasistep.rollout(scene, q0=other)


def test_one_start_is_shared_by_every_commanded_world(gripper):
    c = squeeze()
    for start in (gripper.initial_state(), gripper.state(), [gripper.state()]):
        states, status = quasistep.rollout(gripper, q0=start, commands=c)
        assert states.shape == (2, 41, 5) and status.tolist() == [S.solved, S.infeasible]


def test_huge_step_counts_are_refused_not_truncated():
    drop = quasistep.load(example("anitescu_drop"))  # no commanded joint: zero-size commands
    assert drop.command_names == []
    for T in (2**31 - 1, 2**32, 2**32 + 3):
        with pytest.raises(ValueError, match="at most 2147483646"):
            quasistep.rollout(drop, commands=np.zeros((1, T, 0)))
    states, _ = quasistep.rollout(drop, commands=np.zeros((1, 3, 0)))
    assert states.shape == (1, 4, drop.nq)


def test_a_scene_without_a_step_count_needs_steps():
    import json
    from test_scene import PUSH
    doc = json.loads(PUSH)
    del doc["step"]
    scene = quasistep.load(json.dumps(doc))
    with pytest.raises(ValueError, match="no step.steps"):
        quasistep.rollout(scene, h=0.025)
    states, _ = quasistep.rollout(scene, steps=3, h=0.025)
    assert states.shape == (1, 4, 5)


def test_more_threads_than_useful_are_capped_not_fatal():
    """The CLI's cap on --threads holds here too: huge counts neither crash nor warn."""
    import subprocess
    import sys
    program = ("import quasistep\n"
               "r = quasistep.mc(samples=20, seed=1, threads=10**7)\n"
               "s, st = quasistep.rollout('examples/mpc_push.json', threads=10**7)\n"
               "print(r.n, int(st[0]))\n")
    r = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "20 0\n" and "Warning" not in r.stderr


def test_rollouts_chained_through_their_final_states_are_one_rollout():
    # The Anitescu grasp lifts and holds the cylinder: 40 steps, then 40 more from the
    # returned States, are bitwise the 80-step rollout (the States carry the impedance
    # reference the step keeps in memory).
    scene = quasistep.load(example("anitescu_grasp"))
    whole, status = quasistep.rollout(scene, steps=80)
    first, s1, finals = quasistep.rollout(scene, steps=40, return_states=True)
    assert len(finals) == 1 and isinstance(finals[0], quasistep.State)
    assert finals[0].step == 40
    np.testing.assert_array_equal(finals[0].q, first[0, -1])
    second, s2 = quasistep.rollout(scene, q0=finals, steps=40)
    assert (status == S.solved).all() and (s1 == S.solved).all() and (s2 == S.solved).all()
    np.testing.assert_array_equal(np.concatenate([first, second[:, 1:]], axis=1), whole)
    # From the configurations alone the memory starts again at the cylinder's q: the
    # grasp ends elsewhere.
    restarted, _ = quasistep.rollout(scene, q0=first[:, -1], steps=40)
    assert not np.array_equal(restarted[:, -1], whole[:, -1])


def test_final_states_follow_failed_step_and_stop_before_a_failure(gripper):
    states, status, failed, finals = quasistep.rollout(gripper, commands=squeeze(), return_failed_step=True,
                                                      return_states=True)
    assert list(status) == [S.solved, S.infeasible] and list(failed) == [-1, 11]
    assert finals[0].step == 40 and finals[1].step == 10  # world 1: the state before its failed step
    np.testing.assert_array_equal(finals[1].q, states[1, 10])


def test_exact_limit_surface_scene_loads_steps_and_rolls_out_as_run():
    """model.support (the ring example): Scene.step and rollout step it as `quasistep run`,
    one world at a time; its derivatives are refused with the field named."""
    scene = quasistep.load(example("halm_posa_push_ring"))
    state = scene.state()
    for _ in range(60):
        state, st = scene.step(state)
        assert st == S.solved, scene.last_step_detail()
    states, status = quasistep.rollout(scene, q0=np.stack([scene.state().q] * 3), steps=60)
    assert status.tolist() == [S.solved] * 3
    for w in range(3):
        np.testing.assert_array_equal(states[w, -1], state.q)
    assert abs(state.q[2]) > 1e-3  # the disk turns on the slower finger
    _, st, A, B, _ = scene.step(scene.state(), derivatives=True)
    assert st == S.solved and np.isnan(A).all()
    assert "model.support" in scene.last_step_detail()
