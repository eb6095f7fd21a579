/* test_server_request.c — the server's method and body rules and its method-aware
 * routing (src/server/server.c's header, docs/api.md "Conventions" and "Security"),
 * answered by nx_server_answer without a connection: which method reaches which
 * handler, the 405s with the methods a path has, the body limits (411, 413, 400)
 * checked on the headers alone (nx_server_admit), the guards applied to a POST, and a
 * body reaching its handler (a query the SQL engine cannot answer on an empty profile a
 * 500 without the data path in it), on a data path made here: profile "p" and the nested
 * device profile "s/devices/d", both empty directories. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/api_internal.h"
#include "server/response_cache.h"

#define PORT 3001

static char data_path[64], root[128];
static nx_server_ctx ctx;

static int make_dirs(void **state)
{
    (void)state;
    strcpy(data_path, "/tmp/nx_server_request_XXXXXX");
    if (!mkdtemp(data_path))
        return -1;
    static const char *const dirs[] = {"profiles", "profiles/global", "profiles/global/p@latest",
                                       "profiles/global/s@latest", "profiles/global/s@latest/devices",
                                       "profiles/global/s@latest/devices/d"};
    char path[256];
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", data_path, dirs[i]);
        if (mkdir(path, 0700) != 0)
            return -1;
    }
    snprintf(root, sizeof root, "%s/profiles/global", data_path);
    ctx = (nx_server_ctx){.data_path = data_path, .root = root, .bind = "127.0.0.1"};
    return 0;
}

static int remove_dirs(void **state)
{
    (void)state;
    static const char *const dirs[] = {"profiles/global/s@latest/devices/d", "profiles/global/s@latest/devices",
                                       "profiles/global/s@latest", "profiles/global/p@latest", "profiles/global",
                                       "profiles", ""};
    char path[256];
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", data_path, dirs[i]);
        rmdir(path);
    }
    nx_response_cache_clear();
    return 0;
}

/* One request: its status, and its body into *out (NUL-terminated; free it). */
typedef struct request {
    const char *method, *url, *content_type, *content_length, *transfer_encoding, *origin, *host;
    const char *body;
} request;

static unsigned answer(const request *rq, char **out)
{
    nx_strbuf body = NX_STRBUF_INIT;
    nx_api_req r = {.srv = &ctx, .body = &body, .content = rq->body, .content_len = rq->body ? strlen(rq->body) : 0};
    nx_http_request q = {.method = rq->method, .url = rq->url, .host = rq->host, .origin = rq->origin,
                         .content_type = rq->content_type, .content_length = rq->content_length,
                         .transfer_encoding = rq->transfer_encoding, .port = PORT, .local_addr = "127.0.0.1"};
    nx_server_answer(&r, &q);
    nx_strbuf_putc(&body, '\0');
    assert_false(nx_strbuf_failed(&body));
    if (out)
        *out = nx_strbuf_detach(&body);
    else
        nx_strbuf_free(&body);
    return r.status;
}

#define JSON "application/json"
#define SEARCH "/api/v1/db/p/_search"

static void body_reaches_handler(void **state)
{
    (void)state;
    char *b;
    request rq = {.method = "POST", .url = SEARCH, .content_type = JSON, .content_length = "48",
        .body = "{\"type\":\"tableSchema\",\"tableName\":\"Summary\"}"};
    assert_int_equal(answer(&rq, &b), 200);
    assert_non_null(strstr(b, "\"tableName\":\"Summary\""));
    free(b);
    /* The same through a nested device profile's name, and with a charset. */
    rq.url = "/api/v1/db/s/devices/d/_search";
    rq.content_type = "application/json; charset=utf-8";
    assert_int_equal(answer(&rq, NULL), 200);
    /* What the handler says of the body it got. */
    request bad[] = {
        {.method = "POST", .url = SEARCH, .content_type = JSON, .body = "[1,2]"},
        {.method = "POST", .url = SEARCH, .content_type = JSON, .body = ""},
        {.method = "POST", .url = SEARCH, .content_type = JSON, .body = "{\"type\":7}"},
        {.method = "POST", .url = SEARCH, .content_type = JSON, .body = "{\"type\":\"dropEverything\"}"},
        {.method = "POST", .url = SEARCH, .content_type = JSON, .body = "{\"type\":\"tableSchema\"}"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(answer(&bad[i], &b), 400);
        assert_non_null(strstr(b, "\"error\""));
        free(b);
    }
    /* A query needs its text; "p" is an empty directory, which the SQL engine cannot open. */
    request no_query = {.method = "POST", .url = SEARCH, .content_type = JSON,
                        .body = "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Instruction\"}"};
    assert_int_equal(answer(&no_query, NULL), 400);
    request empty_profile = {.method = "POST", .url = SEARCH, .content_type = JSON,
                             .body = "{\"type\":\"databaseExplorerQuery\",\"query\":\"SELECT 1\"}"};
    assert_int_equal(answer(&empty_profile, &b), 500);
    assert_null(strstr(b, data_path)); /* no absolute path in the answer */
    free(b);
    request unknown_table = {.method = "POST", .url = SEARCH, .content_type = JSON,
        .body = "{\"type\":\"tableSchema\",\"tableName\":\"Nope\"}"};
    assert_int_equal(answer(&unknown_table, NULL), 404);
    request unknown_profile = {.method = "POST", .url = "/api/v1/db/q/_search", .content_type = JSON,
        .body = "{\"type\":\"listDbFiles\"}"};
    assert_int_equal(answer(&unknown_profile, NULL), 404);
}

static void methods(void **state)
{
    (void)state;
    char *b;
    /* A path's other methods: 405 naming what it has. */
    request get_search = {.method = "GET", .url = SEARCH};
    assert_int_equal(answer(&get_search, &b), 405);
    assert_non_null(strstr(b, "POST only"));
    free(b);
    request put_search = {.method = "PUT", .url = SEARCH, .content_type = JSON, .body = "{}"};
    assert_int_equal(answer(&put_search, NULL), 405);
    request post_health = {.method = "POST", .url = "/api/v1/health", .content_type = JSON, .body = "{}"};
    assert_int_equal(answer(&post_health, &b), 405);
    assert_non_null(strstr(b, "GET, HEAD only"));
    free(b);
    request post_tracks = {.method = "POST", .url = "/api/profiles/p/tracks", .content_type = JSON, .body = "{}"};
    assert_int_equal(answer(&post_tracks, NULL), 405);
    request post_export = {.method = "POST", .url = "/api/profiles/p/export/Instruction.csv", .content_type = JSON,
        .body = "{}"};
    assert_int_equal(answer(&post_export, NULL), 405);
    request post_page = {.method = "POST", .url = "/", .content_type = JSON, .body = "{}"};
    assert_int_equal(answer(&post_page, NULL), 405);
    static const char *const others[] = {"DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        request rq = {.method = others[i], .url = SEARCH, .content_type = JSON};
        assert_int_equal(answer(&rq, &b), 405);
        assert_non_null(strstr(b, "POST only"));
        free(b);
        rq.url = "/api/v1/nothing";
        assert_int_equal(answer(&rq, NULL), 404);
    }
    /* GET and HEAD reach GET routes; a path no route has is a 404 whatever the method. */
    request health = {.method = "GET", .url = "/api/v1/health"};
    assert_int_equal(answer(&health, &b), 200);
    assert_string_equal(b, "{\"status\":\"healthy\"}");
    free(b);
    request head = {.method = "HEAD", .url = "/api/v1/health"};
    assert_int_equal(answer(&head, NULL), 200);
    request nowhere = {.method = "POST", .url = "/api/v1/db/p/_nothing", .content_type = JSON, .body = "{}"};
    assert_int_equal(answer(&nowhere, NULL), 404);
    request short_path = {.method = "POST", .url = "/api/v1/db/p", .content_type = JSON, .body = "{}"};
    assert_int_equal(answer(&short_path, NULL), 404);
}

/* nx_server_admit on the headers alone (what MHD's callback asks before reading a body). */
static unsigned admitted(const request *rq)
{
    nx_strbuf body = NX_STRBUF_INIT;
    nx_api_req r = {.srv = &ctx, .body = &body};
    nx_http_request q = {.method = rq->method, .url = rq->url, .host = rq->host, .origin = rq->origin,
                         .content_type = rq->content_type, .content_length = rq->content_length,
                         .transfer_encoding = rq->transfer_encoding, .port = PORT, .local_addr = "127.0.0.1"};
    enum MHD_Result result;
    bool ok = nx_server_admit(&r, &q, &result);
    nx_strbuf_free(&body);
    assert_true(ok == (r.status == 0));
    return ok ? 0 : r.status;
}

static void body_limits(void **state)
{
    (void)state;
    char max[32], over[32];
    snprintf(max, sizeof max, "%zu", NX_SERVER_MAX_BODY);
    snprintf(over, sizeof over, "%zu", NX_SERVER_MAX_BODY + 1);
    request rq = {.method = "POST", .url = SEARCH, .content_type = JSON, .content_length = max};
    assert_int_equal(admitted(&rq), 0);
    rq.method = "PUT";
    assert_int_equal(admitted(&rq), 0);
    rq.content_length = NULL; /* no body at all */
    assert_int_equal(admitted(&rq), 0);
    rq.content_length = over;
    assert_int_equal(admitted(&rq), 413);
    rq.method = "POST";
    assert_int_equal(admitted(&rq), 413);
    rq.content_length = "99999999999999999999";
    assert_int_equal(admitted(&rq), 400);
    static const char *const malformed[] = {"-1", "abc", "", "12 ", "+5", "007"};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        rq.content_length = malformed[i];
        assert_int_equal(admitted(&rq), 400);
    }
    rq.content_length = "10";
    rq.transfer_encoding = "chunked";
    assert_int_equal(admitted(&rq), 411);
    /* GET and HEAD take no body. */
    request get = {.method = "GET", .url = "/api/v1/health", .content_length = "5"};
    assert_int_equal(admitted(&get), 413);
    get.content_length = NULL;
    get.transfer_encoding = "chunked";
    assert_int_equal(admitted(&get), 413);
    get.transfer_encoding = NULL;
    get.content_length = "0";
    assert_int_equal(admitted(&get), 0);
    request del = {.method = "DELETE", .url = SEARCH, .content_length = "5"};
    assert_int_equal(admitted(&del), 413);
}

static void guards(void **state)
{
    (void)state;
    static const char *const not_json[] = {NULL, "text/plain", "application/x-www-form-urlencoded",
                                           "multipart/form-data", "application/jsonp"};
    for (size_t i = 0; i < sizeof not_json / sizeof not_json[0]; i++) {
        request rq = {.method = "POST", .url = SEARCH, .content_type = not_json[i], .content_length = "2",
            .body = "{}"};
        assert_int_equal(answer(&rq, NULL), 415);
        rq.method = "PUT";
        assert_int_equal(answer(&rq, NULL), 415);
    }
    /* Another site's page: refused before anything, whatever it sends. */
    request cross = {.method = "POST", .url = SEARCH, .content_type = JSON, .content_length = "2",
                     .origin = "http://attacker.example", .body = "{}"};
    assert_int_equal(answer(&cross, NULL), 403);
    assert_int_equal(admitted(&cross), 403);
    cross.origin = "null";
    assert_int_equal(answer(&cross, NULL), 403);
    cross.origin = "http://127.0.0.1:3001";
    assert_int_equal(answer(&cross, NULL), 400); /* own origin: reaches the handler ({} has no type) */
    request rebound = {.method = "POST", .url = SEARCH, .content_type = JSON, .content_length = "2",
                       .host = "attacker.example:3001", .body = "{}"};
    assert_int_equal(answer(&rebound, NULL), 421);
    assert_int_equal(admitted(&rebound), 421);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(body_reaches_handler),
        cmocka_unit_test(methods),
        cmocka_unit_test(body_limits),
        cmocka_unit_test(guards),
    };
    return cmocka_run_group_tests(tests, make_dirs, remove_dirs);
}
