"""solve_lcp and solve_ucp: the CLI's answers (`quasistep lcp`, `quasistep ucp`), from arrays."""
import json
import os

import numpy as np
import pytest

import quasistep
from conftest import ROOT, run_cli

S = quasistep.Status
DATA_SET_1 = os.path.join(ROOT, "tests", "data", "ucp", "data_set_1.json")


def cli_lcp(tmp, M, q, free=0):
    path = tmp / "lcp.json"
    path.write_text(json.dumps({"M": np.asarray(M).tolist(), "q": list(q), "free": free}))
    return json.loads(run_cli("lcp", path).stdout)


def test_lcp_solution_is_verified_and_the_clis(tmp):
    rng = np.random.default_rng(11)
    A = rng.normal(size=(12, 12))
    M = A @ A.T + 0.1 * np.eye(12)  # positive definite: Lemke always solves it
    q = rng.normal(size=12)
    status, z, w = quasistep.solve_lcp(M, q)
    assert status == S.solved
    assert (z >= 0).all() and (w >= -1e-12).all() and abs(z @ w) < 1e-10
    np.testing.assert_allclose(M @ z + q, w, atol=1e-12)
    cli = cli_lcp(tmp, M, q)
    assert cli["status"] == "solved" and z.tolist() == cli["z"] and w.tolist() == cli["w"]


def test_mixed_lcp_and_a_failure(tmp):
    M = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]])
    q = np.array([-1.0, 1.0, -2.0])
    status, z, w = quasistep.solve_lcp(M, q, free=1)
    cli = cli_lcp(tmp, M, q, free=1)
    assert status == S.solved and z.tolist() == cli["z"] and w.tolist() == cli["w"]
    assert abs(w[0]) < 1e-12  # the free row is an equality
    # w = -z - 1 >= 0 has no solution with z >= 0: Lemke ends on a ray.
    status, z, w = quasistep.solve_lcp([[-1.0]], [-1.0])
    assert status != S.solved and z is None and w is None
    assert cli_lcp(tmp, [[-1.0]], [-1.0])["status"] == status.name


@pytest.mark.parametrize("M, q, free, message", [
    (np.eye(2), [1.0, 1.0, 1.0], 0, r"M has shape \(2, 2\); expected \(3, 3\)"),
    (np.eye(2), [[1.0, 1.0]], 0, r"q has shape \(1, 2\)"),
    (np.eye(2), [], 0, r"n >= 1"),
    (np.eye(2), [1.0, np.nan], 0, r"q\[1\] is not finite"),
    ([[1.0, np.inf], [0.0, 1.0]], [1.0, 1.0], 0, r"M\[0, 1\] is not finite"),
    (np.eye(2), [1.0, 1.0], 3, r"free must be in 0..2"),
    (np.eye(129), np.ones(129), 0, r"up to n = 128"),
])
def test_bad_lcps_raise_value_error(M, q, free, message):
    with pytest.raises(ValueError, match=message):
        quasistep.solve_lcp(M, q, free)


def without_time(answer):
    return {k: v for k, v in answer.items() if k != "time"}


@pytest.mark.parametrize("method", ["exact", "bilinear", "auto"])
def test_ucp_is_the_clis_answer(method):
    with open(DATA_SET_1) as f:
        problem = json.load(f)
    problem = {k: (np.array(v) if k == "P" else v) for k, v in problem.items()}  # numpy is welcome
    answer = quasistep.solve_ucp(problem, method=method)
    cli = json.loads(run_cli("ucp", DATA_SET_1, "--method", method).stdout)
    assert without_time(answer) == without_time(cli)
    assert answer["status"] == "solved"
    assert without_time(quasistep.solve_ucp(DATA_SET_1, method=method)) == without_time(cli)  # a path


def test_ucp_all_modes_and_errors():
    answer = quasistep.solve_ucp(DATA_SET_1, all=True)
    cli = json.loads(run_cli("ucp", DATA_SET_1, "--all").stdout)
    assert without_time(answer) == without_time(cli)
    with open(DATA_SET_1) as f:
        problem = json.load(f)
    with pytest.raises(ValueError, match="method must be"):
        quasistep.solve_ucp(problem, method="simplex")
    bad = dict(problem, mu=[0.5, -0.5, 0.3])
    with pytest.raises(ValueError, match="mu"):
        quasistep.solve_ucp(bad)
    bad = dict(problem, extra=1)
    with pytest.raises(ValueError, match="extra"):
        quasistep.solve_ucp(bad)
    with pytest.raises(ValueError, match="cannot read problem file"):
        quasistep.solve_ucp("no_such_problem.json")
    with pytest.raises(TypeError):
        quasistep.solve_ucp(3)
