"""Command lines of our tools: one line and exit code 2 for a bad one."""

from __future__ import annotations

import argparse


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr and exit code 2
    (argparse's own error prints the whole usage first)."""

    def error(self, message: str):
        """Say what is wrong in one line and exit 2."""
        self.exit(2, f"{self.prog}: {message} (--help lists the options)\n")
