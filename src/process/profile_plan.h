/*
 * profile_plan.h — which profiles one `nxprof process` run writes, their names
 * and their directories (docs/architecture.md, "Output layout").
 *
 * As in the reference tool, a capture session becomes a **system profile**
 * (runtime and framework events, CPU and memory samples, a DeviceProfileList)
 * plus **one device profile per device trace** (one NeuronCore). The rules:
 *
 *   Session name S: the display name N when the capture has one session; with
 *     several, "N-s<k>" for the k-th session (1, 2, ...) in the order of their
 *     directory paths.
 *   A session with one device trace and no system data to process gives just
 *     that device profile, named S. Otherwise it gives a system profile named S
 *     and a device profile per trace named "S-nd<D>-nc<C>" (D, C from the trace
 *     file's name); when two programs of the session both have a trace of the
 *     same NeuronCore, each of those names gets "-<its program's hash>" (the 16
 *     hex digits of the file names). Every name is checked like a display name.
 *   Directories: with --data-path P every profile is P/profiles/global/<name>@latest
 *     (a link into the run's set folder, profile/profile_set.h, where it is built).
 *     With --output-file DIR (one session only) the session's first profile is DIR
 *     and, when that is a system profile, each device profile is
 *     DIR/devices/<name>/ (profile/profile_layout.h), built and published with it.
 *   N with --output-file and no --display-name is DIR's last path component.
 *
 * Sessions that have nothing left to process (--ignore-device-profile or
 * --ignore-system-profile switched off all they hold) give no profile.
 */
#ifndef NX_PROFILE_PLAN_H
#define NX_PROFILE_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "capture/capture.h"
#include "process/process_options.h"
#include "profile/profile_layout.h"

typedef enum nx_profile_kind { NX_PROFILE_SYSTEM, NX_PROFILE_DEVICE } nx_profile_kind;

typedef struct nx_planned_profile {
    nx_profile_kind kind;
    char *name;                           /* Metadata.profile_name; DeviceProfileList.device_profile_name */
    char *dir;                            /* where it is published */
    size_t session;                       /* index into the capture's sessions */
    /* Device profiles: */
    const nx_cap_program_file *program;
    const nx_cap_trace_file *trace;
    size_t system;                        /* its system profile's index in the plan, or SIZE_MAX */
    bool nested;                          /* dir lies inside its system profile's (built there) */
    /* System profiles: */
    bool system_data;                     /* the session's system files are processed */
    size_t n_devices;                     /* its device profiles follow it in the plan */
} nx_planned_profile;

typedef struct nx_profile_plan {
    nx_planned_profile *p;                /* per session: its system profile, then its device profiles */
    size_t n;
} nx_profile_plan;

/* Plans the run of o over cap. Returns 0, or -1 with a message in err (nothing to
 * process, several sessions with --output-file, a name that is not valid). */
int nx_profile_plan_make(const nx_process_options *o, const nx_capture *cap, nx_profile_plan *plan, nx_error *err);
void nx_profile_plan_free(nx_profile_plan *plan);

/* A view of session k of cap alone (shares cap's memory). */
nx_capture nx_capture_session_view(const nx_capture *cap, size_t k);

#endif
