package export

import (
	"encoding/csv"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// writeBatches writes a table in format from the batches of rows each
// hands to emit, so a long table need not be held whole: Parquet
// (zstd-compressed, its schema the row struct's parquet tags) or CSV.
func writeBatches[T any](w io.Writer, format Format, each func(emit func([]T) error) error) error {
	if format == Parquet {
		pw := parquet.NewGenericWriter[T](w, parquet.Compression(&zstd.Codec{}))
		if err := each(func(rows []T) error { _, err := pw.Write(rows); return err }); err != nil {
			return err
		}
		return pw.Close()
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns[T]()); err != nil {
		return err
	}
	cells := make([]string, reflect.TypeFor[T]().NumField())
	if err := each(func(rows []T) error { return writeCSVRows(cw, cells, rows) }); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// writeTable writes rows in format.
func writeTable[T any](w io.Writer, format Format, rows []T) error {
	return writeBatches(w, format, func(emit func([]T) error) error { return emit(rows) })
}

// Columns names the columns of a row type T, in order: its parquet tags'
// names.
func Columns[T any]() []string {
	t := reflect.TypeFor[T]()
	out := make([]string, t.NumField())
	for i := range out {
		out[i] = columnName(t.Field(i))
	}
	return out
}

func columnName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
	return name
}

// writeCSVRows writes rows as CSV records: integers in decimal, floats in
// the shortest form that reads back to the same float64, booleans as
// true/false, a null as an empty cell.
func writeCSVRows[T any](cw *csv.Writer, cells []string, rows []T) error {
	for _, row := range rows {
		v := reflect.ValueOf(row)
		for i := range cells {
			cells[i] = cell(v.Field(i))
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	return nil
}

func cell(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.String:
		return v.String()
	}
	panic(fmt.Sprintf("export: no CSV form for a %s column", v.Kind()))
}
