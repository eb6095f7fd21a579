/*
 * test_annotations.c — profile/annotations.h: the document parsed and written (its
 * text read back with yajl's tree parser, an independent JSON reader), every
 * validation error naming the source and the member, times beyond 2^53 exact, the
 * atomic save (no temporary left, the previous file kept when a save fails), append,
 * the carry into a re-processed profile (sub-profiles too, a link refused) and the
 * ownership rule taking the file as nxprof's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "profile/annotations.h"
#include "profile/profile_manifest.h"
#include "profile/profile_output.h"

static const char DOC[] =
    "{\"version\":1,\n"
    " \"markers\":[{\"time_ns\":1700000000123456789,\"label\":\"step \\u00e9 \\\"a\\\"\",\"colour\":\"#ff8800\"},\n"
    "             {\"time_ns\":\"-5\",\"label\":\"\",\"track\":\"SystemProfileEvents:t1\",\"colour\":null}],\n"
    " \"regions\":[{\"start_ns\":10,\"end_ns\":20,\"name\":\"warm-up\",\"note\":\"line1\\nline2\",\"colour\":\"#abc\"}]}";

static int setup(void **state)
{
    char *dir = strdup("/tmp/nxprof-test-annotations-XXXXXX");
    if (!dir || !mkdtemp(dir))
        return -1;
    *state = dir;
    return 0;
}

static int teardown(void **state)
{
    nx_remove_tree(*state);
    free(*state);
    return 0;
}

static char *join(const char *a, const char *b)
{
    static char buf[4][1024];
    static int i;
    char *p = buf[i++ % 4];
    int n = snprintf(p, sizeof buf[0], "%s/%s", a, b);
    assert_true(n > 0 && (size_t)n < sizeof buf[0]);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 21);
    size_t n = fread(buf, 1, (1 << 21) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The names in dir that start with prefix. */
static int count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

static const char *yajl_string(yajl_val obj, const char *key)
{
    const char *path[] = {key, NULL};
    yajl_val v = yajl_tree_get(obj, path, yajl_t_string);
    return v ? YAJL_GET_STRING(v) : NULL;
}

/* An integer member as yajl reads it: a number, or a string of digits (beyond 2^53). */
static long long yajl_int(yajl_val obj, const char *key)
{
    const char *path[] = {key, NULL};
    yajl_val v = yajl_tree_get(obj, path, yajl_t_any);
    assert_non_null(v);
    if (YAJL_IS_STRING(v)) {
        const char *s = YAJL_GET_STRING(v);
        assert_non_null(s);
        return s ? strtoll(s, NULL, 10) : 0;
    }
    assert_true(YAJL_IS_INTEGER(v));
    return YAJL_GET_INTEGER(v);
}

static void test_parse_and_write(void **state)
{
    (void)state;
    nx_annotations a;
    nx_error err = {0};
    assert_int_equal(nx_annotations_parse(DOC, strlen(DOC), "doc", &a, &err), 0);
    assert_int_equal(a.n_markers, 2);
    assert_int_equal(a.n_regions, 1);
    assert_true(a.markers[0].time_ns == 1700000000123456789LL);
    assert_string_equal(a.markers[0].label, "step \xc3\xa9 \"a\"");
    assert_null(a.markers[1].colour);   /* null: left out */
    assert_true(a.markers[1].time_ns == -5);

    nx_strbuf b = NX_STRBUF_INIT;
    nx_annotations_json(&a, &b);
    char why[256];
    yajl_val doc = yajl_tree_parse(b.data, why, sizeof why);
    assert_non_null(doc);
    const char *mp[] = {"markers", NULL}, *rp[] = {"regions", NULL}, *vp[] = {"version", NULL};
    assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(doc, vp, yajl_t_number)), 1);
    yajl_val markers = yajl_tree_get(doc, mp, yajl_t_array), regions = yajl_tree_get(doc, rp, yajl_t_array);
    assert_int_equal(markers->u.array.len, 2);
    assert_int_equal(regions->u.array.len, 1);
    yajl_val m0 = markers->u.array.values[0], m1 = markers->u.array.values[1], r0 = regions->u.array.values[0];
    assert_true(yajl_int(m0, "time_ns") == 1700000000123456789LL);
    /* beyond 2^53: a decimal string, the API's rule */
    const char *tp[] = {"time_ns", NULL};
    assert_true(YAJL_IS_STRING(yajl_tree_get(m0, tp, yajl_t_any)));
    assert_string_equal(yajl_string(m0, "label"), "step \xc3\xa9 \"a\"");
    assert_string_equal(yajl_string(m0, "colour"), "#ff8800");
    assert_null(yajl_string(m0, "track"));
    assert_true(yajl_int(m1, "time_ns") == -5);
    assert_string_equal(yajl_string(m1, "track"), "SystemProfileEvents:t1");
    assert_null(yajl_string(m1, "colour"));
    assert_int_equal(yajl_int(r0, "start_ns"), 10);
    assert_int_equal(yajl_int(r0, "end_ns"), 20);
    assert_string_equal(yajl_string(r0, "name"), "warm-up");
    assert_string_equal(yajl_string(r0, "note"), "line1\nline2");
    assert_string_equal(yajl_string(r0, "colour"), "#abc");
    yajl_tree_free(doc);

    /* what is written parses back to the same text */
    nx_annotations again;
    assert_int_equal(nx_annotations_parse(b.data, b.len, "written", &again, &err), 0);
    nx_strbuf b2 = NX_STRBUF_INIT;
    nx_annotations_json(&again, &b2);
    assert_string_equal(b.data, b2.data);
    nx_strbuf_free(&b);
    nx_strbuf_free(&b2);
    nx_annotations_free(&again);
    nx_annotations_free(&a);
}

static void test_empty_document(void **state)
{
    (void)state;
    nx_annotations a;
    nx_error err = {0};
    assert_int_equal(nx_annotations_parse("{\"version\":1}", 13, "doc", &a, &err), 0);
    assert_int_equal(a.n_markers + a.n_regions, 0);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_annotations_json(&a, &b);
    assert_string_equal(b.data, "{\"version\":1,\"markers\":[],\"regions\":[]}\n");
    nx_strbuf_free(&b);
}

/* Each bad document and a part its message must hold (source and member). */
static void test_validation_errors(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"", "src: "},
        {"[]", "src: not a JSON object"},
        {"{\"version\":1", "src: "},
        {"{\"version\":1} x", "src: "},
        {"{\"version\":1}{}", "src: invalid JSON: trailing garbage"},
        {"{}", "src: version: missing"},
        {"{\"version\":2}", "version: 2 is not supported"},
        {"{\"version\":\"1\"}", "version: not an integer"},
        {"{\"version\":1,\"version\":1}", "\"version\" given twice"},
        {"{\"version\":1,\"colour\":1}", "unknown member \"colour\""},
        {"{\"version\":1,\"markers\":{}}", "src: markers: not an array"},
        {"{\"version\":1,\"markers\":[1]}", "src: markers[0]: not an object"},
        {"{\"version\":1,\"markers\":[{\"label\":\"a\"}]}", "src: markers[0].time_ns: missing"},
        {"{\"version\":1,\"markers\":[{\"time_ns\":1}]}", "src: markers[0].label: missing"},
        {"{\"version\":1,\"markers\":[{\"time_ns\":1,\"label\":\"a\"},{\"time_ns\":1.5,\"label\":\"b\"}]}",
         "src: markers[1].time_ns: not an integer"},
        {"{\"version\":1,\"markers\":[{\"time_ns\":\"12a\",\"label\":\"a\"}]}", "markers[0].time_ns: not an integer"},
        {"{\"version\":1,\"markers\":[{\"time_ns\":99999999999999999999,\"label\":\"a\"}]}",
         "markers[0].time_ns: not an integer"},
        {"{\"version\":1,\"markers\":[{\"time_ns\":1,\"label\":7}]}", "markers[0].label: not a string"},
        {"{\"version\":1,\"markers\":[{\"time_ns\":1,\"label\":\"a\",\"label\":\"b\"}]}",
         "markers[0].label: given twice"},
        {"{\"version\":1,\"markers\":[{\"time_ns\":1,\"label\":\"a\",\"size\":3}]}",
         "markers[0]: unknown member \"size\""},
        {"{\"version\":1,\"markers\":[{\"time_ns\":1,\"label\":\"a\",\"colour\":\"red\"}]}",
         "markers[0].colour: not a colour"},
        {"{\"version\":1,\"markers\":[{\"time_ns\":1,\"label\":\"a\\u0000b\"}]}", "markers[0].label: holds a NUL"},
        {"{\"version\":1,\"markers\":[{\"time_ns\":1,\"label\":\"\xff\"}]}", "markers[0].label: not valid UTF-8"},
        {"{\"version\":1,\"regions\":[{\"start_ns\":5,\"end_ns\":4,\"name\":\"r\"}]}",
         "regions[0].end_ns: 4 is before start_ns 5"},
        {"{\"version\":1,\"regions\":[{\"start_ns\":5,\"end_ns\":6,\"name\":\"\"}]}", "regions[0].name: empty"},
        {"{\"version\":1,\"regions\":[{\"start_ns\":5,\"end_ns\":6}]}", "regions[0].name: missing"},
        {"{\"version\":1,\"regions\":[{\"start_ns\":5,\"end_ns\":6,\"name\":\"r\",\"note\":[]}]}",
         "regions[0].note: not a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nx_annotations a;
        nx_error err = {0};
        int rc = nx_annotations_parse(cases[i][0], strlen(cases[i][0]), "src", &a, &err);
        if (rc != -1 || !strstr(err.msg, cases[i][1]))
            fail_msg("case %zu (%s): rc %d, message \"%s\", expected \"%s\"", i, cases[i][0], rc, err.msg,
                     cases[i][1]);
        assert_null(a.markers);
    }
}

/* A document of n markers with labels of `label_len` bytes. */
static char *many_markers(size_t n, size_t label_len)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"version\":1,\"markers\":[");
    for (size_t i = 0; i < n; i++) {
        nx_strbuf_printf(&b, "%s{\"time_ns\":%zu,\"label\":\"", i ? "," : "", i);
        for (size_t j = 0; j < label_len; j++)
            nx_strbuf_putc(&b, 'x');
        nx_strbuf_puts(&b, "\"}");
    }
    nx_strbuf_puts(&b, "]}");
    return nx_strbuf_detach(&b);
}

static void test_limits(void **state)
{
    (void)state;
    nx_annotations a;
    nx_error err = {0};
    char *ok = many_markers(NX_ANNOTATIONS_MAX_ITEMS, 1);
    assert_int_equal(nx_annotations_parse(ok, strlen(ok), "src", &a, &err), 0);
    assert_int_equal(a.n_markers, NX_ANNOTATIONS_MAX_ITEMS);
    /* one more through append is refused, and *into is left as it was */
    nx_annotations one;
    assert_int_equal(nx_annotations_parse(DOC, strlen(DOC), "doc", &one, &err), 0);
    assert_int_equal(nx_annotations_append(&a, &one, &err), -1);
    assert_int_equal(a.n_markers, NX_ANNOTATIONS_MAX_ITEMS);
    nx_annotations_free(&one);
    nx_annotations_free(&a);
    free(ok);
    char *too_many = many_markers(NX_ANNOTATIONS_MAX_ITEMS + 1, 1);
    assert_int_equal(nx_annotations_parse(too_many, strlen(too_many), "src", &a, &err), -1);
    assert_non_null(strstr(err.msg, "src: markers: more than"));
    free(too_many);
    char *long_label = many_markers(1, NX_ANNOTATIONS_MAX_TEXT + 1);
    assert_int_equal(nx_annotations_parse(long_label, strlen(long_label), "src", &a, &err), -1);
    assert_non_null(strstr(err.msg, "src: markers[0].label: longer than 256 bytes"));
    free(long_label);
    char *big = many_markers(5000, 250);   /* about 1.3 MB of text */
    assert_int_equal(nx_annotations_parse(big, strlen(big), "src", &a, &err), -1);
    assert_non_null(strstr(err.msg, "src: larger than"));
    free(big);
}

static void test_save_load_atomic(void **state)
{
    const char *dir = *state;
    nx_annotations a, back;
    nx_error err = {0};
    /* no file: none */
    assert_int_equal(nx_annotations_load(dir, &back, &err), 0);
    assert_int_equal(back.n_markers + back.n_regions, 0);
    assert_int_equal(nx_annotations_parse(DOC, strlen(DOC), "doc", &a, &err), 0);
    assert_int_equal(nx_annotations_save(dir, &a, &err), 0);
    assert_int_equal(count_prefixed(dir, NX_ANNOTATIONS_FILE ".tmp-"), 0);
    assert_int_equal(nx_annotations_load(dir, &back, &err), 0);
    nx_strbuf x = NX_STRBUF_INIT, y = NX_STRBUF_INIT;
    nx_annotations_json(&a, &x);
    nx_annotations_json(&back, &y);
    assert_string_equal(x.data, y.data);
    char *on_disk = read_text(join(dir, NX_ANNOTATIONS_FILE));
    assert_string_equal(on_disk, x.data);
    free(on_disk);
    nx_annotations_free(&back);

    /* an invalid set of annotations is refused before anything is written */
    free(a.regions[0].name);
    a.regions[0].name = strdup("");
    assert_int_equal(nx_annotations_save(dir, &a, &err), -1);
    assert_non_null(strstr(err.msg, "regions[0].name: empty"));
    assert_non_null(strstr(err.msg, NX_ANNOTATIONS_FILE));
    on_disk = read_text(join(dir, NX_ANNOTATIONS_FILE));
    assert_string_equal(on_disk, x.data);   /* the previous document stays */
    free(on_disk);
    /* a save that cannot write leaves nothing behind and names the file */
    assert_int_equal(nx_annotations_save(join(dir, "missing"), &back, &err), -1);
    assert_non_null(strstr(err.msg, "missing/" NX_ANNOTATIONS_FILE));

    /* a damaged file is an error naming it, never taken as empty */
    write_text(join(dir, NX_ANNOTATIONS_FILE), "{\"version\":1,\"markers\":[");
    assert_int_equal(nx_annotations_load(dir, &back, &err), -1);
    assert_non_null(strstr(err.msg, NX_ANNOTATIONS_FILE ": "));
    /* a symbolic link is refused */
    unlink(join(dir, NX_ANNOTATIONS_FILE));
    write_text(join(dir, "elsewhere.json"), DOC);
    assert_int_equal(symlink("elsewhere.json", join(dir, NX_ANNOTATIONS_FILE)), 0);
    assert_int_equal(nx_annotations_load(dir, &back, &err), -1);
    assert_non_null(strstr(err.msg, "not a regular file"));
    nx_strbuf_free(&x);
    nx_strbuf_free(&y);
    nx_annotations_free(&a);
}

static void test_append(void **state)
{
    (void)state;
    nx_annotations a, b;
    nx_error err = {0};
    assert_int_equal(nx_annotations_parse(DOC, strlen(DOC), "doc", &a, &err), 0);
    assert_int_equal(nx_annotations_parse(DOC, strlen(DOC), "doc", &b, &err), 0);
    assert_int_equal(nx_annotations_append(&a, &b, &err), 0);
    nx_annotations_free(&b);   /* the copies own their strings */
    assert_int_equal(a.n_markers, 4);
    assert_int_equal(a.n_regions, 2);
    assert_string_equal(a.markers[2].label, a.markers[0].label);
    assert_string_equal(a.regions[1].note, "line1\nline2");
    assert_ptr_not_equal(a.regions[1].note, a.regions[0].note);
    nx_annotations_free(&a);
}

/* A built profile at dir: its marker and one table-like file. */
static void make_profile(const char *dir)
{
    nx_error err = {0};
    assert_int_equal(nx_profile_dir_create(dir, &err), 0);
    write_text(join(dir, "x.parquet"), "not really");
}

static void test_carry(void **state)
{
    const char *dir = *state;
    char from[1024], to[1024];
    snprintf(from, sizeof from, "%s/old", dir);
    snprintf(to, sizeof to, "%s/new", dir);
    make_profile(from);
    make_profile(to);
    mkdir(join(from, "devices"), 0777);
    mkdir(join(to, "devices"), 0777);
    make_profile(join(from, "devices/d0"));
    make_profile(join(to, "devices/d0"));
    make_profile(join(to, "devices/d1"));   /* new in this run: nothing to carry */
    /* the old file is carried byte for byte, even one this version would refuse */
    write_text(join(from, NX_ANNOTATIONS_FILE), "{\"version\":9}");
    write_text(join(from, "devices/d0/" NX_ANNOTATIONS_FILE), DOC);
    nx_error err = {0};
    assert_int_equal(nx_annotations_carry(from, to, &err), 0);
    char *top = read_text(join(to, NX_ANNOTATIONS_FILE));
    char *d0 = read_text(join(to, "devices/d0/" NX_ANNOTATIONS_FILE));
    assert_string_equal(top, "{\"version\":9}");
    assert_string_equal(d0, DOC);
    assert_null(read_text(join(to, "devices/d1/" NX_ANNOTATIONS_FILE)));
    free(top);
    free(d0);
    /* no previous profile: nothing to carry */
    assert_int_equal(nx_annotations_carry(join(dir, "absent"), to, &err), 0);
    /* a link in its place is refused, naming it */
    unlink(join(from, NX_ANNOTATIONS_FILE));
    assert_int_equal(symlink("/etc/passwd", join(from, NX_ANNOTATIONS_FILE)), 0);
    assert_int_equal(nx_annotations_carry(from, to, &err), -1);
    assert_non_null(strstr(err.msg, "old/" NX_ANNOTATIONS_FILE ": not a regular file"));
}

static void test_ownership(void **state)
{
    const char *dir = *state;
    char prof[1024];
    snprintf(prof, sizeof prof, "%s/p", dir);
    make_profile(prof);
    nx_error err = {0};
    assert_int_equal(nx_manifest_write(prof, &err), 0);
    /* saved after publishing (so not in the manifest), plus a killed save's temporary */
    nx_annotations a;
    assert_int_equal(nx_annotations_parse(DOC, strlen(DOC), "doc", &a, &err), 0);
    assert_int_equal(nx_annotations_save(prof, &a, &err), 0);
    nx_annotations_free(&a);
    write_text(join(prof, NX_ANNOTATIONS_FILE ".tmp-1-abcdef"), "{");
    assert_true(nx_annotations_entry(NX_ANNOTATIONS_FILE));
    assert_false(nx_annotations_entry("annotations.json"));
    assert_int_equal(nx_profile_owned(prof, &err), 0);
    /* a user's file beside it is still not nxprof's */
    write_text(join(prof, "annotations.json"), "{}");
    assert_int_equal(nx_profile_owned(prof, &err), -1);
    assert_non_null(strstr(err.msg, "annotations.json"));
    unlink(join(prof, "annotations.json"));
    assert_int_equal(nx_profile_remove(prof, &err), 0);
    struct stat st;
    assert_int_not_equal(stat(prof, &st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_write),
        cmocka_unit_test(test_empty_document),
        cmocka_unit_test(test_validation_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test_setup_teardown(test_save_load_atomic, setup, teardown),
        cmocka_unit_test(test_append),
        cmocka_unit_test_setup_teardown(test_carry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ownership, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
