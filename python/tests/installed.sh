#!/usr/bin/env bash
# The Python package as `cmake --install` leaves it: installs this build into a temporary
# prefix and imports the package from there (not from the build tree), from another folder,
# then rolls out an example and compares its last state with the installed CLI's.
# usage: installed.sh BUILD_DIR WORK_DIR PYTHON SITE_DIR SCENE.json
#   SITE_DIR: QUASISTEP_PYTHON_INSTALL_DIR, relative to the prefix
set -euo pipefail
build=$1 work=$2 python=$3 site=$4 scene=$5
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
"$prefix/bin/quasistep" run "$scene" --out "$work/trajectory.csv" 2>/dev/null
cd "$work"
PYTHONPATH="$prefix/$site" PYTHONDONTWRITEBYTECODE=1 "$python" - "$prefix" "$scene" "$work/trajectory.csv" <<'PY'
import os, sys
import quasistep
prefix, scene, csv = sys.argv[1:]
here = os.path.realpath(quasistep.__file__)
assert here.startswith(os.path.realpath(prefix)), f"imported {here}, not the installed package"
states, status = quasistep.rollout(scene)
assert status[0] == quasistep.Status.solved
last = [l for l in open(csv) if not l.startswith("#")][-1].split(",")
n = quasistep.load(scene).nq
assert states[0, -1].tolist() == [float(v) for v in last[2:2 + n]], "the installed package differs from the CLI"
print(f"quasistep {quasistep.__version__} imported from {os.path.dirname(here)}; {scene}: the CLI's last state")
PY
