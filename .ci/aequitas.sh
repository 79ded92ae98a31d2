#!/usr/bin/env bash
# CI step: the aequitas parity tests against the installed peer. aequitas pins pandas < 3
# and brings heavy plotting dependencies, so it gets a venv of its own (the core
# dependencies as aequitas resolves them, biasamp without its dependencies, pytest,
# hypothesis) instead of joining the [dev] environment.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t deps < <(python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))')
BIASAMP_CORE_TESTS="tests/test_parity_aequitas.py" exec bash .ci/_core_venv.sh "${deps[@]}" "aequitas>=1.0"
