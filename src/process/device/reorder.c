/* reorder.c — binary min-heap by (key, push order) over fixed-size items (see reorder.h). */
#include "process/device/reorder.h"

#include <stdlib.h>
#include <string.h>

typedef struct slot_head {
    int64_t key;
    uint64_t seq;
} slot_head;

static size_t slot_size(const nx_reorder *q)
{
    return sizeof(slot_head) + ((q->item_size + 7) & ~(size_t)7);
}

static unsigned char *slot(const nx_reorder *q, size_t i)
{
    return q->slots + i * slot_size(q);
}

static bool less(const unsigned char *a, const unsigned char *b)
{
    const slot_head *x = (const slot_head *)a, *y = (const slot_head *)b;
    return x->key < y->key || (x->key == y->key && x->seq < y->seq);
}

void nx_reorder_init(nx_reorder *q, size_t item_size)
{
    memset(q, 0, sizeof *q);
    q->item_size = item_size;
}

int nx_reorder_push(nx_reorder *q, int64_t key, const void *item)
{
    size_t sz = slot_size(q);
    if (q->n + 1 >= q->cap) {   /* one spare slot is the scratch for sifting */
        size_t cap = q->cap ? q->cap * 2 : 64;
        unsigned char *s = realloc(q->slots, cap * sz);
        if (!s)
            return -1;
        q->slots = s;
        q->cap = cap;
    }
    unsigned char *tmp = slot(q, q->cap - 1);
    slot_head h = {key, q->next_seq++};
    memcpy(tmp, &h, sizeof h);
    memcpy(tmp + sizeof h, item, q->item_size);
    size_t i = q->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!less(tmp, slot(q, up)))
            break;
        memcpy(slot(q, i), slot(q, up), sz);
        i = up;
    }
    memcpy(slot(q, i), tmp, sz);
    return 0;
}

bool nx_reorder_ready(const nx_reorder *q, int64_t watermark)
{
    return q->n > 0 && ((const slot_head *)q->slots)->key <= watermark;
}

const void *nx_reorder_top(const nx_reorder *q)
{
    return q->n > 0 ? q->slots + sizeof(slot_head) : NULL;
}

int64_t nx_reorder_top_key(const nx_reorder *q)
{
    return q->n > 0 ? ((const slot_head *)q->slots)->key : INT64_MAX;
}

void nx_reorder_pop(nx_reorder *q)
{
    if (q->n == 0)
        return;
    size_t sz = slot_size(q);
    unsigned char *last = slot(q, --q->n);
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && less(slot(q, c + 1), slot(q, c)))
            c++;
        if (!less(slot(q, c), last))
            break;
        memcpy(slot(q, i), slot(q, c), sz);
        i = c;
    }
    if (q->n > 0 && i != q->n)
        memmove(slot(q, i), last, sz);
}

size_t nx_reorder_size(const nx_reorder *q)
{
    return q->n;
}

void nx_reorder_free(nx_reorder *q)
{
    free(q->slots);
    memset(q, 0, sizeof *q);
}
