package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// codecByName maps the -compression names to arrow-go's codecs. "lz4" is
// LZ4_RAW: arrow-go implements no other LZ4 (the older Hadoop-framed LZ4 is
// deprecated by the Parquet format and has no codec registered there).
var codecByName = map[string]compress.Compression{
	"none":   compress.Codecs.Uncompressed,
	"snappy": compress.Codecs.Snappy,
	"gzip":   compress.Codecs.Gzip,
	"zstd":   compress.Codecs.Zstd,
	"brotli": compress.Codecs.Brotli,
	"lz4":    compress.Codecs.Lz4Raw,
}

func rewriteMain(args []string) error {
	fs := flag.NewFlagSet("rewrite", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// Empty means arrow-go's own default, which is no compression
	// (parquet.DefaultColumnProperties: compress.Codecs.Uncompressed).
	compression := fs.String("compression", "", "")
	// 0 means arrow-go's own default, parquet.DefaultMaxRowGroupLen
	// (64Mi rows), so every test file is written as one row group.
	rowGroup := fs.Int64("row-group", 0, "")
	if err := fs.Parse(args); err != nil {
		return usageError("rewrite: " + err.Error())
	}
	if fs.NArg() != 2 {
		return usageError("rewrite: need SRC_DIR and DST_DIR")
	}
	if *rowGroup < 0 {
		return usageError("rewrite: -row-group must be positive")
	}
	var opts []parquet.WriterProperty
	if *compression != "" {
		codec, ok := codecByName[*compression]
		if !ok {
			return usageError(fmt.Sprintf("rewrite: unknown compression %q", *compression))
		}
		opts = append(opts, parquet.WithCompression(codec))
	}
	chunk := parquet.DefaultMaxRowGroupLen
	if *rowGroup > 0 {
		chunk = *rowGroup
		opts = append(opts, parquet.WithMaxRowGroupLength(chunk))
	}
	props := parquet.NewWriterProperties(opts...)

	src, dst := fs.Arg(0), fs.Arg(1)
	names, err := parquetNames(src)
	if err != nil {
		return err
	}
	if err := prepareDst(dst); err != nil {
		return err
	}
	for _, name := range names {
		if err := rewriteFile(filepath.Join(src, name), filepath.Join(dst, name), props, chunk); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "nxgo: rewrote %s\n", name)
	}
	return nil
}

// parquetNames lists the regular *.parquet files directly in dir, sorted.
func parquetNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".parquet") {
			continue
		}
		info, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if info.Mode().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// prepareDst creates dir, or accepts it if it is an empty directory: writing
// into a directory that already holds files would mix two profiles.
func prepareDst(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s: destination directory is not empty", dir)
	}
	return nil
}

func rewriteFile(srcPath, dstPath string, props *parquet.WriterProperties, chunk int64) (err error) {
	defer recoverInto(&err, srcPath)
	tbl, err := readTable(srcPath)
	if err != nil {
		return fmt.Errorf("%s: read: %w", srcPath, err)
	}
	defer tbl.Release()

	out, err := os.Create(dstPath)
	if err != nil {
		return err
	}
	// pqarrow writes the table's own Arrow schema, so names, order, types
	// and nullability are those read from the source file.
	// Handed over as a plain io.Writer: pqarrow closes a sink that is an
	// io.Closer, and the error of our own Close must not be lost.
	werr := pqarrow.WriteTable(tbl, struct{ io.Writer }{out}, chunk, props, pqarrow.DefaultWriterProps())
	cerr := out.Close()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(dstPath)
		return fmt.Errorf("%s: write: %w", dstPath, werr)
	}
	// arrow-go derives the Arrow schema from the Parquet schema on read, so a
	// schema change across the round trip (a list element renamed, a type
	// widened) would mean the rewritten file tests something else.
	back, err := readSchema(dstPath)
	if err != nil {
		return fmt.Errorf("%s: read back: %w", dstPath, err)
	}
	if diff := schemaDiff(tbl.Schema(), back); diff != "" {
		return fmt.Errorf("%s: schema changed in the rewrite: %s", dstPath, diff)
	}
	return nil
}

func openFileReader(path string) (*file.Reader, *pqarrow.FileReader, error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, nil, err
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		rdr.Close()
		return nil, nil, err
	}
	return rdr, fr, nil
}

func readTable(path string) (arrow.Table, error) {
	rdr, fr, err := openFileReader(path)
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	return fr.ReadTable(context.Background())
}

func readSchema(path string) (*arrow.Schema, error) {
	rdr, fr, err := openFileReader(path)
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	return fr.Schema()
}

// schemaDiff compares names, order, types and nullability; field metadata
// is left out as arrow-go fills it in itself (PARQUET:field_id). Types are
// compared as text because arrow.TypeEqual ignores a list element's name.
func schemaDiff(a, b *arrow.Schema) string {
	if a.NumFields() != b.NumFields() {
		return fmt.Sprintf("%d fields, now %d", a.NumFields(), b.NumFields())
	}
	for i := 0; i < a.NumFields(); i++ {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Nullable != fb.Nullable || fa.Type.String() != fb.Type.String() {
			return fmt.Sprintf("field %d was %s, now %s", i, fa, fb)
		}
	}
	return ""
}
