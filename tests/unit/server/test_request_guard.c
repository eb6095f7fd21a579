/* test_request_guard.c — the Host, Origin and POST content-type rules of the server
 * (src/server/request_guard.c, docs/api.md "Security"), on literal headers: a server
 * bound to 127.0.0.1 port 3001 with --allow-host viewer.example, and one bound to
 * the IPv6 wildcard whose connection arrived at 192.0.2.7. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/api_internal.h"
#include "server/server.h"

static const char *const allowed[] = {"viewer.example", "[2001:db8::1]"};
static const nx_server_ctx loopback = {.bind = "127.0.0.1", .allow_hosts = allowed, .n_allow_hosts = 2};
static const nx_server_ctx wildcard = {.bind = "::"};

static void hosts(void **state)
{
    (void)state;
    static const char *const yes[] = {NULL,          "127.0.0.1",        "127.0.0.1:3001", "localhost",
                                      "LocalHost:3001", "viewer.example", "VIEWER.example:3001",
                                      "[2001:db8::1]", "[2001:db8:0::1]:3001"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(nx_server_host_allowed(&loopback, yes[i], 3001, "127.0.0.1"));
    static const char *const no[] = {"attacker.example", "attacker.example:3001", "127.0.0.1:3002", "localhost:80",
                                     "viewer.example.attacker.example", "127.0.0.2", "[::1]", "::1", "",
                                     "127.0.0.1:", "127.0.0.1:3001x", "127.0.0.1:99999", "[::1", ":3001",
                                     "localhost.:3001"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(nx_server_host_allowed(&loopback, no[i], 3001, "127.0.0.1"));
    /* A wildcard bind: the address the connection arrived at names the server. */
    assert_true(nx_server_host_allowed(&wildcard, "192.0.2.7:8080", 8080, "192.0.2.7"));
    assert_true(nx_server_host_allowed(&wildcard, "[::]:8080", 8080, "192.0.2.7"));
    assert_false(nx_server_host_allowed(&wildcard, "192.0.2.8:8080", 8080, "192.0.2.7"));
    assert_false(nx_server_host_allowed(&wildcard, "viewer.example:8080", 8080, "192.0.2.7"));
    assert_false(nx_server_host_allowed(&wildcard, "192.0.2.7:8080", 8080, NULL));
}

static void origins(void **state)
{
    (void)state;
    static const char *const yes[] = {NULL, "http://127.0.0.1:3001", "http://localhost:3001",
                                      "HTTP://viewer.example:3001", "http://[2001:db8::1]:3001"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(nx_server_origin_allowed(&loopback, yes[i], 3001, "127.0.0.1"));
    static const char *const no[] = {"null",
                                     "http://attacker.example:3001",
                                     "https://127.0.0.1:3001",
                                     "http://127.0.0.1",
                                     "http://127.0.0.1:3002",
                                     "http://127.0.0.1:3001/",
                                     "127.0.0.1:3001",
                                     "http://",
                                     "ws://localhost:3001"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(nx_server_origin_allowed(&loopback, no[i], 3001, "127.0.0.1"));
    /* Port 80: an Origin without a port is that port. */
    assert_true(nx_server_origin_allowed(&loopback, "http://localhost", 80, "127.0.0.1"));
    assert_false(nx_server_origin_allowed(&loopback, "http://localhost:3001", 80, "127.0.0.1"));
}

static void content_types(void **state)
{
    (void)state;
    assert_true(nx_server_json_content_type("application/json"));
    assert_true(nx_server_json_content_type("Application/JSON; charset=utf-8"));
    assert_true(nx_server_json_content_type("application/json;charset=utf-8"));
    assert_false(nx_server_json_content_type(NULL));
    assert_false(nx_server_json_content_type("text/plain"));
    assert_false(nx_server_json_content_type("application/x-www-form-urlencoded"));
    assert_false(nx_server_json_content_type("application/jsonp"));
    assert_false(nx_server_json_content_type("multipart/form-data; boundary=application/json"));
}

static void allow_host_names(void **state)
{
    (void)state;
    assert_true(nx_server_allow_host_valid("viewer.example"));
    assert_true(nx_server_allow_host_valid("my-box"));
    assert_true(nx_server_allow_host_valid("10.0.0.5"));
    assert_true(nx_server_allow_host_valid("[2001:db8::1]"));
    assert_false(nx_server_allow_host_valid(""));
    assert_false(nx_server_allow_host_valid("viewer.example:80"));
    assert_false(nx_server_allow_host_valid("2001:db8::1"));
    assert_false(nx_server_allow_host_valid("[not-an-address]"));
    assert_false(nx_server_allow_host_valid("http://viewer.example"));
    assert_false(nx_server_allow_host_valid("a b"));
    assert_false(nx_server_allow_host_valid("[::1]:80"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hosts),
        cmocka_unit_test(origins),
        cmocka_unit_test(content_types),
        cmocka_unit_test(allow_host_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
