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

// rciSendItems() against a control process: sends one id-carrying command
// with RQ_ACK (test/test_legacy_wire_tables.py).
//
//   items-check host:port user key-hex code sub-code id[,id...] hex[,hex...]
//
// Prints `rc call=connectToServer ...` and `rc call=rciSendItems code=N name=...`.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "rci-client.h"

namespace {

std::vector<guint8> hexBytes(const char* hex)
{
    std::vector<guint8> out;
    for (size_t i = 0; i + 1 < strlen(hex); i += 2) {
        char two[3] = { hex[i], hex[i + 1], 0 };
        out.push_back((guint8)strtoul(two, NULL, 16));
    }
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 8 || strlen(argv[3]) != 32) {
        fprintf(stderr, "usage: %s host:port user key-hex code sub-code ids hex-items\n", argv[0]);
        return 2;
    }
    std::vector<guint8> key = hexBytes(argv[3]);
    guint16 code = (guint16)strtoul(argv[4], NULL, 0);
    guint8 sub = (guint8)strtoul(argv[5], NULL, 0);
    std::vector<guint16> ids;
    for (char* tok = strtok(argv[6], ","); tok; tok = strtok(NULL, ","))
        ids.push_back((guint16)atoi(tok));
    std::vector<std::vector<guint8> > data;
    for (char* tok = strtok(argv[7], ","); tok; tok = strtok(NULL, ","))
        data.push_back(hexBytes(tok));
    guint8 rc = connectToServer(std::string(argv[2]), &key[0], argv[1]);
    printf("rc call=connectToServer code=%u name=%s\n", rc, rciCodeName(rc));
    if (rc != NO_ERROR) return 1;
    rc = rciSendItems(code, sub, ids, data, true);
    printf("rc call=rciSendItems code=%u name=%s\n", rc, rciCodeName(rc));
    disconnectFromServer();
    return 0;
}
