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

// writeParquet writes rows as one Parquet file, zstd-compressed, its
// schema the row struct's (parquet tags).
func writeParquet[T any](w io.Writer, rows []T) error {
	pw := parquet.NewGenericWriter[T](w, parquet.Compression(&zstd.Codec{}))
	if _, err := pw.Write(rows); err != nil {
		return err
	}
	return pw.Close()
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

// writeCSV writes rows as CSV with a header of the column names: integers
// in decimal, floats in the shortest form that reads back to the same
// float64, booleans as true/false, a null as an empty cell.
func writeCSV[T any](w io.Writer, rows []T) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns[T]()); err != nil {
		return err
	}
	t := reflect.TypeFor[T]()
	cells := make([]string, t.NumField())
	for _, row := range rows {
		v := reflect.ValueOf(row)
		for i := range cells {
			cells[i] = cell(v.Field(i))
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
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
