/* format_write.c — Parquet metadata structures in the Thrift compact protocol.
 * Field ids follow parquet.thrift; only fields nxprof sets are written. */
#include "parquet/format.h"

#include <string.h>

static void write_statistics(nxth_writer *w, int16_t id, const pq_statistics *s)
{
    nxth_field_struct_begin(w, id);
    if (s->has_null_count)
        nxth_field_i64(w, 3, s->null_count);
    if (s->has_max)
        nxth_field_binary(w, 5, s->max_value.ptr, s->max_value.len);
    if (s->has_min)
        nxth_field_binary(w, 6, s->min_value.ptr, s->min_value.len);
    if (s->has_max)
        nxth_field_bool(w, 7, true);   /* is_max_value_exact */
    if (s->has_min)
        nxth_field_bool(w, 8, true);   /* is_min_value_exact */
    if (s->has_nan_count)
        nxth_field_i64(w, 9, s->nan_count);
    nxth_struct_end(w);
}

void pq_write_page_header(nx_strbuf *out, const pq_page_header *h)
{
    nxth_writer w;
    nxth_writer_init(&w, out);
    nxth_struct_begin(&w);
    nxth_field_i32(&w, 1, h->type);
    nxth_field_i32(&w, 2, h->uncompressed_page_size);
    nxth_field_i32(&w, 3, h->compressed_page_size);
    if (h->has_crc)
        nxth_field_i32(&w, 4, h->crc);
    if (h->has_data_page_header) {
        const pq_data_page_header *d = &h->data_page_header;
        nxth_field_struct_begin(&w, 5);
        nxth_field_i32(&w, 1, d->num_values);
        nxth_field_i32(&w, 2, d->encoding);
        nxth_field_i32(&w, 3, d->definition_level_encoding);
        nxth_field_i32(&w, 4, d->repetition_level_encoding);
        if (d->has_statistics)
            write_statistics(&w, 5, &d->statistics);
        nxth_struct_end(&w);
    }
    if (h->has_dictionary_page_header) {
        const pq_dictionary_page_header *d = &h->dictionary_page_header;
        nxth_field_struct_begin(&w, 7);
        nxth_field_i32(&w, 1, d->num_values);
        nxth_field_i32(&w, 2, d->encoding);
        if (d->is_sorted)
            nxth_field_bool(&w, 3, true);
        nxth_struct_end(&w);
    }
    nxth_struct_end(&w);
}

static void write_schema_element(nxth_writer *w, const pq_schema_element *e)
{
    nxth_struct_begin(w);
    if (e->has_type)
        nxth_field_i32(w, 1, e->type);
    if (e->has_repetition)
        nxth_field_i32(w, 3, e->repetition);
    nxth_field_string(w, 4, e->name);
    if (e->num_children > 0)
        nxth_field_i32(w, 5, e->num_children);
    if (e->has_converted_type)
        nxth_field_i32(w, 6, e->converted_type);
    /* The writer annotates STRING and LIST only; both are empty structs. */
    if (e->logical_type != PQ_LOGICAL_NONE) {
        nxth_field_struct_begin(w, 10);            /* LogicalType union */
        nxth_field_struct_begin(w, (int16_t)e->logical_type);
        nxth_struct_end(w);
        nxth_struct_end(w);
    }
    nxth_struct_end(w);
}

static void write_column_meta(nxth_writer *w, const pq_column_meta *m)
{
    nxth_field_struct_begin(w, 3);
    nxth_field_i32(w, 1, m->type);
    nxth_field_list_begin(w, 2, NXTH_I32, m->n_encodings);
    for (uint32_t i = 0; i < m->n_encodings; i++)
        nxth_list_i32(w, m->encodings[i]);
    nxth_field_list_begin(w, 3, NXTH_BINARY, m->n_path);
    for (uint32_t i = 0; i < m->n_path; i++)
        nxth_list_binary(w, m->path_in_schema[i], strlen(m->path_in_schema[i]));
    nxth_field_i32(w, 4, m->codec);
    nxth_field_i64(w, 5, m->num_values);
    nxth_field_i64(w, 6, m->total_uncompressed_size);
    nxth_field_i64(w, 7, m->total_compressed_size);
    nxth_field_i64(w, 9, m->data_page_offset);
    if (m->has_dictionary_page_offset)
        nxth_field_i64(w, 11, m->dictionary_page_offset);
    if (m->has_statistics)
        write_statistics(w, 12, &m->statistics);
    nxth_struct_end(w);
}

static void write_row_group(nxth_writer *w, const pq_row_group *rg)
{
    nxth_struct_begin(w);
    nxth_field_list_begin(w, 1, NXTH_STRUCT, rg->n_columns);
    for (uint32_t c = 0; c < rg->n_columns; c++) {
        const pq_column_chunk *cc = &rg->columns[c];
        nxth_struct_begin(w);
        nxth_field_i64(w, 2, cc->file_offset);
        write_column_meta(w, &cc->meta);
        if (cc->has_offset_index) {
            nxth_field_i64(w, 4, cc->offset_index_offset);
            nxth_field_i32(w, 5, cc->offset_index_length);
        }
        if (cc->has_column_index) {
            nxth_field_i64(w, 6, cc->column_index_offset);
            nxth_field_i32(w, 7, cc->column_index_length);
        }
        nxth_struct_end(w);
    }
    nxth_field_i64(w, 2, rg->total_byte_size);
    nxth_field_i64(w, 3, rg->num_rows);
    if (rg->n_sorting_columns) {
        nxth_field_list_begin(w, 4, NXTH_STRUCT, rg->n_sorting_columns);
        for (uint32_t i = 0; i < rg->n_sorting_columns; i++) {
            nxth_struct_begin(w);
            nxth_field_i32(w, 1, rg->sorting_columns[i].column_idx);
            nxth_field_bool(w, 2, rg->sorting_columns[i].descending);
            nxth_field_bool(w, 3, rg->sorting_columns[i].nulls_first);
            nxth_struct_end(w);
        }
    }
    if (rg->has_file_offset)
        nxth_field_i64(w, 5, rg->file_offset);
    if (rg->has_total_compressed_size)
        nxth_field_i64(w, 6, rg->total_compressed_size);
    nxth_struct_end(w);
}

void pq_write_file_meta(nx_strbuf *out, const pq_file_meta *m)
{
    nxth_writer w;
    nxth_writer_init(&w, out);
    nxth_struct_begin(&w);
    nxth_field_i32(&w, 1, m->version);
    nxth_field_list_begin(&w, 2, NXTH_STRUCT, m->n_schema);
    for (uint32_t i = 0; i < m->n_schema; i++)
        write_schema_element(&w, &m->schema[i]);
    nxth_field_i64(&w, 3, m->num_rows);
    nxth_field_list_begin(&w, 4, NXTH_STRUCT, m->n_row_groups);
    for (uint32_t i = 0; i < m->n_row_groups; i++)
        write_row_group(&w, &m->row_groups[i]);
    if (m->n_kv) {
        nxth_field_list_begin(&w, 5, NXTH_STRUCT, m->n_kv);
        for (uint32_t i = 0; i < m->n_kv; i++) {
            nxth_struct_begin(&w);
            nxth_field_string(&w, 1, m->kv[i].key);
            if (m->kv[i].value)
                nxth_field_string(&w, 2, m->kv[i].value);
            nxth_struct_end(&w);
        }
    }
    if (m->created_by)
        nxth_field_string(&w, 6, m->created_by);
    if (m->n_column_orders) {
        nxth_field_list_begin(&w, 7, NXTH_STRUCT, m->n_column_orders);
        for (uint32_t i = 0; i < m->n_column_orders; i++) {
            nxth_struct_begin(&w);           /* ColumnOrder union */
            nxth_field_struct_begin(&w, 1);  /* TYPE_ORDER: TypeDefinedOrder {} */
            nxth_struct_end(&w);
            nxth_struct_end(&w);
        }
    }
    nxth_struct_end(&w);
}

void pq_write_column_index(nx_strbuf *out, const pq_column_index *ci)
{
    nxth_writer w;
    nxth_writer_init(&w, out);
    nxth_struct_begin(&w);
    nxth_field_list_begin(&w, 1, NXTH_BOOL_TRUE, ci->n_pages);
    for (uint32_t i = 0; i < ci->n_pages; i++)
        nxth_list_bool(&w, ci->null_pages[i]);
    nxth_field_list_begin(&w, 2, NXTH_BINARY, ci->n_pages);
    for (uint32_t i = 0; i < ci->n_pages; i++)
        nxth_list_binary(&w, ci->min_values[i].ptr, ci->min_values[i].len);
    nxth_field_list_begin(&w, 3, NXTH_BINARY, ci->n_pages);
    for (uint32_t i = 0; i < ci->n_pages; i++)
        nxth_list_binary(&w, ci->max_values[i].ptr, ci->max_values[i].len);
    nxth_field_i32(&w, 4, ci->boundary_order);
    if (ci->has_null_counts) {
        nxth_field_list_begin(&w, 5, NXTH_I64, ci->n_pages);
        for (uint32_t i = 0; i < ci->n_pages; i++)
            nxth_list_i64(&w, ci->null_counts[i]);
    }
    if (ci->has_nan_counts) {
        nxth_field_list_begin(&w, 8, NXTH_I64, ci->n_pages);
        for (uint32_t i = 0; i < ci->n_pages; i++)
            nxth_list_i64(&w, ci->nan_counts[i]);
    }
    nxth_struct_end(&w);
}

void pq_write_offset_index(nx_strbuf *out, const pq_offset_index *oi)
{
    nxth_writer w;
    nxth_writer_init(&w, out);
    nxth_struct_begin(&w);
    nxth_field_list_begin(&w, 1, NXTH_STRUCT, oi->n_pages);
    for (uint32_t i = 0; i < oi->n_pages; i++) {
        nxth_struct_begin(&w);
        nxth_field_i64(&w, 1, oi->pages[i].offset);
        nxth_field_i32(&w, 2, oi->pages[i].compressed_page_size);
        nxth_field_i64(&w, 3, oi->pages[i].first_row_index);
        nxth_struct_end(&w);
    }
    nxth_struct_end(&w);
}
