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

// rci-client.cc -- the BSAL rci-client interface over RCI 0.3 / TCP.
//
// One connection per process (the book's API is a set of free procedures).
// Every multi-byte field is written and read byte by byte in the configured
// byte order (big-endian unless BSAL_RCI_BYTEORDER=little); no struct is ever
// copied onto the wire.  Every wait on the socket is bounded
// (BSAL_RCI_TIMEOUT_MS, default 10000 ms; homeRobot(true) waits 6x longer).
// A Server Termination (RCI-CSvTm) packet is accepted at any time: the call
// that sees it returns ERR_SERVER_TERMINATE and getServerTermination()
// returns its code.  A lost link counts as RCI_CSVTM_ERROR.
#include "rci-client.h"
#include "bsal-wire-tables.h"   // generated: packet and reply-item lengths

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <map>

namespace {

const int kUltrasonics = 12;        // ids 0..11 ("all twelve ultrasonics", 001 3.2.10)
const guint16 kSteerMotorId = 0;    // RCI_MOTOR_PSERVO id 0
const guint16 kDriveMotorId = 0;    // RCI_MOTOR_DC id 0
const int kMaxProbedId = 254;       // relative encoder ids are probed 0, 1, ... up to this
const size_t kMaxItems = 255;       // items in one poly/group packet (count is a guint8)

// Relative-encoder geometry, to turn counts into millimetres of wheel travel.
struct Geometry {
    double wheel_radius_m;
    guint32 counts_per_rev;
};

// What the library remembers of one relative encoder between reads.
struct EncoderTrack {
    bool known;                     // last_count holds a reading
    gint16 last_count;              // the count of the previous read (wraps as gint16)
    gint64 travelled;               // counts since the last clear, unwrapped
};

struct Packet {
    guint16 code;                   // id_code as received (with flag bits)
    guint16 base;                   // code without RQ_ACK/POLY/GROUP
    std::vector<guint8> bytes;      // the whole packet, code included
};

struct Item {                       // one device entry of a reply
    guint16 id;
    const guint8* data;
};

struct Connection {
    int fd;
    bool little;
    bool terminated;
    guint16 term_code;
    guint8 minor;
    RobotTime base_time;
    bool base_known;
    int timeout_ms;
    std::vector<guint8> rx;
    std::map<guint16, bool> denied;
    bool motor_active[2];           // [0] steering (PSERVO), [1] drive (DC)
    bool encoders_known;            // encoder_ids holds the CP's relative encoders
    std::vector<guint16> encoder_ids;
    std::map<guint16, EncoderTrack> tracks;

    Connection()
        : fd(-1), little(false), terminated(false), term_code(0),
          minor(RCI_VERSION_MINOR), base_known(false), timeout_ms(10000),
          encoders_known(false)
    {
        motor_active[0] = motor_active[1] = false;
    }
};

Connection g;

// Geometry outlives connections (set once, before or after connectToServer).
Geometry g_default_geometry = { RCI_DEFAULT_WHEEL_RADIUS_M, RCI_DEFAULT_ENCODER_CPR };
std::map<guint16, Geometry> g_geometry;     // per-id overrides

const Geometry& geometryOf(guint16 id)
{
    std::map<guint16, Geometry>::const_iterator it = g_geometry.find(id);
    return it == g_geometry.end() ? g_default_geometry : it->second;
}

// ---------------------------------------------------------------- byte order

void put8(std::vector<guint8>& b, guint8 v) { b.push_back(v); }

void put16(std::vector<guint8>& b, guint16 v)
{
    if (g.little) { b.push_back(v & 0xff); b.push_back(v >> 8); }
    else { b.push_back(v >> 8); b.push_back(v & 0xff); }
}

guint16 get16(const guint8* p)
{
    return g.little ? (guint16)(p[0] | (p[1] << 8)) : (guint16)((p[0] << 8) | p[1]);
}

guint32 get32(const guint8* p)
{
    if (g.little)
        return (guint32)p[0] | ((guint32)p[1] << 8) | ((guint32)p[2] << 16) | ((guint32)p[3] << 24);
    return ((guint32)p[0] << 24) | ((guint32)p[1] << 16) | ((guint32)p[2] << 8) | (guint32)p[3];
}

// ------------------------------------------------------------ value encoding

// speedval (001 4.7.4): bit 15 duty cycle(1)/rate(0), bit 11 sign,
// bits 10..0 magnitude (duty: 0..100 % -> 0..2047; rate: 0.001 rad/s).
guint16 speedvalEncode(bool duty, bool negative, double magnitude_units)
{
    double m = duty ? magnitude_units * 2047.0 / 100.0 : magnitude_units * 1000.0;
    if (!(m >= 0.0)) m = 0.0;
    if (m > 2047.0) m = 2047.0;
    guint16 mag = (guint16)lround(m);
    guint16 v = mag & 0x07ff;
    if (negative && mag != 0) v |= 0x0800;
    if (duty) v |= 0x8000;
    return v;
}

void speedvalDecode(guint16 v, guint8& mode, gint8& dir, float& duty_cycle, float& angular_disp)
{
    guint16 mag = v & 0x07ff;
    dir = (v & 0x0800) ? MOTOR_BACKWARD : MOTOR_FORWARD;
    if (v & 0x8000) {
        mode = 1;
        duty_cycle = (float)(mag * 100.0 / 2047.0);
        angular_disp = 0.0f;
    } else {
        mode = 0;
        duty_cycle = 0.0f;
        angular_disp = (float)(mag / 1000.0);
    }
}

// statval (001 4.7.3): bits 8..31 = ms since the base time.
RobotTime statvalTime(guint32 statval)
{
    guint32 ms = statval >> 8;
    RobotTime t = g.base_time;
    t.changeSec((gint32)(ms / 1000));
    t.changeUsec((gint32)((ms % 1000) * 1000));
    return t;
}

// -------------------------------------------------------------------- socket

gint64 nowMs()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (gint64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void closeLink()
{
    if (g.fd >= 0) close(g.fd);
    g.fd = -1;
}

// The link is gone: remember why (keeps an earlier CSvTm code).
guint8 lostLink(guint16 code)
{
    if (!g.terminated) {
        g.terminated = true;
        g.term_code = code;
    }
    closeLink();
    return ERR_SERVER_TERMINATE;
}

// Make sure at least n bytes are buffered.  false on EOF, error or timeout.
bool fill(size_t n, gint64 deadline)
{
    while (g.rx.size() < n) {
        if (g.fd < 0) return false;
        gint64 left = deadline - nowMs();
        if (left < 0) left = 0;
        struct pollfd pfd;
        pfd.fd = g.fd;
        pfd.events = POLLIN;
        pfd.revents = 0;
        int r = poll(&pfd, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        guint8 buf[4096];
        ssize_t got = recv(g.fd, buf, sizeof buf, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        g.rx.insert(g.rx.end(), buf, buf + got);
    }
    return true;
}

bool sendAll(const std::vector<guint8>& b)
{
    size_t off = 0;
    while (off < b.size()) {
        if (g.fd < 0) return false;
        ssize_t n = send(g.fd, &b[off], b.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        off += (size_t)n;
    }
    return true;
}

// ------------------------------------------------------------------- framing

enum ReadResult { READ_OK = 0, READ_LOST = 1, READ_GARBLED = 2 };

// Data length of each item of the Get Motor/Sensor reply the caller waits
// for, in inquiry order (a reply does not say which status type each item
// carries; the caller knows what it asked).  Empty: no reply expected.
typedef std::vector<int> Layout;

size_t layoutSum(const Layout& lens, size_t per_item)
{
    size_t n = 0;
    for (size_t i = 0; i < lens.size(); ++i) n += per_item + (size_t)lens[i];
    return n;
}

// Read one packet (see Layout).
ReadResult readPacket(Packet& p, const Layout& layout, gint64 deadline)
{
    if (!fill(2, deadline)) return READ_LOST;
    p.code = get16(&g.rx[0]);
    p.base = p.code & ~RCI_FLAG_MASK;
    int fixed = rciFixedPacketLen(p.base);
    size_t len = fixed > 0 ? (size_t)fixed : 0;
    switch (fixed > 0 ? 0 : p.base) {
    case 0: break;
    case RCI_ICaIq:
    case RCI_ICaRp:   // we only ever ask ACCESS: one byte of data per item
        if (!fill(3, deadline)) return READ_LOST;
        len = 3 + 3 * (size_t)g.rx[2];
        break;
    case RCI_CGtMtRp:
    case RCI_CGtSnRp: {
        if (layout.empty()) return READ_GARBLED;
        if (p.code & (RCI_POLY | RCI_GROUP)) {
            if ((p.code & RCI_POLY) && (p.code & RCI_GROUP)) return READ_GARBLED;
            if (!fill(4, deadline)) return READ_LOST;
            size_t count = g.rx[3];
            // a reply mirrors its inquiry: another count cannot be framed
            if (count != layout.size()) return READ_GARBLED;
            if (p.code & RCI_POLY) len = 4 + layoutSum(layout, 2);
            else len = 6 + layoutSum(layout, 0);
        } else {
            if (layout.size() != 1) return READ_GARBLED;
            len = 5 + (size_t)layout[0];
        }
        break;
    }
    default:
        return READ_GARBLED;
    }
    if (!fill(len, deadline)) return READ_LOST;
    p.bytes.assign(g.rx.begin(), g.rx.begin() + len);
    g.rx.erase(g.rx.begin(), g.rx.begin() + len);
    return READ_OK;
}

// Items of a Get Motor/Sensor reply in any of the three forms (readPacket
// has checked that the item count equals the layout's).
std::vector<Item> replyItems(const Packet& p, const Layout& layout)
{
    std::vector<Item> items;
    const guint8* b = &p.bytes[0];
    if (p.code & RCI_POLY) {
        const guint8* e = b + 4;
        for (size_t i = 0; i < layout.size(); ++i) {
            Item it = { get16(e), e + 2 };
            items.push_back(it);
            e += 2 + layout[i];
        }
    } else if (p.code & RCI_GROUP) {
        guint16 first = get16(b + 4);
        const guint8* e = b + 6;
        for (size_t i = 0; i < layout.size(); ++i) {
            Item it = { (guint16)(first + i), e };
            items.push_back(it);
            e += layout[i];
        }
    } else {
        Item it = { get16(b + 3), b + 5 };
        items.push_back(it);
    }
    return items;
}

void answerStatusInquiry(const Packet& p)
{
    guint16 control_id = get16(&p.bytes[2]);
    std::vector<guint8> b;
    put16(b, RCI_CStRp);
    put16(b, control_id);
    put8(b, (control_id & ~RCI_FLAG_MASK) == RCI_CStIq ? RCI_CSTRP_IDLE : RCI_CSTRP_NO_SUPPORT);
    sendAll(b);
}

// Next packet addressed to the caller.  Base Time packets, Status Inquiries
// from the CP and stray capability packets are handled here; a Server
// Termination ends the connection.  Returns 0 or an ERR_* code.
guint8 nextPacket(Packet& p, const Layout& layout, gint64 deadline)
{
    for (;;) {
        if (g.terminated || g.fd < 0) return ERR_SERVER_TERMINATE;
        ReadResult r = readPacket(p, layout, deadline);
        if (r == READ_LOST) return lostLink(RCI_CSVTM_ERROR);
        if (r == READ_GARBLED) {
            // We cannot find the next packet boundary: the stream is lost.
            lostLink(RCI_CSVTM_ERROR);
            return ERR_BAD_ARGUMENT;
        }
        switch (p.base) {
        case RCI_CBsTm:
            g.base_time = RobotTime((gint32)get32(&p.bytes[2]), (gint32)get32(&p.bytes[6]));
            g.base_known = true;
            continue;
        case RCI_CSvTm:
            g.terminated = true;
            g.term_code = get16(&p.bytes[2]);
            closeLink();
            return ERR_SERVER_TERMINATE;
        case RCI_CStIq:
            answerStatusInquiry(p);
            continue;
        case RCI_ICaIq:
        case RCI_ICaRp:
        case RCI_IInCp:
            continue;   // initialization packets in the control phase: ignored
        default:
            return 0;
        }
    }
}

gint64 deadlineIn(int ms) { return nowMs() + ms; }

// Wait for the completion of a command sent with RCI_RQ_ACK: CCnAc(base)
// means done (IDLE); CStRp(base, status) means it was refused.
guint8 awaitAck(guint16 base, int timeout_ms)
{
    Packet p;
    guint8 rc = nextPacket(p, Layout(), deadlineIn(timeout_ms));
    if (rc) return rc;
    if (p.base == RCI_CCnAc && (get16(&p.bytes[2]) & ~RCI_FLAG_MASK) == base)
        return RCI_CSTRP_IDLE;
    if (p.base == RCI_CStRp && (get16(&p.bytes[2]) & ~RCI_FLAG_MASK) == base)
        return p.bytes[4];
    return ERR_BAD_ARGUMENT;    // unexpected packet
}

// Common checks before a control-phase call: connected, not terminated,
// and not denied during the capability exchange.
int preflight(guint16 base)
{
    if (g.terminated || g.fd < 0) return ERR_SERVER_TERMINATE;
    std::map<guint16, bool>::const_iterator it = g.denied.find(base);
    if (it != g.denied.end() && it->second) return RCI_CSTRP_NO_SUPPORT;
    return -1;
}

guint8 sendOrLost(const std::vector<guint8>& b)
{
    if (sendAll(b)) return 0;
    // The server may have closed after a CSvTm: pick its code up if it is there.
    Packet p;
    if (g.fd >= 0) nextPacket(p, Layout(), nowMs());
    return lostLink(RCI_CSVTM_ERROR);
}

// Send a command; with ack wait for its completion.
guint8 command(const std::vector<guint8>& b, guint16 base, bool ack, int timeout_ms)
{
    guint8 rc = sendOrLost(b);
    if (rc) return rc;
    if (!ack) return RCI_CSTRP_BUSY;
    return awaitAck(base, timeout_ms);
}

// Activate a motor once per connection (after each reset) before its first
// Set Motor.
guint8 ensureMotorActive(int index, guint8 sub, guint16 id)
{
    if (g.motor_active[index]) return RCI_CSTRP_IDLE;
    int pre = preflight(RCI_CAcMt);
    if (pre >= 0) return (guint8)pre;
    std::vector<guint8> b;
    put16(b, RCI_CAcMt | RCI_RQ_ACK);
    put8(b, sub);
    put16(b, id);
    put8(b, 1);
    guint8 rc = command(b, RCI_CAcMt, true, g.timeout_ms);
    if (rc == RCI_CSTRP_IDLE) g.motor_active[index] = true;
    return rc;
}

guint8 setMotor(int index, guint8 sub, guint16 id, guint8 spval_code, guint8 mode,
                gint8 dir, float duty_cycle, float angular_disp)
{
    int pre = preflight(RCI_CStMt);
    if (pre >= 0) return (guint8)pre;
    if (dir != MOTOR_FORWARD && dir != MOTOR_BACKWARD) return ERR_BAD_ARGUMENT;
    bool duty = (mode != 0);
    double value = duty ? duty_cycle : angular_disp;
    if (!(value >= 0.0) || (duty && value > 100.0) || (!duty && value > 2.047))
        return ERR_BAD_ARGUMENT;     // argument disagreement
    guint8 rc = ensureMotorActive(index, sub, id);
    if (rc != RCI_CSTRP_IDLE) return rc;
    std::vector<guint8> b;
    put16(b, RCI_CStMt | RCI_RQ_ACK);
    put8(b, sub);
    put16(b, id);
    put8(b, spval_code);
    put16(b, speedvalEncode(duty, dir == MOTOR_BACKWARD, value));
    return command(b, RCI_CStMt, true, g.timeout_ms);
}

// Get Motor Inquiry (general form) for one motor.
guint8 getMotor(guint8 sub, guint16 id, guint8 status_code, std::vector<guint8>& data)
{
    int item_len = rciReplyItemLen(RCI_CGtMtRp, sub, status_code);
    if (item_len < 0) return ERR_BAD_ARGUMENT;
    Layout layout(1, item_len);
    int pre = preflight(RCI_CGtMtIq);
    if (pre >= 0) return (guint8)pre;
    std::vector<guint8> b;
    put16(b, RCI_CGtMtIq);
    put8(b, sub);
    put16(b, id);
    put8(b, status_code);
    guint8 rc = sendOrLost(b);
    if (rc) return rc;
    Packet p;
    rc = nextPacket(p, layout, deadlineIn(g.timeout_ms));
    if (rc) return rc;
    if (p.base == RCI_CStRp && (get16(&p.bytes[2]) & ~RCI_FLAG_MASK) == RCI_CGtMtIq)
        return p.bytes[4];
    if (p.base != RCI_CGtMtRp || p.bytes[2] != sub) return ERR_BAD_ARGUMENT;
    std::vector<Item> items = replyItems(p, layout);
    if (items.size() != 1 || items[0].id != id) return ERR_BAD_ARGUMENT;
    data.assign(items[0].data, items[0].data + item_len);
    return RCI_CSTRP_IDLE;
}

// One (id, status code) entry of a Get Sensor Inquiry.
struct Query {
    guint16 id;
    guint8 status_code;
};

bool consecutiveOnce(const std::vector<guint16>& ids)
{
    for (size_t i = 1; i < ids.size(); ++i)
        if (ids[i] != ids[0] + i) return false;
    return true;
}

// Data length of a Get Sensor reply item (-1: a sub-code or status code the
// generated tables do not know: not asked, since its reply could not be framed).
int sensorItemLen(guint8 sub, guint8 status_code)
{
    return rciReplyItemLen(RCI_CGtSnRp, sub, status_code);
}

// One Get Sensor Inquiry and its reply: general form for one entry, group
// when the ids are consecutive and each is asked once, poly otherwise (the
// same id may be asked twice there, e.g. for DATA and STATUS, so that both
// come from one reply).  On IDLE, data[i] points into `reply` for q[i].
guint8 getSensors(guint8 sub, const std::vector<Query>& q, Packet& reply,
                  std::vector<const guint8*>& data)
{
    int pre = preflight(RCI_CGtSnIq);
    if (pre >= 0) return (guint8)pre;
    if (q.empty() || q.size() > kMaxItems) return ERR_BAD_ARGUMENT;
    std::vector<guint16> ids;
    Layout layout;
    for (size_t i = 0; i < q.size(); ++i) {
        ids.push_back(q[i].id);
        int len = sensorItemLen(sub, q[i].status_code);
        if (len < 0) return ERR_BAD_ARGUMENT;
        layout.push_back(len);
    }
    std::vector<guint8> b;
    if (q.size() == 1) {
        put16(b, RCI_CGtSnIq);
        put8(b, sub);
        put16(b, q[0].id);
        put8(b, q[0].status_code);
    } else if (consecutiveOnce(ids)) {
        put16(b, RCI_CGtSnIq | RCI_GROUP);
        put8(b, sub);
        put8(b, (guint8)q.size());
        put16(b, q[0].id);
        for (size_t i = 0; i < q.size(); ++i) put8(b, q[i].status_code);
    } else {
        put16(b, RCI_CGtSnIq | RCI_POLY);
        put8(b, sub);
        put8(b, (guint8)q.size());
        for (size_t i = 0; i < q.size(); ++i) {
            put16(b, q[i].id);
            put8(b, q[i].status_code);
        }
    }
    guint8 rc = sendOrLost(b);
    if (rc) return rc;
    rc = nextPacket(reply, layout, deadlineIn(g.timeout_ms));
    if (rc) return rc;
    if (reply.base == RCI_CStRp && (get16(&reply.bytes[2]) & ~RCI_FLAG_MASK) == RCI_CGtSnIq)
        return reply.bytes[4];
    if (reply.base != RCI_CGtSnRp || reply.bytes[2] != sub) return ERR_BAD_ARGUMENT;
    std::vector<Item> items = replyItems(reply, layout);
    data.clear();
    for (size_t i = 0; i < q.size(); ++i) {
        if (items[i].id != q[i].id) return ERR_BAD_ARGUMENT;
        data.push_back(items[i].data);
    }
    return RCI_CSTRP_IDLE;
}

// Data and statval of each sensor, taken from ONE reply per (at most 127)
// sensors, so that a reading and its time belong together.  On IDLE,
// values[i] / stat[i] belong to ids[i]; on anything else nothing was read.
guint8 readWithStatus(guint8 sub, const std::vector<guint16>& ids,
                      std::vector<std::vector<guint8> >& values, std::vector<guint32>& stat)
{
    values.clear();
    stat.clear();
    const size_t per_packet = kMaxItems / 2;
    for (size_t first = 0; first < ids.size(); first += per_packet) {
        size_t n = ids.size() - first < per_packet ? ids.size() - first : per_packet;
        std::vector<Query> q;
        for (size_t i = 0; i < n; ++i) {
            Query d = { ids[first + i], RCI_CGTSNST_DATA };
            Query s = { ids[first + i], RCI_CGTSNST_STATUS };
            q.push_back(d);
            q.push_back(s);
        }
        Packet reply;
        std::vector<const guint8*> data;
        guint8 rc = getSensors(sub, q, reply, data);
        if (rc != RCI_CSTRP_IDLE) return rc;
        int len = sensorItemLen(sub, RCI_CGTSNST_DATA);
        for (size_t i = 0; i < n; ++i) {
            values.push_back(std::vector<guint8>(data[2 * i], data[2 * i] + len));
            stat.push_back(get32(data[2 * i + 1]));
        }
    }
    return RCI_CSTRP_IDLE;
}

// Activate (1) or deactivate (0) the sensors `ids` (+ack).
guint8 activateSensors(guint8 sub, const std::vector<guint16>& ids, guint8 on)
{
    int pre = preflight(RCI_CAcSn);
    if (pre >= 0) return (guint8)pre;
    if (ids.empty()) return RCI_CSTRP_INVALID_ID;       // the robot has none
    if (ids.size() > kMaxItems) return ERR_BAD_ARGUMENT;
    std::vector<guint8> b;
    if (ids.size() == 1) {
        put16(b, RCI_CAcSn | RCI_RQ_ACK);
        put8(b, sub);
        put16(b, ids[0]);
        put8(b, on);
    } else if (consecutiveOnce(ids)) {
        put16(b, RCI_CAcSn | RCI_GROUP | RCI_RQ_ACK);
        put8(b, sub);
        put8(b, (guint8)ids.size());
        put16(b, ids[0]);
        for (size_t i = 0; i < ids.size(); ++i) put8(b, on);
    } else {
        put16(b, RCI_CAcSn | RCI_POLY | RCI_RQ_ACK);
        put8(b, sub);
        put8(b, (guint8)ids.size());
        for (size_t i = 0; i < ids.size(); ++i) {
            put16(b, ids[i]);
            put8(b, on);
        }
    }
    return command(b, RCI_CAcSn, true, g.timeout_ms);
}

std::vector<guint16> idRange(int first, int count)
{
    std::vector<guint16> ids;
    for (int i = 0; i < count; ++i) ids.push_back((guint16)(first + i));
    return ids;
}

// The relative encoders the CP has ("all relative encoders", 001 3.2.11):
// RCI has no device list, so ids 0, 1, 2, ... are asked for their status one
// by one until the CP answers INVALID_ID; the list is kept for the
// connection.  IDLE, or the status that stopped the probe at id 0.
guint8 encoderIds(std::vector<guint16>& ids)
{
    if (g.encoders_known) {
        ids = g.encoder_ids;
        return RCI_CSTRP_IDLE;
    }
    std::vector<guint16> found;
    for (int id = 0; id <= kMaxProbedId; ++id) {
        std::vector<Query> q(1);
        q[0].id = (guint16)id;
        q[0].status_code = RCI_CGTSNST_STATUS;
        Packet reply;
        std::vector<const guint8*> data;
        guint8 rc = getSensors(RCI_SENSOR_RELENCODER, q, reply, data);
        if (rc == RCI_CSTRP_IDLE) {
            found.push_back((guint16)id);
            continue;
        }
        if (rc == RCI_CSTRP_INVALID_ID) break;      // past the last encoder
        return rc;                                  // not known yet: ask again next time
    }
    g.encoder_ids = found;
    g.encoders_known = true;
    ids = found;
    return RCI_CSTRP_IDLE;
}

// Millimetres of wheel travel for `id` after a read of `count`.
float encoderTravelMm(guint16 id, gint16 count)
{
    EncoderTrack& t = g.tracks[id];
    if (t.known) t.travelled += (gint16)(guint16)((guint16)count - (guint16)t.last_count);
    else t.travelled = count;
    t.known = true;
    t.last_count = count;
    const Geometry& geo = geometryOf(id);
    return (float)((double)t.travelled * 2.0 * M_PI * geo.wheel_radius_m * 1000.0
                   / (double)geo.counts_per_rev);
}

void resetState()
{
    g = Connection();
    const char* order = getenv("BSAL_RCI_BYTEORDER");
    g.little = order && (strcmp(order, "little") == 0);
    const char* tmo = getenv("BSAL_RCI_TIMEOUT_MS");
    if (tmo && atoi(tmo) > 0) g.timeout_ms = atoi(tmo);
}

// Answer a capability inquiry from the CP (it may send one; 001 4.5.4).
void answerCapabilityInquiry(const Packet& p)
{
    static const guint16 understood[] = {
        RCI_CStIq, RCI_CStRp, RCI_CSvTm, RCI_CCnAc, RCI_CBsTm, RCI_CGtMtRp, RCI_CGtSnRp
    };
    size_t count = p.bytes[2];
    std::vector<guint8> b;
    put16(b, RCI_ICaRp);
    put8(b, (guint8)count);
    for (size_t i = 0; i < count; ++i) {
        guint16 control_id = get16(&p.bytes[3 + 3 * i]);
        guint8 inq = p.bytes[5 + 3 * i];
        put16(b, control_id);
        if (inq == RCI_ICAIQ_VERSION) {
            put8(b, RCI_VERSION_MAJOR);
            put8(b, g.minor);
            continue;
        }
        bool known = false;
        for (size_t k = 0; k < sizeof understood / sizeof understood[0]; ++k)
            if ((control_id & ~RCI_FLAG_MASK) == understood[k]) known = true;
        if (inq == RCI_ICAIQ_ACCESS || inq == RCI_ICAIQ_SUPPORT)
            put8(b, known ? RCI_ICARP_PERMISSION : RCI_ICARP_ERROR);
        else
            put8(b, RCI_ICARP_ERROR);
    }
    sendAll(b);
}

// Read one initialization-phase packet; CSvTm/link loss end the connection.
guint8 initPacket(Packet& p, gint64 deadline)
{
    ReadResult r = readPacket(p, Layout(), deadline);
    if (r == READ_LOST) return lostLink(RCI_CSVTM_ERROR);
    if (r == READ_GARBLED) return lostLink(RCI_CSVTM_ERROR);
    if (p.base == RCI_CSvTm) {
        g.terminated = true;
        g.term_code = get16(&p.bytes[2]);
        closeLink();
        return ERR_SERVER_TERMINATE;
    }
    return 0;
}

guint8 connectImpl(const string& user_id, const guint8 auth_key[16], const string& host, int port)
{
    disconnectFromServer();
    resetState();

    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    struct addrinfo* res = NULL;
    if (getaddrinfo(host.c_str(), portstr, &hints, &res) != 0 || !res) return ERR_CONNECT_FAILED;
    int fd = -1;
    for (struct addrinfo* ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) return ERR_CONNECT_FAILED;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    g.fd = fd;

    gint64 deadline = deadlineIn(g.timeout_ms);

    // RCI-IIId: code(2) major(1) minor(1) user_id(16) auth_key(16) reserved(24)
    std::vector<guint8> b;
    put16(b, RCI_IIId);
    put8(b, RCI_VERSION_MAJOR);
    put8(b, RCI_VERSION_MINOR);
    for (size_t i = 0; i < 16; ++i) put8(b, i < user_id.size() ? (guint8)user_id[i] : 0);
    for (size_t i = 0; i < 16; ++i) put8(b, auth_key ? auth_key[i] : 0);
    for (size_t i = 0; i < 24; ++i) put8(b, 0);
    if (!sendAll(b)) { closeLink(); return ERR_CONNECT_FAILED; }

    // The CP answers with its own IIId, or refuses: CSvTm (unknown user, bad
    // key) or IInCp followed by CSvTm (refusal of service, e.g. busy).
    Packet p;
    for (;;) {
        guint8 rc = initPacket(p, deadline);
        if (rc) return rc;
        if (p.base == RCI_IIId) break;
        if (p.base == RCI_IInCp) continue;      // refusal of service: CSvTm follows
        if (p.base == RCI_ICaIq) { answerCapabilityInquiry(p); continue; }
        return lostLink(RCI_CSVTM_ERROR);
    }
    int smajor = p.bytes[2], sminor = p.bytes[3];
    if (smajor * 256 + sminor < RCI_VERSION_MAJOR * 256 + RCI_VERSION_MINOR)
        g.minor = (guint8)sminor;   // the lower version wins
    if (smajor != RCI_VERSION_MAJOR) {
        closeLink();
        return ERR_UNKNOWN_CAPABILITY;
    }

    // Ask ACCESS for every command this library may send, then IInCp.
    static const guint16 wanted[] = {
        RCI_CRs, RCI_CAcMt, RCI_CStMt, RCI_CGtMtIq, RCI_CAcSn, RCI_CStSn, RCI_CGtSnIq
    };
    const size_t nwanted = sizeof wanted / sizeof wanted[0];
    b.clear();
    put16(b, RCI_ICaIq);
    put8(b, (guint8)nwanted);
    for (size_t i = 0; i < nwanted; ++i) {
        put16(b, wanted[i]);
        put8(b, RCI_ICAIQ_ACCESS);
    }
    put16(b, RCI_IInCp);
    if (!sendAll(b)) return lostLink(RCI_CSVTM_ERROR);

    for (;;) {
        guint8 rc = initPacket(p, deadline);
        if (rc) return rc;
        if (p.base == RCI_IInCp) break;
        if (p.base == RCI_ICaIq) { answerCapabilityInquiry(p); continue; }
        if (p.base == RCI_ICaRp) {
            size_t count = p.bytes[2];
            for (size_t i = 0; i < count; ++i) {
                guint16 control_id = get16(&p.bytes[3 + 3 * i]) & ~RCI_FLAG_MASK;
                g.denied[control_id] = (p.bytes[5 + 3 * i] != RCI_ICARP_PERMISSION);
            }
            continue;
        }
        if (p.base == RCI_CBsTm) {  // tolerated even though early
            g.base_time = RobotTime((gint32)get32(&p.bytes[2]), (gint32)get32(&p.bytes[6]));
            g.base_known = true;
            continue;
        }
        return lostLink(RCI_CSVTM_ERROR);
    }
    // Reading is what a control application cannot do without.
    if (g.denied[RCI_CGtSnIq] || g.denied[RCI_CGtMtIq]) {
        closeLink();
        return ERR_UNKNOWN_CAPABILITY;
    }
    return NO_ERROR;
}

}  // namespace

// ==================================================================== API

guint8 connectToServer(string user_id, guint8 const auth_key[16], const char* hostname, int port)
{
    return connectImpl(user_id, auth_key, hostname ? hostname : "127.0.0.1", port);
}

guint8 rciConnectText(string user_id, guint8 const auth_key[16], const char* hostname)
{
    string host = hostname ? hostname : "127.0.0.1";    // NULL: this machine
    int port = RCI_DEFAULT_PORT;
    const char* env = getenv("BSAL_RCI_PORT");
    if (env && atoi(env) > 0) port = atoi(env);
    size_t colon = host.rfind(':');
    if (colon != string::npos && host.find(':') == colon) {   // "host:port" (not IPv6)
        port = atoi(host.c_str() + colon + 1);
        host = host.substr(0, colon);
    }
    if (port <= 0 || port > 65535) return ERR_CONNECT_FAILED;
    return connectImpl(user_id, auth_key, host, port);
}

guint8 connectToServer(string user_id, guint8 const auth_key[16], guint8 const hostname[])
{
    return rciConnectText(user_id, auth_key, (const char*)hostname);
}

guint16 getServerTermination(void) { return g.term_code; }

void disconnectFromServer(void) { closeLink(); }

guint8 rciNegotiatedMinor(void) { return g.minor; }

RobotTime rciBaseTime(void) { return g.base_time; }

guint8 resetRobot(bool ack)
{
    int pre = preflight(RCI_CRs);
    if (pre >= 0) return (guint8)pre;
    std::vector<guint8> b;
    put16(b, RCI_CRs | (ack ? RCI_RQ_ACK : 0));
    guint8 rc = command(b, RCI_CRs, ack, g.timeout_ms);
    g.motor_active[0] = g.motor_active[1] = false;  // reset stops every motor
    for (std::map<guint16, EncoderTrack>::iterator it = g.tracks.begin(); it != g.tracks.end(); ++it)
        it->second.known = false;                   // counts may restart: re-anchor on the next read
    // The CP's own status is returned as it is (ABORT stays ABORT).
    return rc;
}

guint8 homeRobot(bool ack)
{
    int pre = preflight(RCI_CStMt);
    if (pre >= 0) return (guint8)pre;
    std::vector<guint8> b;
    put16(b, RCI_CStMt | (ack ? RCI_RQ_ACK : 0));
    put8(b, RCI_MOTOR_PSERVO);
    put16(b, kSteerMotorId);
    put8(b, RCI_MOTOR_PSERVO_RESET);
    // The CP's own status is returned as it is: ABORT ("RCI_CStMt command
    // aborted", 001 3.2.5), INVALID_ID, NO_SUPPORT.
    return command(b, RCI_CStMt, ack, 6 * g.timeout_ms);
}

guint8 setSteerMotor(const guint8 mode, const gint8 dir, const float& duty_cycle, const float& angular_disp)
{
    return setMotor(0, RCI_MOTOR_PSERVO, kSteerMotorId, RCI_MOTOR_PSERVO_SPVAL, mode, dir,
                    duty_cycle, angular_disp);
}

guint8 setDriveMotor(const guint8 mode, const gint8 dir, const float& duty_cycle, const float& angular_disp)
{
    return setMotor(1, RCI_MOTOR_DC, kDriveMotorId, RCI_MOTOR_DC_SPVAL, mode, dir,
                    duty_cycle, angular_disp);
}

guint8 getSteerMotor(guint8& mode, gint8& dir, float& duty_cycle, float& angular_disp,
                     guint8& pos_type, guint8& pos_unit, float& displacement)
{
    std::vector<guint8> data;
    guint8 rc = getMotor(RCI_MOTOR_PSERVO, kSteerMotorId, RCI_CGTMTST_DATA, data);
    if (rc != RCI_CSTRP_IDLE) return rc;
    speedvalDecode(get16(&data[0]), mode, dir, duty_cycle, angular_disp);
    mposit_type pos = mposvalDecode(get32(&data[2]));
    pos_type = (guint8)pos.type;
    pos_unit = (guint8)pos.unit;
    displacement = pos.displacement;
    return RCI_CSTRP_IDLE;
}

guint8 getDriveMotor(guint8& mode, gint8& dir, float& duty_cycle, float& angular_disp)
{
    std::vector<guint8> data;
    guint8 rc = getMotor(RCI_MOTOR_DC, kDriveMotorId, RCI_CGTMTST_DATA, data);
    if (rc != RCI_CSTRP_IDLE) return rc;
    speedvalDecode(get16(&data[0]), mode, dir, duty_cycle, angular_disp);
    return RCI_CSTRP_IDLE;
}

guint8 startUltrasonics(void) { return activateSensors(RCI_SENSOR_ULTRASONIC, idRange(0, kUltrasonics), 1); }
guint8 stopUltrasonics(void) { return activateSensors(RCI_SENSOR_ULTRASONIC, idRange(0, kUltrasonics), 0); }

guint8 startEncoders(void)
{
    std::vector<guint16> ids;
    guint8 rc = encoderIds(ids);
    return rc == RCI_CSTRP_IDLE ? activateSensors(RCI_SENSOR_RELENCODER, ids, 1) : rc;
}

guint8 stopEncoders(void)
{
    std::vector<guint16> ids;
    guint8 rc = encoderIds(ids);
    return rc == RCI_CSTRP_IDLE ? activateSensors(RCI_SENSOR_RELENCODER, ids, 0) : rc;
}

guint8 clearEncoders(void)
{
    int pre = preflight(RCI_CStSn);
    if (pre >= 0) return (guint8)pre;
    std::vector<guint16> ids;
    guint8 rc = encoderIds(ids);
    if (rc != RCI_CSTRP_IDLE) return rc;
    if (ids.empty()) return RCI_CSTRP_INVALID_ID;
    std::vector<guint8> b;
    if (ids.size() == 1) {
        put16(b, RCI_CStSn | RCI_RQ_ACK);
        put8(b, RCI_SENSOR_RELENCODER);
        put16(b, ids[0]);
        put8(b, RCI_SENSOR_RELENCODER_CLEAR);
    } else if (consecutiveOnce(ids)) {
        put16(b, RCI_CStSn | RCI_GROUP | RCI_RQ_ACK);
        put8(b, RCI_SENSOR_RELENCODER);
        put8(b, (guint8)ids.size());
        put16(b, ids[0]);
        for (size_t i = 0; i < ids.size(); ++i) put8(b, RCI_SENSOR_RELENCODER_CLEAR);
    } else {
        put16(b, RCI_CStSn | RCI_POLY | RCI_RQ_ACK);
        put8(b, RCI_SENSOR_RELENCODER);
        put8(b, (guint8)ids.size());
        for (size_t i = 0; i < ids.size(); ++i) {
            put16(b, ids[i]);
            put8(b, RCI_SENSOR_RELENCODER_CLEAR);
        }
    }
    rc = command(b, RCI_CStSn, true, g.timeout_ms);
    if (rc == RCI_CSTRP_IDLE) {
        for (size_t i = 0; i < ids.size(); ++i) {
            EncoderTrack& t = g.tracks[ids[i]];
            t.known = true;             // the count restarts at 0, and so does the travel
            t.last_count = 0;
            t.travelled = 0;
        }
    }
    return rc;
}

guint8 readUltrasonics(vector<ultraData>& info)
{
    if (info.empty()) {
        for (int i = 0; i < kUltrasonics; ++i) {
            ultraData u;
            u.id = (guint8)i;
            u.delay = 0;
            u.status = 0;
            info.push_back(u);
        }
    }
    std::vector<guint16> ids;
    for (size_t i = 0; i < info.size(); ++i) ids.push_back(info[i].id);
    std::vector<std::vector<guint8> > values;
    std::vector<guint32> stat;
    guint8 rc = readWithStatus(RCI_SENSOR_ULTRASONIC, ids, values, stat);
    if (rc != RCI_CSTRP_IDLE) return rc;        // nothing read, nothing changed
    for (size_t i = 0; i < info.size(); ++i) {
        info[i].delay = get16(&values[i][0]);
        info[i].time = statvalTime(stat[i]);
        info[i].status = (guint8)(stat[i] & 0xff);
    }
    return RCI_CSTRP_IDLE;
}

guint8 readEncoders(vector<encoderData>& info)
{
    if (info.empty()) {
        std::vector<guint16> all;
        guint8 rc = encoderIds(all);
        if (rc != RCI_CSTRP_IDLE) return rc;
        if (all.empty()) return RCI_CSTRP_INVALID_ID;
        for (size_t i = 0; i < all.size(); ++i) {
            encoderData e;
            e.id = (guint8)all[i];
            e.d_count = e.count = 0;
            e.status = 0;
            e.position.type = LINEAR;
            e.position.unit = METRIC;
            e.position.displacement = 0.0f;
            info.push_back(e);
        }
    }
    std::vector<guint16> ids;
    for (size_t i = 0; i < info.size(); ++i) ids.push_back(info[i].id);
    std::vector<std::vector<guint8> > values;
    std::vector<guint32> stat;
    guint8 rc = readWithStatus(RCI_SENSOR_RELENCODER, ids, values, stat);
    if (rc != RCI_CSTRP_IDLE) return rc;        // nothing read, nothing changed
    for (size_t i = 0; i < info.size(); ++i) {
        info[i].d_count = (gint16)get16(&values[i][0]);
        info[i].count = (gint16)get16(&values[i][2]);
        info[i].position.type = LINEAR;
        info[i].position.unit = METRIC;
        info[i].position.displacement = encoderTravelMm(info[i].id, info[i].count);
        info[i].time = statvalTime(stat[i]);
        info[i].status = (guint8)(stat[i] & 0xff);
    }
    return RCI_CSTRP_IDLE;
}

guint8 rciSendItems(guint16 code, guint8 sub, const vector<guint16>& ids,
                    const vector<vector<guint8> >& data, bool ack)
{
    int pre = preflight(code);
    if (pre >= 0) return (guint8)pre;
    int len = rciCommandItemLen(code);
    // the Get inquiries are answered by replies only getSensors/getMotor frame
    if (len < 0 || code == RCI_CGtMtIq || code == RCI_CGtSnIq) return ERR_BAD_ARGUMENT;
    if (ids.empty() || ids.size() > kMaxItems || data.size() != ids.size()) return ERR_BAD_ARGUMENT;
    for (size_t i = 0; i < data.size(); ++i)
        if (data[i].size() != (size_t)len) return ERR_BAD_ARGUMENT;
    guint16 flags = ack ? RCI_RQ_ACK : 0;
    std::vector<guint8> b;
    if (ids.size() == 1) {
        put16(b, code | flags);
        put8(b, sub);
        put16(b, ids[0]);
    } else if (consecutiveOnce(ids)) {
        put16(b, code | RCI_GROUP | flags);
        put8(b, sub);
        put8(b, (guint8)ids.size());
        put16(b, ids[0]);
    } else {
        put16(b, code | RCI_POLY | flags);
        put8(b, sub);
        put8(b, (guint8)ids.size());
    }
    bool poly = ids.size() > 1 && !consecutiveOnce(ids);
    for (size_t i = 0; i < ids.size(); ++i) {
        if (poly) put16(b, ids[i]);
        b.insert(b.end(), data[i].begin(), data[i].end());
    }
    return command(b, code, ack, g.timeout_ms);
}

guint8 rciReadSensors(guint8 sub, const vector<guint16>& ids,
                      vector<vector<guint8> >& data, vector<guint32>& statvals)
{
    if (ids.empty() || sensorItemLen(sub, RCI_CGTSNST_DATA) < 0) return ERR_BAD_ARGUMENT;
    std::vector<std::vector<guint8> > values;
    std::vector<guint32> stat;
    guint8 rc = readWithStatus(sub, ids, values, stat);
    if (rc != RCI_CSTRP_IDLE) return rc;        // nothing read, nothing changed
    data.swap(values);
    statvals.swap(stat);
    return RCI_CSTRP_IDLE;
}

guint8 rciSetEncoderGeometry(double wheel_radius_m, guint32 counts_per_rev, int id)
{
    if (!(wheel_radius_m > 0.0) || !isfinite(wheel_radius_m) || counts_per_rev == 0
        || id < -1 || id > 0xffff)
        return ERR_BAD_ARGUMENT;
    Geometry geo = { wheel_radius_m, counts_per_rev };
    if (id < 0) {
        g_default_geometry = geo;
        g_geometry.clear();
    } else {
        g_geometry[(guint16)id] = geo;
    }
    return NO_ERROR;
}

const char* rciCodeName(guint8 code)
{
    switch (code) {
    case NO_ERROR: return "NO_ERROR";
    case ERR_CONNECT_FAILED: return "ERR_CONNECT_FAILED";
    case ERR_SERVER_TERMINATE: return "ERR_SERVER_TERMINATE";
    case ERR_UNKNOWN_CAPABILITY: return "ERR_UNKNOWN_CAPABILITY";
    case ERR_BAD_ARGUMENT: return "ERR_BAD_ARGUMENT";
    case RCI_CSTRP_UNDEFINED: return "RCI_CSTRP_UNDEFINED";
    case RCI_CSTRP_ABORT: return "RCI_CSTRP_ABORT";
    case RCI_CSTRP_BUSY: return "RCI_CSTRP_BUSY";
    case RCI_CSTRP_IDLE: return "RCI_CSTRP_IDLE";
    case RCI_CSTRP_INVALID_ID: return "RCI_CSTRP_INVALID_ID";
    case RCI_CSTRP_NO_SUPPORT: return "RCI_CSTRP_NO_SUPPORT";
    default: return "UNKNOWN";
    }
}

const char* rciTermName(guint16 code)
{
    switch (code) {
    case 0: return "NONE";
    case RCI_CSVTM_ACCESS: return "RCI_CSVTM_ACCESS";
    case RCI_CSVTM_AUTHENTICATE: return "RCI_CSVTM_AUTHENTICATE";
    case RCI_CSVTM_EMERGENCY: return "RCI_CSVTM_EMERGENCY";
    case RCI_CSVTM_ERROR: return "RCI_CSVTM_ERROR";
    case RCI_CSVTM_NOACK: return "RCI_CSVTM_NOACK";
    case RCI_CSVTM_USER: return "RCI_CSVTM_USER";
    default: return "UNKNOWN";
    }
}
