# Copyright 2026 The bsal_ros authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# SPDX-License-Identifier: Apache-2.0

"""The generated bsal_interfaces types load and cross a real DDS round trip."""
import threading
import time

from bsal_interfaces.action import HomeSteering
from bsal_interfaces.msg import DeviceState, MotorCommand, Result
from bsal_interfaces.srv import SetMotors
import pytest
import rclpy
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.executors import MultiThreadedExecutor

pytestmark = pytest.mark.ros


def wait_for(future, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not future.done():
        assert time.monotonic() < deadline, "no answer within %.0f s" % timeout
        time.sleep(0.005)
    return future.result()


@pytest.fixture
def two_nodes(ros_context):
    server = rclpy.create_node("iface_server", context=ros_context)
    client = rclpy.create_node("iface_client", context=ros_context)
    # before the executor spins: rclpy's ActionClient joins its node before
    # it has its lock, and a spin in that window fails
    client.home_steering = ActionClient(client, HomeSteering, "home_steering")
    executor = MultiThreadedExecutor(context=ros_context)
    executor.add_node(server)
    executor.add_node(client)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    yield server, client
    executor.shutdown()
    server.destroy_node()
    client.destroy_node()


def test_constants_are_generated():
    assert DeviceState.CLASS_DC_MOTOR == "dc_motor"
    assert MotorCommand.MODE_VELOCITY == 1
    assert Result.REFUSED == 2


def test_service_round_trip_carries_nested_types(two_nodes):
    server, client = two_nodes
    seen = []

    def handle(request, response):
        seen.append(request)
        total = sum(c.value for c in request.commands)
        response.result.code = Result.OK
        response.result.message = "sum=%.1f" % total
        return response

    server.create_service(SetMotors, "set_motors", handle)
    cli = client.create_client(SetMotors, "set_motors")
    assert cli.wait_for_service(timeout_sec=10.0)

    request = SetMotors.Request(device_class=DeviceState.CLASS_DC_MOTOR, commands=[
        MotorCommand(id=0, mode=MotorCommand.MODE_DUTY_CYCLE, value=-20.0),
        MotorCommand(id=1, mode=MotorCommand.MODE_VELOCITY, value=1.5),
    ])
    response = wait_for(cli.call_async(request))
    assert response.result.code == Result.OK
    assert response.result.message == "sum=-18.5"
    assert [c.id for c in seen[0].commands] == [0, 1]
    assert seen[0].commands[0].mode == MotorCommand.MODE_DUTY_CYCLE


def test_action_goal_with_feedback_and_result(two_nodes):
    server, client = two_nodes

    def execute(goal_handle):
        for step in range(3):
            goal_handle.publish_feedback(HomeSteering.Feedback(
                angle=0.1 * step, progress=(step + 1) / 3.0, phase="seeking"))
            time.sleep(0.02)
        goal_handle.succeed()
        return HomeSteering.Result(result=Result(code=Result.OK), angle=0.0, duration_s=0.06)

    ActionServer(server, HomeSteering, "home_steering", execute,
                 goal_callback=lambda goal: GoalResponse.ACCEPT,
                 cancel_callback=lambda handle: CancelResponse.ACCEPT)
    action = client.home_steering
    assert action.wait_for_server(timeout_sec=10.0)

    feedback = []
    goal = wait_for(action.send_goal_async(
        HomeSteering.Goal(id=0, timeout_s=5.0),
        feedback_callback=lambda msg: feedback.append(msg.feedback.progress)))
    assert goal.accepted
    result = wait_for(goal.get_result_async()).result
    assert result.result.code == Result.OK
    # Feedback travels on its own topic and may land just after the result.
    deadline = time.monotonic() + 5.0
    while not feedback and time.monotonic() < deadline:
        time.sleep(0.01)
    assert feedback, "no feedback arrived"
    assert feedback == sorted(feedback)
