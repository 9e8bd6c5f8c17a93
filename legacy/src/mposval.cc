// mposval.cc -- RCI mposval <-> mposit_type (001 sections 3.1.2 and 4.7.1)
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
    double scaled = fabs((double)pos.displacement) * (double)(1u << fractionBits(linear, second));
    double maxmag = (double)((1u << 23) - 1);
    if (!(scaled <= maxmag)) scaled = maxmag;  // clamp (also NaN)
    guint32 mag = (guint32)llround(scaled);
    if (mag > (1u << 23) - 1) mag = (1u << 23) - 1;
    guint32 raw = mag;
    if (pos.displacement < 0 && mag != 0) raw |= 1u << 23;
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
