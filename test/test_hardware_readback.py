"""A motor command is read back at once, not at the board's next poll.

Without it a stop shows in `device_states` only after up to one poll period
(50 ms for the drive), which the fault campaign saw as 130 ms worst cases
from a closed RCI socket to an observed stop.
"""
from bsal_ros.hardware.robot import MODE_DUTY_CYCLE
from bsal_ros.hardware.values import speedval_sign

from test_hardware_helpers import make_robot, run


def drive_updates(updates):
    return [u for u in updates if u.board.name == 'drive']


def test_a_command_makes_its_board_due_now_and_wakes_the_poller():
    robot, clock = make_robot()
    run(robot, clock, 0.2)
    robot.wake.clear()
    drive = robot.boards['drive']
    assert drive.next_due > clock.t          # between two scheduled polls

    assert robot.set_motors('dc_motor', [(0, MODE_DUTY_CYCLE, 20.0)]).ok
    assert robot.wake.is_set() and drive.next_due <= clock.t
    ups = drive_updates(robot.cycle())       # no time has passed
    assert ups and speedval_sign(ups[0].snapshots[0].speedval) == 1

    robot.wake.clear()
    assert robot.set_motors('dc_motor', [(0, MODE_DUTY_CYCLE, 0.0)]).ok   # the stop path
    assert robot.wake.is_set() and drive.next_due <= clock.t
    ups = drive_updates(robot.cycle())
    assert ups and speedval_sign(ups[0].snapshots[0].speedval) == 0


def test_refused_commands_do_not_cause_extra_polls():
    robot, clock = make_robot()
    run(robot, clock, 0.2)
    robot.wake.clear()
    due = robot.boards['drive'].next_due
    assert not robot.set_motors('dc_motor', [(0, MODE_DUTY_CYCLE, 500.0)]).ok
    assert not robot.wake.is_set() and robot.boards['drive'].next_due == due
