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

// mposval.hh -- mposit_type (BSAL book 001, section 3.1.2)
#ifndef BSAL_MPOSVAL_HH
#define BSAL_MPOSVAL_HH

#include <glib.h>

enum mposvalType { ANGULAR, LINEAR };
enum mposvalUnit { METRIC, STANDARD, RADIAN, DEGREE };

typedef struct {
    enum mposvalType type;      // angular or linear?
    enum mposvalUnit unit;      // kind of units
    float displacement;         // position
} mposit_type;

// Wire conversion of the RCI mposval (001 section 4.7.1): 24-bit signed
// magnitude fixed point; the integer width depends on type and unit
// (radians 2 bits, degrees 8, metric 19, standard 16).  Rounded half away
// from zero; out-of-range values are clamped, never wrapped; -0.0 keeps its
// sign bit; NaN encodes magnitude 0 (docs/PROTOCOL.md section 4).
guint32 mposvalEncode(const mposit_type& pos);
mposit_type mposvalDecode(guint32 raw);

#endif
