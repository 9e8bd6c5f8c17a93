"""Helpers of bench/bench_rci.py: child processes, the two floors
(TCP echo, two-process rclpy Trigger), a node launcher with opt-in
experiments, and an opt-in timestamp tracer. No ROS import at package level."""
