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
