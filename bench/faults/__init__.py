"""Fault-campaign helpers: pure Python, no ROS; used by the campaign and the
tests only, so they live here and are not installed with bsal_ros.

* :mod:`.corpus` - a seeded corpus of malformed RCI input built from the
  protocol library with mutations;
* :mod:`.stats` - p50/max summaries, per-process resource snapshots (psutil),
  leak checks;
* :mod:`.ca` - a control application run as its own OS process (so that the
  campaign can SIGKILL it): ``python -m bench.faults.ca --port N --mode drive``.

The campaign itself is ``bench/fault_campaign.py`` (``make faults``); its
results are in docs/FAULTS.md.
"""
