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

"""Command lines of our tools: one line and exit code 2 for a bad one."""

from __future__ import annotations

import argparse


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr and exit code 2
    (argparse's own error prints the whole usage first)."""

    def error(self, message: str):
        """Say what is wrong in one line and exit 2."""
        self.exit(2, f"{self.prog}: {message} (--help lists the options)\n")

    def refuse(self, message: str):
        """Say in one line why a well-formed command line cannot be done (a
        file missing, a folder not writable), ``message`` naming the fix, and
        exit 2. Raises SystemExit."""
        self.exit(2, f"{self.prog}: {message}\n")
