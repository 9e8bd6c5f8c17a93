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

"""Brak's page, served by the Foxglove gateway's process (docs/PAGE.md).

The static files of the package share's ``web/`` folder over HTTP on the
gateway's ``host`` and ``page_port`` (HTTPS with the gateway's ``tls``
certificate and key: the same rule off loopback), by
:class:`bsal_ros.foxglove.page_server.PageServer`, whose ``config.json``
tells the page the gateway's WebSocket port. A page that is not built (no
bundle beside ``index.html``) is said once, here.
"""

from __future__ import annotations

from bsal_ros.foxglove.page_server import PageServer
from bsal_ros.paths import share_dir


def serve_page(gateway, scheme: str) -> str:
    """Start the page's server for ``gateway`` (a started FoxgloveGatewayNode; ``scheme``
    ws or wss) when its ``page`` parameter is on, into ``gateway.page`` and
    ``gateway.page_url``; returns the gateway's start line's words about it. OSError:
    its port is taken (the gateway's WebSocket server is closed again)."""
    p = gateway.p
    if not p["page"]:
        return "Brak's page off (page is false)"
    from bsal_ros.nodes.foxglove_gateway import SUBPROTOCOL
    config = {"gateway": {"port": gateway.port, "scheme": scheme, "subprotocol": SUBPROTOCOL},
              "namespace": "/" + gateway.filter.namespace.strip("/")}
    tls = (p["certfile"], p["keyfile"]) if gateway.access.tls else None
    log = gateway.get_logger()
    try:
        page = PageServer(share_dir() / "web", p["host"], int(p["page_port"]), config, tls=tls,
                          log=lambda line: log.warning(f"Foxglove gateway: {line}"))
    except OSError as exc:
        gateway.stop()
        raise OSError(f"cannot serve Brak's page on {p['host']}:{p['page_port']}: {exc}") from None
    gateway.page, gateway.page_url = page, page.url
    page.start()
    why = page.not_built_line()
    if why:
        log.warning(f"Foxglove gateway: {why}")
    return f"Brak's page {page.url}" + (f" ({page.state})" if why else "")
