/*
 * profile_plan.c — the profiles of a run, their names and directories (rules in
 * profile_plan.h).
 */
#include "process/profile_plan.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/path_text.h"
#include "process/system/system_tables.h"

nx_capture nx_capture_session_view(const nx_capture *cap, size_t k)
{
    return (nx_capture){.root = cap->root, .sessions = &cap->sessions[k], .n_sessions = 1};
}

static nx_planned_profile *add(nx_profile_plan *plan, size_t *cap)
{
    if (plan->n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        nx_planned_profile *p = realloc(plan->p, c * sizeof *p);
        if (!p)
            return NULL;
        plan->p = p;
        *cap = c;
    }
    nx_planned_profile *pp = &plan->p[plan->n++];
    memset(pp, 0, sizeof *pp);
    pp->system = SIZE_MAX;
    return pp;
}

/* True when another program of the session has a trace of the same NeuronCore. */
static bool core_shared(const nx_cap_session *s, size_t prog, const nx_cap_trace_file *t)
{
    for (size_t j = 0; j < s->n_programs; j++) {
        if (j == prog)
            continue;
        for (size_t k = 0; k < s->programs[j].n_traces; k++)
            if (s->programs[j].traces[k].device == t->device && s->programs[j].traces[k].core == t->core)
                return true;
    }
    return false;
}

/* Names pp and gives it its directory (see profile_plan.h). */
static int place(const nx_process_options *o, nx_planned_profile *pp, char *name,
                 const char *system_dir, nx_error *err)
{
    pp->name = name;
    nx_error perr;
    if (!name) {
        nx_error_set(err, "out of memory");
        return -1;
    }
    if (nx_display_name_validate(name, &perr) != 0) {
        nx_error_set(err, "profile name '%s': %s", name, perr.msg);
        return -1;
    }
    if (o->output_file && system_dir) {
        pp->nested = true;
        pp->dir = nx_path_printf("%s/%s/%s", system_dir, NX_LAYOUT_DEVICES_DIR, name);
    } else if (o->output_file) {
        pp->dir = strdup(o->output_file);
    } else if (nx_profile_dir_resolve(o->data_path, name, NULL, &pp->dir, &perr) != 0) {
        nx_error_set(err, "%s", perr.msg);
        return -1;
    }
    if (!pp->dir) {
        nx_error_set(err, "out of memory");
        return -1;
    }
    return 0;
}

static size_t device_traces(const nx_process_options *o, const nx_cap_session *s)
{
    size_t n = 0;
    if (!o->ignore_device_profile)
        for (size_t j = 0; j < s->n_programs; j++)
            n += s->programs[j].n_traces;
    return n;
}

static int plan_session(const nx_process_options *o, const nx_capture *cap, size_t k, const char *display,
                        nx_profile_plan *plan, size_t *cap_n, nx_error *err)
{
    const nx_cap_session *s = &cap->sessions[k];
    nx_capture view = nx_capture_session_view(cap, k);
    bool system_data = !o->ignore_system_profile && nx_system_capture_present(&view);
    size_t n_dev = device_traces(o, s);
    if (n_dev == 0 && !system_data)
        return 0;
    char *session_name = cap->n_sessions == 1 ? strdup(display) : nx_path_printf("%s-s%zu", display, k + 1);
    if (n_dev == 1 && !system_data) {
        nx_planned_profile *pp = add(plan, cap_n);
        if (!pp) {
            free(session_name);
            nx_error_set(err, "out of memory");
            return -1;
        }
        pp->kind = NX_PROFILE_DEVICE;
        pp->session = k;
        for (size_t j = 0; j < s->n_programs; j++)
            if (s->programs[j].n_traces) {
                pp->program = &s->programs[j];
                pp->trace = &s->programs[j].traces[0];
            }
        return place(o, pp, session_name, NULL, err);
    }
    size_t sys = plan->n;
    nx_planned_profile *sp = add(plan, cap_n);
    if (!sp) {
        free(session_name);
        nx_error_set(err, "out of memory");
        return -1;
    }
    sp->kind = NX_PROFILE_SYSTEM;
    sp->session = k;
    sp->system_data = system_data;
    sp->n_devices = n_dev;
    if (place(o, sp, session_name, NULL, err) != 0)
        return -1;
    for (size_t j = 0; j < s->n_programs && n_dev; j++) {
        const nx_cap_program_file *pf = &s->programs[j];
        for (size_t t = 0; t < pf->n_traces; t++) {
            nx_planned_profile *pp = add(plan, cap_n);
            if (!pp) {
                nx_error_set(err, "out of memory");
                return -1;
            }
            const nx_planned_profile *system = &plan->p[sys];   /* add() may have moved it */
            pp->kind = NX_PROFILE_DEVICE;
            pp->session = k;
            pp->program = pf;
            pp->trace = &pf->traces[t];
            pp->system = sys;
            char hash[24] = "";
            if (core_shared(s, j, pp->trace))
                snprintf(hash, sizeof hash, "-%016" PRIx64, pf->hash);
            char *name = nx_path_printf("%s-nd%" PRIu32 "-nc%" PRIu32 "%s", system->name, pp->trace->device,
                                    pp->trace->core, hash);
            if (place(o, pp, name, plan->p[sys].dir, err) != 0)
                return -1;
        }
    }
    return 0;
}

int nx_profile_plan_make(const nx_process_options *o, const nx_capture *cap, nx_profile_plan *plan, nx_error *err)
{
    memset(plan, 0, sizeof *plan);
    size_t cap_n = 0;
    char *owned = NULL;
    const char *display = o->display_name;
    if (o->output_file && cap->n_sessions > 1) {
        nx_error_set(err,
                 "%s holds %zu capture sessions (%s, ...); --output-file takes one: give --data-path to write "
                 "a set of profiles per session, or process one session directory",
                 cap->root, cap->n_sessions, cap->sessions[0].dir);
        return -1;
    }
    if (!display) {
        owned = o->output_file ? nx_path_last_component(o->output_file) : NULL;
        if (!owned) {
            nx_error_set(err, "no display name: give --display-name");
            return -1;
        }
        display = owned;
    }
    int rc = 0;
    for (size_t k = 0; k < cap->n_sessions && rc == 0; k++)
        rc = plan_session(o, cap, k, display, plan, &cap_n, err);
    free(owned);
    if (rc == 0 && plan->n == 0) {
        nx_error_set(err, "%s: nothing to process: no device trace%s and no system profile%s", o->capture_dir,
                 o->ignore_device_profile ? " (--ignore-device-profile)" : "",
                 o->ignore_system_profile ? " (--ignore-system-profile)" : "");
        rc = -1;
    }
    if (rc != 0)
        nx_profile_plan_free(plan);
    return rc;
}

void nx_profile_plan_free(nx_profile_plan *plan)
{
    for (size_t i = 0; i < plan->n; i++) {
        free(plan->p[i].name);
        free(plan->p[i].dir);
    }
    free(plan->p);
    plan->p = NULL;
    plan->n = 0;
}
