#!/usr/bin/env bash
# Shared by .ci/min_versions.sh and .ci/no_extras.sh: a fresh venv with the core
# dependencies only (pinned as given in "$@"), biasamp without its dependencies,
# pytest + hypothesis, then the core tests (.ci/core_tests.txt, or the paths in
# $BIASAMP_CORE_TESTS). Fails when pytest fails or collects nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT  # the venv is removed on exit, pass or fail
venv="$work/venv"
python3 -m venv "$venv"
# shellcheck disable=SC1091
source "$venv/bin/activate"
python -m pip install --quiet --upgrade pip
pip install --quiet --only-binary=:all: "$@" "pytest>=7" "hypothesis>=6.70"
# biasamp itself, without resolving its dependencies again (they are pinned above).
pip install --quiet --no-deps -e .
python - <<'PY'
import importlib.metadata as md
for name in ("numpy", "scipy", "pandas", "scikit-learn", "joblib", "threadpoolctl", "tqdm", "click"):
    print(f"{name}=={md.version(name)}", end="  ")
print()
PY
if [[ -n "${BIASAMP_CORE_TESTS:-}" ]]; then
    read -r -a tests <<<"$BIASAMP_CORE_TESTS"
else
    mapfile -t tests < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' .ci/core_tests.txt)
fi
# -p no:cacheprovider: the clone stays clean; no xdist here (not installed), one process.
python -m pytest -q -p no:cacheprovider -o addopts="-ra --strict-markers" "${tests[@]}"
