"""Single-process bring-up: the whole bridge in one executor.

For machines without `ros2 launch` (the PyPI wheels have no `launch`); on a
ROS install `ros2 launch bsal_ros brak.launch.py` starts the same nodes as
separate processes. This is manual composition: the hardware node, the RCI
gateway and the RDI gateway share one MultiThreadedExecutor.

    brak_bringup                                  # simulated Brak, default ports
    brak_bringup --bus-backend smbus2 --i2c-bus 1 # the real boards
    brak_bringup --namespace brak2 --frame-prefix brak2/ --rci-port 7660 \
                 --rdi-realtime-port 7661 --rdi-ca-port 7662   # a second robot
    brak_bringup --duration 30                    # stop by itself after 30 s
    brak_bringup -- --ros-args -p hardware_node:rate_scale:=2.0   # raw ROS args
"""
import argparse
import signal
import sys
import threading

import rclpy
from rclpy.executors import (ExternalShutdownException, MultiThreadedExecutor,
                             SingleThreadedExecutor)
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions

from bsal_ros.paths import shipped


def parse_args(argv):
    p = argparse.ArgumentParser(prog='brak_bringup', description=__doc__.split('\n\n')[0])
    p.add_argument('--namespace', default='', help='ROS namespace of every node')
    p.add_argument('--config', default=str(shipped('config', 'brak.yaml')),
                   help='hardware node params file (robot description)')
    p.add_argument('--gateways-config', default=str(shipped('config', 'gateways.yaml')),
                   help='RCI/RDI gateway params file')
    p.add_argument('--bus-backend', choices=['sim', 'smbus2'], help='I2C backend')
    p.add_argument('--i2c-bus', type=int, help='N of /dev/i2c-N (smbus2 backend)')
    p.add_argument('--frame-prefix', help='prefix of every frame id (e.g. brak2/)')
    p.add_argument('--rci-host', help='RCI gateway bind address')
    p.add_argument('--rci-port', type=int, help='RCI gateway TCP port (0: any free)')
    p.add_argument('--rdi-host', help='RDI gateway bind address')
    p.add_argument('--rdi-realtime-port', type=int, help='RDI real-time stream port')
    p.add_argument('--rdi-ca-port', type=int, help='RDI control-application stream port')
    p.add_argument('--no-rci', action='store_true', help='do not start the RCI gateway')
    p.add_argument('--no-rdi', action='store_true', help='do not start the RDI gateway')
    p.add_argument('--executor', choices=['auto', 'single', 'multi'], default='auto',
                   help='rclpy executor of the composed nodes; auto: single on the '
                        'simulated bus (lower latency), multi on smbus2 (a slow I2C '
                        'write in a command service must not stall the other callbacks)')
    p.add_argument('--duration', type=float, default=0.0,
                   help='seconds to run, then stop cleanly (0: until Ctrl-C)')
    p.add_argument('ros_args', nargs=argparse.REMAINDER,
                   help='after "--": arguments for rclpy (--ros-args ...)')
    return p.parse_args(argv)


def overrides(pairs):
    """Parameter overrides for the options the user actually gave."""
    return [Parameter(name, value=value) for name, value in pairs if value is not None]


class Bringup:
    """The composed nodes and their executor; `close()` leaves the robot stopped."""

    def __init__(self, args, context=None):
        from bsal_ros.nodes.hardware_node import HardwareNode
        ns = args.namespace or None
        self.context = context
        self.nodes = []
        self.hardware = HardwareNode(namespace=ns, context=context, parameter_overrides=overrides([
            ('bus_backend', args.bus_backend), ('i2c_bus', args.i2c_bus),
            ('frame_prefix', args.frame_prefix)]))
        self.nodes.append(self.hardware)
        self.rci = self.rdi = None
        if not args.no_rci:
            from bsal_ros.nodes.rci_gateway import RciGatewayNode
            self.rci = RciGatewayNode(namespace=ns, context=context, parameter_overrides=overrides([
                ('host', args.rci_host), ('port', args.rci_port)]))
            self.nodes.append(self.rci)
        if not args.no_rdi:
            from bsal_ros.nodes.rdi_gateway import RdiGatewayNode
            self.rdi = RdiGatewayNode(namespace=ns, context=context, parameter_overrides=overrides([
                ('host', args.rdi_host), ('realtime_port', args.rdi_realtime_port),
                ('ca_port', args.rdi_ca_port)]))
            self.nodes.append(self.rdi)
        # Polling runs in the hardware node's own thread and sockets in the
        # gateways' asyncio threads; what runs in callbacks is short, except a
        # command service's register writes, which on a real, sick I2C bus can
        # take retries. rclpy's single-threaded executor answers a service
        # about 3x faster than its thread pool on this 2-core class of machine.
        choice = getattr(args, 'executor', 'auto')
        if choice == 'auto':
            choice = 'multi' if self.hardware.p['bus_backend'] == 'smbus2' else 'single'
        self.executor_kind = choice
        if choice == 'multi':
            self.executor = MultiThreadedExecutor(num_threads=4, context=context)
        else:
            self.executor = SingleThreadedExecutor(context=context)
        for node in self.nodes:
            self.executor.add_node(node)

    def start(self):
        """Open the gateways' sockets; returns {'rci': port, 'rdi': {stream: port}}."""
        ports = {}
        if self.rci is not None:
            ports['rci'] = self.rci.start()
        if self.rdi is not None:
            ports['rdi'] = self.rdi.start()
        return ports

    def close(self):
        """Stop the gateways while the executor still serves the hardware
        node (their safety stops are service calls to it), then close the
        hardware node, which resets every board (motors off), then destroy."""
        serving = threading.Event()
        serving.set()

        def serve():
            while serving.is_set():
                try:
                    self.executor.spin_once(timeout_sec=0.05)
                except Exception:  # noqa: BLE001 - context gone: nothing left to serve
                    break
        server = threading.Thread(target=serve, name='bringup-close', daemon=True)
        server.start()
        try:
            for gateway in (self.rci, self.rdi):
                if gateway is not None:
                    self._quietly(gateway.stop, gateway)
        finally:
            serving.clear()
            server.join(2.0)
        self._quietly(self.hardware.close, self.hardware)
        for node in reversed(self.nodes):
            self._quietly(node.destroy_node, node)
        self.executor.shutdown()

    @staticmethod
    def _quietly(step, node):
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - keep closing the others
            print(f'[bringup] closing {node.get_name()}: {exc}', file=sys.stderr)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    extra = [a for a in args.ros_args if a != '--']
    if extra[:1] == ['--ros-args']:
        extra = extra[1:]
    # Our own signal handling: on Ctrl-C or SIGTERM the nodes are closed while
    # the context is still up, so the motors are stopped through the bus first.
    rclpy.init(args=['brak_bringup', '--ros-args', '--params-file', args.config,
                     '--params-file', args.gateways_config] + extra,
               signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if args.duration > 0:
        timer = threading.Timer(args.duration, stop.set)
        timer.daemon = True     # must not keep the process alive after Ctrl-C
        timer.start()
    bringup = None
    try:
        bringup = Bringup(args)
        ports = bringup.start()
        parts = [f'namespace {args.namespace or "/"}', f'bus {bringup.hardware.p["bus_backend"]}',
                 f'{bringup.executor_kind}-threaded executor']
        if 'rci' in ports:
            parts.append(f'RCI {bringup.rci.p["host"]}:{ports["rci"]}')
        if 'rdi' in ports:
            streams = ', '.join(f'{name} :{port}' for name, port in ports['rdi'].items())
            parts.append(f'RDI {bringup.rdi.p["host"]} ({streams})')
        bringup.hardware.get_logger().info(
            'Brak is up: ' + ', '.join(parts) + ' (Ctrl-C stops it)')
        while not stop.is_set() and rclpy.ok():
            bringup.executor.spin_once(timeout_sec=0.2)
        bringup.hardware.get_logger().info('stopping: motors off, sockets closed')
    except ExternalShutdownException:
        pass
    finally:
        if bringup is not None:
            bringup.close()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
