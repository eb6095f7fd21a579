// The pin of DuckDB's C library (duckdb.h and its static libraries, DuckDB 1.5), which
// src/sql links (docs/sql.md). Go's module system downloads it and checks it against
// go.sum; nothing here is Go code. scripts/bootstrap runs `go mod download`, and CMake
// asks `go list -m` for the module's directory.
module nxprof/third_party/duckdb

go 1.24

require github.com/duckdb/duckdb-go-bindings/lib/linux-amd64 v0.10506.0
