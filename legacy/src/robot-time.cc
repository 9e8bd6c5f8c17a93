// robot-time.cc -- RobotTime (BSAL book 001, section 3.1.2)
#include "robot-time.hh"

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

void RobotTime::normalise()
{
    while (usec_ >= 1000000) { usec_ -= 1000000; ++sec_; }
    while (usec_ < 0) { usec_ += 1000000; --sec_; }
}
