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

"""The files a Foxglove client may fetch: ``package://bsal_ros/...`` only.

A robot description names its meshes and textures as ``package://<pkg>/<path>``;
Foxglove asks the server for them (the protocol's ``fetchAsset``). Only
model files (a robot description, meshes, their textures: :data:`MODEL_SUFFIXES`)
inside this package's share folder are served: any other package, an
absolute path, ``..``, a link leading out of the folder, and every other
file of the folder (the RCI users file, ``package.xml``, the page's sources)
is refused, so no secret and no path of the robot's disk leaves it.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

PACKAGE = "bsal_ros"
#: the most an asset may weigh (a robot's mesh is far smaller)
MAX_BYTES = 64 * 1024 * 1024
#: the files a robot model is made of; nothing else is served
MODEL_SUFFIXES = frozenset({".urdf", ".stl", ".dae", ".obj", ".mtl", ".glb", ".gltf", ".bin",
                            ".png", ".jpg", ".jpeg"})


class AssetRefused(LookupError):
    """Why a URI is not served: the message says it, ``kind`` names it in a
    word (one log line per kind, however many URIs a client tries)."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


def asset_path(uri: str, share: Path) -> Path:
    """The file ``uri`` names inside ``share``; AssetRefused otherwise."""
    parts = urlsplit(uri)
    if parts.scheme != "package":
        raise AssetRefused(f"{uri}: only package://{PACKAGE}/... is served", "scheme")
    if parts.netloc != PACKAGE:
        raise AssetRefused(f"{uri}: only files of package {PACKAGE} are served", "package")
    relative = unquote(parts.path).lstrip("/")
    root = share.resolve()
    path = (root / relative).resolve()
    if not relative or root not in path.parents:
        raise AssetRefused(f"{uri}: outside the package's share folder", "outside")
    if path.suffix.lower() not in MODEL_SUFFIXES:
        raise AssetRefused(f"{uri}: not a model file ({', '.join(sorted(MODEL_SUFFIXES))})",
                           "not a model file")
    if not path.is_file():
        raise AssetRefused(f"{uri}: no such file", "missing")
    return path


def read_asset(uri: str, share: Path) -> bytes:
    """The bytes of the file ``uri`` names (AssetRefused: not served)."""
    path = asset_path(uri, share)
    if path.stat().st_size > MAX_BYTES:
        raise AssetRefused(f"{uri}: larger than {MAX_BYTES} bytes", "too large")
    return path.read_bytes()
