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
"""The protocol layer's registry of sensor codes and item layouts.

The RCI and RDI codecs read their sub-code and layout tables
(:data:`~.rci_tables.SENSOR_DATA`, :data:`~.rci_tables.SENSOR_SUBS`, the RDI
``_LAYOUTS``) from here: Brak's own sensors are in those tables from the
start; a new sensor kind adds its sub-codes and layouts with the two
functions below (its kind module does, :mod:`bsal_ros.kinds`), and every
codec table built from them (encoders' fast paths, the RDI decode plans) is
rebuilt. Pure protocol: no knowledge of boards, devices or ROS.
"""

from __future__ import annotations

from ._items import Layout
from .constants import GetSensorStatus, RciCode, RdiCode

__all__ = ["register_rci_sensor", "register_rdi_item", "rci_sensor_layout", "rdi_item_layout",
           "rdi_item_layouts"]


def _check_layout(layout: Layout, what: str) -> None:
    if not isinstance(layout, Layout) or layout.kind != "named" or layout.cls is None:
        raise ValueError(f"{what}: the item layout must be a named Layout (fmt, 'named', cls)")


def rci_sensor_layout(sub: int) -> Layout | None:
    """The DATA item layout of an RCI sensor sub-code.

    :param sub: the sensor sub-code.
    :returns: the layout, or None when ``sub`` is not known.
    """
    from . import rci_tables
    s = rci_tables.SENSOR_SUBS.get(int(sub))
    return None if s is None else rci_tables.SENSOR_DATA.get(s)


def register_rci_sensor(sub: int, layout: Layout) -> None:
    """Make an RCI sensor sub-code legal in CAcSn, CGtSnIq and CGtSnRp.

    Registering the same pair again is a no-op. Thread: at start, before any
    encoder or decoder runs.

    :param sub: the sensor sub-code, a byte.
    :param layout: its DATA items, a named :class:`Layout`.
    :raises ValueError: ``sub`` is not a byte or has another layout, the
        layout is not a named one, or its item class is another sub-code's.
    """
    from . import rci_encode, rci_tables as t
    sub = int(sub)
    _check_layout(layout, f"RCI sensor sub-code {sub:#04x}")
    if not 0 <= sub <= 0xFF:
        raise ValueError(f"RCI sensor sub-code {sub!r} is not a byte")
    old = rci_sensor_layout(sub)
    if old is not None:
        if old is layout:
            return
        raise ValueError(f"RCI sensor sub-code {sub:#04x} is taken by {old.cls.__name__}")
    if layout.cls in t.SENSOR_DATA_TYPE:
        raise ValueError(f"{layout.cls.__name__} already is the data of another sensor sub-code")
    t.SENSOR_SUBS[sub] = sub          # the same dict SUB_CODES uses for CAcSn, CGtSn*
    t.SENSOR_DATA[sub] = layout
    t.SENSOR_DATA_TYPE[layout.cls] = sub
    t.SENSOR_REPLY[(sub, GetSensorStatus.STATUS)] = t.L_STATUS
    t.SENSOR_REPLY[(sub, GetSensorStatus.DATA)] = layout
    rci_encode.rebuild_reply_encoders()


def rdi_item_layout(code: int, sub: int) -> Layout | None:
    """The item layout of an id-carrying RDI packet.

    :param code: RDI-Sn, -Mt or -Ac.
    :param sub: its id_sub_code.
    :returns: the layout, or None when the pair is not legal.
    """
    from . import rdi
    return rdi.layout_of(int(code), int(sub))


def rdi_item_layouts() -> dict:
    """Every legal (code, sub-code) of an id-carrying RDI packet, Brak's and
    the registered kinds'.

    :returns: a new dict (code, sub-code) -> item layout, sorted.
    """
    from . import rdi
    return {key: rdi.layout_of(*key) for key in sorted(rdi.item_keys())}


def register_rdi_item(code: int, sub: int, layout: Layout) -> None:
    """Make an RDI (code, sub-code) legal; the same rules as
    :func:`register_rci_sensor`.

    :param code: RDI-Sn, -Mt or -Ac.
    :param sub: the sub-code, a byte.
    :param layout: its items, a named :class:`Layout`.
    :raises ValueError: another code, ``sub`` not a byte or taken by another
        layout, or a layout that is not a named one.
    """
    from . import rdi
    code, sub = int(code), int(sub)
    if code not in (RdiCode.Sn, RdiCode.Mt, RdiCode.Ac):
        raise ValueError(f"RDI code {code:#06x} carries no id items")
    _check_layout(layout, f"RDI {RdiCode(code).name} sub-code {sub:#04x}")
    if not 0 <= sub <= 0xFF:
        raise ValueError(f"RDI sub-code {sub!r} is not a byte")
    old = rdi_item_layout(code, sub)
    if old is not None:
        if old is layout:
            return
        raise ValueError(f"RDI {RdiCode(code).name} sub-code {sub:#04x} is taken by "
                         f"{old.cls.__name__}")
    rdi.add_layout(code, sub, layout)


#: the codes whose sub-code tables a new sensor kind extends (for the docs)
EXTENDED_CODES = (RciCode.CAcSn, RciCode.CGtSnIq, RciCode.CGtSnRp, RdiCode.Sn)
