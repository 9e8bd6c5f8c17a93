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

/*
 * bsal-wire-tables.h -- RCI wire lengths, generated from the bsal_ros
 * registries (python -m bsal_ros.tools.gen_cpp; do not edit).  A device kind
 * or command registered in Python reaches the C++ library by regenerating it.
 */
#ifndef BSAL_WIRE_TABLES_H
#define BSAL_WIRE_TABLES_H

/* Whole length (bytes, code included) of a fixed-size packet; -1: not one. */
static inline int rciFixedPacketLen(unsigned base)
{
    switch (base) {
    case 0x0010: return 60;    /* IIId */
    case 0x0011: return 2;    /* IInCp */
    case 0x0100: return 4;    /* CStIq */
    case 0x0101: return 5;    /* CStRp */
    case 0x0102: return 4;    /* CSvTm */
    case 0x0103: return 4;    /* CCnAc */
    case 0x0104: return 2;    /* CRs */
    case 0x0106: return 2;    /* CBsTmIq */
    case 0x0107: return 10;    /* CBsTm */
    default: return -1;
    }
}

/* Data length (bytes) of one item of reply `code` (CGtMtRp, CGtSnRp) for
 * sub-code `sub` asked with `status_code`; -1: not a legal combination. */
static inline int rciReplyItemLen(unsigned code, unsigned sub, unsigned status_code)
{
    switch ((code << 16) | (sub << 8) | status_code) {
    case 0x0203c001: return 2;    /* DC MotorData */
    case 0x0203c002: return 4;    /* DC StatusData */
    case 0x0203c101: return 6;    /* PSERVO MotorData */
    case 0x0203c102: return 4;    /* PSERVO StatusData */
    case 0x02138004: return 2;    /* ABSENCODER AbsEncoderData */
    case 0x02138005: return 4;    /* ABSENCODER StatusData */
    case 0x02138104: return 4;    /* ACCEL AccelData */
    case 0x02138105: return 4;    /* ACCEL StatusData */
    case 0x02138204: return 4;    /* RELENCODER RelEncoderData */
    case 0x02138205: return 4;    /* RELENCODER StatusData */
    case 0x02138304: return 2;    /* ULTRASONIC UltrasonicData */
    case 0x02138305: return 4;    /* ULTRASONIC StatusData */
    default: return -1;
    }
}

/* Data length (bytes) of one item of id-carrying command `code` whose items
 * are of one fixed layout (activations, inquiries, CSmTp, registered
 * commands); -1: not one (the Set packets carry a command byte first). */
static inline int rciCommandItemLen(unsigned code)
{
    switch (code) {
    case 0x0200: return 1;    /* CAcMt */
    case 0x0202: return 1;    /* CGtMtIq */
    case 0x0210: return 1;    /* CAcSn */
    case 0x0212: return 1;    /* CGtSnIq */
    case 0x0230: return 12;    /* CSmTp */
    default: return -1;
    }
}

#endif /* BSAL_WIRE_TABLES_H */
