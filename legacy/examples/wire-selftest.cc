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

// wire-selftest.cc -- checks the library's value conversions that do not
// need a server (mposval table of 001 4.7.1, RobotTime normalisation).
// Prints "ok" lines and exits non-zero on the first failure.
#include <math.h>
#include <stdio.h>

#include "rci-client.h"

static int failures = 0;

static void check(bool cond, const char* what)
{
    printf("%s %s\n", cond ? "ok" : "FAIL", what);
    if (!cond) ++failures;
}

int main()
{
    mposit_type p;
    p.type = ANGULAR; p.unit = RADIAN; p.displacement = -1.5f;
    guint32 raw = mposvalEncode(p);
    check(raw == ((1u << 23) | (guint32)(1.5 * (1 << 21))), "mposval radians encode");
    mposit_type q = mposvalDecode(raw);
    check(q.type == ANGULAR && q.unit == RADIAN && fabs(q.displacement + 1.5f) < 1e-6, "mposval radians decode");
    p.type = ANGULAR; p.unit = DEGREE; p.displacement = 500.0f;  // clamped
    q = mposvalDecode(mposvalEncode(p));
    check(q.unit == DEGREE && q.displacement > 255.9f && q.displacement < 256.0f, "mposval degrees clamp");
    p.type = LINEAR; p.unit = METRIC; p.displacement = 1234.0625f;
    q = mposvalDecode(mposvalEncode(p));
    check(q.type == LINEAR && q.unit == METRIC && q.displacement == 1234.0625f, "mposval metric exact");
    p.type = LINEAR; p.unit = STANDARD; p.displacement = -10.5f;
    q = mposvalDecode(mposvalEncode(p));
    check(q.unit == STANDARD && q.displacement == -10.5f, "mposval standard exact");
    RobotTime t(10, 999999);
    t.changeUsec(2);
    check(t.getSec() == 11 && t.getUsec() == 1, "RobotTime carry");
    t.changeUsec(-2);
    check(t.getSec() == 10 && t.getUsec() == 999999, "RobotTime borrow");
    check(MOTOR_REVERSE == MOTOR_BACKWARD, "MOTOR_REVERSE alias");
    return failures ? 1 : 0;
}
