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

.PHONY: setup run test test-fast bench faults fuzz legacy clean distclean print-domain

setup:
	@bash scripts/setup.sh

# The whole bridge on the simulated robot, in one process (Ctrl-C stops it).
run: setup
	@echo "[run] ROS_DOMAIN_ID=$(ROS_DOMAIN_ID) ROS_AUTOMATIC_DISCOVERY_RANGE=$(ROS_AUTOMATIC_DISCOVERY_RANGE)"
	@$(ENV) brak_bringup $(RUN_ARGS)

test: setup
	@echo "[test] ROS_DOMAIN_ID=$(ROS_DOMAIN_ID) ROS_AUTOMATIC_DISCOVERY_RANGE=$(ROS_AUTOMATIC_DISCOVERY_RANGE)"
	@cd bsal_ros && ../$(ENV) python -m pytest $(PYTEST_ARGS)

# Only the pure layers (no ROS): seconds.
test-fast: setup
	@cd bsal_ros && ../$(ENV) python -m pytest -m "not ros" $(PYTEST_ARGS)

bench: setup
	@$(ENV) python bench/run_all.py $(BENCH_ARGS)

faults: setup
	@$(ENV) python bench/fault_campaign.py

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
