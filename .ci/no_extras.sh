#!/usr/bin/env bash
# CI step: biasamp with no optional extra (no torch, matplotlib, pyarrow, dask,
# fairlearn, statsmodels, ...): the core dependencies at their newest versions,
# pytest + hypothesis, and the core tests (.ci/core_tests.txt); every test of an
# optional feature must skip cleanly, none may error.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t deps < <(python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))')
exec bash .ci/_core_venv.sh "${deps[@]}"
