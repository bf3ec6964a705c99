/* glimpse-store-cmds.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "glimpse-cli.h"

int gl_cmd_profiles (int argc, char **argv);
int gl_cmd_create (int argc, char **argv);
int gl_cmd_list (int argc, char **argv);
int gl_cmd_info (int argc, char **argv);
int gl_cmd_remove (int argc, char **argv);
int gl_cmd_rename (int argc, char **argv);
