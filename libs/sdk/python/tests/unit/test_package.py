"""The wheel: built from this tree, installed with pip into a fresh target, importable with its types;
its version is the server's (root package.json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import tomllib

import mango_sdk

ROOT = Path(__file__).resolve().parents[5]
SDK = ROOT / "libs" / "sdk" / "python"


def test_version_follows_the_server() -> None:
    server = json.loads((ROOT / "package.json").read_text())["version"]
    project = tomllib.loads((SDK / "pyproject.toml").read_text())["project"]["version"]
    assert project == server
    assert server == mango_sdk.SDK_VERSION


def test_the_wheel_pip_installs_and_imports(tmp_path: Path) -> None:
    out = (
        subprocess.run(
            ["bash", str(ROOT / "tools/sdk/run.sh"), "python-wheel", str(tmp_path / "dist")],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    wheel = Path(out)
    assert wheel.name == f"mango_sdk-{mango_sdk.SDK_VERSION}-py3-none-any.whl"
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    assert (target / "mango_sdk" / "py.typed").exists()
    assert (target / "mango_sdk" / "_generated" / "resources.py").exists()
    code = (
        "import mango_sdk, sys; from mango_sdk import Mango, AsyncMango;"
        "c = Mango(base_url='http://127.0.0.1:1', api_key='k');"
        "print(mango_sdk.__file__.startswith(sys.argv[1]), callable(c.files.upload),"
        " callable(AsyncMango(base_url='http://127.0.0.1:1', api_key='k').environments.work.poll))"
    )
    # Only the installed copy is importable (not this source tree); httpx comes from the running venv.
    env = {**os.environ, "PYTHONPATH": str(target)}
    result = subprocess.run(
        [sys.executable, "-c", code, str(target)],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    assert result.stdout.split() == ["True", "True", "True"]


def test_ships_the_root_license_unchanged() -> None:
    assert (SDK / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
