"""The committed mango_sdk/_generated must be exactly what tools/sdk/generate.sh makes from openapi.yaml."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[5]


def test_generated_models_match_openapi() -> None:
    run = subprocess.run(
        ["bash", str(ROOT / "tools/sdk/generate.sh"), "--check", "python"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, f"generated models drifted from openapi.yaml:\n{run.stderr}"
    assert "is up to date" in run.stderr
