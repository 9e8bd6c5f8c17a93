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
// values-check.cc -- the library's value conversions, one per input line, for
// test/test_legacy_rounding.py (which compares them with the Python codec,
// bsal_ros.protocol.values).  Numbers are read and written as C99 hex floats
// (%a) so that nothing is lost in between.
//
//   mpos KIND UNIT VALUE   -> "mpos RAW"     (KIND 0 angular / 1 linear,
//                                             UNIT 0 / 1 as on the wire;
//                                             VALUE is made a float first,
//                                             as in mposit_type)
//   mposdec RAW            -> "mposdec KIND UNIT VALUE"
//   tv VALUE               -> "tv SEC USEC" or "tv nan"
//   tvsec SEC USEC         -> "tvsec VALUE"
//
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rci-client.h"

int main()
{
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        char what[16];
        if (sscanf(line, "%15s", what) != 1) continue;
        if (strcmp(what, "mpos") == 0) {
            int kind, unit;
            char value[64];
            if (sscanf(line, "%*s %d %d %63s", &kind, &unit, value) != 3) return 2;
            mposit_type p;
            p.type = kind ? LINEAR : ANGULAR;
            p.unit = kind ? (unit ? STANDARD : METRIC) : (unit ? DEGREE : RADIAN);
            p.displacement = (float)strtod(value, NULL);
            printf("mpos %lu\n", (unsigned long)mposvalEncode(p));
        } else if (strcmp(what, "mposdec") == 0) {
            unsigned long raw;
            if (sscanf(line, "%*s %lu", &raw) != 1) return 2;
            mposit_type p = mposvalDecode((guint32)raw);
            int kind = p.type == LINEAR ? 1 : 0;
            int unit = (p.unit == STANDARD || p.unit == DEGREE) ? 1 : 0;
            printf("mposdec %d %d %a\n", kind, unit, (double)p.displacement);
        } else if (strcmp(what, "tv") == 0) {
            char value[64];
            if (sscanf(line, "%*s %63s", value) != 1) return 2;
            RobotTime t(12345, 678);
            if (t.setSeconds(strtod(value, NULL)))
                printf("tv %d %d\n", t.getSec(), t.getUsec());
            else
                printf("tv nan %d %d\n", t.getSec(), t.getUsec());
        } else if (strcmp(what, "tvsec") == 0) {
            long sec, usec;
            if (sscanf(line, "%*s %ld %ld", &sec, &usec) != 2) return 2;
            RobotTime t((gint32)sec, (gint32)usec);
            printf("tvsec %a\n", t.getSeconds());
        } else {
            return 2;
        }
    }
    return 0;
}
