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

// rci-client.h -- the BSAL rci-client interface (BSAL book 001, chapter 3)
//
// A control application calls these procedures; the library speaks RCI 0.3
// (001 chapter 4) over TCP to the control process (here: the bsal_ros RCI
// gateway).  Multi-byte fields are encoded explicitly in network byte order
// (big-endian); set BSAL_RCI_BYTEORDER=little for a gateway configured for
// little-endian clients.  See legacy/README.md for how each call maps onto
// RCI packets.
#ifndef BSAL_RCI_CLIENT_H
#define BSAL_RCI_CLIENT_H

#include <stdlib.h>     // exit(), which the book's example calls
#include <string>
#include <vector>

#include <glib.h>

#include "bsal-protocols.h"
#include "mposval.hh"
#include "robot-time.hh"

// The 2000-era example program uses `string` and `vector` unqualified.
#ifndef RCI_CLIENT_NO_USING_STD
using std::string;
using std::vector;
#endif

// Library return codes (chapter 3).  They do not overlap the RCI_CSTRP_*
// codes (0x08..0x0d) that the same procedures also return.
#define NO_ERROR               0x00
#define ERR_CONNECT_FAILED     0x01
#define ERR_SERVER_TERMINATE   0x02
#define ERR_UNKNOWN_CAPABILITY 0x03
#define ERR_BAD_ARGUMENT       0x04

// Motor directions (chapter 3).  MOTOR_REVERSE is the spelling the book's
// example program uses.
#define MOTOR_FORWARD   ((gint8)1)
#define MOTOR_BACKWARD  ((gint8)-1)
#define MOTOR_REVERSE   MOTOR_BACKWARD

// Default TCP port of the control process.
#define RCI_DEFAULT_PORT 7650

// Default geometry of the relative encoders, used to give
// encoderData.position in millimetres of wheel travel: the simulated Brak's
// drive wheel (config/brak.yaml, robot.geometry.wheel_radius and
// drive_encoder_cpr; a test keeps them equal).  rciSetEncoderGeometry()
// changes them.
#define RCI_DEFAULT_WHEEL_RADIUS_M 0.1
#define RCI_DEFAULT_ENCODER_CPR    2048

typedef struct
{
    guint8      id;        // sensor id
    guint16     delay;     // time delay measurement (in us, round trip)
    RobotTime   time;      // time/status of the last measurement
    // Extension (not in the book): statval bits 0..7 of the same reading
    // (bit 0 on, bit 1 up, bit 2 ok; 001 4.7.3).
    guint8      status;
} ultraData;

typedef struct
{
    guint8      id;        // sensor id
    mposit_type position;  // LINEAR METRIC: mm of wheel travel since clearEncoders()
    RobotTime   time;      // time/status of the last measurement
    // Extensions (not in the book): the raw RCI fields and the status bits.
    gint16      d_count;   // change in position since the last read (counts)
    gint16      count;     // accumulated position (counts)
    guint8      status;    // statval bits 0..7 (on, up, ok) of the same reading
} encoderData;

// 3.2.1 -- hostname may be "host" or "host:port"; without a port the
// environment variable BSAL_RCI_PORT, else 7650, is used.  A NULL hostname
// means this machine (127.0.0.1).
guint8 connectToServer(string user_id, guint8 const auth_key[16],
                       guint8 const hostname[]);
guint8 connectToServer(string user_id, guint8 const auth_key[16],
                       const char* hostname, int port);

// The same for a `char` host name (a string literal, argv of a standard
// main).  A template so that connectToServer(id, key, NULL) stays
// unambiguous: NULL matches only the book's guint8 overload above.
guint8 rciConnectText(string user_id, guint8 const auth_key[16], const char* hostname);
template <typename Char> struct RciCharHost {};                 // (C++98 enable_if)
template <> struct RciCharHost<char> { typedef guint8 type; };
template <> struct RciCharHost<const char> { typedef guint8 type; };
template <typename Char>
inline typename RciCharHost<Char>::type
connectToServer(string user_id, guint8 const auth_key[16], Char* hostname)
{
    return rciConnectText(user_id, auth_key, hostname);
}
// 3.2.2
guint16 getServerTermination(void);
// 3.2.3, 3.2.4
guint8 resetRobot(bool ack);
guint8 homeRobot(bool ack);
// 3.2.5 .. 3.2.8
guint8 setSteerMotor(const guint8 mode, const gint8 dir,
                     const float& duty_cycle, const float& angular_disp);
guint8 setDriveMotor(const guint8 mode, const gint8 dir,
                     const float& duty_cycle, const float& angular_disp);
guint8 getSteerMotor(guint8& mode, gint8& dir, float& duty_cycle,
                     float& angular_disp, guint8& pos_type, guint8& pos_unit,
                     float& displacement);
guint8 getDriveMotor(guint8& mode, gint8& dir, float& duty_cycle,
                     float& angular_disp);
// 3.2.9 .. 3.2.13
guint8 startUltrasonics(void);
guint8 stopUltrasonics(void);
guint8 readUltrasonics(vector<ultraData>& info);
guint8 startEncoders(void);
guint8 stopEncoders(void);
guint8 clearEncoders(void);
guint8 readEncoders(vector<encoderData>& info);

// Extensions (not in the book).
void disconnectFromServer(void);            // close the socket politely
// Geometry of relative encoder `id` (-1: every encoder; this also drops the
// per-id settings): wheel radius in metres and counts per wheel revolution.
// ERR_BAD_ARGUMENT for a radius <= 0 or not finite, or 0 counts; else NO_ERROR.
guint8 rciSetEncoderGeometry(double wheel_radius_m, guint32 counts_per_rev, int id = -1);
// Data and statval of the sensors `ids` of sub-code `sub` (any sensor kind the
// generated bsal-wire-tables.h knows, e.g. one registered in bsal_ros), from ONE
// reply: data[i] holds the DATA item's bytes as sent (wire byte order),
// statvals[i] its statval.  ERR_BAD_ARGUMENT for an unknown sub-code or no id.
guint8 rciReadSensors(guint8 sub, const vector<guint16>& ids,
                      vector<vector<guint8> >& data, vector<guint32>& statvals);
// Send id-carrying command `code` (one whose items are of one fixed layout in
// the generated bsal-wire-tables.h, e.g. one registered in bsal_ros) with
// sub-code `sub`, item data[i] (its bytes in the connection's byte order) for
// ids[i]: general form for one id, group for consecutive ids, poly otherwise;
// with `ack` waits for its completion (RCI_CSTRP_IDLE or the CP's status),
// else returns RCI_CSTRP_BUSY once sent.  ERR_BAD_ARGUMENT for an unknown
// code, a Get inquiry, or items of the wrong size or number.
guint8 rciSendItems(guint16 code, guint8 sub, const vector<guint16>& ids,
                    const vector<vector<guint8> >& data, bool ack);
const char* rciCodeName(guint8 code);       // "RCI_CSTRP_IDLE", "NO_ERROR", ...
const char* rciTermName(guint16 code);      // "RCI_CSVTM_ERROR", ...
guint8 rciNegotiatedMinor(void);            // protocol minor version agreed
RobotTime rciBaseTime(void);                // last CBsTm received

#endif
