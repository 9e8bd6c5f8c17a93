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
// api-check.cc -- drives the rci-client library one call at a time, for the
// tests in test/test_legacy_api.py (against the gateway logic or a scripted
// control process written in Python).
//
// Usage: api-check HOST[:PORT] USER KEYHEX COMMAND...
//   HOST "NULL" calls connectToServer(id, key, NULL) (the book's call with no
//   host: this machine; the port then comes from BSAL_RCI_PORT).
// Commands (one line of output each, plus one line per reading):
//   reset:ACK  home:ACK  startenc  stopenc  clearenc  startultra  stopultra
//   readenc[:ID,ID...]  readultra[:ID,ID...]  geometry:RADIUS_M:CPR[:ID]
//   drive:DUTY (MOTOR_REVERSE when negative)  sleep:MS
//   term (prints getServerTermination())
// A read without ids reuses the vector of the previous read of its kind
// (as the book's example does); with ids it starts a new vector.
// Output: "rc call=NAME code=N name=CODE_NAME", then for reads
//   "enc id= count= d_count= pos_mm= type= unit= sec= usec= status="
//   "ultra id= delay= sec= usec= status=".
// Exit status: 0 after the last command, 2 when the connection failed.
//
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "rci-client.h"

namespace {

bool parseKey(const char* hex, guint8 key[16])
{
    if (strlen(hex) != 32) return false;
    for (int i = 0; i < 16; ++i) {
        char two[3] = { hex[2 * i], hex[2 * i + 1], 0 };
        char* end = NULL;
        key[i] = (guint8)strtoul(two, &end, 16);
        if (end != two + 2) return false;
    }
    return true;
}

void rc(const char* call, guint8 code)
{
    printf("rc call=%s code=%u name=%s\n", call, code, rciCodeName(code));
}

// "3,5,7" -> ids; "" -> none
template <typename T>
void parseIds(const std::string& list, std::vector<T>& out)
{
    out.clear();
    size_t pos = 0;
    while (pos < list.size()) {
        size_t comma = list.find(',', pos);
        if (comma == std::string::npos) comma = list.size();
        T item = T();
        item.id = (guint8)atoi(list.substr(pos, comma - pos).c_str());
        out.push_back(item);
        pos = comma + 1;
    }
}

void printEncoders(const vector<encoderData>& v)
{
    for (size_t k = 0; k < v.size(); ++k)
        printf("enc id=%u count=%d d_count=%d pos_mm=%.6f type=%d unit=%d sec=%d usec=%d status=%u\n",
               v[k].id, v[k].count, v[k].d_count, v[k].position.displacement,
               (int)v[k].position.type, (int)v[k].position.unit, v[k].time.getSec(),
               v[k].time.getUsec(), v[k].status);
}

void printUltras(const vector<ultraData>& v)
{
    for (size_t k = 0; k < v.size(); ++k)
        printf("ultra id=%u delay=%u sec=%d usec=%d status=%u\n", v[k].id, v[k].delay,
               v[k].time.getSec(), v[k].time.getUsec(), v[k].status);
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: api-check HOST[:PORT] USER KEYHEX COMMAND...\n");
        return 2;
    }
    guint8 key[16];
    if (!parseKey(argv[3], key)) {
        fprintf(stderr, "api-check: the key must be 32 hex digits\n");
        return 2;
    }
    string id = argv[2];
    guint8 code;
    if (strcmp(argv[1], "NULL") == 0)
        code = connectToServer(id, key, NULL);      // the book's API with no host
    else
        code = connectToServer(id, key, argv[1]);
    rc("connectToServer", code);
    fflush(stdout);
    if (code != NO_ERROR) return 2;

    vector<encoderData> enc;
    vector<ultraData> ultra;
    for (int i = 4; i < argc; ++i) {
        std::string cmd = argv[i];
        std::string arg;
        size_t colon = cmd.find(':');
        if (colon != std::string::npos) {
            arg = cmd.substr(colon + 1);
            cmd = cmd.substr(0, colon);
        }
        if (cmd == "reset") rc("resetRobot", resetRobot(atoi(arg.c_str()) != 0));
        else if (cmd == "home") rc("homeRobot", homeRobot(atoi(arg.c_str()) != 0));
        else if (cmd == "startenc") rc("startEncoders", startEncoders());
        else if (cmd == "stopenc") rc("stopEncoders", stopEncoders());
        else if (cmd == "clearenc") rc("clearEncoders", clearEncoders());
        else if (cmd == "startultra") rc("startUltrasonics", startUltrasonics());
        else if (cmd == "stopultra") rc("stopUltrasonics", stopUltrasonics());
        else if (cmd == "readenc") {
            if (colon != std::string::npos) parseIds(arg, enc);
            rc("readEncoders", readEncoders(enc));
            printEncoders(enc);
        } else if (cmd == "readultra") {
            if (colon != std::string::npos) parseIds(arg, ultra);
            rc("readUltrasonics", readUltrasonics(ultra));
            printUltras(ultra);
        } else if (cmd == "geometry") {
            double radius = atof(arg.c_str());
            size_t c2 = arg.find(':');
            guint32 cpr = c2 == std::string::npos ? 0 : (guint32)strtoul(arg.c_str() + c2 + 1, NULL, 10);
            size_t c3 = c2 == std::string::npos ? std::string::npos : arg.find(':', c2 + 1);
            int gid = c3 == std::string::npos ? -1 : atoi(arg.c_str() + c3 + 1);
            rc("rciSetEncoderGeometry", rciSetEncoderGeometry(radius, cpr, gid));
        } else if (cmd == "drive") {
            float duty = (float)atof(arg.c_str());
            gint8 dir = duty < 0 ? MOTOR_REVERSE : MOTOR_FORWARD;
            float magnitude = duty < 0 ? -duty : duty;
            rc("setDriveMotor", setDriveMotor(1, dir, magnitude, 0.0f));
        } else if (cmd == "term") {
            guint16 t = getServerTermination();
            printf("term code=%u name=%s\n", t, rciTermName(t));
        } else if (cmd == "sleep") {
            usleep((useconds_t)atoi(arg.c_str()) * 1000);
            continue;
        } else {
            fprintf(stderr, "api-check: unknown command %s\n", argv[i]);
            return 2;
        }
        fflush(stdout);
    }
    disconnectFromServer();
    printf("done\n");
    return 0;
}
