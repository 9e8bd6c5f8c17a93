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

# bsal_ros: the two commands are `make run` and `make test` (see README.md).
SHELL := /bin/bash
ENV := scripts/with_env.sh

# DDS discovery never leaves this machine, and each make invocation gets its
# own ROS domain so parallel runs (CI, a developer, a demo) do not cross-talk.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
# `:=` so the id is drawn once: every recipe and the echo see the same one.
ifndef ROS_DOMAIN_ID
ROS_DOMAIN_ID := $(shell echo $$(( ($$$$ % 100) + 1 )))
endif
export ROS_DOMAIN_ID

PYTEST_ARGS ?=
# `make test` runs every test module in a pytest process of its own, in a ROS
# domain no other running module holds, SUITE_JOBS at once; the tests marked
# `alone` (they time a bound) run afterwards with nothing beside them
# (scripts/run_suite.py, docs/DEVELOPING.md). PYTEST_ARGS go to every module's
# pytest; a test file among them picks that module.
# SUITE_JOBS unset: scripts/run_suite.py picks (default_jobs: cores + 1)
SUITE_JOBS ?=
SUITE_ARGS ?=

.PHONY: setup run irsim-demo test coverage-report test-fast bench faults fuzz legacy clean distclean print-domain

setup:
	@bash scripts/setup.sh

# The whole bridge on the simulated robot, in one process (Ctrl-C stops it).
run: setup
	@echo "[run] ROS_DOMAIN_ID=$(ROS_DOMAIN_ID) ROS_AUTOMATIC_DISCOVERY_RANGE=$(ROS_AUTOMATIC_DISCOVERY_RANGE)"
	@$(ENV) brak_bringup $(RUN_ARGS)

# The whole suite under coverage.py (line + branch, bsal_ros/.coveragerc): every
# Python process the tests start is measured too, from its first import of
# bsal_ros (BSAL_COVERAGE_RCFILE and the venv's .pth hook: scripts/coverage_hook.py). Then combine, print the report with its
# total, and fail when the total is under the floor (fail_under) even if pytest passed.
# the book's listing drives ir-sim's robot through the tricycle profile (docs/BASES.md)
irsim-demo: setup
	@$(ENV) bash scripts/irsim_demo.sh

COVERAGE_DIR := $(CURDIR)/build/coverage
# A part of the suite (PYTEST_ARGS with -k, -m or a test file) cannot reach the
# floor: its total is printed, the floor is not applied.
COVERAGE_SUBSET := $(strip $(findstring -k,$(PYTEST_ARGS))$(findstring -m,$(PYTEST_ARGS))$(findstring test/,$(PYTEST_ARGS)))
COVERAGE_FLOOR_ARG := $(if $(COVERAGE_SUBSET),--fail-under=0,)
COVERAGE_ENV := BSAL_COVERAGE_RCFILE=$(CURDIR)/bsal_ros/.coveragerc BSAL_COVERAGE_DIR=$(COVERAGE_DIR)

test: setup
	@echo "[test] ROS_AUTOMATIC_DISCOVERY_RANGE=$(ROS_AUTOMATIC_DISCOVERY_RANGE), a ROS domain per test module"
	@rm -rf $(COVERAGE_DIR) && mkdir -p $(COVERAGE_DIR)
	@status=0; \
	  $(COVERAGE_ENV) $(ENV) python scripts/run_suite.py $(if $(SUITE_JOBS),--jobs $(SUITE_JOBS)) $(SUITE_ARGS) $(PYTEST_ARGS) || status=$$?; \
	  $(MAKE) -s --no-print-directory coverage-report || { [ $$status -ne 0 ] || status=2; }; \
	  exit $$status

# Combine the data of the last `make test` and print the report (build/coverage/;
# run again, it reports the combined data).
coverage-report:
	@cd bsal_ros && export BSAL_COVERAGE_DIR=$(COVERAGE_DIR) && \
	  if ls $(COVERAGE_DIR)/.coverage.* >/dev/null 2>&1; then \
	    ../$(ENV) python -m coverage combine --quiet --rcfile=.coveragerc; fi && \
	  ../$(ENV) python -m coverage report --rcfile=.coveragerc --skip-covered --sort=-cover \
	    $(COVERAGE_FLOOR_ARG) > $(COVERAGE_DIR)/report.txt; rc=$$?; \
	  tail -n 25 $(COVERAGE_DIR)/report.txt; \
	  echo "[coverage] line+branch total: $$(../$(ENV) python -m coverage report --rcfile=.coveragerc --format=total --fail-under=0)% (floor: fail_under in bsal_ros/.coveragerc; full table: build/coverage/report.txt)$(if $(COVERAGE_SUBSET), - part of the suite: floor not applied,)"; \
	  exit $$rc

# Only the pure layers (the tests not marked ros), all in one pytest process:
# about 2,080 tests: 4 min 37 s in a clean clone's CI run on 2 idle cores,
# 5-16 min on 2 cores shared with other suites (2026-12-07). What a module
# changes for the whole process is put back after it
# (bsal_ros/test/shared_state.py, docs/DEVELOPING.md).
test-fast: setup
	@cd bsal_ros && ../$(ENV) python -m pytest -m "not ros" $(PYTEST_ARGS)

bench: setup
	@$(ENV) python scripts/run_bench.py $(BENCH_ARGS)

faults: setup
	@$(ENV) python bsal_ros/test/fault_campaign.py

# Coverage-guided fuzzing of the RCI/RDI decoders and of an RCI session
# (docs/WIRE.md): FUZZ_SECONDS per target; findings go to fuzz-findings/.
FUZZ_SECONDS ?= 60
fuzz: setup
	@$(ENV) python -m bsal_ros.tools.wire_fuzz --target all --seconds $(FUZZ_SECONDS) --findings fuzz-findings $(FUZZ_ARGS)

legacy: setup
	@$(MAKE) -s -C legacy

clean:
	rm -rf build install log .pytest_cache .hypothesis legacy/build fuzz-findings
	rm -f .venv/.stamps/interfaces .venv/.stamps/bsal_ros .venv/.stamps/ament

distclean: clean
	rm -rf .venv

# Prints the domain the recipes use (bsal_ros/test/test_package_layout.py checks it).
print-domain:
	@echo "$(ROS_DOMAIN_ID) $$ROS_DOMAIN_ID"
