"""A motor board's refresh() after a poll (latched-stop re-send or watchdog
keep-alive) leaves a failed write to the next poll: the board is marked down,
nothing is raised into the poll loop."""
from test_hardware_helpers import make_robot, run, run_until


def test_a_keepalive_that_fails_marks_the_board_down_and_raises_nothing():
    robot, clock = make_robot()
    board = robot.boards["drive"]
    run(robot, clock, 0.5)
    assert board.up and board.ok and board.command_timeout_ms
    robot.bus.simulation.control("set_fault", "drive", "missing")
    board.timeout_written = True      # the keep-alive path, not the timeout write
    board.refresh()                   # the write fails: BoardError, caught
    assert not board.up
    robot.bus.simulation.control("clear_faults", "drive")
    assert run_until(robot, clock, lambda: board.up, limit=5.0)
