"""Thin rclpy nodes over the pure protocol and hardware layers."""
