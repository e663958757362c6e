"""quasistep: planar quasistatic contact simulation, many worlds at once, from Python.

Load a scene (the JSON files of the CLI), step one world, roll out thousands of worlds under
your own joint velocity commands, run a scene's Monte Carlo study, or solve one LCP or one
uncoupled complementarity problem. Every number is bitwise the one the `quasistep` command
line prints for the same world. Arrays are float64 numpy arrays; the library works with the
GIL released, on all cores (or `threads` of them).

    >>> import quasistep
    >>> scene = quasistep.load("examples/anitescu_grasp.json")
    >>> states, status = quasistep.rollout(scene)          # (1, steps + 1, nq), (1,)

Bad input raises ValueError with a one-line message naming the field and the cause.
See docs/python.md for the whole API.
"""

import enum as _enum
import json as _json
import os as _os

import numpy as _np

from . import _quasistep
from ._quasistep import McResult, Scene, State

__version__ = _quasistep.version
__all__ = ["Status", "Scene", "State", "McResult", "load", "rollout", "mc", "solve_lcp", "solve_ucp"]


class Status(_enum.IntEnum):
    """The outcome of a step or a solve (the library's one status vocabulary).

    A rollout's `status` array holds these values as int8: `status == Status.solved` works
    elementwise, and `Status(v)` names a value.
    """

    solved = 0             #: a solution that passed the solver's own residual check
    infeasible = 1         #: proven to have no solution
    unbounded = 2          #: an optimisation proven unbounded
    not_found = 3          #: the method stopped without a solution and without a proof
    iteration_limit = 4    #: stopped at its pivot, iteration or node limit
    numerical_failure = 5  #: a pivot or factorisation went bad, or the residual check failed
    bad_input = 6          #: the problem as given is malformed
    not_run = 7            #: nothing was attempted (e.g. steps after a world's failed step)


if [s.name for s in Status] != list(_quasistep.status_names):
    raise ImportError("quasistep: the Python Status names differ from the library's: "
                      f"{list(_quasistep.status_names)}")
_quasistep._set_status_type(Status)


def load(path_or_json):
    """Loads a scene from a file path (str or os.PathLike) or from a JSON document string.

    Returns a Scene. Raises ValueError naming the file, the field and the cause when the
    scene is not valid (as `quasistep validate` does).
    """
    if isinstance(path_or_json, _os.PathLike):
        path_or_json = _os.fspath(path_or_json)
    if not isinstance(path_or_json, str):
        raise TypeError("load() takes a path or a JSON string, got " + type(path_or_json).__name__)
    return _quasistep.load(path_or_json)


def _array(value, name):
    if value is None:
        return None
    a = _np.asarray(value, dtype=_np.float64)
    if a.dtype != _np.float64:
        raise ValueError(f"{name} must hold numbers")
    return a


def rollout(scene, q0=None, commands=None, steps=None, threads=0, trajectory=True, h=None,
            return_failed_step=False):
    """Steps N worlds of one scene together (the batch engine: SIMD lanes over threads).

    scene     a Scene (or a path / JSON string, loaded once for the call).
    q0        the worlds' start configurations, (N, nq) in `scene.dof_names` order; a 1-D
              (nq,) array is one world; None: one world (or as many as `commands` has) at
              the scene's initial state. Each world starts at t = 0 with its stepper's
              memory started for its q, as `Scene.state(q)` does.
    commands  joint velocity commands, (N, T, n_commands) per world or (T, n_commands) for
              every world, in `scene.command_names` order; command l is held for the whole
              step l. None: the scene's own command schedules.
    steps     the number of steps T (default: the commands' T, else the scene's `steps`);
              with commands it must equal commands.shape[-2].
    threads   worker threads (0: all cores).
    trajectory  True: states is (N, T + 1, nq), row 0 the start; False: (N, nq), the last.
    h         the step size (default: the scene's `step.h`).

    Returns (states, status), or (states, status, failed_step) with return_failed_step:
    status is an (N,) int8 array of Status values; failed_step (N,) int32 is the step that
    failed, counted from 1, or -1. A world whose step fails stops there: its states after
    the failed step (and its final state) are NaN; the other worlds go on. Each world's
    numbers are bitwise those of `quasistep run` for that world, whatever N or threads.
    """
    if not isinstance(scene, Scene):
        scene = load(scene)
    if steps is not None and (isinstance(steps, bool) or int(steps) != steps):
        raise ValueError(f"steps must be an integer, got {steps!r}")
    states, status, failed = _quasistep.rollout(
        scene, _array(q0, "q0"), _array(commands, "commands"), None if steps is None else int(steps),
        None if h is None else float(h), int(threads), bool(trajectory))
    return (states, status, failed) if return_failed_step else (states, status)


def mc(scene=None, samples=10000, seed=0, threads=0, trajectories=8):
    """Runs a scene's Monte Carlo study (its `uncertainty` and `success` sections).

    scene   a Scene, a path or a JSON string; None: the built-in grasp study
            (examples/mc_grasp.json), as `quasistep mc` without a scene.
    samples, seed  as `quasistep mc --samples N --seed S`: the same samples, outcomes and
            summary, bitwise, on any number of threads.

    Returns an McResult: `rate`, `low`, `high` (Wilson 95% interval), `successes`, `n`,
    `outcomes` (dict outcome -> count), `samples` (dict column -> numpy array, the columns
    of `quasistep mc --out`), `bins` (per-parameter success counts), `trajectories` (the
    object's pose after each step for the first `trajectories` samples), and `str(result)`,
    the summary table the CLI prints.
    """
    if scene is not None and not isinstance(scene, Scene):
        scene = load(scene)
    if isinstance(samples, bool) or int(samples) != samples:
        raise ValueError(f"samples must be an integer, got {samples!r}")
    if int(seed) != seed or seed < 0 or seed >= 2**64:
        raise ValueError(f"seed must be an integer in 0..2^64-1, got {seed!r}")
    return _quasistep.mc(scene, int(samples), int(seed), int(threads), int(trajectories))


def solve_lcp(M, q, free=0):
    """Solves the LCP  w = M z + q, z >= 0, w >= 0, z.w = 0  by Lemke's method.

    With free > 0 the first `free` variables are free and their rows are equalities (a mixed
    LCP). n <= 128. Returns (status, z, w): z and w are numpy arrays when status is
    Status.solved (a verified solution), else None; as `quasistep lcp`.
    """
    return _quasistep.solve_lcp(_array(M, "M"), _array(q, "q"), int(free))


def _json_default(value):
    if isinstance(value, _np.ndarray):
        return value.tolist()
    if isinstance(value, _np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def solve_ucp(problem, method="exact", all=False, node_limit=10000):
    """Solves one uncoupled complementarity problem of Pang, Trinkle & Lo (1996).

    problem  a dict in the problem-file format of docs/ucp.md (numpy arrays allowed), a
             JSON string, or a path to a problem file.
    method   "exact" (branch and bound), "bilinear" (the paper's bilinear LP algorithm) or
             "auto" (bilinear, then exact if it stalls); all=True lists every contact mode
             with a solution instead.

    Returns the dict `quasistep ucp` prints: status, method, x, y, q_dot, theta_dot, c_n,
    c_t, tau, residual, ... (vectors are None unless status is "solved").
    """
    if isinstance(problem, dict):
        text = _json.dumps(problem, default=_json_default, allow_nan=True)
    elif isinstance(problem, (str, _os.PathLike)):
        text = _os.fspath(problem)
        if not text.lstrip().startswith("{"):
            try:
                with open(text, encoding="utf-8") as f:
                    text = f.read()
            except OSError as e:
                raise ValueError(f"cannot read problem file {problem!r}: {e.strerror}") from None
    else:
        raise TypeError("solve_ucp() takes a dict, a JSON string or a path, got " + type(problem).__name__)
    return _json.loads(_quasistep.solve_ucp_json(text, str(method), bool(all), int(node_limit)))
