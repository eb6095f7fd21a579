/*
 * json_cell.c — a batch cell as a JSON value (see json_cell.h).
 */
#include "query/engine/json_cell.h"

#include "util/json.h"

void nx_json_cell(nx_strbuf *b, const nxpq_column_data *col, size_t i)
{
    if (col->valid && !col->valid[i]) {
        nx_strbuf_puts(b, "null");
        return;
    }
    if (col->dict_index) { /* dictionary form: STRING, INT32 or INT64 */
        uint32_t d = col->dict_index[i];
        if (col->type == NXPQ_STRING)
            nx_json_put_string(b, col->dict_strs[d].ptr, col->dict_strs[d].len);
        else
            nx_json_put_i64(b, col->type == NXPQ_INT64 ? col->dict_values.i64[d] : col->dict_values.i32[d], true);
        return;
    }
    switch (col->type) {
    case NXPQ_BOOLEAN: nx_strbuf_puts(b, col->values.b[i] ? "true" : "false"); break;
    case NXPQ_INT32: nx_json_put_i64(b, col->values.i32[i], true); break;
    case NXPQ_INT64: nx_json_put_i64(b, col->values.i64[i], true); break;
    case NXPQ_FLOAT: nx_json_put_f32(b, col->values.f32[i]); break;
    case NXPQ_DOUBLE: nx_json_put_f64(b, col->values.f64[i]); break;
    case NXPQ_STRING:
        nx_json_put_string(b, col->data + col->offsets[i], (size_t)(col->offsets[i + 1] - col->offsets[i]));
        break;
    case NXPQ_LIST_INT64:
    case NXPQ_LIST_STRING: {
        nx_strbuf_putc(b, '[');
        for (uint64_t j = col->list_offsets[i]; j < col->list_offsets[i + 1]; j++) {
            if (j > col->list_offsets[i])
                nx_strbuf_putc(b, ',');
            if (col->element_valid && !col->element_valid[j])
                nx_strbuf_puts(b, "null");
            else if (col->type == NXPQ_LIST_INT64)
                nx_json_put_i64(b, col->values.i64[j], true);
            else
                nx_json_put_string(b, col->data + col->offsets[j], (size_t)(col->offsets[j + 1] - col->offsets[j]));
        }
        nx_strbuf_putc(b, ']');
        break;
    }
    default: nx_strbuf_puts(b, "null"); break;
    }
}
