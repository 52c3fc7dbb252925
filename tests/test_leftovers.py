"""The ``nothing_left_behind`` helper sees what a run leaves, in a folder and in its temporary folder,
and nothing that was there before."""

from __future__ import annotations

import subprocess
import sys
import tempfile

import pytest

from leftovers import nothing_left_behind


def test_a_new_file_in_a_watched_folder_is_named(tmp_path):
    (tmp_path / "input.csv").write_text("a\n1\n")
    with pytest.raises(AssertionError, match=r"left behind: .*out\.csv"), nothing_left_behind(tmp_path):
        (tmp_path / "out.csv").write_text("partial")


def test_a_file_a_subprocess_leaves_in_its_temporary_folder_is_named(tmp_path):
    script = "import tempfile; tempfile.NamedTemporaryFile(delete=False, prefix='stray')"
    with pytest.raises(AssertionError, match=r"\$TMPDIR/stray"), nothing_left_behind(tmp_path) as env:
        subprocess.run([sys.executable, "-c", script], env=env, check=True)


def test_what_was_there_before_and_a_clean_run_pass(tmp_path):
    (tmp_path / "input.csv").write_text("a\n1\n")
    with nothing_left_behind(tmp_path) as env:
        with tempfile.TemporaryDirectory() as scratch:  # removed by the run itself
            assert scratch.startswith(env["TMPDIR"])
        (tmp_path / "input.csv").write_text("a\n2\n")  # changed, not new
    with nothing_left_behind(tmp_path, allowed=("out.csv",)):
        (tmp_path / "out.csv").write_text("a\n1\n")
