/* glimpse-agent-cmds.h: glimpse status, glimpse control
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

int gl_cmd_status (int argc, char **argv);
int gl_cmd_control (int argc, char **argv);
