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
 * bsal-protocols.h -- RCI constants (BSAL book 001, section 4.8).
 *
 * Values are exactly those of the book.  The block between the markers is
 * generated from the bsal_ros registries (python -m bsal_ros.tools.gen_cpp);
 * below it, both spellings the book uses where it is inconsistent
 * (RCI_CGTMTST_* / RCI_CGTMSTST_*, RCI-CAcSn / RCI-CAtSn, RCI_CSVTM_* /
 * RCI_CSvTM_*).
 */
#ifndef BSAL_PROTOCOLS_H
#define BSAL_PROTOCOLS_H

/* BEGIN GENERATED (python -m bsal_ros.tools.gen_cpp; do not edit) */
/* 4.8.1 packet codes (and later ones: rci_commands, registered commands) */
#define RCI_IIId            0x0010
#define RCI_IInCp           0x0011
#define RCI_ICaIq           0x0012
#define RCI_ICaRp           0x0013
#define RCI_CStIq           0x0100
#define RCI_CStRp           0x0101
#define RCI_CSvTm           0x0102
#define RCI_CCnAc           0x0103
#define RCI_CRs             0x0104
#define RCI_CBsTmIq         0x0106
#define RCI_CBsTm           0x0107
#define RCI_CAcMt           0x0200
#define RCI_CStMt           0x0201
#define RCI_CGtMtIq         0x0202
#define RCI_CGtMtRp         0x0203
#define RCI_CAcSn           0x0210
#define RCI_CStSn           0x0211
#define RCI_CGtSnIq         0x0212
#define RCI_CGtSnRp         0x0213
#define RCI_CSmTp           0x0230

/* flag bits of id_code */
#define RCI_MULTI           0x0200
#define RCI_RQ_ACK          0x0800
#define RCI_POLY            0x4000
#define RCI_GROUP           0x8000
#define RCI_FLAG_MASK       (RCI_RQ_ACK | RCI_POLY | RCI_GROUP)
/* Control Get Motor status codes */
#define RCI_CGTMTST_DATA    0x01
#define RCI_CGTMTST_STATUS  0x02
#define RCI_CGTMTST_TIME    0x03
/* Control Get Sensor status codes */
#define RCI_CGTSNST_DATA    0x04
#define RCI_CGTSNST_STATUS  0x05
#define RCI_CGTSNST_TIME    0x06
/* Control Status Reply codes */
#define RCI_CSTRP_UNDEFINED 0x08
#define RCI_CSTRP_ABORT     0x09
#define RCI_CSTRP_BUSY      0x0a
#define RCI_CSTRP_IDLE      0x0b
#define RCI_CSTRP_INVALID_ID 0x0c
#define RCI_CSTRP_NO_SUPPORT 0x0d
/* Control Server Termination codes */
#define RCI_CSVTM_ACCESS    0x10
#define RCI_CSVTM_AUTHENTICATE 0x11
#define RCI_CSVTM_EMERGENCY 0x12
#define RCI_CSVTM_ERROR     0x13
#define RCI_CSVTM_NOACK     0x14
#define RCI_CSVTM_USER      0x15
/* Initialization Capability Inquiry codes */
#define RCI_ICAIQ_ACCESS    0x18
#define RCI_ICAIQ_SUPPORT   0x19
#define RCI_ICAIQ_VERSION   0x1a
/* Initialization Capability Reply codes */
#define RCI_ICARP_ERROR     0x20
#define RCI_ICARP_NO_PERMISSION 0x21
#define RCI_ICARP_NO_SUPPORT 0x22
#define RCI_ICARP_PERMISSION 0x23
/* Control Sensor Type subcodes */
#define RCI_SENSOR_ABSENCODER 0x80
#define RCI_SENSOR_ACCEL    0x81
#define RCI_SENSOR_RELENCODER 0x82
#define RCI_SENSOR_ULTRASONIC 0x83
/* Control Sensor command codes */
#define RCI_SENSOR_RELENCODER_CLEAR 0x90
#define RCI_SENSOR_ULTRASONIC_ORDER 0x91
#define RCI_SENSOR_ULTRASONIC_TIMING 0x92
/* Control Motor Type subcodes */
#define RCI_MOTOR_DC        0xc0
#define RCI_MOTOR_PSERVO    0xc1
/* Control Motor command codes */
#define RCI_MOTOR_DC_SPVAL  0xd0
#define RCI_MOTOR_PSERVO_SPVAL 0xd1
#define RCI_MOTOR_PSERVO_RESET 0xd2

/* Protocol version spoken by this library */
#define RCI_VERSION_MAJOR   0
#define RCI_VERSION_MINOR   3
/* END GENERATED */

/* The book's other spellings */
#define RCI_CAtSn           RCI_CAcSn
#define RCI_CGTMSTST_DATA   RCI_CGTMTST_DATA
#define RCI_CGTMSTST_STATUS RCI_CGTMTST_STATUS
#define RCI_CGTMSTST_TIME   RCI_CGTMTST_TIME
#define RCI_CSvTM_ACCESS    RCI_CSVTM_ACCESS
#define RCI_CSvTM_AUTHENTICATE RCI_CSVTM_AUTHENTICATE
#define RCI_CSvTM_EMERGENCY RCI_CSVTM_EMERGENCY
#define RCI_CSvTM_ERROR     RCI_CSVTM_ERROR
#define RCI_CSvTM_NOACK     RCI_CSVTM_NOACK
#define RCI_CSvTM_USER      RCI_CSVTM_USER

#endif /* BSAL_PROTOCOLS_H */
