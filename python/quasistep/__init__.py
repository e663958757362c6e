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
import numbers as _numbers
import os as _os

import numpy as _np

from . import _quasistep
from ._quasistep import McResult, Scene, State

__version__ = _quasistep.version
__all__ = ["Status", "Scene", "State", "McResult", "load", "rollout", "render", "mc", "solve_lcp", "solve_ucp"]


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


def load(path_or_json, log_barrier_weight=None):
    """Loads a scene from a file path (str or os.PathLike) or from a JSON document string.

    log_barrier_weight  an anitescu_qp scene's steps smoothed with this log-barrier weight
              kappa (1/J), as model.log_barrier_weight in the file would (docs/anitescu.md):
              contact acting at a distance, and smooth derivatives for planners.

    Returns a Scene. Raises ValueError naming the file, the field and the cause when the
    scene is not valid (as `quasistep validate` does).
    """
    if isinstance(path_or_json, _os.PathLike):
        path_or_json = _os.fspath(path_or_json)
    if isinstance(path_or_json, bytes):
        raise TypeError("load() takes a str path or JSON string, not bytes (decode it first)")
    if not isinstance(path_or_json, str):
        raise TypeError("load() takes a path or a JSON string, got " + type(path_or_json).__name__)
    text = path_or_json.lstrip("\ufeff")
    if "\0" in text:
        raise ValueError("load(): a path or JSON string with a NUL character")
    if not text.strip():
        raise ValueError("load(): an empty path")
    if text.lstrip().startswith("{"):
        text = text.lstrip()
    return _quasistep.load(text, None if log_barrier_weight is None else _number(log_barrier_weight, "log_barrier_weight"))


def _integer(value, name, low, high=2**63 - 1):
    """An int argument: an integer in [low, high], else a one-line ValueError."""
    if isinstance(value, bool) or not isinstance(value, _numbers.Integral):
        if isinstance(value, _numbers.Real) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}..{high}, got {value}")
    return value


def _number(value, name):
    if isinstance(value, bool) or not isinstance(value, _numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


def _array(value, name):
    """A float64, C-ordered, aligned array (read in place by the library), or None."""
    if value is None:
        return None
    try:
        a = _np.asarray(value, dtype=_np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers") from None
    return _np.require(a, _np.float64, ["C", "A"])


_INT_MAX = 2**31 - 1


def _scene_state(self, q=None):
    """A State at configuration q ((nq,), in dof_names order), or at the scene's start:
    t = 0, step 0, and the stepper's memory started there (as for the scene's own start)."""
    return self._state(_array(q, "state"))


def _scene_step(self, state, command=None, h=None, derivatives=False):
    """One step of one world: returns (new_state, status), and with derivatives=True also
    (A, B, one_sided).

    state    a State (its q, t and the stepper's memory: stepping the returned States again
             and again is `quasistep run`, bitwise) or a (nq,) array (a fresh start there).
    command  one velocity per command_names entry, held for the step; None: the scene's
             schedules at the state's time.
    h        the step size (default: the scene's step.h).
    derivatives  True: also the step's exact derivatives (docs/derivatives.md) at the given
             state: A = dx+/dx (nx, nx) and B = dx+/du (nx, n_commands), x the state's
             entries named by Scene.state_names (the DOFs, then for anitescu_qp each joint's
             impedance reference), u the commands; one_sided is True where the step sits at
             a contact switch and the derivative is the one-sided one (the contacts that
             touch without pushing taken as separating). A and B are NaN where the step has
             no derivative (last_step_detail() says why); a formulation without derivatives
             is a ValueError.
    A failed step returns the state unchanged and the failure's Status; last_step_detail()
    says why. The given state is never changed.
    """
    if not isinstance(state, State):
        state = _array(state, "state")
    return self._step(state, _array(command, "command"), None if h is None else _number(h, "h"), bool(derivatives))


def _scene_bundled(self, state, command=None, samples=100, sigma=None, seed=0, threads=0):
    """Bundled (randomized) derivatives of one step (docs/derivatives.md): the step smoothed
    by a Gaussian perturbation w ~ N(0, sigma^2 I) of its command, estimated from `samples`
    perturbed steps (Suh, Pang & Tedrake, RA-L 2022). Returns a dict: "B1", "A1" (first
    order: the mean of the exact derivatives at the perturbed commands) and "B0" (zeroth
    order: least squares on the steps alone), each with its standard errors ("B1_error",
    ...), "next" (the smoothed next state), "used" and "failed" (samples), "status" and
    "detail". The same seed gives the same bits at any thread count.
    """
    if sigma is None:
        raise ValueError("sigma: the perturbation's standard deviation (m/s or rad/s) is required")
    if not isinstance(state, State):
        state = _array(state, "state")
    return self._bundled(state, _array(command, "command"), _integer(samples, "samples", 1, _INT_MAX),
                         _number(sigma, "sigma"), _integer(seed, "seed", 0, 2**64 - 1), _integer(threads, "threads", 0))


Scene.state = _scene_state
Scene.step = _scene_step
Scene.bundled = _scene_bundled


def rollout(scene, q0=None, commands=None, steps=None, threads=0, trajectory=True, h=None,
            return_failed_step=False, return_states=False, params=None, forces=False, derivatives=False):
    """Steps N worlds of one scene together (the batch engine: SIMD lanes over threads).

    scene     a Scene (or a path / JSON string, loaded once for the call).
    q0        the worlds' starts (N, the number of worlds, comes from q0, else from
              commands, else from params): an (N, nq) array of configurations in
              `scene.dof_names` order, each started afresh (t = 0, the stepper's memory started at its q, as
              Scene.state(q)); or a State or a list of N States (their q, t and memory: a
              rollout from where Scene.step or a planner left the worlds). One start (a
              (nq,) array or one State) is shared by every world of `commands`. None: the
              scene's initial state.
    commands  joint velocity commands, (N, T, n_commands) per world or (T, n_commands) for
              every world, in `scene.command_names` order; command l is held for the whole
              step l. None: the scene's own command schedules, from each world's time.
    steps     the number of steps T (default: the commands' T, else the scene's `steps`);
              with commands it must equal commands.shape[-2].
    threads   worker threads (0: all cores).
    trajectory  True: states is (N, T + 1, nq), row 0 the start; False: (N, nq), the last.
    h         the step size (default: the scene's `step.h`).
    params    per-world parameters: {path: (N,) array, or one number for every world}, the
              parameter paths of the scene format (docs/scene-format.md), e.g.
              {"pairs.left_finger/cylinder.friction": mu, "bodies.cylinder.mass": m}. The
              others keep the scene's values. A start (a joint position, a free body's pose)
              is set in q0 instead. Which parameters the SIMD lanes carry (the others make
              the rollout step one world at a time per thread): docs/performance.md.
    forces    True: also each step's contacts, as `quasistep run --forces` writes them (a
              dict, below). Each world is then stepped on its own (the same states, bitwise,
              at the per-world speed).
    derivatives  True: also every step's exact derivatives (docs/derivatives.md), as
              Scene.step(..., derivatives=True) gives them: A (N, T, nx, nx), B (N, T, nx,
              n_commands) and one_sided (N, T) bool, step l + 1 of world i at [i, l]; NaN
              where a step was not solved or has no derivative. Each world is then stepped
              on its own (the same states, bitwise, at the per-world speed).

    Returns (states, status), then failed_step with return_failed_step, then final_states
    with return_states, then the contacts with forces, then A, B, one_sided with derivatives:
    status is an (N,) int8 array of Status values; failed_step (N,)
    int32 is the step that failed, counted from 1, or -1; final_states is a list of N
    States, each world's after the rollout (or before its failed step) with its q, t, step
    and the stepper's memory: a rollout from them continues every world exactly (an array of
    configurations would restart the memory, e.g. the Anitescu step's impedance reference).
    The contacts are a dict of (N, T, n_slots) arrays, slot k of world i's step l + 1 at
    [i, l, k]: "phi" (m, each slot's gap where its step's problem held it), "normal_impulse"
    and "tangent_impulse" (N s; named "..._times_k" for Halm & Posa's model, whose impulses
    are known up to a factor k) of solved steps, NaN where a slot was not active or a step
    not solved; "active" (bool), and "pair" (n_slots names, the pair of each slot).
    A world whose step fails stops there: its states after the failed step (and its final
    state) are NaN; the other worlds go on. Each world's numbers are bitwise those of
    `quasistep run` (and of Scene.step) for that world, whatever N or threads. The arrays
    given are read while the call runs: do not change them from another thread meanwhile.
    """
    if not isinstance(scene, Scene):
        scene = load(scene)
    if steps is not None:
        steps = _integer(steps, "steps", 0, _INT_MAX - 1)
    threads = _integer(threads, "threads", 0)
    if isinstance(q0, State) or (isinstance(q0, (list, tuple)) and q0 and isinstance(q0[0], State)):
        starts = q0 if isinstance(q0, State) else list(q0)
    else:
        starts = _array(q0, "q0")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ValueError("params must be a dict {parameter path: values}, got " + type(params).__name__)
    params = {k: _array(v, f"params[{k!r}]") for k, v in params.items()}
    states, status, failed, finals, contacts, derivs = _quasistep.rollout(
        scene, starts, _array(commands, "commands"), steps, None if h is None else _number(h, "h"), threads,
        bool(trajectory), bool(return_states), params, bool(forces), bool(derivatives))
    return ((states, status) + ((failed,) if return_failed_step else ()) + ((finals,) if return_states else ())
            + ((contacts,) if forces else ()) + (tuple(derivs) if derivatives else ()))


def render(scene, states, forces=None, path=None, world=None, params=None, h=None):
    """Draws a rollout as the HTML replay `quasistep run --html` writes (one self-contained
    page: the bodies at every row, play / pause and a time slider, and with forces each
    step's contact points, friction cones and impulses).

    scene   the Scene (or path) the states belong to.
    states  one world's rows: a (T + 1, nq) array (rollout's states[i]; world=i then picks
            that world's forces and params), or a rollout's (N, T + 1, nq) with world=i, or
            a list of States (drawn at their times). Rows
            after a failed step (NaN) are left out and the page says where the world stopped.
    forces  the contacts dict of rollout(..., forces=True) (with world=i for its N worlds),
            or None: no impulses drawn.
    params  the per-world parameters given to rollout (values of world i with world=i, or
            one number each): the friction cones and sizes drawn are that world's.
    h       the step size the rows are apart (default: the scene's step.h); row l is drawn
            at t = l h (accumulated as the steppers' clock), a list of States at their t.
    path    the file to write: written whole or not at all (a temporary file renamed), and
            returned. None: the page is returned as a str.
    """
    if not isinstance(scene, Scene):
        scene = load(scene)
    if isinstance(states, State) or (isinstance(states, (list, tuple)) and states and isinstance(states[0], State)):
        rows = [states] if isinstance(states, State) else list(states)
        if world is not None:
            raise ValueError("world= picks a world of a rollout's (N, T + 1, nq) array; a list of States is one world")
        q = _np.array([_np.asarray(s) for s in rows], dtype=_np.float64)
        t = _np.array([s.t for s in rows], dtype=_np.float64)
    else:
        q = _array(states, "states")
        if q.ndim == 3:
            if world is None:
                if q.shape[0] != 1:
                    raise ValueError(f"states holds {q.shape[0]} worlds: pass world=i to draw one")
                world = 0
            world = _integer(world, "world", 0, q.shape[0] - 1)
            q = q[world]
        elif world is not None:  # one world's rows (states[i]): world= picks its forces and params
            world = _integer(world, "world", 0)
        if q.ndim != 2:
            raise ValueError(f"states has shape {q.shape}; expected (T + 1, nq) or (N, T + 1, nq)")
        if h is None:
            h = scene.h
            if h is None:
                raise ValueError(f"{scene.source}: the scene has no step.h: pass h")
        h = _number(h, "h")
        t = _np.empty(q.shape[0])
        clock = 0.0
        for l in range(q.shape[0]):
            t[l] = clock
            clock += h
    finite = _np.all(_np.isfinite(q), axis=1)
    rows = int(_np.argmin(finite)) if not finite.all() else q.shape[0]
    if rows == 0:
        raise ValueError("states: the first row is not finite (a world that failed at its first step?)")
    stopped = "" if rows == q.shape[0] else f"step {rows}: not solved (no state after it)"
    q, t = _np.ascontiguousarray(q[:rows]), _np.ascontiguousarray(t[:rows])
    normal = tangent = None
    scaled = False
    if forces is not None:
        if not isinstance(forces, dict) or "phi" not in forces:
            raise ValueError("forces must be the contacts dict rollout(..., forces=True) returns")
        scaled = "normal_impulse_times_k" in forces
        suffix = "_times_k" if scaled else ""
        normal, tangent = (_array(forces["normal_impulse" + suffix], "forces"),
                           _array(forces["tangent_impulse" + suffix], "forces"))
        if normal.ndim == 3:
            if world is None:
                if normal.shape[0] != 1:
                    raise ValueError(f"forces hold {normal.shape[0]} worlds: pass world=i to draw one")
                world = 0
            if world >= normal.shape[0]:
                raise ValueError(f"world={world}, but forces hold {normal.shape[0]} worlds")
            normal, tangent = normal[world], tangent[world]
        normal, tangent = _np.ascontiguousarray(normal), _np.ascontiguousarray(tangent)
    values = {}
    for k, v in (params or {}).items():
        v = _np.asarray(v, dtype=_np.float64)
        if v.ndim == 1:
            if world is None:
                raise ValueError(f"params[{k!r}] holds one value per world: pass world=i")
            if world >= v.shape[0]:
                raise ValueError(f"world={world}, but params[{k!r}] holds {v.shape[0]} values")
            v = v[world]
        values[str(k)] = float(v)
    page = _quasistep.render(scene, q, t, normal, tangent, scaled, values, stopped, "quasistep.render")
    if path is None:
        return page
    path = _os.fspath(path)
    # Written beside the target and renamed: never a partial page under the name asked for
    # (created with open(..., "x"), so the file's mode follows the umask as the CLI's do).
    temporary = f"{path}.tmp-{_os.getpid()}-{_os.urandom(4).hex()}"
    try:
        with open(temporary, "x", encoding="utf-8") as f:
            f.write(page)
        _os.replace(temporary, path)
    except BaseException:
        if _os.path.exists(temporary):
            _os.unlink(temporary)
        raise
    return path


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
    samples = _integer(samples, "samples", -2**63)  # the library says why fewer than 1 is refused
    seed = _integer(seed, "seed", 0, 2**64 - 1)
    threads = _integer(threads, "threads", 0)
    trajectories = _integer(trajectories, "trajectories", 0, _INT_MAX)
    return _quasistep.mc(scene, samples, seed, threads, trajectories)


def solve_lcp(M, q, free=0, method="lemke", node_limit=None):
    """Solves the LCP  w = M z + q, z >= 0, w >= 0, z.w = 0.

    With free > 0 the first `free` variables are free and their rows are equalities (a mixed
    LCP). n <= 128.

    method="lemke" (the default): Lemke's method; returns (status, z, w): z and w are numpy
    arrays when status is Status.solved (a verified solution), else None; as `quasistep lcp`.
    method="exact" (the enumeration, with a certificate when no solution exists) or "auto"
    (Lemke, then the enumeration if Lemke ends on a ray or its limit), with at most
    node_limit nodes (default 10000): returns the dict `quasistep lcp --method ...` prints (status, method,
    z, w, residual, nodes, certificate, ...; docs/cli.md).
    """
    method = str(method)
    if method not in ("lemke", "exact", "auto"):
        raise ValueError(f"method must be lemke, exact or auto, got {method}")
    if method == "lemke" and node_limit is not None:
        raise ValueError("node_limit: needs method exact or auto (Lemke has no nodes)")
    node_limit = _integer(10000 if node_limit is None else node_limit, "node_limit", 1, 1000000)
    M, q, free = _array(M, "M"), _array(q, "q"), _integer(free, "free", 0, _INT_MAX)
    if method == "lemke":
        return _quasistep.solve_lcp(M, q, free)
    return _json.loads(_quasistep.solve_lcp_json(M, q, free, method, node_limit))


def _plain(value, path):
    """The problem with numpy arrays as lists; a non-finite number is named by its path."""
    if isinstance(value, dict):
        return {k: _plain(v, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
    if isinstance(value, _np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, _np.generic):
        value = value.item()
    if isinstance(value, float) and not _np.isfinite(value):
        raise ValueError(f"{path}: {value} is not a finite number")
    return value


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
    node_limit = _integer(node_limit, "node_limit", 1, 1000000)
    path = None
    if isinstance(problem, dict):
        text = _json.dumps(_plain(problem, ""), allow_nan=False)
    elif isinstance(problem, (str, _os.PathLike)):
        text = _os.fspath(problem)
        if not text.lstrip().startswith("{"):
            path = text
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, ValueError) as e:
                raise ValueError(f"cannot read problem file {path!r}: {getattr(e, 'strerror', None) or e}") from None
    else:
        raise TypeError("solve_ucp() takes a dict, a JSON string or a path, got " + type(problem).__name__)
    try:
        answer = _quasistep.solve_ucp_json(text, str(method), bool(all), node_limit)
    except ValueError as e:
        raise ValueError(f"{path}: {e}" if path else str(e)) from None
    return _json.loads(answer)
