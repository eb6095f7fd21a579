package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

func dumpMain(args []string) error {
	if len(args) != 1 {
		return usageError("dump: need exactly one FILE.parquet")
	}
	path := args[0]
	// Built whole before printing so that a file arrow-go fails on part way
	// leaves no half document on stdout.
	var doc jsonBuf
	if err := dumpFile(path, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	doc.b = append(doc.b, '\n')
	w := bufio.NewWriter(os.Stdout)
	if _, err := w.Write(doc.b); err != nil {
		return err
	}
	return w.Flush()
}

func dumpFile(path string, j *jsonBuf) (err error) {
	defer recoverInto(&err, "")
	rdr, fr, err := openFileReader(path)
	if err != nil {
		return err
	}
	defer rdr.Close()
	sc, err := fr.Schema()
	if err != nil {
		return err
	}

	j.raw(`{"schema":[`)
	for i, f := range sc.Fields() {
		j.sep(i)
		j.raw(`{"name":`)
		j.str(f.Name)
		j.raw(`,"type":`)
		j.str(f.Type.String())
		j.raw(`,"nullable":`)
		j.boolean(f.Nullable)
		j.raw(`}`)
	}
	j.raw(`],"num_rows":`)
	j.int(rdr.NumRows())

	j.raw(`,"row_groups":[`)
	if err := dumpRowGroups(rdr, j); err != nil {
		return err
	}

	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return err
	}
	defer tbl.Release()
	j.raw(`],"rows":`)
	if err := dumpRows(tbl, j); err != nil {
		return err
	}
	j.raw(`}`)
	return nil
}

func dumpRowGroups(rdr *file.Reader, j *jsonBuf) error {
	md := rdr.MetaData()
	for g := 0; g < rdr.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		j.sep(g)
		j.raw(`{"num_rows":`)
		j.int(rg.NumRows())
		j.raw(`,"columns":[`)
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("row group %d column %d: %w", g, c, err)
			}
			stats, err := cc.Statistics()
			if err != nil {
				return fmt.Errorf("row group %d column %s: statistics: %w", g, cc.PathInSchema(), err)
			}
			j.sep(c)
			j.raw(`{"path":`)
			j.str(cc.PathInSchema().String())
			hasMinMax := stats != nil && stats.HasMinMax()
			for _, bound := range []struct {
				key string
				min bool
			}{{`,"min":`, true}, {`,"max":`, false}} {
				j.raw(bound.key)
				if !hasMinMax {
					j.null()
				} else if err := statValue(j, stats, bound.min); err != nil {
					return fmt.Errorf("row group %d column %s: %w", g, cc.PathInSchema(), err)
				}
			}
			j.raw(`,"null_count":`)
			if stats != nil && stats.HasNullCount() {
				j.int(stats.NullCount())
			} else {
				j.null()
			}
			j.raw(`,"has_min_max":`)
			j.boolean(hasMinMax)
			j.raw(`}`)
		}
		j.raw(`]}`)
	}
	return nil
}

// isUnsigned says whether an INT32/INT64 column holds unsigned integers; its
// statistics are ordered as unsigned, so printing them signed could show a
// min above the max.
func isUnsigned(descr *schema.Column) bool {
	if it, ok := descr.LogicalType().(*schema.IntLogicalType); ok {
		return !it.IsSigned()
	}
	switch descr.ConvertedType() {
	case schema.ConvertedTypes.Uint8, schema.ConvertedTypes.Uint16,
		schema.ConvertedTypes.Uint32, schema.ConvertedTypes.Uint64:
		return true
	}
	return false
}

// statValue writes the min (or max) in the column's physical type.
func statValue(j *jsonBuf, st metadata.TypedStatistics, min bool) error {
	switch s := st.(type) {
	case *metadata.BooleanStatistics:
		j.boolean(pick(min, s.Min(), s.Max()))
	case *metadata.Int32Statistics:
		v := pick(min, s.Min(), s.Max())
		if isUnsigned(s.Descr()) {
			j.uint(uint64(uint32(v)))
		} else {
			j.int(int64(v))
		}
	case *metadata.Int64Statistics:
		v := pick(min, s.Min(), s.Max())
		if isUnsigned(s.Descr()) {
			j.uint(uint64(v))
		} else {
			j.int(v)
		}
	case *metadata.Float32Statistics:
		j.float(float64(pick(min, s.Min(), s.Max())), 32)
	case *metadata.Float64Statistics:
		j.float(pick(min, s.Min(), s.Max()), 64)
	case *metadata.ByteArrayStatistics:
		j.str(string(pick(min, s.Min(), s.Max())))
	case *metadata.Float16Statistics:
		// FIXED_LEN_BYTE_ARRAY(2) holding a half float, little-endian.
		b := pick(min, s.Min(), s.Max())
		if len(b) != 2 {
			return fmt.Errorf("float16 statistic of %d bytes", len(b))
		}
		j.float(float64(float16.FromLEBytes(b).Float32()), 32)
	case *metadata.FixedLenByteArrayStatistics:
		j.str(string(pick(min, s.Min(), s.Max())))
	case *metadata.Int96Statistics:
		v := pick(min, s.Min(), s.Max())
		j.str(hex.EncodeToString(v[:]))
	default:
		return fmt.Errorf("statistics of physical type %s not handled", st.Type())
	}
	return nil
}

func pick[T any](min bool, a, b T) T {
	if min {
		return a
	}
	return b
}

func dumpRows(tbl arrow.Table, j *jsonBuf) error {
	ncol := int(tbl.NumCols())
	type cursor struct {
		chunks []arrow.Array
		chunk  int
		off    int
	}
	cols := make([]cursor, ncol)
	for c := 0; c < ncol; c++ {
		cols[c].chunks = tbl.Column(c).Data().Chunks()
	}
	j.raw(`[`)
	for r := int64(0); r < tbl.NumRows(); r++ {
		if r > 0 {
			j.raw(",")
		}
		j.raw("[")
		for c := range cols {
			cur := &cols[c]
			for cur.off >= cur.chunks[cur.chunk].Len() {
				cur.chunk++
				cur.off = 0
			}
			if c > 0 {
				j.raw(",")
			}
			if err := j.value(cur.chunks[cur.chunk], cur.off); err != nil {
				return fmt.Errorf("row %d column %s: %w", r, tbl.Schema().Field(c).Name, err)
			}
			cur.off++
		}
		j.raw("]")
	}
	j.raw(`]`)
	return nil
}
