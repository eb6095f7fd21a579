package main

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// jsonBuf writes JSON by hand rather than through encoding/json so that an
// int64 is printed as its exact digits (encoding/json into interface{}
// values would go through float64 and lose precision above 2^53) and a float
// as its shortest round-trip text.
type jsonBuf struct {
	b []byte
}

func (j *jsonBuf) raw(s string) { j.b = append(j.b, s...) }

func (j *jsonBuf) sep(i int) {
	if i > 0 {
		j.b = append(j.b, ',')
	}
}

func (j *jsonBuf) null() { j.raw("null") }

func (j *jsonBuf) boolean(v bool) { j.b = strconv.AppendBool(j.b, v) }

func (j *jsonBuf) int(v int64) { j.b = strconv.AppendInt(j.b, v, 10) }

func (j *jsonBuf) uint(v uint64) { j.b = strconv.AppendUint(j.b, v, 10) }

// float writes v (of the given bit size, 32 or 64) as shortest round-trip
// text; NaN and the infinities, which JSON has no numbers for, as strings.
func (j *jsonBuf) float(v float64, bits int) {
	switch {
	case math.IsNaN(v):
		j.raw(`"NaN"`)
	case math.IsInf(v, 1):
		j.raw(`"Inf"`)
	case math.IsInf(v, -1):
		j.raw(`"-Inf"`)
	default:
		j.b = strconv.AppendFloat(j.b, v, 'g', -1, bits)
	}
}

// str writes s as a JSON string. Bytes that are not UTF-8 become U+FFFD, as
// encoding/json does; nxprof's strings are UTF-8, so one showing up here is
// itself a difference the tests will see.
func (j *jsonBuf) str(s string) {
	const hexDigits = "0123456789abcdef"
	j.b = append(j.b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				j.b = append(j.b, '\\', c)
			case c == '\n':
				j.raw(`\n`)
			case c == '\r':
				j.raw(`\r`)
			case c == '\t':
				j.raw(`\t`)
			case c < 0x20:
				j.b = append(j.b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				j.b = append(j.b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			j.raw(`\ufffd`)
		} else {
			j.raw(s[i : i+size])
		}
		i += size
	}
	j.b = append(j.b, '"')
}

// value writes element i of arr. Temporal types print their stored integer,
// as nxprof stores times as plain integers and compares them so.
func (j *jsonBuf) value(arr arrow.Array, i int) error {
	if arr.IsNull(i) {
		j.null()
		return nil
	}
	switch a := arr.(type) {
	case *array.Null:
		j.null()
	case *array.Boolean:
		j.boolean(a.Value(i))
	case *array.Int8:
		j.int(int64(a.Value(i)))
	case *array.Int16:
		j.int(int64(a.Value(i)))
	case *array.Int32:
		j.int(int64(a.Value(i)))
	case *array.Int64:
		j.int(a.Value(i))
	case *array.Uint8:
		j.uint(uint64(a.Value(i)))
	case *array.Uint16:
		j.uint(uint64(a.Value(i)))
	case *array.Uint32:
		j.uint(uint64(a.Value(i)))
	case *array.Uint64:
		j.uint(a.Value(i))
	case *array.Float16:
		j.float(float64(a.Value(i).Float32()), 32)
	case *array.Float32:
		j.float(float64(a.Value(i)), 32)
	case *array.Float64:
		j.float(a.Value(i), 64)
	case *array.String:
		j.str(a.Value(i))
	case *array.LargeString:
		j.str(a.Value(i))
	case *array.StringView:
		j.str(a.Value(i))
	case *array.Binary:
		j.str(string(a.Value(i)))
	case *array.LargeBinary:
		j.str(string(a.Value(i)))
	case *array.BinaryView:
		j.str(string(a.Value(i)))
	case *array.FixedSizeBinary:
		j.str(string(a.Value(i)))
	case *array.Date32:
		j.int(int64(a.Value(i)))
	case *array.Date64:
		j.int(int64(a.Value(i)))
	case *array.Time32:
		j.int(int64(a.Value(i)))
	case *array.Time64:
		j.int(int64(a.Value(i)))
	case *array.Timestamp:
		j.int(int64(a.Value(i)))
	case *array.Duration:
		j.int(int64(a.Value(i)))
	case array.ListLike: // List, LargeList, FixedSizeList, Map (as a list of key/value objects)
		start, end := a.ValueOffsets(i)
		values := a.ListValues()
		j.raw("[")
		for k := start; k < end; k++ {
			j.sep(int(k - start))
			if err := j.value(values, int(k)); err != nil {
				return err
			}
		}
		j.raw("]")
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		j.raw("{")
		for f := 0; f < a.NumField(); f++ {
			j.sep(f)
			j.str(st.Field(f).Name)
			j.raw(":")
			if err := j.value(a.Field(f), i); err != nil {
				return err
			}
		}
		j.raw("}")
	case *array.Dictionary:
		return j.value(a.Dictionary(), a.GetValueIndex(i))
	default:
		return fmt.Errorf("arrow type %s not handled", arr.DataType())
	}
	return nil
}
