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

// robot-time.hh -- RobotTime (BSAL book 001, section 3.1.2)
#ifndef BSAL_ROBOT_TIME_HH
#define BSAL_ROBOT_TIME_HH

#include <sys/time.h>
#include <glib.h>

class RobotTime {
public:
    RobotTime(gint32 sec = 0, gint32 usec = 0);
    void setSec(gint32 sec);                  // set seconds
    void setUsec(gint32 usec);                // set microseconds
    gint32 getSec(void) const;                // get seconds
    gint32 getUsec(void) const;               // get microseconds
    void changeUsec(gint32 nusec);            // increase/decrease usec (normalised)
    void changeSec(gint32 nsec);              // increase/decrease sec
    void setTime(const struct timeval& time); // time conversion
    struct timeval getTime() const;           // time conversion
    void grabTime(void);                      // set to system time
    // Extensions (not in the book): float seconds since the epoch.  setSeconds
    // rounds to the microsecond half away from zero and clamps to the gint32
    // range (as bsal_ros.protocol.values.Timeval.from_seconds); false for NaN
    // (the time is left as it was).
    bool setSeconds(double seconds);
    double getSeconds(void) const;            // sec + usec / 1e6

private:
    void normalise();
    gint32 sec_;
    gint32 usec_;
};

#endif
