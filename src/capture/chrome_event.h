/*
 * chrome_event.h — the Chrome Trace Event model every framework-event source
 * delivers in: one event, a top-level value, an element left out, and the
 * callbacks that receive them. It is the Chrome JSON reader's (chrome_trace.h);
 * the XSpace reader (xspace.h) delivers the same values, so the processor turns
 * every format into rows one way (framework_source.h).
 *
 * Its own header because the sources' interface (framework_source.h) needs the
 * model but not the Chrome reader, which is itself one of the sources.
 */
#ifndef NX_CHROME_EVENT_H
#define NX_CHROME_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A string from the trace: s is NUL-terminated (len excludes the NUL; a
 * "\u0000" escape makes strlen(s) < len) or NULL when the key is absent. */
typedef struct nx_chrome_text {
    const char *s;
    size_t len;
} nx_chrome_text;

/* pid, tid, id and bind_id are numbers in most traces but strings in some
 * (Kineto writes "pid": "Spans", flow ids may be "0x1f"); both forms are kept
 * as written. */
typedef enum nx_chrome_ref_kind {
    NX_CHROME_REF_ABSENT = 0,
    NX_CHROME_REF_NUMBER,      /* num holds the value */
    NX_CHROME_REF_STRING       /* str holds the value */
} nx_chrome_ref_kind;

typedef struct nx_chrome_ref {
    nx_chrome_ref_kind kind;
    int64_t num;
    nx_chrome_text str;
} nx_chrome_ref;

/* One element of traceEvents. Every pointer in it is valid only during the
 * callback that receives it: copy what you keep. */
typedef struct nx_chrome_event {
    uint64_t index;        /* position in traceEvents, from 0 */
    uint64_t offset;       /* byte offset of the event's '{' in the JSON text */
    char ph;               /* phase: 'X','B','E','i','I','C','M', or any other */
    nx_chrome_text name;   /* s NULL when absent (E events often omit it) */
    nx_chrome_text cat;
    bool has_ts;           /* false only for M events without "ts" */
    int64_t ts_ns;
    bool has_dur;          /* "dur": X events; present on others is passed on */
    int64_t dur_ns;
    bool time_overflow;    /* "ts" or "dur" beyond the int64 ns range: that value is 0 */
    nx_chrome_ref pid, tid;
    nx_chrome_ref id, bind_id;   /* flow and async ids, when present */
    nx_chrome_text s;      /* instant-event scope: "g", "p" or "t" */
    nx_chrome_text bp;     /* flow binding point: "e" for enclosing slice */
    bool flow_in, flow_out;
    /* "args" re-serialised as compact JSON (numbers keep their source text,
     * strings are re-escaped); s NULL when absent or when it exceeded the
     * reader's max_args_bytes, which args_too_large tells apart. */
    nx_chrome_text args;
    bool args_too_large;
} nx_chrome_event;

/* A top-level key of the object form other than traceEvents ("schemaVersion",
 * "deviceProperties", "distributedInfo", "traceName", ...), with its value
 * re-serialised as compact JSON; json.s NULL and too_large true when the value
 * exceeded the reader's max_toplevel_bytes. Valid only during the callback. */
typedef struct nx_chrome_toplevel {
    nx_chrome_text key;
    nx_chrome_text json;
    bool too_large;
} nx_chrome_toplevel;

/* An element of traceEvents that cannot be used as an event (chrome_trace.h,
 * "Skipped elements"). Valid only during the callback. */
typedef struct nx_chrome_skipped {
    uint64_t index;        /* position in traceEvents, from 0 */
    uint64_t offset;       /* byte offset of the element in the JSON text */
    char ph;               /* its phase when it had a usable one, else '\0' */
    const char *reason;    /* e.g. "the event has no \"ph\"" */
    const char *category;  /* NULL: the element is unusable ("Invalid Data"); else the
                              Warning category of an event the source leaves out on
                              purpose (the XSpace reader: "Not Stored") */
} nx_chrome_skipped;

/* Callbacks return 0 to go on, or a positive value to stop reading, which
 * the reader (nx_chrome_read(), a source's read) then returns as is. Any may be NULL: a NULL toplevel
 * callback means top-level values are skipped without being buffered; a NULL
 * skipped callback means unusable elements are passed over unsaid. */
typedef struct nx_chrome_handlers {
    int (*event)(void *ctx, const nx_chrome_event *ev);
    int (*toplevel)(void *ctx, const nx_chrome_toplevel *tl);
    void *ctx;
    int (*skipped)(void *ctx, const nx_chrome_skipped *sk);
} nx_chrome_handlers;

#endif
