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

"""The RCI users file: user ids, 128-bit keys and roles (001 section 4.5.2).

Keys are compared in constant time (``hmac.compare_digest``) and never
appear in a log line or an exception message.

An entry with ``key_check: none`` is a user whose key is not checked, as in
BSAL 0.1.0 (001 3.2.1: "user_id and auth_key are transmitted but not
checked"): any 16 bytes log in. It exists so that a program written to the
book (whose example sends an uninitialised key) runs unchanged; like the
public demo key, such an operator stops the gateway from listening on a
non-loopback address, and its names are logged at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import hmac
import os
import stat

import yaml

from bsal_ros.core.net import is_loopback

#: the public key of the demo operator shipped in config/users.yaml
DEMO_KEY = bytes.fromhex("0123456789abcdef0123456789abcdef")

ROLES = ("operator", "guest")

#: values of an entry's ``key_check``: "key" (the default) compares the key,
#: "none" accepts any key (BSAL 0.1.0 behaviour, 001 3.2.1)
KEY_CHECKS = ("key", "none")


class UsersFileError(ValueError):
    """The users file is malformed (the message never contains a key)."""


@dataclass(frozen=True)
class User:
    """One registered user; ``key_checked`` False: any key is accepted."""

    name: str
    role: str
    key: bytes = field(repr=False)
    key_checked: bool = True

    @property
    def read_only(self) -> bool:
        """Guests may read but not command."""
        return self.role == "guest"


class Users:
    """Registered users; ``authenticate`` answers which term code applies."""

    def __init__(self, users: list[User]):
        self._by_name = {u.name: u for u in users}

    @classmethod
    def from_yaml_text(cls, text: str) -> "Users":
        """Parse a users file's text; UsersFileError says what is wrong (never a key)."""
        try:
            doc = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise UsersFileError(
                f"users file is not valid YAML: {exc.__class__.__name__}") from None
        entries = doc.get("users") if isinstance(doc, dict) else None
        if not isinstance(entries, list):
            raise UsersFileError("users file needs a 'users:' list")
        users = []
        for i, e in enumerate(entries):
            if not isinstance(e, dict):
                raise UsersFileError(f"users[{i}] is not a mapping")
            name = e.get("name")
            role = e.get("role", "operator")
            key_hex = e.get("key")
            if not isinstance(name, str) or not 0 < len(name.encode()) <= 16 or "\0" in name:
                raise UsersFileError(f"users[{i}]: name must be 1..16 bytes")
            if role not in ROLES:
                raise UsersFileError(f"users[{i}] ({name}): role must be one of {ROLES}")
            if name == "guest":
                role = "guest"     # the lowest level of service, whatever the file says
            key_check = e.get("key_check", "key")
            if key_check not in KEY_CHECKS:
                raise UsersFileError(f"users[{i}] ({name}): key_check must be one of {KEY_CHECKS}")
            if key_check == "none":
                if key_hex is not None:
                    # a key that is never compared would only mislead the reader
                    raise UsersFileError(f"users[{i}] ({name}): key_check: none takes no key")
                users.append(User(name, role, b"", key_checked=False))
                continue
            try:
                key = bytes.fromhex(str(key_hex))
            except ValueError:
                key = b""
            if len(key) != 16:
                raise UsersFileError(f"users[{i}] ({name}): key must be 32 hex digits (128 bits)")
            users.append(User(name, role, key))
        names = [u.name for u in users]
        if len(set(names)) != len(names):
            raise UsersFileError("users file names a user twice")
        return cls(users)

    @classmethod
    def load(cls, path: str) -> "Users":
        """Read and parse the users file at ``path`` (UsersFileError: why not)."""
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise UsersFileError(f"users file {path}: {exc.strerror}") from None
        return cls.from_yaml_text(text)

    def __len__(self) -> int:
        return len(self._by_name)

    def names(self) -> list[str]:
        """The user names, sorted."""
        return sorted(self._by_name)

    def has_demo_key(self) -> bool:
        """Whether a user who may command still has the public demo key."""
        return any(hmac.compare_digest(u.key, DEMO_KEY) for u in self._by_name.values()
                   if not u.read_only and u.key_checked)

    def unchecked_operators(self) -> list[str]:
        """Names of the operators whose key is not checked (``key_check: none``)."""
        return sorted(u.name for u in self._by_name.values()
                      if not u.key_checked and not u.read_only)

    def unchecked_users(self) -> list[str]:
        """Names of every user whose key is not checked, guests included."""
        return sorted(u.name for u in self._by_name.values() if not u.key_checked)

    def has_private_keys(self) -> bool:
        """True when an operator has a key other than the public demo key."""
        return any(not u.read_only and u.key_checked and not hmac.compare_digest(u.key, DEMO_KEY)
                   for u in self._by_name.values())

    def lookup(self, user_id: bytes | str) -> User | None:
        """The user of a login's user id (NUL-terminated bytes or text); None if unknown."""
        if isinstance(user_id, (bytes, bytearray)):
            user_id = bytes(user_id).split(b"\0", 1)[0].decode("utf-8", "replace")
        return self._by_name.get(user_id)

    def authenticate(self, user_id: bytes | str, key: bytes) -> tuple[User | None, str | None]:
        """(user, None) when accepted; (None, "USER") or (None, "AUTHENTICATE")."""
        user = self.lookup(user_id)
        if user is None:
            # Compare anyway so that timing does not tell registered names apart.
            hmac.compare_digest(bytes(key)[:16].ljust(16, b"\0"), DEMO_KEY)
            return None, "USER"
        if not user.key_checked:
            # BSAL 0.1.0: the key is transmitted but not checked (001 3.2.1);
            # compare anyway so that the answer time is the same
            hmac.compare_digest(bytes(key)[:16].ljust(16, b"\0"), DEMO_KEY)
            return user, None
        if not hmac.compare_digest(bytes(key)[:16].ljust(16, b"\0"), user.key):
            return None, "AUTHENTICATE"
        return user, None


def file_permission_warning(path: str, users: Users) -> str | None:
    """A warning when the users file holds private operator keys and other
    users of the machine may read it (the keys are in clear); else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if users.has_private_keys() and mode & (stat.S_IRGRP | stat.S_IROTH):
        return (f"users file {path} holds operator keys and is readable by other users "
                f"(mode {stat.S_IMODE(mode):o}); make it readable by the gateway's user only "
                "(chmod 600)")
    return None


def unchecked_key_warning(users: Users) -> str | None:
    """The start-up warning naming the users whose key is not checked; None
    when there are none. One line, for the gateway's log."""
    names = users.unchecked_users()
    if not names:
        return None
    return (f"RCI users whose key is not checked (key_check: none, as BSAL 0.1.0): "
            f"{', '.join(names)}; any client that reaches the port may log in as them "
            "(a non-loopback bind is refused while an operator is among them)")


def check_bind_allowed(host: str, users: Users) -> None:
    """Refuse a non-loopback bind while the public demo key is configured or
    an operator's key is not checked (``key_check: none``)."""
    if is_loopback(host):
        return
    unchecked = users.unchecked_operators()
    also = (f"; operators {', '.join(unchecked)} have key_check: none (any key logs in)"
            if unchecked else "")
    if users.has_demo_key():
        raise UsersFileError(
            f"refusing to listen on {host}: the users file still contains the public demo "
            f"key{also}; replace it (config/users.yaml) or bind to 127.0.0.1")
    if unchecked:
        raise UsersFileError(
            f"refusing to listen on {host}: operators {', '.join(unchecked)} have key_check: "
            "none (any key logs in); give them keys (config/users.yaml) or bind to 127.0.0.1")
