-- Copyright 2026 The bsal_ros authors
--
-- Licensed under the Apache License, Version 2.0 (the "License");
-- you may not use this file except in compliance with the License.
-- You may obtain a copy of the License at
--
--     http://www.apache.org/licenses/LICENSE-2.0
--
-- Unless required by applicable law or agreed to in writing, software
-- distributed under the License is distributed on an "AS IS" BASIS,
-- WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
-- See the License for the specific language governing permissions and
-- limitations under the License.
--
-- SPDX-License-Identifier: Apache-2.0

-- Wireshark/tshark dissector for BSAL RCI (TCP 7650) and RDI (TCP 7651, 7652),
-- seed 001 chapters 4 and 5 as docs/PROTOCOL.md pins them down.
--
--   tshark -X lua_script:bsal.lua -r capture.pcap -Y rci
--   cp bsal.lua ~/.local/lib/wireshark/plugins/      (Wireshark picks it up)
--   other ports: -d tcp.port==7750,rci  /  -d tcp.port==7751,rdi
--
-- Byte order is detected per connection (IIId `00 10` big, `10 00` little;
-- RDI from its first code); packets split over segments are reassembled and
-- several in one segment are all decoded. Replies (ICaRp, CGtMtRp, CGtSnRp)
-- are framed with the inquiry seen earlier on the same connection. Bad input
-- is flagged as expert info (rci.malformed / rdi.malformed); RCI and RDI cannot
-- resynchronise, so the rest of that direction is then marked rci.unframed.
-- The tables below are generated from bsal_ros.protocol (gen_lua.py).

-- BEGIN GENERATED TABLES (python -m bsal_ros.wireshark.gen_lua; do not edit)
local RCI_VERSION = {0, 3}
local RCI_CODES = {[0x10] = "IIId", [0x11] = "IInCp", [0x12] = "ICaIq", [0x13] = "ICaRp", [0x100] = "CStIq", [0x101] = "CStRp", [0x102] = "CSvTm", [0x103] = "CCnAc", [0x104] = "CRs", [0x106] = "CBsTmIq", [0x107] = "CBsTm", [0x200] = "CAcMt", [0x201] = "CStMt", [0x202] = "CGtMtIq", [0x203] = "CGtMtRp", [0x210] = "CAcSn", [0x211] = "CStSn", [0x212] = "CGtSnIq", [0x213] = "CGtSnRp", [0x230] = "CSmTp"}
local RCI_SHAPES = {[0x0010] = "iiid", [0x0011] = "bare", [0x0012] = "icaiq", [0x0013] = "icarp", [0x0100] = "control_id", [0x0101] = "cstrp", [0x0102] = "csvtm", [0x0103] = "control_id", [0x0104] = "bare", [0x0106] = "bare", [0x0107] = "cbstm", [0x0200] = "items", [0x0201] = "commands", [0x0202] = "items", [0x0203] = "reply", [0x0210] = "items", [0x0211] = "commands", [0x0212] = "items", [0x0213] = "reply", [0x0230] = "items"}
local RCI_FLAGS = {MULTI = 0x0200, RQ_ACK = 0x0800, POLY = 0x4000, GROUP = 0x8000}
local RCI_FROM_CA = {[0x0010] = true, [0x0011] = true, [0x0012] = true, [0x0013] = true, [0x0100] = true, [0x0101] = true, [0x0103] = true, [0x0104] = true, [0x0106] = true, [0x0200] = true, [0x0201] = true, [0x0202] = true, [0x0210] = true, [0x0211] = true, [0x0212] = true, [0x0230] = true}
local RCI_FROM_CP = {[0x0010] = true, [0x0011] = true, [0x0012] = true, [0x0013] = true, [0x0100] = true, [0x0101] = true, [0x0102] = true, [0x0103] = true, [0x0107] = true, [0x0203] = true, [0x0213] = true}
local CSTRP_STATUS = {[0x08] = "UNDEFINED", [0x09] = "ABORT", [0x0a] = "BUSY", [0x0b] = "IDLE", [0x0c] = "INVALID_ID", [0x0d] = "NO_SUPPORT"}
local TERM_CODES = {[0x10] = "ACCESS", [0x11] = "AUTHENTICATE", [0x12] = "EMERGENCY", [0x13] = "ERROR", [0x14] = "NOACK", [0x15] = "USER"}
local CAP_INQUIRY = {[0x18] = "ACCESS", [0x19] = "SUPPORT", [0x1a] = "VERSION"}
local CAP_REPLY = {[0x20] = "ERROR", [0x21] = "NO_PERMISSION", [0x22] = "NO_SUPPORT", [0x23] = "PERMISSION"}
local RCI_SUBS = {[0x0200] = {[0xc0] = "DC", [0xc1] = "PSERVO"}, [0x0201] = {[0xc0] = "DC", [0xc1] = "PSERVO"}, [0x0202] = {[0xc0] = "DC", [0xc1] = "PSERVO"}, [0x0203] = {[0xc0] = "DC", [0xc1] = "PSERVO"}, [0x0210] = {[0x80] = "ABSENCODER", [0x81] = "ACCEL", [0x82] = "RELENCODER", [0x83] = "ULTRASONIC"}, [0x0211] = {[0x82] = "RELENCODER", [0x83] = "ULTRASONIC"}, [0x0212] = {[0x80] = "ABSENCODER", [0x81] = "ACCEL", [0x82] = "RELENCODER", [0x83] = "ULTRASONIC"}, [0x0213] = {[0x80] = "ABSENCODER", [0x81] = "ACCEL", [0x82] = "RELENCODER", [0x83] = "ULTRASONIC"}, [0x0230] = {[0xf0] = "0xf0"}}
local INQUIRY_OF = {[0x0013] = 0x0012, [0x0203] = 0x0202, [0x0213] = 0x0212}
local RCI_ASKS = {[0x0202] = true, [0x0212] = true}
local RCI_ITEMS = {[0x0200] = {{"activate", "B", "choice", ""}}, [0x0202] = {{"motor_status_code", "B", "choice", ""}}, [0x0210] = {{"activate", "B", "choice", ""}}, [0x0212] = {{"sensor_status_code", "B", "choice", ""}}, [0x0230] = {{"x_mm", "i", "int", "mm"}, {"y_mm", "i", "int", "mm"}, {"yaw_mrad", "i", "int", "mrad"}}}
local RCI_COMMANDS = {[0x0201] = {field = "motor_command", [0xc0] = {[0xd0] = {"DC_SPVAL", {{"speedval", "H", "speedval", ""}}}}, [0xc1] = {[0xd1] = {"PSERVO_SPVAL", {{"speedval", "H", "speedval", ""}}}, [0xd2] = {"PSERVO_RESET", {}}}}, [0x0211] = {field = "sensor_command", [0x82] = {[0x90] = {"RELENCODER_CLEAR", {}}}, [0x83] = {[0x91] = {"ULTRASONIC_ORDER", {{"slot", "B", "uint", ""}}}, [0x92] = {"ULTRASONIC_TIMING", {{"interval", "H", "uint", "ms"}}}}}}
local RCI_REPLIES = {[0x0203] = {[0xc0] = {[0x01] = {{"speedval", "H", "speedval", ""}}, [0x02] = {{"statval", "I", "statval", ""}}}, [0xc1] = {[0x01] = {{"speedval", "H", "speedval", ""}, {"mposval", "I", "mposval", ""}}, [0x02] = {{"statval", "I", "statval", ""}}}}, [0x0213] = {[0x80] = {[0x04] = {{"count", "h", "int", "counts"}}, [0x05] = {{"statval", "I", "statval", ""}}}, [0x81] = {[0x04] = {{"accel", "f", "float", "g"}}, [0x05] = {{"statval", "I", "statval", ""}}}, [0x82] = {[0x04] = {{"d_count", "h", "int", "counts"}, {"count", "h", "int", "counts"}}, [0x05] = {{"statval", "I", "statval", ""}}}, [0x83] = {[0x04] = {{"delay", "H", "uint", "us"}}, [0x05] = {{"statval", "I", "statval", ""}}}}}
local RDI_CODES = {[0x10] = "Sn", [0x20] = "Mt", [0x30] = "Ac", [0x40] = "RbOr", [0x800] = "Ms"}
local RDI_FLAGS = {POLY = 0x4000, GROUP = 0x8000}
local RDI_SUBS = {[0x0010] = {[0x01] = "ULTRASONIC", [0x02] = "RELENCODER", [0x03] = "ABSENCODER", [0x04] = "ACCEL"}, [0x0020] = {[0x01] = "DC"}, [0x0030] = {[0x01] = "STEER", [0x02] = "DRIVE"}, [0x0040] = {[0x01] = "EGO", [0x02] = "OMNI"}, [0x0800] = {[0x01] = "BASETIME"}}
local RDI_ITEMS = {[0x0010] = {[0x01] = {{"delay", "H", "uint", "us"}, {"status", "I", "statval", ""}}, [0x02] = {{"d_count", "h", "int", "counts"}, {"d_status", "I", "statval", ""}, {"count", "h", "int", "counts"}, {"status", "I", "statval", ""}}, [0x03] = {{"count", "h", "int", "counts"}, {"status", "I", "statval", ""}}, [0x04] = {{"accel", "f", "float", "g"}, {"status", "I", "statval", ""}}}, [0x0020] = {[0x01] = {{"speedval", "H", "speedval", ""}, {"status", "I", "statval", ""}}}, [0x0030] = {[0x01] = {{"angle", "f", "float", "rad"}, {"status", "I", "statval", ""}}, [0x02] = {{"rotations", "f", "float", "rotations"}, {"status", "I", "statval", ""}}}}
local RDI_PLAIN = {[0x0040] = {[0x01] = {{"xpos", "f", "float", "m"}, {"ypos", "f", "float", "m"}, {"angle", "f", "float", "rad"}, {"status", "I", "statval", ""}}, [0x02] = {{"direction", "f", "float", "rad"}, {"speed", "f", "float", "m/s"}, {"status", "I", "statval", ""}}}, [0x0800] = {[0x01] = {{"seconds", "i", "int", "s"}, {"microseconds", "i", "int", "us"}}}}
local CHOICES = {["activate"] = {[0] = "deactivate", [1] = "activate"}, ["motor_status_code"] = {[1] = "DATA", [2] = "STATUS", [3] = "TIME"}, ["sensor_status_code"] = {[4] = "DATA", [5] = "STATUS", [6] = "TIME"}}
-- END GENERATED TABLES

local NEED = {}          -- raised (as an error value) when a packet is incomplete
local function bad(fmt, ...) error({bad = string.format(fmt, ...)}, 0) end
local function hasbit(v, m) return math.floor(v / m) % 2 == 1 end
local function name_or(t, v, what) return (t and t[v]) or string.format("unknown %s 0x%x", what, v) end
local SIZES = {B = 1, H = 2, h = 2, I = 4, i = 4, f = 4, [""] = 0}

-- ------------------------------------------------------------------ fields
local function make_proto(abbr, title)
    local p = Proto(abbr, title)
    local F, E = {}, {}
    local function f(key, pf) F[key] = pf end
    f("code", ProtoField.uint16(abbr .. ".code", "Code", base.HEX,
                                abbr == "rci" and RCI_CODES or RDI_CODES))
    f("id_code", ProtoField.uint16(abbr .. ".id_code", "id_code", base.HEX))
    if abbr == "rci" then
        f("rq_ack", ProtoField.bool("rci.flags.rq_ack", "RQ_ACK", 16, nil, RCI_FLAGS.RQ_ACK))
    end
    f("poly", ProtoField.bool(abbr .. ".flags.poly", "POLY", 16, nil, 0x4000))
    f("group", ProtoField.bool(abbr .. ".flags.group", "GROUP", 16, nil, 0x8000))
    f("packet", ProtoField.string(abbr .. ".packet", "Packet"))
    f("direction", ProtoField.string(abbr .. ".direction", "Direction"))
    f("byte_order", ProtoField.string(abbr .. ".byte_order", "Byte order"))
    f("sub_code", ProtoField.uint8(abbr .. ".sub_code", "sub_code", base.HEX))
    f("sub_name", ProtoField.string(abbr .. ".sub_name", "Sub-code name"))
    f("count", ProtoField.uint8(abbr .. ".item_count", "count", base.DEC))
    f("first_id", ProtoField.uint16(abbr .. ".first_id", "first_id", base.DEC))
    f("id", ProtoField.uint16(abbr .. ".id", "id", base.DEC))
    f("item", ProtoField.none(abbr .. ".item", "Item"))
    E.malformed = ProtoExpert.new(abbr .. ".malformed", "Malformed " .. abbr:upper() .. " packet",
                                  expert.group.MALFORMED, expert.severity.ERROR)
    E.unframed = ProtoExpert.new(abbr .. ".unframed", abbr:upper() ..
                                 " stream lost its framing earlier: not decoded",
                                 expert.group.MALFORMED, expert.severity.WARN)
    E.no_inquiry = ProtoExpert.new(abbr .. ".no_inquiry", "Reply whose inquiry is not in the capture",
                                   expert.group.SEQUENCE, expert.severity.WARN)
    E.response = ProtoExpert.new(abbr .. ".response", "Status or termination",
                                 expert.group.RESPONSE_CODE, expert.severity.NOTE)
    E.bug = ProtoExpert.new(abbr .. ".dissector_bug", "Dissector error",
                            expert.group.MALFORMED, expert.severity.ERROR)
    return p, F, E
end

local function value_fields(abbr, F, specs)
    -- specs: generated {abbrev, fmt, kind, unit} lists; one ProtoField set per abbrev
    local P = abbr .. "."
    for _, spec in ipairs(specs) do
        local a, fmt, kind = spec[1], spec[2], spec[3]
        if not F["v." .. a] then
            local full = P .. a
            if kind == "statval" then
                F["v." .. a] = ProtoField.uint32(full, a .. " (statval)", base.HEX)
                F["v." .. a .. ".on"] = ProtoField.bool(full .. ".on", "on", 32, nil, 0x1)
                F["v." .. a .. ".up"] = ProtoField.bool(full .. ".up", "up", 32, nil, 0x2)
                F["v." .. a .. ".ok"] = ProtoField.bool(full .. ".ok", "ok", 32, nil, 0x4)
                F["v." .. a .. ".time"] = ProtoField.uint32(full .. ".time", "time (ms since base time)",
                                                            base.DEC, nil, 0xffffff00)
            elseif kind == "speedval" then
                F["v." .. a] = ProtoField.uint16(full, "speedval", base.HEX)
                F["v." .. a .. ".type"] = ProtoField.uint16(full .. ".type", "type", base.DEC,
                    {[0] = "angular speed", [1] = "duty cycle"}, 0x8000)
                F["v." .. a .. ".negative"] = ProtoField.bool(full .. ".negative", "negative (MOTOR_BACKWARD)",
                                                              16, nil, 0x0800)
                F["v." .. a .. ".magnitude"] = ProtoField.uint16(full .. ".magnitude", "magnitude",
                                                                 base.DEC, nil, 0x07ff)
                F["v." .. a .. ".duty"] = ProtoField.double(full .. ".duty", "duty cycle (%)")
                F["v." .. a .. ".rad_s"] = ProtoField.double(full .. ".rad_s", "angular speed (rad/s)")
            elseif kind == "mposval" then
                F["v." .. a] = ProtoField.uint32(full, "mposval", base.HEX)
                F["v." .. a .. ".type"] = ProtoField.uint32(full .. ".type", "type", base.DEC,
                    {[0] = "angular", [1] = "linear"}, 0x40000000)
                F["v." .. a .. ".unit"] = ProtoField.uint32(full .. ".unit", "unit", base.DEC, nil, 0x10000000)
                F["v." .. a .. ".negative"] = ProtoField.bool(full .. ".negative", "negative", 32, nil, 0x00800000)
                F["v." .. a .. ".magnitude"] = ProtoField.uint32(full .. ".magnitude", "magnitude",
                                                                 base.DEC, nil, 0x007fffff)
                F["v." .. a .. ".value"] = ProtoField.double(full .. ".value", "value (wire unit)")
                F["v." .. a .. ".si"] = ProtoField.double(full .. ".si", "value (SI: rad or m)")
            elseif kind == "choice" then
                local ctor = ({B = ProtoField.uint8, H = ProtoField.uint16, I = ProtoField.uint32})[fmt]
                F["v." .. a] = ctor(full, a, base.HEX, CHOICES[a])
            elseif kind == "float" then
                F["v." .. a] = ProtoField.float(full, a)
            elseif kind == "int" then
                F["v." .. a] = (fmt == "h") and ProtoField.int16(full, a) or ProtoField.int32(full, a)
            else
                local ctor = ({B = ProtoField.uint8, H = ProtoField.uint16, I = ProtoField.uint32})[fmt]
                F["v." .. a] = ctor(full, a, base.DEC)
            end
        end
    end
end

local function register(p, F, E)
    local fl, el = {}, {}
    for _, v in pairs(F) do fl[#fl + 1] = v end
    for _, v in pairs(E) do el[#el + 1] = v end
    p.fields = fl
    p.experts = el
end

-- ------------------------------------------------------------------ cursor
-- One cursor walks a packet twice: without a tree to find its length (NEED or
-- bad() on the way), then with the tree to show it.
local Cursor = {}
Cursor.__index = Cursor

local function cursor(tvb, pos, le, tree)
    return setmetatable({tvb = tvb, pos = pos, limit = tvb:len(), le = le, tree = tree}, Cursor)
end

function Cursor:need(n)
    if self.pos + n > self.limit then error(NEED, 0) end
end

function Cursor:read(fmt, at)
    local n = SIZES[fmt]
    local r = self.tvb(at or self.pos, n)
    if fmt == "f" then return self.le and r:le_float() or r:float() end
    if fmt == "h" or fmt == "i" then return self.le and r:le_int() or r:int() end
    if n == 1 then return r:uint() end
    return self.le and r:le_uint() or r:uint()
end

function Cursor:peek(fmt)
    self:need(SIZES[fmt])
    return self:read(fmt)
end

-- Take `fmt` bytes, add them as field `f` under `tree` (when there is one).
function Cursor:take(fmt, f, tree)
    local n = SIZES[fmt]
    self:need(n)
    local v = self:read(fmt)
    local item
    if tree and f then
        local r = self.tvb(self.pos, n)
        item = self.le and tree:add_le(f, r) or tree:add(f, r)
    end
    self.pos = self.pos + n
    return v, item
end

function Cursor:add_le_or_be(tree, f, r)
    if self.le then return tree:add_le(f, r) end
    return tree:add(f, r)
end

-- ------------------------------------------------------------------ values
local MPOS_FRACTION = {[0] = {[0] = {21, "rad", 1}, [1] = {15, "deg", math.pi / 180}},
                       [1] = {[0] = {4, "mm", 0.001}, [1] = {7, "0.1 in", 0.00254}}}

local function speedval_value(raw)
    local m = raw % 0x800
    local sign = hasbit(raw, 0x0800) and -1 or 1
    if hasbit(raw, 0x8000) then return true, sign * m * 100 / 2047 end
    return false, sign * m * 0.001
end

local function mposval_value(raw)
    local kind = hasbit(raw, 0x40000000) and 1 or 0
    local unit = hasbit(raw, 0x10000000) and 1 or 0
    local fr = MPOS_FRACTION[kind][unit]
    local v = (raw % 0x800000) / 2 ^ fr[1]
    if hasbit(raw, 0x00800000) then v = -v end
    return v, fr[2], v * fr[3]
end

-- One item field of a generated layout: value kinds get their sub-fields.
local function take_value(c, F, tree, spec)
    local a, fmt, kind, unit = spec[1], spec[2], spec[3], spec[4]
    local at = c.pos
    local v, item = c:take(fmt, F["v." .. a], tree)
    if kind == "choice" and not CHOICES[a][v] then bad("%s 0x%02x", a, v) end
    if not item then return v end
    local r = c.tvb(at, SIZES[fmt])
    if kind == "statval" then
        for _, s in ipairs({".on", ".up", ".ok", ".time"}) do c:add_le_or_be(item, F["v." .. a .. s], r) end
        item:append_text(string.format(" [%s%s%s, %d ms]", hasbit(v, 1) and "on " or "off ",
                         hasbit(v, 2) and "up " or "down ", hasbit(v, 4) and "ok" or "not ok",
                         math.floor(v / 256)))
    elseif kind == "speedval" then
        for _, s in ipairs({".type", ".negative", ".magnitude"}) do
            c:add_le_or_be(item, F["v." .. a .. s], r)
        end
        local duty, x = speedval_value(v)
        item:add(F["v." .. a .. (duty and ".duty" or ".rad_s")], r, x)
        item:append_text(duty and string.format(" [%.2f %%]", x) or string.format(" [%.3f rad/s]", x))
    elseif kind == "mposval" then
        for _, s in ipairs({".type", ".unit", ".negative", ".magnitude"}) do
            c:add_le_or_be(item, F["v." .. a .. s], r)
        end
        local x, u, si = mposval_value(v)
        item:add(F["v." .. a .. ".value"], r, x):append_text(" " .. u)
        item:add(F["v." .. a .. ".si"], r, si)
        item:append_text(string.format(" [%g %s]", x, u))
    elseif unit ~= "" then
        item:append_text(" " .. unit)
    end
    return v
end

-- the fields of a generated layout; returns the first one's value
local function take_layout(c, F, tree, specs)
    local first
    for i, spec in ipairs(specs) do
        local v = take_value(c, F, tree, spec)
        if i == 1 then first = v end
    end
    return first
end

-- A packet's first two bytes: its code, shown with the flags `flag_bits`
-- (fields `flag_fields`, in the same order) that are set in it; an unknown
-- code is bad(). Returns the base code (flags cleared), its name and the flags.
local function take_code(c, F, codes, flag_bits, flag_fields)
    local t, start = c.tree, c.pos
    local id_code = c:peek("H")
    local flags = 0
    for _, m in ipairs(flag_bits) do
        if hasbit(id_code, m) then flags = flags + m end
    end
    local base = id_code - flags
    local name = codes[base]
    if not name then c:take("H", F.id_code, t); bad("unknown code 0x%04x", id_code) end
    if t then
        local r = c.tvb(start, 2)
        c:add_le_or_be(t, F.id_code, r)
        t:add(F.code, r, base)
        for _, f in ipairs(flag_fields) do c:add_le_or_be(t, F[f], r) end
        t:add(F.packet, r, name):set_generated()
        t:append_text(": " .. name)
    end
    c.pos = c.pos + 2
    return base, name, flags
end

-- The sub-code byte, shown with its name from `subs`; bad() naming `packet`
-- when `subs` has no such sub-code. Returns the sub-code and its name.
local function take_sub(c, F, subs, packet)
    local t = c.tree
    local sub, item = c:take("B", F.sub_code, t)
    local sname = subs[sub]
    if not sname then bad("sub-code 0x%02x for %s", sub, packet) end
    if item then
        item:append_text(" (" .. sname .. ")")
        t:add(F.sub_name, c.tvb(c.pos - 1, 1), sname):set_generated()
    end
    return sub, sname
end

-- Per-connection state, keyed by tcp.stream.
local f_stream = Field.new("tcp.stream")

local function new_state(pinfo)
    return {first_addr = tostring(pinfo.src), first_port = pinfo.src_port,
            pending = {CA = {}, CP = {}}, broken = {}, cache = {}}
end

local function byte_order_pref(pref, guess)
    if pref == 1 then return false end
    if pref == 2 then return true end
    return guess
end

-- dissect one direction of a TCP segment: `one(c)` parses a packet
-- (raising NEED or bad()), `after(c, ok)` runs once per complete packet.
local function dissect_stream(proto, F, E, tvb, pinfo, tree, st, dir, one, summary)
    local offset, infos = 0, {}
    if st.le == nil then      -- one byte so far: the byte order needs two
        pinfo.desegment_offset = 0
        pinfo.desegment_len = DESEGMENT_ONE_MORE_SEGMENT
        return tvb:len()
    end
    local broken_at = st.broken[dir]
    if broken_at and pinfo.number > broken_at then
        local t = tree:add(proto, tvb())
        t:add_proto_expert_info(E.unframed)
        pinfo.cols.protocol = summary
        pinfo.cols.info = dir .. ": [not decoded: the stream lost its framing earlier]"
        return tvb:len()
    end
    while offset < tvb:len() do
        local m = cursor(tvb, offset, st.le, nil)
        local ok, err = pcall(one, m, pinfo, st, dir)
        if not ok and err == NEED then
            pinfo.desegment_offset = offset
            pinfo.desegment_len = DESEGMENT_ONE_MORE_SEGMENT
            break
        end
        local len = ok and (m.pos - offset) or (tvb:len() - offset)
        local t = tree:add(proto, tvb(offset, len))
        t:add(F.direction, dir):set_generated()
        t:add(F.byte_order, st.le and "little-endian" or "big-endian"):set_generated()
        local c = cursor(tvb, offset, st.le, t)
        c.final = ok
        local ok2, err2 = pcall(one, c, pinfo, st, dir)
        if not ok then
            local msg = type(err) == "table" and err.bad or ("dissector error: " .. tostring(err))
            t:add_proto_expert_info(type(err) == "table" and E.malformed or E.bug, msg)
            infos[#infos + 1] = "[Malformed: " .. msg .. "]"
            if not pinfo.visited then st.broken[dir] = pinfo.number end
            offset = tvb:len()
            break
        elseif not ok2 then
            t:add_proto_expert_info(E.bug, "dissector error: " .. tostring(type(err2) == "table"
                                    and err2.bad or err2))
        end
        infos[#infos + 1] = c.info or "?"
        offset = m.pos
    end
    if #infos > 0 then
        pinfo.cols.protocol = summary
        pinfo.cols.info = dir .. ": " .. table.concat(infos, ", ")
    end
    return tvb:len()
end

-- ===================================================================== RCI
local rci, RF, RE = make_proto("rci", "BSAL Robot Control Interface (RCI)")
local rdi, DF, DE = make_proto("rdi", "BSAL Robot Display Interface (RDI)")
local states = {rci = {}, rdi = {}}
do
    local f = function(k, pf) RF[k] = pf end
    f("vers_major", ProtoField.uint8("rci.vers_major", "vers_major"))
    f("vers_minor", ProtoField.uint8("rci.vers_minor", "vers_minor"))
    f("user_id", ProtoField.string("rci.user_id", "user_id"))
    f("auth_key", ProtoField.bytes("rci.auth_key", "auth_key"))
    f("reserved", ProtoField.bytes("rci.reserved", "reserved"))
    f("control_id", ProtoField.uint16("rci.control_id", "control_id", base.HEX, RCI_CODES))
    f("inq_type", ProtoField.uint8("rci.inq_type", "inq_type", base.HEX, CAP_INQUIRY))
    f("cap_reply", ProtoField.uint8("rci.cap_reply", "reply", base.HEX, CAP_REPLY))
    f("status_resp", ProtoField.uint8("rci.status_resp", "status_resp", base.HEX, CSTRP_STATUS))
    f("term_code", ProtoField.uint16("rci.term_code", "term_code", base.HEX, TERM_CODES))
    f("seconds", ProtoField.int32("rci.seconds", "seconds"))
    f("microseconds", ProtoField.int32("rci.microseconds", "microseconds"))
    f("time", ProtoField.absolute_time("rci.time", "base time", base.UTC))
    -- the item fields of every generated layout, and one command-byte field per Set family
    local specs = {}
    local function add(lay) for _, s in ipairs(lay) do specs[#specs + 1] = s end end
    for _, lay in pairs(RCI_ITEMS) do add(lay) end
    for _, subs in pairs(RCI_REPLIES) do
        for _, st in pairs(subs) do for _, lay in pairs(st) do add(lay) end end
    end
    local command_names = {}     -- field -> {byte = name}, over every Set code using it
    for _, cmds in pairs(RCI_COMMANDS) do
        local names = command_names[cmds.field] or {}
        command_names[cmds.field] = names
        for sub, bytes in pairs(cmds) do
            if sub ~= "field" then
                for b, cmd in pairs(bytes) do names[b] = cmd[1]; add(cmd[2]) end
            end
        end
    end
    for field, names in pairs(command_names) do
        f(field, ProtoField.uint8("rci." .. field, "command", base.HEX, names))
    end
    value_fields("rci", RF, specs)
end
local byte_orders = {rci = 0, rdi = 0}    -- each protocol's preference, read by init
rci.prefs.byte_order = Pref.enum("Byte order", 0, "auto: from the IIId's first two bytes",
    {{1, "auto", 0}, {2, "big", 1}, {3, "little", 2}}, false)

-- the oldest inquiry of the peer that `code` (+ sub, control_id) answers
local function find_inquiry(c, st, dir, code, sub, control_id)
    local key = c.cache_key
    if c.visited then return st.cache[key] end
    local list = st.pending[dir == "CA" and "CP" or "CA"]
    for i, e in ipairs(list) do
        local hit
        if code == 0x0101 then hit = (e.code == 0x0100) or (e.code == control_id)
        else hit = (e.code == INQUIRY_OF[code]) and (sub == nil or e.sub == sub) end
        if hit then
            st.cache[key] = e
            c.found = i
            return e
        end
    end
    return nil
end

-- The id items of a packet of form `flags` (neither POLY nor GROUP: one
-- item; POLY: a count, then an id before each item; GROUP: a count and the
-- first id): `take_data(it, n, id)` reads item n's data (n from 0).
-- Returns the form ("", "POLY" or "GROUP") and the count.
local function take_items(c, F, flags, take_data)
    local t = c.tree
    local form = hasbit(flags, 0x4000) and "POLY" or (hasbit(flags, 0x8000) and "GROUP" or "")
    local count, first = 1, nil
    if form ~= "" then
        count = c:take("B", F.count, t)
        if count == 0 then bad("count 0") end
    end
    if form == "GROUP" then
        first = c:take("H", F.first_id, t)
        if first + count - 1 > 0xffff then bad("group ids past 0xffff") end
    end
    for n = 0, count - 1 do
        local at = c.pos
        local it = t and t:add(F.item, c.tvb(at, 0)) or nil
        local id
        if first then
            id = first + n
            if it then it:add(F.id, c.tvb(at, 0), id):set_generated() end
        else
            id = c:take("H", F.id, it)
        end
        take_data(it, n, id)
        if it then
            it:set_len(c.pos - at)
            it:append_text(string.format(" id %d", id))
        end
    end
    return form, count
end

local function rci_items(c, F, base, flags, sub, ctx, asked)
    return take_items(c, F, flags, function(it, n, id)
        local shape = RCI_SHAPES[base]
        if shape == "items" then
            local v = take_layout(c, F, it, RCI_ITEMS[base])
            if RCI_ASKS[base] then asked[#asked + 1] = {id, v} end   -- the reply's layout
        elseif shape == "commands" then
            local cmds = RCI_COMMANDS[base]
            local b = c:take("B", F[cmds.field], it)
            local cmd = cmds[sub] and cmds[sub][b]
            if not cmd then bad("command byte 0x%02x for sub-code 0x%02x", b, sub) end
            take_layout(c, F, it, cmd[2])
        elseif shape == "reply" then
            -- items answer the inquiry's in order (an id may be asked twice: DATA and STATUS)
            local q = ctx.status[n + 1]
            if not q or q[1] ~= id then bad("reply item for id %d, which was not asked there", id) end
            local st = q[2]
            local lay = RCI_REPLIES[base][sub][st]
            if not lay then bad("status code 0x%02x is never answered with a reply", st) end
            take_layout(c, F, it, lay)
        else
            bad("%s carries no id items", RCI_CODES[base])
        end
    end)
end

local function rci_one(c, pinfo, st, dir)
    local F, t = RF, c.tree
    local base, name, flags = take_code(c, F, RCI_CODES, {0x0800, 0x4000, 0x8000},
                                        {"rq_ack", "poly", "group"})
    local allowed = dir == "CA" and RCI_FROM_CA or RCI_FROM_CP
    if not allowed[base] then bad("%s is not sent by the %s", name, dir) end
    if hasbit(flags, 0x4000) and hasbit(flags, 0x8000) then bad("POLY and GROUP together") end
    if flags >= 0x4000 and not hasbit(base, 0x0200) then bad("%s cannot be poly/group", name) end
    if hasbit(flags, 0x0800) and base < 0x0100 then bad("RQ_ACK on an initialization packet") end
    local info = name
    if hasbit(flags, 0x0800) then info = info .. " RQ_ACK" end
    local shape = RCI_SHAPES[base]
    if shape == "iiid" then
        c:take("B", F.vers_major, t); c:take("B", F.vers_minor, t)
        c:need(56)
        if t then
            t:add(F.user_id, c.tvb(c.pos, 16), c.tvb(c.pos, 16):stringz())
            t:add(F.auth_key, c.tvb(c.pos + 16, 16))
            t:add(F.reserved, c.tvb(c.pos + 32, 24))
            info = info .. " user=" .. c.tvb(c.pos, 16):stringz()
        end
        c.pos = c.pos + 56
    elseif shape == "icaiq" or shape == "icarp" then
        local asking = shape == "icaiq"
        local n = c:take("B", F.count, t)
        if not asking and n == 0 then bad("ICaRp count 0") end
        local ctx = (not asking) and find_inquiry(c, st, dir, base) or nil
        local inq = {}
        for _ = 1, n do
            local at = c.pos
            local it = t and t:add(F.item, c.tvb(at, 0)) or nil
            local cid = c:take("H", F.control_id, it)
            if asking then
                local q = c:take("B", F.inq_type, it)
                if not CAP_INQUIRY[q] then bad("inquiry type 0x%02x", q) end
                inq[cid] = q
            else
                local q = ctx and ctx.inq[cid]
                local b = c:peek("B")
                if (q == 0x1a and b ~= 0x20) or (q == nil and not CAP_REPLY[b]) then
                    c:take("B", F.vers_major, it); c:take("B", F.vers_minor, it)
                else
                    c:take("B", F.cap_reply, it)
                    if not CAP_REPLY[b] then bad("capability reply 0x%02x", b) end
                end
            end
            if it then it:set_len(c.pos - at) end
        end
        c.inquiry = asking and {code = base, inq = inq} or nil
        info = info .. " n=" .. n
    elseif shape == "control_id" then
        local cid = c:take("H", F.control_id, t)
        info = info .. " " .. name_or(RCI_CODES, cid, "code")
        if base == 0x0100 then c.inquiry = {code = base} end   -- CStIq: CStRp answers it
    elseif shape == "cstrp" then
        local cid = c:take("H", F.control_id, t)
        local s, item = c:take("B", F.status_resp, t)
        if not CSTRP_STATUS[s] then bad("status 0x%02x", s) end
        find_inquiry(c, st, dir, base, nil, cid)
        info = info .. " " .. name_or(RCI_CODES, cid, "code") .. " " .. CSTRP_STATUS[s]
        if item then item:add_proto_expert_info(RE.response, "CStRp " .. CSTRP_STATUS[s]) end
    elseif shape == "csvtm" then
        local s, item = c:take("H", F.term_code, t)
        if not TERM_CODES[s] then bad("termination code 0x%04x", s) end
        info = info .. " " .. TERM_CODES[s]
        if item then item:add_proto_expert_info(RE.response, "server termination " .. TERM_CODES[s]) end
    elseif shape == "cbstm" then
        local at = c.pos
        local sec = c:take("i", F.seconds, t)
        local usec = c:take("i", F.microseconds, t)
        if t then t:add(F.time, c.tvb(at, 8), NSTime.new(sec, usec * 1000)):set_generated() end
    elseif RCI_SUBS[base] then      -- id-carrying: items, commands, reply
        local sub, sname = take_sub(c, F, RCI_SUBS[base], name)
        local ctx
        if INQUIRY_OF[base] then
            ctx = find_inquiry(c, st, dir, base, sub)
            if not ctx then error({bad = "no_inquiry"}, 0) end
        end
        local asked = {}   -- an inquiry: what was asked for each id (the reply's layout)
        local form, count = rci_items(c, F, base, flags, sub, ctx, asked)
        if RCI_ASKS[base] then
            c.inquiry = {code = base, sub = sub, status = asked}
        end
        info = string.format("%s %s%s", info, form ~= "" and (form .. " ") or "", sname) ..
               (form ~= "" and (" n=" .. count) or "")
    end
    c.info = info
    -- bookkeeping, once per complete packet on the first pass
    if c.final and not c.visited then
        if c.found then
            table.remove(st.pending[dir == "CA" and "CP" or "CA"], c.found)
        end
        if c.inquiry then table.insert(st.pending[dir], c.inquiry) end
    end
end

local function rci_wrap(c, pinfo, st, dir)
    c.visited = pinfo.visited
    c.cache_key = pinfo.number .. ":" .. c.pos
    local ok, err = pcall(rci_one, c, pinfo, st, dir)
    if ok then return end
    if type(err) == "table" and err.bad == "no_inquiry" then
        err = {bad = "reply whose inquiry is not in the capture: cannot frame it"}
    end
    error(err, 0)
end

local function detect_le(tvb, pref, rci_like)
    if pref ~= 0 then return pref == 2 end
    if tvb:len() < 2 then return nil end     -- decided when two bytes are there
    local be, le = tvb(0, 2):uint(), tvb(0, 2):le_uint()
    if rci_like then return be ~= 0x0010 and le == 0x0010 end
    local function valid(v)
        local b = v % 0x4000
        return RDI_CODES[b] ~= nil
    end
    return (not valid(be)) and valid(le)
end

local function stream_state(tvb, pinfo, is_rci)
    local key = (is_rci and "rci" or "rdi") .. tostring(f_stream() and f_stream().value or 0)
    local tab = states[is_rci and "rci" or "rdi"]
    local st = tab[key]
    if not st then
        st = new_state(pinfo)
        tab[key] = st
    end
    if st.le == nil then
        st.le = detect_le(tvb, byte_orders[is_rci and "rci" or "rdi"], is_rci)
    end
    return st
end

-- A protocol's init (per-capture states, its byte-order preference) and
-- dissector: the first sender of a stream is `first`, the peer `other`;
-- `one` parses one packet; a Lua error becomes an expert item, not a crash.
local function install(proto, name, F, E, first, other, one, summary)
    function proto.init()
        states[name] = {}
        byte_orders[name] = proto.prefs.byte_order or 0
    end
    function proto.dissector(tvb, pinfo, tree)
        local ok, r = pcall(function()
            local st = stream_state(tvb, pinfo, name == "rci")
            local dir = (tostring(pinfo.src) == st.first_addr and pinfo.src_port == st.first_port)
                        and first or other
            return dissect_stream(proto, F, E, tvb, pinfo, tree, st, dir, one, summary)
        end)
        if not ok then
            tree:add(proto, tvb()):add_proto_expert_info(E.bug, "dissector error: " .. tostring(r))
            return tvb:len()
        end
        return r
    end
end

install(rci, "rci", RF, RE, "CA", "CP", rci_wrap, "RCI")

-- ===================================================================== RDI
do
    local specs = {}
    for _, t in ipairs({RDI_ITEMS, RDI_PLAIN}) do
        for _, subs in pairs(t) do
            for _, lay in pairs(subs) do for _, s in ipairs(lay) do specs[#specs + 1] = s end end
        end
    end
    value_fields("rdi", DF, specs)
    DF.time = ProtoField.absolute_time("rdi.time", "base time", base.UTC)
    DF.client_data = ProtoField.bytes("rdi.client_data", "Client data (read and discarded by the server)")
end
rdi.prefs.byte_order = Pref.enum("Byte order", 0, "auto: from the first code",
    {{1, "auto", 0}, {2, "big", 1}, {3, "little", 2}}, false)

local function rdi_one(c, pinfo, st, dir)
    local F, t = DF, c.tree
    local base, name, flags = take_code(c, F, RDI_CODES, {0x4000, 0x8000}, {"poly", "group"})
    if flags == 0xc000 then bad("POLY and GROUP together") end
    local sub, sname = take_sub(c, F, RDI_SUBS[base], "RDI-" .. name)
    local info = "RDI-" .. name .. " " .. sname
    if RDI_PLAIN[base] then
        if flags ~= 0 then bad("RDI-%s has no poly/group form", name) end
        local at = c.pos
        take_layout(c, F, t, RDI_PLAIN[base][sub])
        if base == 0x0800 and t then
            t:add(F.time, c.tvb(at, 8), NSTime.new(c:read("i", at), c:read("i", at + 4) * 1000))
                :set_generated()
        end
    else
        local lay = RDI_ITEMS[base][sub]
        local form, count = take_items(c, F, flags, function(it) take_layout(c, F, it, lay) end)
        if form ~= "" then info = info .. " " .. form .. " n=" .. count end
    end
    c.info = info
end

local function rdi_wrap(c, pinfo, st, dir)
    if dir == "client" then
        c:need(1)
        if c.tree then c.tree:add(DF.client_data, c.tvb(c.pos)) end
        c.pos = c.limit
        c.info = "client data"
        return
    end
    rdi_one(c, pinfo, st, dir)
end

-- the server speaks first (base time on connect): the first sender is the server
install(rdi, "rdi", DF, DE, "server", "client", rdi_wrap, "RDI")

register(rci, RF, RE)
register(rdi, DF, DE)
local tcp_port = DissectorTable.get("tcp.port")
tcp_port:add(7650, rci)
tcp_port:add(7651, rdi)
tcp_port:add(7652, rdi)
