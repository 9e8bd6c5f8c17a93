"""bsal_ros: ROS 2 bridge for the Brak robot (BSAL)."""
