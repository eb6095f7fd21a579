/* csv_memory.h — for CSV tests: an nx_csv writing into a memory stream, and the
 * text it wrote. Include after <cmocka.h> and "query/engine/csv.h" (needs _GNU_SOURCE
 * for open_memstream). */
#ifndef NX_TEST_CSV_MEMORY_H
#define NX_TEST_CSV_MEMORY_H

typedef struct mem {
    char *text;
    size_t len;
    FILE *f;
    nx_csv c;
} mem;

static inline void mem_open(mem *m)
{
    m->text = NULL;
    m->len = 0;
    m->f = open_memstream(&m->text, &m->len);
    assert_non_null(m->f);
    assert_int_equal(nx_csv_init(&m->c, m->f), 0);
}

/* Finishes the writer; the caller frees the returned text. */
static inline char *mem_close(mem *m)
{
    assert_int_equal(nx_csv_finish(&m->c), 0);
    fclose(m->f);
    return m->text;
}

#endif
