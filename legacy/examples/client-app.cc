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
// client-app.cc -- the BSAL book's sample control application (001 section
// 3.3), rewritten for a current compiler: it connects, resets the robot,
// homes the steering, starts and clears the encoders, starts the
// ultrasonics, drives in reverse at 20 % duty cycle, takes ten readings
// 250 ms apart and stops.  Every return code and reading is printed on its
// own line as space-separated key=value pairs, e.g.
//
//   rc call=setDriveMotor code=11 name=RCI_CSTRP_IDLE
//   ultra read=3 id=7 delay_us=5120 sec=1732212345 usec=250000 status=7
//   encoder read=3 id=0 count=-118 d_count=-41 position_mm=-36.203 sec=1732212345 usec=250000 status=7
//
// Usage: client-app [host [port [user [key]]]]
//   key is 32 hex digits (128 bits).  Defaults come from the environment
//   (BSAL_RCI_HOST, BSAL_RCI_PORT, BSAL_RCI_USER, BSAL_RCI_KEY), else
//   127.0.0.1, 7650 and the demo operator of config/users.yaml.
// Exit status: 0 when every call returned what the book promises, 2 when
// the connection failed, 3 when the server terminated, 1 otherwise.
//
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "rci-client.h"

namespace {

const char* kDemoUser = "demo";
const char* kDemoKey = "0123456789abcdef0123456789abcdef";

int g_failures = 0;

const char* arg(int argc, char** argv, int i, const char* env, const char* dflt)
{
    if (argc > i && argv[i][0]) return argv[i];
    const char* v = getenv(env);
    return (v && v[0]) ? v : dflt;
}

bool parseKey(const char* hex, guint8 key[16])
{
    if (strlen(hex) != 32) return false;
    for (int i = 0; i < 16; ++i) {
        unsigned v;
        char two[3] = { hex[2 * i], hex[2 * i + 1], 0 };
        char* end = NULL;
        v = (unsigned)strtoul(two, &end, 16);
        if (end != two + 2) return false;
        key[i] = (guint8)v;
    }
    return true;
}

// Print a return code; count it as a failure unless it is one of `ok`.
guint8 report(const char* call, guint8 code, guint8 ok1, guint8 ok2 = 0xff)
{
    printf("rc call=%s code=%u name=%s\n", call, code, rciCodeName(code));
    fflush(stdout);
    if (code != ok1 && code != ok2) ++g_failures;
    if (code == ERR_SERVER_TERMINATE) {
        guint16 t = getServerTermination();
        printf("term code=%u name=%s\n", t, rciTermName(t));
        printf("done status=terminated failures=%d\n", g_failures);
        fflush(stdout);
        exit(3);
    }
    return code;
}

}  // namespace

int main(int argc, char** argv)
{
    const char* host = arg(argc, argv, 1, "BSAL_RCI_HOST", "127.0.0.1");
    int port = atoi(arg(argc, argv, 2, "BSAL_RCI_PORT", "7650"));
    string id = arg(argc, argv, 3, "BSAL_RCI_USER", kDemoUser);
    guint8 auth_key[16];
    if (!parseKey(arg(argc, argv, 4, "BSAL_RCI_KEY", kDemoKey), auth_key)) {
        fprintf(stderr, "client-app: the key must be 32 hex digits\n");
        return 1;
    }
    vector<ultraData> distances;
    vector<encoderData> counts;

    //
    // connection to the CP
    //
    guint8 rc = connectToServer(id, auth_key, host, port);
    printf("rc call=connectToServer code=%u name=%s\n", rc, rciCodeName(rc));
    if (rc != NO_ERROR) {
        guint16 t = getServerTermination();
        printf("term code=%u name=%s\n", t, rciTermName(t));
        printf("done status=%s failures=1\n", rc == ERR_SERVER_TERMINATE ? "terminated" : "connect_failed");
        return rc == ERR_SERVER_TERMINATE ? 3 : 2;
    }
    printf("version major=0 minor=%u\n", rciNegotiatedMinor());

    //
    // initialize the robot
    //
    report("resetRobot", resetRobot(false), RCI_CSTRP_BUSY);
    report("homeRobot", homeRobot(false), RCI_CSTRP_BUSY);
    sleep(1);
    report("startEncoders", startEncoders(), RCI_CSTRP_IDLE);
    report("clearEncoders", clearEncoders(), RCI_CSTRP_IDLE);

    //
    // turn on the ultrasonics and motors
    //
    report("startUltrasonics", startUltrasonics(), RCI_CSTRP_IDLE);
    report("setDriveMotor", setDriveMotor(1, MOTOR_REVERSE, 20.0, 0.0), RCI_CSTRP_IDLE);

    guint8 mode = 0;
    gint8 dir = 0;
    float duty_cycle = 0, angular_disp = 0;
    if (report("getDriveMotor", getDriveMotor(mode, dir, duty_cycle, angular_disp), RCI_CSTRP_IDLE)
        == RCI_CSTRP_IDLE)
        printf("drive mode=%u dir=%d duty=%.2f rate=%.3f\n", mode, dir, duty_cycle, angular_disp);

    //
    // take some readings
    //
    for (int i = 0; i < 10; ++i) {
        if (report("readUltrasonics", readUltrasonics(distances), RCI_CSTRP_IDLE) == RCI_CSTRP_IDLE)
            for (size_t k = 0; k < distances.size(); ++k)
                printf("ultra read=%d id=%u delay_us=%u sec=%d usec=%d status=%u\n", i,
                       distances[k].id, distances[k].delay, distances[k].time.getSec(),
                       distances[k].time.getUsec(), distances[k].status);
        if (report("readEncoders", readEncoders(counts), RCI_CSTRP_IDLE) == RCI_CSTRP_IDLE)
            for (size_t k = 0; k < counts.size(); ++k)
                printf("encoder read=%d id=%u count=%d d_count=%d position_mm=%.3f sec=%d usec=%d "
                       "status=%u\n", i, counts[k].id, counts[k].count, counts[k].d_count,
                       counts[k].position.displacement, counts[k].time.getSec(),
                       counts[k].time.getUsec(), counts[k].status);
        fflush(stdout);
        usleep(250000);
    }

    guint8 pos_type = 0, pos_unit = 0;
    float displacement = 0;
    rc = getSteerMotor(mode, dir, duty_cycle, angular_disp, pos_type, pos_unit, displacement);
    if (report("getSteerMotor", rc, RCI_CSTRP_IDLE) == RCI_CSTRP_IDLE)
        printf("steer mode=%u dir=%d duty=%.2f rate=%.3f pos_type=%u pos_unit=%u disp=%.6f\n", mode,
               dir, duty_cycle, angular_disp, pos_type, pos_unit, displacement);

    //
    // turn off everything
    //
    report("stopUltrasonics", stopUltrasonics(), RCI_CSTRP_IDLE);
    report("setDriveMotor", setDriveMotor(1, MOTOR_REVERSE, 0.0, 0.0), RCI_CSTRP_IDLE);
    disconnectFromServer();
    printf("done status=%s failures=%d\n", g_failures ? "failed" : "ok", g_failures);
    return g_failures ? 1 : 0;
}
