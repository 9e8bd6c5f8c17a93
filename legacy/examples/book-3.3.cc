// SPDX-License-Identifier: GPL-2.0-or-later
//
// Licence: this one file is NOT under the project's Apache-2.0 licence. It is
// Ken Hughes's listing from the BSAL book, under the GNU General Public
// License, version 2 or (at your option) any later version, as its own notice
// below says; the licence text is legacy/examples/LICENSE.GPL-2.0.  It is only
// built into legacy/build/book-3.3 (a test program linked with the Apache-2.0
// rci-client library; Apache-2.0 code may be combined with GPL-3.0 code, which
// the "or later" allows) and is not installed with any package.
// scripts/add_license_headers.py leaves it alone.
//
// book-3.3.cc -- the example program of the BSAL book (seed 001, section 3.3,
// "Example program - client-app.cc"), exactly as printed there, for the test
// test/test_book_listing.py and `make -C legacy` (build/book-3.3).
//
// What was changed: only the line numbers the book prints in front of each
// line (1..97) and the page breaks between its code blocks were stripped;
// nothing else, not even the pre-standard `main` without a return type, the
// uninitialised `auth_key` or `MOTOR_REVERSE` (the API text says
// MOTOR_BACKWARD; rci-client.h defines both).  It is built with
// `g++ -fpermissive`.  The test checks that this copy still equals the
// listing extracted from the seed whenever the seed is at hand.
//
// The program text below is Ken Hughes's, under the GNU GPL (version 2 or
// later) as its own notice says.
// ==== 001 section 3.3 as printed (line numbers stripped) below this line ====
//
// client-app.cc -- a sample client application using the BRAL/SAL RCI
// protocol to control the robot.
//

//
// Copyright (C) 2000 Ken Hughes <khughes@uop.edu>
//
// This program is free software; you can redistribute it and/or
// modify it under the terms of the GNU General Public License
// as published by the Free Software Foundation; either
// version 2 of the License, or (at your option) any later
// version.
//
// This program is distributed in the hope that it will be useful,
// but WITHOUT ANY WARRANTY; without even the implied warranty of
// MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE. See the
// GNU General Public License for more details.
//
// You should have received a copy of the GNU General Public License
// along with this program; if not, write to the Free Software
// Foundation, Inc., 675 Mass Ave, Cambridge, MA 02139, USA.
//

#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "rci-client.h" // interface routines for
// the CA

main ( int argc, unsigned char *argv[] )
{
    string id = "ken";
    guint8 auth_key[16];
    vector<ultraData> distances;
    vector<encoderData> counts;
    guint8 mode;
    gint8 dir;
    float duty_cycle;
    float angular_disp;
    guint8 pos_type;
    guint8 pos_unit;
    float displacement;

    //
    // did the user give the name of the machine running the CP?
    //

    if ( argc != 2 )
    {
        exit (1);
    }

    //
    // connection to the CP
    //

    connectToServer ( id , auth_key , argv [1] );

    //
    // initialize the robot
    //

    resetRobot ( false );
    homeRobot ( false );
    sleep (1);
    startEncoders ();
    clearEncoders ();

    //
    // turn on the ultrasonics and motors
    //

    startUltrasonics ();
    setDriveMotor ( 1, MOTOR_REVERSE , 20.0 , 0.0 );

    //
    // take some readings
    //

    for ( int i = 0 ; i < 10 ; ++i )
    {
        readUltrasonics ( distances );
        readEncoders ( counts );
        usleep (250000);
    }

    //
    // turn off everything
    //

    stopUltrasonics ();
    setDriveMotor ( 1, MOTOR_REVERSE , 0.0 , 0.0 );
}
