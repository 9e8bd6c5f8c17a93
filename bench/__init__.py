"""Benchmarks and the fault campaign, run from a source checkout (not installed).

A package so that the fault-campaign helpers (:mod:`bench.faults`) can be
imported by ``bench/fault_campaign.py`` and by the tests.
"""
