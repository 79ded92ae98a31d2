#!/usr/bin/env bash
# CI step: the declared minimum versions of the core dependencies hold.
# Reads the floors (">=X") of [project] dependencies in pyproject.toml, installs
# exactly those versions (wheels only) in a fresh venv with pytest + hypothesis,
# and runs the core tests (.ci/core_tests.txt). A floor without a wheel for the
# CI's Python fails here: raise it in pyproject.toml (and say so in CHANGELOG.md).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t pins < <(python3 - <<'PY'
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
for dep in deps:
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9.]*)\s*", dep)
    if not m:
        raise SystemExit(f"core dependency without a plain '>=' floor: {dep!r}")
    print(f"{m[1]}=={m[2]}")
PY
)
echo "minimum versions: ${pins[*]}"
exec bash .ci/_core_venv.sh "${pins[@]}"
