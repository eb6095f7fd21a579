/* time_text.c — timestamp texts of the profile tables (see time_text.h). */
#include "process/time_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void nx_go_utc_text(int64_t ns, char out[64])
{
    int64_t sec = ns >= 0 ? ns / 1000000000 : -((-(ns + 1)) / 1000000000) - 1;
    int64_t frac = ns - sec * 1000000000;
    time_t t = (time_t)sec;
    struct tm tm;
    char day[40];
    if (!gmtime_r(&t, &tm) || strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(day, sizeof day, "1970-01-01 00:00:00");
    char f[16] = "";
    if (frac) {
        snprintf(f, sizeof f, ".%09" PRId64, frac);
        size_t n = strlen(f);
        while (n > 1 && f[n - 1] == '0')
            f[--n] = '\0';
    }
    snprintf(out, 64, "%.32s%.10s +0000 UTC", day, f);
}

void nx_utc_text(int64_t ns, char out[40])
{
    int64_t q = ns / 1000000000;
    time_t sec = (time_t)(ns % 1000000000 < 0 ? q - 1 : q); /* floor, without overflow near INT64_MIN */
    struct tm tm;
    if (!gmtime_r(&sec, &tm) || strftime(out, 40, "%Y-%m-%d %H:%M:%S+00:00", &tm) == 0)
        snprintf(out, 40, "1970-01-01 00:00:00+00:00");
}
