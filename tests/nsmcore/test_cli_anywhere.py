"""`python -m nsmcore` is a command of the installed project (`make install` installs its packages
editable), not of the checkout's folder: it runs from any working directory, with no PYTHONPATH."""

import os
import subprocess
import sys


def test_the_cli_runs_from_another_folder_without_pythonpath(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-m", "nsmcore", "selfcheck"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("PASSED")
    assert "renderer grammar" in result.stdout  # its data files came along
