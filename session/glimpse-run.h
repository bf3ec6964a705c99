/* glimpse-run.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "glimpse-cli.h"

int gl_cmd_run (int argc, char **argv);
int gl_cmd_changes (int argc, char **argv);
int gl_cmd_purge (int argc, char **argv);
