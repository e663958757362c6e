"""What the Python-driven tests (python/tests, tests/browser) share: the repository, the
built CLI (ctest passes it in QUASISTEP_CLI; default build/tools/quasistep), running it,
the examples, and reading the CSVs it writes."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("QUASISTEP_CLI", os.path.join(ROOT, "build", "tools", "quasistep"))


def example(name):
    return os.path.join(ROOT, "examples", name + ".json")


def run_cli(*args, check=True):
    """`quasistep ARGS...` from the repository's root; fails the test on a non-zero exit
    unless check is False."""
    r = subprocess.run([CLI, *map(str, args)], cwd=ROOT, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"quasistep {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
    return r


def read_csv(path):
    """(header, rows as lists of cells) of a CSV the CLI wrote; '#' lines skipped (numbers
    are written with 17 significant digits, so float(cell) reads them back exactly)."""
    header, rows = None, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            cells = line.rstrip("\n").split(",")
            if header is None:
                header = cells
            else:
                rows.append(cells)
    return header, rows
