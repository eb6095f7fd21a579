/*
 * catalogue_data.h — internal: the arrays gen_catalogue emits into
 * build/generated/schema_catalogue.c. Only schema.c reads them; everyone else
 * goes through schema.h.
 */
#ifndef NX_CATALOGUE_DATA_H
#define NX_CATALOGUE_DATA_H

#include "schema/schema_types.h"

extern const nx_schema_table nx_catalogue_tables[];
extern const size_t nx_catalogue_n_tables;
extern const nx_schema_enum nx_catalogue_enums[];
extern const size_t nx_catalogue_n_enums;

#endif
