/*
 * time_text.h — the text forms of Unix-ns timestamps that profile tables carry
 * next to the numbers (Metadata.first_ts/last_ts, SystemProfileMetadata.*_ts).
 */
#ifndef NX_TIME_TEXT_H
#define NX_TIME_TEXT_H

#include <stdint.h>

/* "YYYY-MM-DD HH:MM:SS+00:00" (the schema's Metadata example), whole seconds, UTC. */
void nx_utc_text(int64_t ns, char out[40]);
/* Go's time.Time.String() of a UTC time: "2006-01-02 15:04:05.999999999 +0000 UTC",
 * trailing zeros of the fraction dropped (the SystemProfileMetadata example). */
void nx_go_utc_text(int64_t ns, char out[64]);

#endif
