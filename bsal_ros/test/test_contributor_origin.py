# Copyright 2026 The bsal_ros authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# SPDX-License-Identifier: Apache-2.0

"""Contributor origin (REP-2004 2.ii): every commit since CONTRIBUTING.md
adopted the Developer Certificate of Origin carries a ``Signed-off-by:`` line
naming its author.

The adoption point is found in the history itself (the first commit that
put the rule's name into CONTRIBUTING.md), so the check needs no hash
written down. It needs the history: a tree without ``.git`` (a release
tarball) or a shallow clone skips with the reason.
"""

from __future__ import annotations

import os
from pathlib import Path
import subprocess

import pytest

REPO = Path(__file__).resolve().parents[2]
RULE = "Developer Certificate of Origin"


def git(repo: Path, *args: str) -> str:
    # the toy repositories' identities are their own config's, whatever the caller exports
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
                          check=True, capture_output=True, text=True, env=env).stdout


def adoption(repo: Path) -> str | None:
    """The first commit whose CONTRIBUTING.md names the rule (None: not adopted)."""
    found = git(repo, "log", "--reverse", "--format=%H", "-S", RULE, "--", "CONTRIBUTING.md")
    return found.split()[0] if found.split() else None


def unsigned(repo: Path) -> list[str]:
    """The non-merge commits from the adoption on ("<hash> <subject> (author
    ...)") whose message lacks ``Signed-off-by: <author name> <author email>``."""
    first = adoption(repo)
    if first is None:
        return ["CONTRIBUTING.md never adopted the " + RULE]
    parents = git(repo, "rev-list", "--parents", "-n", "1", first).split()[1:]
    since = [f"^{p}" for p in parents]          # the adoption commit and all after it
    log = git(repo, "log", "--no-merges", "--format=%H%x00%an <%ae>%x00%s%x00%B%x1e",
              "HEAD", *since)
    bad = []
    for entry in filter(None, (e.strip("\n") for e in log.split("\x1e"))):
        sha, author, subject, body = entry.split("\x00", 3)
        trailers = {ln.strip() for ln in body.splitlines()}
        if f"Signed-off-by: {author}" not in trailers:
            bad.append(f"{sha[:10]} {subject[:70]} (author {author})")
    return bad


def commit(repo: Path, message: str, signed: bool) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, *(["-s"] if signed else []))


def new_repo(repo: Path) -> Path:
    """A repository of its own with a CONTRIBUTING.md without the rule."""
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.name", "Ada Example")
    git(repo, "config", "user.email", "ada@example.invalid")
    (repo / "CONTRIBUTING.md").write_text("Contributions are welcome.\n")
    return repo


@pytest.fixture
def toy(tmp_path):
    """A repository of its own: a commit before the rule, the adoption, one signed."""
    repo = new_repo(tmp_path / "toy")
    commit(repo, "before the rule", signed=False)
    (repo / "CONTRIBUTING.md").write_text(f"Sign off: the {RULE}.\n")
    commit(repo, "adopt the rule", signed=True)
    (repo / "a.txt").write_text("a\n")
    commit(repo, "a signed change", signed=True)
    return repo


def test_the_check_passes_signed_commits_and_ignores_the_history_before(toy):
    assert unsigned(toy) == []


def test_the_check_names_an_unsigned_commit(toy):
    (toy / "b.txt").write_text("b\n")
    commit(toy, "an unsigned change", signed=False)
    assert [b.split(" ", 1)[1] for b in unsigned(toy)] == [
        "an unsigned change (author Ada Example <ada@example.invalid>)"]


def test_the_check_wants_the_authors_own_sign_off(toy):
    (toy / "c.txt").write_text("c\n")
    commit(toy, "signed by someone else\n\nSigned-off-by: Bob Other <bob@example.invalid>",
           signed=False)
    assert len(unsigned(toy)) == 1


def test_an_unadopted_rule_is_reported(tmp_path):
    repo = new_repo(tmp_path / "none")
    commit(repo, "no rule", signed=True)
    assert unsigned(repo) == ["CONTRIBUTING.md never adopted the " + RULE]


def test_every_commit_since_the_adoption_is_signed_off():
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout (a release tarball): no history to check")
    if git(REPO, "rev-parse", "--is-shallow-repository").strip() == "true":
        pytest.skip("a shallow clone: the history since the adoption may be cut off")
    assert unsigned(REPO) == [], "commits without their author's Signed-off-by (CONTRIBUTING.md)"
