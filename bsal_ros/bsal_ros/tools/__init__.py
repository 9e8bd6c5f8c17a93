"""Small command-line tools for machines without the ros2 CLI."""
