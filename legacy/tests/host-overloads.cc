// Copyright 2026 The bsal_ros authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.
//
// SPDX-License-Identifier: Apache-2.0

//
// host-overloads.cc -- compile-only check (test/test_legacy_api.py) that every
// way a program may name the host resolves to exactly one connectToServer():
// the book's guint8 const[] form, NULL and 0 (no host: this machine), string
// literals, char pointers (argv of a standard main), std::string::c_str(),
// and the extension with a separate port.  Builds with -std=c++98 too
// (RCI_HOST_CHECK_NULLPTR adds the C++11 nullptr).
//
#include <string>

#include "rci-client.h"

int main(int argc, char** argv)
{
    guint8 key[16] = { 0 };
    string id = "ken";
    const char* text = "localhost";
    unsigned char book_host[] = "localhost";
    std::string s = "localhost";
    guint8 r = 0;
    if (argc > 99) {       // never run: only the overload resolution matters
        r |= connectToServer(id, key, NULL);
        r |= connectToServer(id, key, 0);
#ifdef RCI_HOST_CHECK_NULLPTR
        r |= connectToServer(id, key, nullptr);
#endif
        r |= connectToServer(id, key, "localhost");
        r |= connectToServer(id, key, text);
        r |= connectToServer(id, key, argv[1]);
        r |= connectToServer(id, key, book_host);
        r |= connectToServer(id, key, (unsigned char*)argv[1]);
        r |= connectToServer(id, key, s.c_str());
        r |= connectToServer(id, key, NULL, 7650);
        r |= connectToServer(id, NULL, NULL);
    }
    return r;
}
