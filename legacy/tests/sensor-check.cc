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

// rciReadSensors() against a control process: reads the sensors of one
// sub-code and prints each reading (test/test_legacy_wire_tables.py).
//
//   sensor-check host:port user key-hex sub-code id[,id...]
//
// Prints `rc call=rciReadSensors code=N name=...`, then one line per sensor:
// `reading id=N data=HEX statval=HEX`.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "rci-client.h"

int main(int argc, char** argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s host:port user key-hex sub-code id[,id...]\n", argv[0]);
        return 2;
    }
    guint8 key[16];
    if (strlen(argv[3]) != 32) return 2;
    for (int i = 0; i < 16; ++i) {
        char two[3] = { argv[3][2 * i], argv[3][2 * i + 1], 0 };
        key[i] = (guint8)strtoul(two, NULL, 16);
    }
    guint8 sub = (guint8)strtoul(argv[4], NULL, 0);
    std::vector<guint16> ids;
    for (char* tok = strtok(argv[5], ","); tok; tok = strtok(NULL, ","))
        ids.push_back((guint16)atoi(tok));
    guint8 code = connectToServer(std::string(argv[2]), key, argv[1]);
    printf("rc call=connectToServer code=%u name=%s\n", code, rciCodeName(code));
    if (code != NO_ERROR) return 1;
    std::vector<std::vector<guint8> > data;
    std::vector<guint32> statvals;
    code = rciReadSensors(sub, ids, data, statvals);
    printf("rc call=rciReadSensors code=%u name=%s\n", code, rciCodeName(code));
    for (size_t i = 0; i < data.size(); ++i) {
        printf("reading id=%u data=", ids[i]);
        for (size_t j = 0; j < data[i].size(); ++j) printf("%02x", data[i][j]);
        printf(" statval=%08x\n", statvals[i]);
    }
    disconnectFromServer();
    return 0;
}
