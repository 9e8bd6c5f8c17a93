"""The six BSAL device classes, named as bsal_interfaces/DeviceState's CLASS_*.

Pure Python (no ROS), shared by the hardware layer and both gateways' logic;
test/test_device_classes.py checks the names against the generated message.
"""
ULTRASONIC = "ultrasonic"
RELATIVE_ENCODER = "relative_encoder"
ABSOLUTE_ENCODER = "absolute_encoder"
ACCELEROMETER = "accelerometer"
DC_MOTOR = "dc_motor"
PSERVO_MOTOR = "pservo_motor"

SENSOR_CLASSES = (ULTRASONIC, RELATIVE_ENCODER, ABSOLUTE_ENCODER, ACCELEROMETER)
MOTOR_CLASSES = (DC_MOTOR, PSERVO_MOTOR)
ALL_CLASSES = SENSOR_CLASSES + MOTOR_CLASSES
