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

"""End an executable's process at once, keeping what must not be lost.

:func:`bsal_ros.nodes.runtime.run` ends the executables with ``os._exit``
after a clean stop (its docstring says why). ``os._exit`` skips the
interpreter's teardown and its ``atexit`` hooks, so :func:`hard_exit` first
flushes stdout and stderr and, when coverage.py measures the process
(``make test`` starts it in every process through ``COVERAGE_PROCESS_START``),
saves its data, which coverage.py would otherwise save at exit.
"""

import os
import sys


def save_coverage() -> bool:
    """Stop and save coverage.py's measurement of this process, if one runs.

    Returns whether data was saved. coverage.py is never imported here: it
    is in ``sys.modules`` only when it was started.
    """
    coverage = sys.modules.get("coverage")
    current = getattr(getattr(coverage, "Coverage", None), "current", None)
    cov = current() if callable(current) else None
    if cov is None:
        return False
    try:
        cov.stop()
        cov.save()
    except Exception:   # noqa: BLE001 - measuring must never change how a process ends
        return False
    return True


def hard_exit(code: int) -> None:
    """Flush stdout and stderr, save coverage data, then ``os._exit(code)``."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:   # noqa: BLE001 - a closed pipe: nothing left to say
            pass
    save_coverage()
    os._exit(code)
