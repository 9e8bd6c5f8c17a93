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

// mposval.cc -- RCI mposval <-> mposit_type (001 sections 3.1.2 and 4.7.1)
//
// The rule is the one of docs/PROTOCOL.md section 4 and of the Python codec
// (bsal_ros/protocol/values.py), checked against it on a grid and at the
// edges by test/test_legacy_rounding.py: magnitudes round half away from
// zero and clamp at 2^23-1 LSB; NaN (which Python refuses) gives magnitude 0.
#include "mposval.hh"

#include <math.h>

namespace {

// Number of fractional bits of the 23-bit magnitude for each type/unit.
int fractionBits(bool linear, bool second_unit)
{
    if (!linear) return second_unit ? 15 : 21;   // degrees : radians
    return second_unit ? 7 : 4;                   // standard : metric
}

}  // namespace

guint32 mposvalEncode(const mposit_type& pos)
{
    bool linear = (pos.type == LINEAR);
    bool second = linear ? (pos.unit == STANDARD) : (pos.unit == DEGREE);
    double value = (double)pos.displacement;
    double scaled = fabs(value) * (double)(1u << fractionBits(linear, second));
    double maxmag = (double)((1u << 23) - 1);
    guint32 mag;
    if (isnan(value)) mag = 0;                      // no position: magnitude 0
    else if (scaled >= maxmag) mag = (1u << 23) - 1;   // clamp, never wrap
    else mag = (guint32)llround(scaled);            // half away from zero
    guint32 raw = mag;
    // Sign: a negative value that rounds to 0 is sent as +0, an exact -0.0
    // keeps its sign so that a received "negative zero" round-trips.
    if (!isnan(value) && (value < 0 ? mag != 0 : signbit(value))) raw |= 1u << 23;
    if (linear) raw |= 1u << 30;
    if (second) raw |= 1u << 28;
    return raw;
}

mposit_type mposvalDecode(guint32 raw)
{
    mposit_type pos;
    bool linear = (raw >> 30) & 1u;
    bool second = (raw >> 28) & 1u;
    pos.type = linear ? LINEAR : ANGULAR;
    if (linear) pos.unit = second ? STANDARD : METRIC;
    else pos.unit = second ? DEGREE : RADIAN;
    double mag = (double)(raw & ((1u << 23) - 1)) / (double)(1u << fractionBits(linear, second));
    pos.displacement = (float)(((raw >> 23) & 1u) ? -mag : mag);
    return pos;
}
