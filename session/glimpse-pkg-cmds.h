/* glimpse-pkg-cmds.h: the package commands of glimpse
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

int gl_cmd_install (int argc, char **argv);
int gl_cmd_uninstall (int argc, char **argv);
int gl_cmd_update (int argc, char **argv);
int gl_cmd_repos (int argc, char **argv);
int gl_cmd_add_repo (int argc, char **argv);
int gl_cmd_remove_repo (int argc, char **argv);
int gl_cmd_reset (int argc, char **argv);
int gl_cmd_rebase (int argc, char **argv);
