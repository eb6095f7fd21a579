/*
 * db_files.c — a profile's tables and their files (rules in db_files.h). The table
 * names come from profile_info, the files and their footers' row counts from
 * profile_table, so a split table is listed exactly as every other reader sees it.
 */
#define _DEFAULT_SOURCE /* strdup */
#include "query/db_files.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/profile_table.h"
#include "query/profile_info.h"

void nx_db_files_free(nx_db_files *f)
{
    for (size_t i = 0; i < f->n_tables; i++) {
        nx_db_table *t = &f->tables[i];
        for (size_t j = 0; j < t->n_files; j++)
            free(t->files[j].name);
        free(t->files);
        free(t->name);
        free(t->error);
    }
    free(f->tables);
    memset(f, 0, sizeof *f);
}

/* The files of an opened table into t: -1 when out of memory. */
static int list_files(const nx_profile_table *pt, nx_db_table *t)
{
    size_t n = nx_profile_table_file_count(pt);
    if (!(t->files = calloc(n ? n : 1, sizeof *t->files)))
        return -1;
    for (size_t i = 0; i < n; i++, t->n_files++) {
        const char *path = nx_profile_table_file_path(pt, i);
        struct stat st;
        nx_db_file *f = &t->files[i];
        const char *slash = strrchr(path, '/'); /* the files lie directly in the profile */
        if (!(f->name = strdup(slash ? slash + 1 : path)))
            return -1;
        f->size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
        f->rows = nx_profile_table_file_rows(pt, i);
        t->rows += f->rows;
        t->size += f->size;
    }
    return 0;
}

/* One table: its files, or its error. -1 when out of memory. */
static int read_table(const char *profile_dir, const char *name, nx_db_table *t)
{
    if (!(t->name = strdup(name)))
        return -1;
    nx_profile_table *pt = NULL;
    nx_error err = {0};
    int rc = nx_profile_table_open(profile_dir, name, &pt, &err);
    if (rc != 0) /* listed a moment ago: absent now means removed meanwhile */
        return (t->error = strdup(err.msg[0] ? err.msg : "the table's files could not be opened")) ? 0 : -1;
    rc = list_files(pt, t);
    nx_profile_table_close(pt);
    return rc;
}

int nx_db_files_read(const char *profile_dir, nx_db_files *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    nx_profile_info info;
    if (nx_profile_info_read(profile_dir, &info) != 0)
        return nx_error_set(err, "out of memory listing %s", profile_dir);
    int rc = 0;
    if (!info.readable)
        rc = nx_error_set(err, "%s", info.error ? info.error : "the profile directory could not be listed");
    else if (!(out->tables = calloc(info.n_tables ? info.n_tables : 1, sizeof *out->tables)))
        rc = nx_error_set(err, "out of memory listing %s", profile_dir);
    for (size_t i = 0; rc == 0 && i < info.n_tables; i++, out->n_tables++)
        if (read_table(profile_dir, info.tables[i], &out->tables[i]) != 0)
            rc = nx_error_set(err, "out of memory listing %s", profile_dir);
    nx_profile_info_free(&info);
    if (rc != 0)
        nx_db_files_free(out);
    return rc;
}
