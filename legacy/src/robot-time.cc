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

// robot-time.cc -- RobotTime (BSAL book 001, section 3.1.2)
//
// setSeconds() follows the rounding rule of docs/PROTOCOL.md section 4 (half
// away from zero, clamped) like the Python codec's Timeval.from_seconds;
// test/test_legacy_rounding.py compares the two.
#include "robot-time.hh"

#include <math.h>
#include <stddef.h>

RobotTime::RobotTime(gint32 sec, gint32 usec) : sec_(sec), usec_(usec) { normalise(); }

void RobotTime::setSec(gint32 sec) { sec_ = sec; }
void RobotTime::setUsec(gint32 usec) { usec_ = usec; normalise(); }
gint32 RobotTime::getSec(void) const { return sec_; }
gint32 RobotTime::getUsec(void) const { return usec_; }
void RobotTime::changeUsec(gint32 nusec) { usec_ += nusec; normalise(); }
void RobotTime::changeSec(gint32 nsec) { sec_ += nsec; }

void RobotTime::setTime(const struct timeval& time)
{
    sec_ = (gint32)time.tv_sec;
    usec_ = (gint32)time.tv_usec;
    normalise();
}

struct timeval RobotTime::getTime() const
{
    struct timeval tv;
    tv.tv_sec = sec_;
    tv.tv_usec = usec_;
    return tv;
}

void RobotTime::grabTime(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    setTime(tv);
}

bool RobotTime::setSeconds(double seconds)
{
    const double kMax = 2147483648.0;          // 2^31: the first second past gint32
    if (isnan(seconds)) return false;
    if (seconds >= kMax) { sec_ = G_MAXINT32; usec_ = 999999; return true; }
    if (seconds < -kMax) { sec_ = G_MININT32; usec_ = 0; return true; }
    // Round the magnitude (half away from zero), then give it the sign back:
    // -x rounds to exactly minus what x rounds to.
    double magnitude = fabs(seconds);
    double whole = floor(magnitude);
    gint64 us = (gint64)whole * 1000000 + (gint64)llround((magnitude - whole) * 1e6);
    if (seconds < 0) us = -us;
    gint64 sec = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
    gint64 usec = us - sec * 1000000;
    if (sec > G_MAXINT32) { sec_ = G_MAXINT32; usec_ = 999999; return true; }
    if (sec < G_MININT32) { sec_ = G_MININT32; usec_ = 0; return true; }
    sec_ = (gint32)sec;
    usec_ = (gint32)usec;
    return true;
}

double RobotTime::getSeconds(void) const { return (double)sec_ + usec_ / 1e6; }

void RobotTime::normalise()
{
    while (usec_ >= 1000000) { usec_ -= 1000000; ++sec_; }
    while (usec_ < 0) { usec_ += 1000000; --sec_; }
}
