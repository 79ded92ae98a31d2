"""The README's quick-start code runs as written and says what it claims."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_readme_python_blocks_run_in_order():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    # the quick-start's model amplifies A->T, and its comment says so
    assert namespace["res"].a_to_t.value > 0


def test_demo_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "biasamp", "demo"], capture_output=True, text=True, check=True).stdout
    # the demo's model amplifies A->T (reading "amplified") and not T->A
    rows = {tuple(line.split()[:2]): line for line in out.splitlines() if line.startswith("BiasAmp->")}
    assert "amplified" in rows[("BiasAmp->", "A->T")]
    assert "amplified" not in rows[("BiasAmp->", "T->A")]


def test_docs_python_blocks_run():
    for page in sorted((ROOT / "docs").glob("*.md")):
        namespace: dict = {}
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S):
            exec(compile(block, str(page), "exec"), namespace)
