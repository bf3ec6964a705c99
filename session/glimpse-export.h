/* glimpse-export.h: desktop-integration commands of glimpse
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

int gl_cmd_export (int argc, char **argv);
int gl_cmd_unexport (int argc, char **argv);
int gl_cmd_apps (int argc, char **argv);
int gl_cmd_add_launcher (int argc, char **argv);
int gl_cmd_remove_launcher (int argc, char **argv);
int gl_cmd_open (int argc, char **argv);

G_END_DECLS
