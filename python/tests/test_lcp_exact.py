"""`quasistep lcp --method exact|auto` and solve_lcp(method=...): answers where Lemke's method
fails (Murty 1978; a bimatrix game on which it ends on a ray), and certificates of
infeasibility checked here in exact rational arithmetic, trusting none of the library's code:
the problem's numbers and the certificate's vectors are read as the doubles they print
(which round-trip) and turned into Fractions exactly."""
import json
from fractions import Fraction

import numpy as np
import pytest

import quasistep
from conftest import run_cli

# LCPs without a solution, small integer data found by a search over random instances; the
# last needs 31 nodes (16 leaves) to prove it. Lemke's method ends on a ray on each.
INFEASIBLE = [
    ([[-1]], [-1], 0),
    ([[2, 1], [2, 0]], [0, -2], 0),
    ([[0, 0, 3], [1, 0, 2], [3, 1, 2]], [1, -3, 1], 0),
    ([[-3, 1, -2, -1, 3, 0], [0, 3, -1, -3, 0, 0], [0, -2, 0, 2, 2, 0], [1, -3, 3, 0, 1, 1],
      [-3, -2, 1, 3, 2, -1], [-1, 1, 2, -2, -1, 0]], [1, 3, 1, 2, 2, -2], 0),
    ([[2, 3, -1, -1, -1, -2, -1, -1], [-3, 2, 2, -1, 3, -2, 0, 2], [3, 1, 0, -2, 1, 2, 3, -1],
      [2, 0, -1, -1, -1, -3, 1, 3], [3, 3, -3, -2, 2, -2, -3, 2], [-1, 3, -3, -1, 3, 3, -3, 2],
      [3, -2, 1, 3, -3, -3, -2, 2], [-2, 1, -1, 2, -3, -2, -3, 1]], [0, 3, 3, -3, 3, 0, 2, 1], 0),
    # A mixed LCP: u free, 0 = z1 + z2 + 1 (u's row) cannot hold with z >= 0.
    ([[0, 1, 1], [1, 0, 0], [-1, 0, 0]], [1, 1, 1], 1),
]


def cli_lcp(tmp, M, q, free=0, *args, check=True):
    path = tmp / "lcp.json"
    path.write_text(json.dumps({"M": np.asarray(M, dtype=float).tolist(), "q": [float(v) for v in q], "free": free}))
    r = run_cli("lcp", path, *args, check=check)
    return r if not check else json.loads(r.stdout)


def exact(v):
    """A number of the JSON as the double it denotes, exactly."""
    return Fraction(float(v))


def leaf_proves_empty(M, q, free, leaf):
    """Farkas' lemma for one leaf (docs/cli.md): with g = M'y, q'y < 0, g_j = 0 for the free
    variables, and for every other j: y_j >= 0 unless the leaf fixes w_j = 0, g_j <= 0
    unless it fixes z_j = 0. Then 0 <= y'w = g'x + q'y <= q'y < 0 for any x of the leaf."""
    n = len(q)
    y = [exact(v) for v in leaf["y"]]
    if len(y) != n:
        return False
    z_zero, w_zero = set(leaf["z_zero"]), set(leaf["w_zero"])
    if not all(free <= j < n for j in z_zero | w_zero):
        return False
    if sum(q[i] * y[i] for i in range(n)) >= 0:
        return False
    for j in range(n):
        g = sum(M[i][j] * y[i] for i in range(n))
        if j < free:
            if g != 0:
                return False
        else:
            if j not in w_zero and y[j] < 0:
                return False
            if j not in z_zero and g > 0:
                return False
    return True


def leaves_cover(leaves):
    """Whether every choice of z_j = 0 or w_j = 0 per pair lies in some leaf (Shannon
    expansion on the pair the most leaves fix): then every solution of the LCP would lie in a
    leaf, and each leaf is empty."""
    if any(not fix for fix in leaves):
        return True
    if not leaves:
        return False
    counts = {}
    for fix in leaves:
        for j in fix:
            counts[j] = counts.get(j, 0) + 1
    j = max(sorted(counts), key=lambda k: counts[k])
    for side in ("z", "w"):
        branch = [{k: s for k, s in fix.items() if k != j} for fix in leaves if fix.get(j, side) == side]
        if not leaves_cover(branch):
            return False
    return True


def certificate_holds(M, q, free, certificate):
    Mx = [[exact(v) for v in row] for row in M]
    qx = [exact(v) for v in q]
    leaves = certificate["leaves"]
    if certificate["free"] != free or not leaves:
        return False
    if not all(leaf_proves_empty(Mx, qx, free, leaf) for leaf in leaves):
        return False
    fixings = []
    for leaf in leaves:
        fix = {j: "z" for j in leaf["z_zero"]}
        for j in leaf["w_zero"]:
            if j in fix:
                return False  # both sides of one pair: not a node of the search
            fix[j] = "w"
        fixings.append(fix)
    return leaves_cover(fixings)


@pytest.mark.parametrize("M, q, free", INFEASIBLE)
def test_infeasible_lcps_come_with_a_certificate_that_checks_exactly(tmp, M, q, free):
    lemke = cli_lcp(tmp, M, q, free)
    assert lemke["status"] != "solved"
    for method in ("exact", "auto"):
        answer = cli_lcp(tmp, M, q, free, "--method", method)
        assert answer["status"] == "infeasible" and answer["method"] == "exact", answer
        assert answer["z"] is None and answer["w"] is None
        certificate = answer["certificate"]
        assert certificate["exact"] and all(leaf["exact"] for leaf in certificate["leaves"])
        assert certificate_holds(M, q, free, certificate)
        assert len(certificate["leaves"]) <= answer["nodes"]
    # The Python module prints the same answer.
    py = quasistep.solve_lcp(np.asarray(M, dtype=float), np.asarray(q, dtype=float), free, method="exact")
    assert py["certificate"] == answer["certificate"] and py["status"] == "infeasible"


def test_the_checker_refuses_a_broken_certificate(tmp):
    M, q, free = INFEASIBLE[4]
    certificate = cli_lcp(tmp, M, q, free, "--method", "exact")["certificate"]
    assert len(certificate["leaves"]) == 16 and certificate_holds(M, q, free, certificate)
    # A leaf left out: the others no longer cover every choice of sides.
    assert not certificate_holds(M, q, free, dict(certificate, leaves=certificate["leaves"][1:]))
    # Any leaf's vector negated: q'y > 0, no proof.
    for index in range(len(certificate["leaves"])):
        broken = json.loads(json.dumps(certificate))
        broken["leaves"][index]["y"] = [-v for v in broken["leaves"][index]["y"]]
        assert not certificate_holds(M, q, free, broken)
    # A leaf moved to the other side of the pair it fixed last: the tree has a hole.
    broken = json.loads(json.dumps(certificate))
    leaf = next(leaf for leaf in broken["leaves"] if leaf["z_zero"])
    leaf["w_zero"].append(leaf["z_zero"].pop())
    assert not certificate_holds(M, q, free, broken)


def test_random_data_get_exact_certificates():
    # Entries uniform in (-1, 1): not small integers, so the vectors are not either; the
    # widest-margin Farkas vector keeps every inequality clear of rounding.
    rng = np.random.default_rng(6)
    proved = 0
    for _ in range(40):
        n = int(rng.integers(3, 7))
        M, q = rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, n)
        answer = quasistep.solve_lcp(M, q, method="exact")  # the CLI's answer (compared above)
        assert answer["status"] in ("solved", "infeasible"), answer
        if answer["status"] == "infeasible":
            proved += 1
            assert answer["certificate"]["exact"]
            assert certificate_holds(M.tolist(), q.tolist(), 0, answer["certificate"])
    assert proved >= 10


def murty(n):
    """Murty (1978): lower triangular, 1 on the diagonal and 2 below; with q = -1 Lemke's
    method takes 2^n pivots."""
    return np.tril(np.full((n, n), 2.0), -1) + np.eye(n)


def test_auto_answers_murtys_example_past_lemkes_pivot_limit(tmp):
    n = 16  # 2^16 pivots; the limit is 1000 + 100 n
    lemke = cli_lcp(tmp, murty(n), -np.ones(n))
    assert lemke["status"] == "iteration_limit" and lemke["pivots"] == 2600
    answer = cli_lcp(tmp, murty(n), -np.ones(n), 0, "--method", "auto")
    assert answer["status"] == "solved" and answer["method"] == "exact"
    assert answer["lemke_status"] == "iteration_limit" and answer["pivots"] == 2600
    assert answer["z"] == [1.0] + [0.0] * (n - 1)  # the one solution (a P-matrix)
    # Small enough for Lemke: auto is Lemke's answer, said so.
    small = cli_lcp(tmp, murty(6), -np.ones(6), 0, "--method", "auto")
    assert small["method"] == "lemke" and small["pivots"] == 64 and small["z"] == [1.0] + [0.0] * 5
    py = quasistep.solve_lcp(murty(n), -np.ones(n), method="auto")
    assert py == answer


def test_a_game_where_lemke_ends_on_a_ray(tmp):
    # The battle of the sexes (payoffs P to the row player, R to the column player) has three
    # equilibria: two pure ones and a mixed one, x = (3/5, 2/5), y = (2/5, 3/5). Its LCP with
    # costs A = 4 - P, B = 4 - R > 0: M = [[0, A], [B', 0]], q = -1 (Cottle, Pang & Stone
    # 1992, sec. 1.2); an answer (x, y), normalised, is an equilibrium. Lemke's method with
    # the covering vector 1 ends on a secondary ray here.
    P = np.array([[3.0, 0.0], [0.0, 2.0]])
    R = np.array([[2.0, 0.0], [0.0, 3.0]])
    A, B = 4.0 - P, 4.0 - R
    M = np.block([[np.zeros((2, 2)), A], [B.T, np.zeros((2, 2))]])
    q = -np.ones(4)
    assert cli_lcp(tmp, M, q)["status"] == "not_found"
    answer = cli_lcp(tmp, M, q, 0, "--method", "auto")
    assert answer["status"] == "solved" and answer["method"] == "exact" and answer["lemke_status"] == "not_found"
    z = np.array(answer["z"])
    x, y = z[:2] / z[:2].sum(), z[2:] / z[2:].sum()
    # Each player's mixed strategy uses only best responses to the other's.
    row_payoff, col_payoff = P @ y, R.T @ x
    assert np.all(row_payoff[x > 1e-9] >= row_payoff.max() - 1e-9)
    assert np.all(col_payoff[y > 1e-9] >= col_payoff.max() - 1e-9)
    np.testing.assert_allclose(x, [0.6, 0.4], atol=1e-12)
    np.testing.assert_allclose(y, [0.4, 0.6], atol=1e-12)


def test_node_limit_and_bad_input(tmp):
    M, q, free = INFEASIBLE[4]
    r = cli_lcp(tmp, M, q, free, "--method", "exact", "--node-limit", "3", check=False)
    assert r.returncode == 0  # an answer, as `ucp` at its node limit
    answer = json.loads(r.stdout)
    assert answer["status"] == "iteration_limit" and answer["nodes"] == 3 and "certificate" not in answer
    assert "node limit 3" in answer["reason"]
    for args, message in [(("--method", "simplex"), "--method"), (("--method", "exact", "--node-limit", "-1"), "--node-limit"),
                          (("--method", "exact", "--node-limit", "0"), "--node-limit"),
                          (("--node-limit", "5"), "needs --method exact or auto")]:
        r = cli_lcp(tmp, M, q, free, *args, check=False)
        assert r.returncode == 1 and r.stdout == "" and message in r.stderr and r.stderr.count("\n") == 1, (args, r.stderr)
    with pytest.raises(ValueError, match="method must be lemke, exact or auto"):
        quasistep.solve_lcp(M, q, method="simplex")
    with pytest.raises(ValueError, match="node_limit must be in 1..1000000, got -1"):
        quasistep.solve_lcp(M, q, method="exact", node_limit=-1)
    with pytest.raises(ValueError, match="node_limit: needs method exact or auto"):
        quasistep.solve_lcp(M, q, node_limit=5)
    assert quasistep.solve_lcp(np.asarray(M, float), np.asarray(q, float), method="exact", node_limit=3)["status"] == "iteration_limit"
