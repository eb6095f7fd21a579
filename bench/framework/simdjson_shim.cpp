// bench/framework/simdjson_shim.cpp — simdjson's On-Demand API behind the C signature of
// json_layers.h, the form a C project would call it in. On Demand walks the document once;
// args is taken as raw JSON text, the way nxprof's reader keeps it.
#include <cstdio>
#include <string_view>

#include <simdjson.h>

extern "C" {
#include "json_layers.h"
}

using namespace simdjson;

static void take_event(ondemand::object ev, struct scan_result *r)
{
    for (auto field : ev) {
        std::string_view key = field.unescaped_key();
        ondemand::value v = field.value();
        if (key == "ts" || key == "dur") {
            r->ts_sum += v.get_double();
        } else if (key == "args") {
            ondemand::object args = v.get_object();
            r->args_bytes += std::string_view(args.raw_json()).size();
        } else if (key == "ph" || key == "name" || key == "cat" || key == "pid" || key == "tid" ||
                   key == "id") {
            r->text_bytes += v.raw_json_token().size();
        }
    }
    r->events++;
}

extern "C" int scan_simdjson(const char *buf, size_t len, struct scan_result *r)
{
    try {
        ondemand::parser parser(len + 64);
        ondemand::document doc = parser.iterate(buf, len, len + 64);
        for (ondemand::object ev : doc["traceEvents"].get_array())
            take_event(ev, r);
        return 0;
    } catch (simdjson_error &e) {
        std::fprintf(stderr, "simdjson: event #%zu: %s\n", r->events, e.what());
        return -1;
    }
}
