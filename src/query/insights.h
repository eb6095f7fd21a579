/*
 * insights.h — Performance Insights: a ranked list of findings, each the
 * firing of one rule with the evidence (the numbers it looked at), its
 * threshold and a score. docs/analyses.md documents every rule for
 * users.
 *
 * Rules live in one table in insights.c (one function and one line each, as
 * device sinks do in src/process/device/device_sinks.c). A rule applies to system
 * profiles (framework traces: GPU rules) or device profiles (a NeuronCore's
 * Summary), reads what it needs through the context (loaded once, on first
 * use, and shared by every rule), and adds zero or more findings. A rule
 * whose fields the profile lacks adds nothing.
 *
 * Ranking: by score (how far past its threshold the finding is, 0..1,
 * defined per rule), highest first; equal scores keep the table's order.
 * severity: "high" for score >= 0.5, "medium" for >= 0.2, else "low".
 *
 * The analysis "insights" (analysis.h, nx_analysis_insights here) serves the
 * answer to `nxprof insights` and GET /api/profiles/<name>/insights.
 */
#ifndef NX_QUERY_INSIGHTS_H
#define NX_QUERY_INSIGHTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "util/strbuf.h"

typedef enum nx_insight_scope { NX_INSIGHT_SYSTEM, NX_INSIGHT_DEVICE } nx_insight_scope;

/* One rule of the table, as listed to users. */
typedef struct nx_insight_rule_info {
    const char *id, *title, *threshold;
    nx_insight_scope scope;
} nx_insight_rule_info;

typedef struct nx_insight {
    const nx_insight_rule_info *rule;
    char *subject;                   /* what it is about ("GPU 0, rank 1"); "" for the whole profile */
    char *evidence;                  /* the numbers, one line for people */
    char *values;                    /* the same numbers as a JSON object's text */
    double score;                    /* 0..1 */
    const char *severity;            /* "high", "medium", "low" */
} nx_insight;

typedef struct nx_insights {
    nx_insight_scope scope;          /* of the profile read */
    nx_insight *items;               /* ranked */
    size_t n;
} nx_insights;

/* The rule table: its size and its i-th rule. */
size_t nx_insight_rule_count(void);
const nx_insight_rule_info *nx_insight_rule_at(size_t i);

/* Runs every rule of the profile's scope (system when `dir` has
 * SystemProfileEvents, else device) over profile `dir`. 0, or -1 with err
 * naming the table, row or field at fault. */
int nx_insights_read(const char *dir, nx_insights *out, nx_error *err);
void nx_insights_free(nx_insights *s);

/* Appends {"insights":[{"rule","title","threshold","subject","severity",
 * "score","evidence","values":{...}}],"rules":[{"id","title","threshold",
 * "scope"}]} (rules: those of the profile's scope, the ones checked). */
void nx_insights_json(const nx_insights *s, nx_strbuf *b);

/* Appends the findings as people read them: "Insights (most severe first)"
 * then per finding "  <i>. [<severity>] <title>[ - <subject>]: <evidence>" and
 * "     rule <id>: <threshold>"; or the one line "Insights: no rule fired (GPU
 * rules checked)" (device rules for a device profile). `nxprof insights` and
 * the top of `nxprof summary` print it. */
void nx_insights_text(const nx_insights *s, nx_strbuf *b);

#endif
