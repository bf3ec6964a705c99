/* glimpse-updates-cmds.h: glimpse updates [--check] [ID…]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

int gl_cmd_updates (int argc, char **argv);
