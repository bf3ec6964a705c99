/* gl-export-private.h: the write plan shared by the export modules
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-export.h"

G_BEGIN_DECLS

typedef struct {
  char *path;
  char *sandbox;     /* "" for shared files */
  GBytes *contents;
  int mode;
} GlPlanFile;

/* path -> GlPlanFile */
GHashTable *gl_plan_new (void);
void        gl_plan_add (GHashTable *plan, const char *path, const char *sandbox,
                         const char *data, gssize len, int mode);
void        gl_plan_add_bytes (GHashTable *plan, const char *path, const char *sandbox,
                               GBytes *bytes, int mode);

/* A sandbox as the shared files (menu, Thunar, app folders) see it. */
typedef struct {
  const char *id;
  const char *name;
  const char * const *apps;   /* exported desktop file names */
} GlExportedSandbox;

G_END_DECLS
