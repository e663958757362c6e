"""The step's derivatives from Python: Scene.step(..., derivatives=True) and
rollout(..., derivatives=True) are the library's (the CLI's `run --derivatives` cells, to the
last digit), agree with central differences of Scene.step, and are refused where a
formulation has none."""
import numpy as np
import pytest

import quasistep
from conftest import example, read_csv, run_cli

S = quasistep.Status


@pytest.fixture(scope="module")
def grasp():
    return quasistep.load(example("anitescu_grasp"))


def test_step_derivatives_are_the_clis_cells(grasp, tmp):
    path = tmp / "d.csv"
    run_cli("run", example("anitescu_grasp"), "--steps", 12, "--derivatives", path)
    header, rows = read_csv(path)
    nx, na = len(grasp.state_names), len(grasp.command_names)
    assert nx == 8 and header[2] == "d" + grasp.state_names[0] + "+/d" + grasp.state_names[0]
    state = grasp.state()
    for row in rows:
        state, status, A, B, one_sided = grasp.step(state, derivatives=True)
        assert status == S.solved
        cells = np.array([float(c) for c in row[2:2 + nx * nx + nx * na]])
        np.testing.assert_array_equal(A.ravel(), cells[:nx * nx])
        np.testing.assert_array_equal(B.ravel(), cells[nx * nx:])
        assert one_sided == (row[-3] == "1")


def test_step_derivatives_match_central_differences(grasp):
    # Mid-grasp (step 30: both fingers press the cylinder), commands held at the squeeze.
    state = grasp.state()
    for _ in range(30):
        state, _ = grasp.step(state)
    command = np.array([0.1, -0.1, 0.0])
    _, status, A, B, one_sided = grasp.step(state, command, derivatives=True)
    assert status == S.solved and not one_sided
    nq, delta = len(grasp.dof_names), 1e-6

    def after(q, u):
        # The state at q with its memory (the references) kept: a State from its pickled parts.
        s = quasistep.State.__new__(quasistep.State)
        s.__setstate__((state.t, state.step, np.asarray(q, dtype=float), state.memory))
        out, st = grasp.step(s, u)
        assert st == S.solved
        return np.asarray(out)

    q0 = np.asarray(state)
    for j in range(nq):
        dq = np.zeros(nq)
        dq[j] = delta
        column = (after(q0 + dq, command) - after(q0 - dq, command)) / (2 * delta)
        # PGS stops at a residual of 1e-10, which a difference of 1e-6 turns into 1e-4; the
        # C++ suite checks to 1e-6 against exactly solved steps (tests/core/derivatives_test.cpp).
        np.testing.assert_allclose(A[:nq, j], column, rtol=0, atol=2e-4)
    for a in range(len(command)):
        du = np.zeros(len(command))
        du[a] = delta
        column = (after(q0, command + du) - after(q0, command - du)) / (2 * delta)
        np.testing.assert_allclose(B[:nq, a], column, rtol=0, atol=2e-4)


def test_rollout_derivatives_are_each_steps(grasp):
    rng = np.random.default_rng(3)
    commands = np.empty((4, 20, 3))
    commands[:, :, 0], commands[:, :, 1], commands[:, :, 2] = 0.1, -0.1, 0.0
    commands[:, 12:, 2] = 0.1
    commands += 0.01 * rng.standard_normal(commands.shape)
    states, status, A, B, one_sided = quasistep.rollout(grasp, commands=commands, derivatives=True)
    assert A.shape == (4, 20, 8, 8) and B.shape == (4, 20, 8, 3) and one_sided.shape == (4, 20)
    assert A.dtype == np.float64 and one_sided.dtype == bool and (status == S.solved).all()
    for i in range(4):
        state = grasp.state()
        for l in range(20):
            state, st, a, b, o = grasp.step(state, commands[i, l], derivatives=True)
            np.testing.assert_array_equal(A[i, l], a)
            np.testing.assert_array_equal(B[i, l], b)
            assert one_sided[i, l] == o
        np.testing.assert_array_equal(np.asarray(state), states[i, -1])
    # Without trajectory, the last states and the derivatives all the same.
    last, _, A2, _, _ = quasistep.rollout(grasp, commands=commands, trajectory=False, derivatives=True)
    np.testing.assert_array_equal(last, states[:, -1])
    np.testing.assert_array_equal(A2, A)


def test_a_failed_world_has_nan_derivatives_from_its_failed_step():
    push = quasistep.load(example("halm_posa_push"))
    commands = np.zeros((2, 6, len(push.command_names)))
    commands[1, 3, 0] = 1e300  # world 1's step 4 would move a finger beyond the geometry's range
    _, status, failed, A, B, _ = quasistep.rollout(push, commands=commands, return_failed_step=True, derivatives=True)
    assert status.tolist() == [S.solved, S.numerical_failure] and failed.tolist() == [-1, 4]
    assert np.isfinite(A[0]).all() and np.isfinite(A[1, :3]).all() and np.isnan(A[1, 3:]).all()
    assert np.isnan(B[1, 3:]).all()


def test_a_formulation_without_derivatives_is_refused():
    tip = quasistep.load(example("ecp_box_tip"))
    with pytest.raises(ValueError, match="ecp_ncp has no step derivatives"):
        tip.step(tip.state(), derivatives=True)
    with pytest.raises(ValueError, match="ecp_ncp has no step derivatives"):
        quasistep.rollout(tip, steps=2, derivatives=True)


def test_bundled_derivatives_are_deterministic_and_refuse_bad_options():
    push = quasistep.load(example("mpc_push"))
    state = push.state()
    for _ in range(30):
        state, _ = push.step(state)
    r = push.bundled(state, [0.1, 0.0], samples=200, sigma=0.02, seed=3)
    assert r["status"] == S.solved and r["used"] == 200
    assert r["B1"].shape == (5, 2) and r["B0"].shape == (5, 2) and r["A1"].shape == (5, 5)
    assert (r["B1_error"] >= 0).all() and r["next"].shape == (5,)
    one = push.bundled(state, [0.1, 0.0], samples=200, sigma=0.02, seed=3, threads=1)
    for key in ("A1", "B1", "B0", "B1_error", "B0_error", "next"):
        np.testing.assert_array_equal(r[key], one[key])
    with pytest.raises(ValueError, match="samples must be at least n_a \\+ 1 = 3"):
        push.bundled(state, [0.1, 0.0], samples=2, sigma=0.1)
    with pytest.raises(ValueError, match="sigma"):
        push.bundled(state, [0.1, 0.0])


def test_load_with_a_log_barrier_weight_is_the_scene_field(tmp):
    import json
    with open(example("anitescu_box_push")) as f:
        scene = json.load(f)
    scene["model"]["log_barrier_weight"] = 100
    a = quasistep.load(example("anitescu_box_push"), log_barrier_weight=100)
    b = quasistep.load(json.dumps(scene))
    sa, _ = quasistep.rollout(a)
    sb, _ = quasistep.rollout(b)
    np.testing.assert_array_equal(sa, sb)
    plain, _ = quasistep.rollout(quasistep.load(example("anitescu_box_push")))
    assert not np.array_equal(plain, sa)
    with pytest.raises(ValueError, match="the smoothed step is anitescu_qp's"):
        quasistep.load(example("halm_posa_push"), log_barrier_weight=1)
    with pytest.raises(ValueError, match="must be a finite number > 0"):
        quasistep.load(example("anitescu_box_push"), log_barrier_weight=0)
