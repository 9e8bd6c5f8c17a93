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

"""Dropping a node's subscription, client or timer while the node lives on.

rclpy's callback group keeps a weak reference to every entity ever added to
it, and ``Node.destroy_*`` leaves it there, dead: a node that makes and drops
entities as it runs (a subscription per watched topic, a client per
discovered node, a timer per homing goal) grows its groups for good, a slow
leak in a soak. :func:`destroy` destroys the entity and takes it out of its
group.
"""

from __future__ import annotations

import weakref

from rclpy.client import Client
from rclpy.subscription import Subscription
from rclpy.timer import Timer


def destroy(node, entity) -> bool:
    """``node.destroy_subscription`` / ``destroy_client`` / ``destroy_timer`` for
    ``entity``, and its callback group forgets it; what the destroy returned."""
    if isinstance(entity, Subscription):
        done = node.destroy_subscription(entity)
    elif isinstance(entity, Client):
        done = node.destroy_client(entity)
    elif isinstance(entity, Timer):
        done = node.destroy_timer(entity)
    else:
        raise TypeError(f"destroy: not a subscription, client or timer: {entity!r}")
    group = getattr(entity, "callback_group", None)
    if group is not None:
        # a subscription brought its QoS event handlers into the group too;
        # while each lives, a new weak reference equals the stored one
        for member in [entity, *getattr(entity, "event_handlers", ())]:
            group.entities.discard(weakref.ref(member))
    return done
