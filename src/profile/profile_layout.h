/*
 * profile_layout.h — where profiles sit on disk: the one definition of a data
 * path's layout, used by `process` (where to write), `serve`/`view` (what to list
 * and open), the query engine (a system profile's device profiles) and the SQL
 * catalogue.
 *
 * Layout (docs/architecture.md, "Output layout"):
 *   <data-path>                     default $HOME/.nxprof
 *   <data-path>/profiles/global/    the root: every profile of the data path
 *   <root>/<name>@latest/           the profile with display name <name> (a link into
 *                                   its run's set folder, profile_set.h)
 *   <system profile>/devices/<D>/   a device profile nested in its system profile
 *                                   (what `process --output-file` writes)
 * A profile's name is its display name <S>, or "<S>/devices/<D>" for a nested
 * device profile. A system profile's device profiles (its DeviceProfileList) are
 * nested under devices/, else its siblings <D>@latest in the same folder.
 *
 * Paths are followed only while their real paths stay inside the root (or the
 * folder the system profile sits in): data_path.h nx_dir_real_inside. Errors fill
 * an nx_error; nothing here prints.
 */
#ifndef NX_PROFILE_LAYOUT_H
#define NX_PROFILE_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "parquet/parquet.h"

/* The folder of a system profile that holds its nested device profiles. */
#define NX_LAYOUT_DEVICES_DIR "devices"

/* Longest display name accepted, in bytes: leaves room for the entry's suffix
 * ("@latest"), the temporary suffix of a build (profile_output.h) and the
 * NAME_MAX (255) limit of one path component. */
#define NX_DISPLAY_NAME_MAX 200

/* 0 when `name` is a usable display name: not empty, at most NX_DISPLAY_NAME_MAX
 * bytes, no '/', no "..", no control characters. Otherwise -1 with the reason. */
int nx_display_name_validate(const char *name, nx_error *err);

/* $HOME/.nxprof, malloc'd into *out: the data path when none is given. -1 with
 * err when HOME is unset or empty, or memory runs out. */
int nx_data_path_default(char **out, nx_error *err);

/* <data_path>/profiles/global (data_path NULL: the default above), malloc'd into
 * *out: the root, the folder of a data path's profiles. */
int nx_data_path_root(const char *data_path, char **out, nx_error *err);

/* The final profile directory, malloc'd into *out (caller frees):
 *   output_file != NULL  -> output_file as given (data_path and display_name ignored);
 *   otherwise            -> <root of data_path>/<display_name>@latest, display_name
 *                           validated (nx_display_name_validate). */
int nx_profile_dir_resolve(const char *data_path, const char *display_name, const char *output_file,
                           char **out, nx_error *err);

/* "<name>@latest", the root's entry of display name `name`, malloc'd (NULL when
 * memory runs out). */
char *nx_layout_entry(const char *name);

/* The length of the display name that the directory name `entry` is the entry of
 * (its last path component less "@latest"; trailing slashes ignored), or 0 when it
 * is not one (no "@latest" suffix, or nothing before it). *name (may be NULL) is
 * set to where that name starts in entry. */
size_t nx_layout_entry_name(const char *entry, const char **name);

/* nx_layout_find's answers besides 0 and -1 (out of memory). */
enum { NX_LAYOUT_INVALID = 1, NX_LAYOUT_MISSING = 2 };

/* The directory of the profile called `name` (a display name, or
 * "<S>/devices/<D>") in root, malloc'd into *dir: root's real path followed by
 * <S>@latest[/devices/<D>], the path through the name (not its real path: a run
 * publishes a new generation behind the name, profile_set.h). Returns 0;
 * NX_LAYOUT_INVALID when S or D is not a valid display name; NX_LAYOUT_MISSING when
 * the root or the profile is missing, not a directory, or its real path leaves the
 * root; -1 when out of memory. err says why (it may quote the name). */
int nx_layout_find(const char *root, const char *name, char **dir, nx_error *err);

typedef struct nx_layout_profile {
    char *name;   /* its display name */
    char *dir;    /* as nx_layout_find answers */
} nx_layout_profile;

/* Every profile of root (the entries "<name>@latest" directly in it that
 * nx_layout_find finds), sorted by name (strcmp), into a malloc'd array. A missing
 * root is an empty list. 0, or -1 when out of memory (*out NULL). */
int nx_layout_list(const char *root, nx_layout_profile **out, size_t *count);
void nx_layout_list_free(nx_layout_profile *ps, size_t count);

/* The directory of device profile `name` of the system profile system_dir:
 * <system_dir>/devices/<name>/ when that directory exists, else <parent of
 * system_dir>/<name>@latest/ (the root, where every profile of a run sits side
 * by side). The parent of "prof" is ".". A name that is empty, ".", "..", or holds
 * a '/' is refused (it would lead out of those folders), and so is a directory
 * whose real path leaves the parent of system_dir (a symbolic link out of the data
 * path). Returns a malloc'd path (it may not exist), or NULL with err. */
char *nx_device_profile_dir(const char *system_dir, const char *name, nx_error *err);

/* The name device profile `dev` of system profile `sys` goes by, given the
 * directory nx_device_profile_dir found for it, dev_dir, and sys_dir, the system
 * profile's: "<sys>/devices/<dev>" when dev_dir lies in sys_dir, else "<dev>".
 * malloc'd; NULL when memory runs out. */
char *nx_layout_device_name(const char *sys, const char *sys_dir, const char *dev, const char *dev_dir);

/* The directory of the system profile that device profile device_dir belongs to:
 * the folder above <S>/devices/<D>/ when device_dir sits there, else the sibling
 * <S>@latest/ of <S>-nd<D>-nc<C>@latest/ (the name `process` gives a device profile
 * beside its system profile). malloc'd; the directory may not exist (a device
 * profile processed without its system profile). NULL when device_dir follows
 * neither form, or memory ran out. */
char *nx_layout_system_dir(const char *device_dir);

#endif
