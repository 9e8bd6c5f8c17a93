"""Shared helpers of the hardware-layer tests (a fake clock, a robot on it); no tests here."""

from bsal_ros.hardware import Robot, load_description
from bsal_ros.protocol.values import speedval_pack


def speedval_from_duty(percent):
    """speedval of a duty cycle in percent."""
    return speedval_pack(True, percent)


def speedval_from_rad_s(rad_s):
    """speedval of an angular speed in rad/s."""
    return speedval_pack(False, rad_s)


class FakeClock:
    def __init__(self, t=100.0):
        self.t = t

    def __call__(self):
        return self.t


def make_robot(overrides=None, activate=True, **kw):
    clock = FakeClock()
    desc = load_description(overrides=overrides)
    robot = Robot(desc["robot"], clock=clock, wall=clock, **kw)
    robot.start(activate=activate)
    return robot, clock


def run(robot, clock, seconds, dt=0.01, each=None):
    """Advance the fake clock in dt steps, cycling the robot; returns all updates."""
    out = []
    for _ in range(int(round(seconds / dt))):
        clock.t += dt
        out += robot.cycle()
        if each is not None:
            each()
    return out


def run_until(robot, clock, cond, limit=60.0, dt=0.01, each=None):
    t_end = clock.t + limit
    while clock.t < t_end:
        clock.t += dt
        robot.cycle()
        if each is not None:
            each()
        if cond():
            return True
    return False
