"""README.md, "Python in five minutes": its command line runs its program verbatim, also when
another python3 without numpy comes first on the PATH (pyenv, conda), and a virtual
environment made from Debian's python3 with --system-site-packages runs it too."""
import os
import re
import stat
import subprocess

import pytest

from conftest import ROOT

DEBIAN_PYTHON = "/usr/bin/python3"


def readme_python():
    """The section's shell line (without its comment) and its program."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    section = text[text.index("## Python in five minutes"):]
    section = section[:section.index("\n## ", 1)]
    command = re.search(r"```sh\n(.*?)\n```", section, re.S).group(1).split("#")[0].strip()
    program = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    return command, program


@pytest.fixture
def readme_build():
    """The README's command names build/python: only a build in build/ can run it verbatim."""
    if not os.path.exists(DEBIAN_PYTHON):
        pytest.skip(f"no {DEBIAN_PYTHON} (the README's interpreter: Debian's)")
    here = os.environ.get("PYTHONPATH", "")
    if not here or not os.path.samefile(here, os.path.join(ROOT, "build", "python")):
        pytest.skip("this build is not build/, which the README's command names")


def check_output(r):
    assert r.returncode == 0, r.stderr
    rate, low, high = (float(v) for v in r.stdout.split()[:3])
    assert low < rate < high and 0.85 < rate < 0.95


def test_the_command_runs_the_program_with_a_python3_without_numpy_first_on_the_path(tmp_path, readme_build):
    command, program = readme_python()
    assert command == f"PYTHONPATH=build/python {DEBIAN_PYTHON}"
    other = tmp_path / "bin"
    other.mkdir()
    fake = other / "python3"
    fake.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'numpy'\" >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, PATH=f"{other}:{os.environ.get('PATH', '')}")
    r = subprocess.run(["bash", "-c", f"{command} -"], input=program, cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    check_output(r)


def test_a_virtual_environment_of_debians_python3_runs_the_program(tmp_path, readme_build):
    _, program = readme_python()
    venv = tmp_path / "venv"
    # --without-pip: the venv needs no network and no python3-venv's ensurepip for this.
    subprocess.run([DEBIAN_PYTHON, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    env = dict(os.environ, PYTHONPATH=os.path.join("build", "python"))
    r = subprocess.run([str(venv / "bin" / "python"), "-"], input=program, cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    check_output(r)
