// Package exporttest reads measure --export's tables back for the tests,
// independently of the code that writes them: Parquet through parquet-go's
// generic reader (the file's own schema, not the row structs), CSV through
// encoding/csv, and the column documentation from schemas/export.md.
package exporttest

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Column is a column's name and type: "int64", "float64", "bool" or
// "string", with "?" appended when it is nullable.
type Column struct {
	Name, Type string
}

// Table is a table read back: its columns and rows, each cell nil (null),
// int64, float64, bool or string.
type Table struct {
	Columns []Column
	Rows    [][]any
}

// Maps returns the rows as maps by column name.
func (t Table) Maps() []map[string]any {
	out := make([]map[string]any, len(t.Rows))
	for i, r := range t.Rows {
		m := make(map[string]any, len(r))
		for j, c := range t.Columns {
			m[c.Name] = r[j]
		}
		out[i] = m
	}
	return out
}

// ReadParquet reads a flat Parquet file with its own schema.
func ReadParquet(path string) (Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return Table{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Table{}, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return Table{}, fmt.Errorf("%s: %w", path, err)
	}
	var t Table
	for _, field := range pf.Schema().Fields() {
		if !field.Leaf() || field.Repeated() {
			return Table{}, fmt.Errorf("%s: column %s is not a flat leaf", path, field.Name())
		}
		var typ string
		switch field.Type().Kind() {
		case parquet.Int64:
			typ = "int64"
		case parquet.Double:
			typ = "float64"
		case parquet.Boolean:
			typ = "bool"
		case parquet.ByteArray:
			if lt := field.Type().LogicalType(); lt == nil || lt.UTF8 == nil {
				return Table{}, fmt.Errorf("%s: column %s: a byte array that is not a UTF-8 string", path, field.Name())
			}
			typ = "string"
		default:
			return Table{}, fmt.Errorf("%s: column %s: unexpected type %s", path, field.Name(), field.Type())
		}
		if field.Optional() {
			typ += "?"
		}
		t.Columns = append(t.Columns, Column{field.Name(), typ})
	}
	r := parquet.NewReader(pf)
	defer r.Close()
	buf := make([]parquet.Row, 64)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			cells := make([]any, len(t.Columns))
			for _, v := range row {
				if v.IsNull() {
					continue
				}
				switch strings.TrimSuffix(t.Columns[v.Column()].Type, "?") {
				case "int64":
					cells[v.Column()] = v.Int64()
				case "float64":
					cells[v.Column()] = v.Double()
				case "bool":
					cells[v.Column()] = v.Boolean()
				case "string":
					cells[v.Column()] = string(v.ByteArray())
				}
			}
			t.Rows = append(t.Rows, cells)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return t, nil
			}
			return t, fmt.Errorf("%s: %w", path, err)
		}
		if n == 0 {
			return t, nil
		}
	}
}

// ReadCSV reads a CSV table whose column types are given (by name; the
// header must name exactly those columns, in order). An empty cell is null.
func ReadCSV(path string, columns []Column) (Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return Table{}, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return Table{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return Table{}, fmt.Errorf("%s: no header", path)
	}
	t := Table{Columns: columns}
	if got := recs[0]; len(got) != len(columns) {
		return Table{}, fmt.Errorf("%s: header %v, want %d columns", path, got, len(columns))
	}
	for i, name := range recs[0] {
		if name != columns[i].Name {
			return Table{}, fmt.Errorf("%s: column %d is %q, want %q", path, i, name, columns[i].Name)
		}
	}
	for line, rec := range recs[1:] {
		cells := make([]any, len(columns))
		for i, s := range rec {
			if s == "" {
				switch columns[i].Type {
				case "string":
					cells[i] = "" // a required string may be empty
				case "int64", "float64", "bool":
					return Table{}, fmt.Errorf("%s:%d: column %s is not nullable but empty", path, line+2, columns[i].Name)
				}
				continue
			}
			var v any
			var err error
			switch strings.TrimSuffix(columns[i].Type, "?") {
			case "int64":
				v, err = strconv.ParseInt(s, 10, 64)
			case "float64":
				v, err = strconv.ParseFloat(s, 64)
			case "bool":
				v, err = strconv.ParseBool(s)
			default:
				v = s
			}
			if err != nil {
				return Table{}, fmt.Errorf("%s:%d: column %s: %w", path, line+2, columns[i].Name, err)
			}
			cells[i] = v
		}
		t.Rows = append(t.Rows, cells)
	}
	return t, nil
}

// docHeading is a table's heading in schemas/export.md: "## requests".
var docHeading = regexp.MustCompile("^## `?([a-z]+)`? table")

// docRow is one documented column: | `name` | type | unit | meaning |.
var docRow = regexp.MustCompile("^\\| `([a-z0-9_]+)` \\| ([a-z0-9]+\\??) \\|")

// ReadDoc reads the columns schemas/export.md documents, by table.
func ReadDoc(path string) (map[string][]Column, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]Column{}
	table := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := docHeading.FindStringSubmatch(line); m != nil {
			table = m[1]
			continue
		}
		if strings.HasPrefix(line, "## ") {
			table = ""
		}
		if m := docRow.FindStringSubmatch(line); m != nil && table != "" {
			out[table] = append(out[table], Column{m[1], m[2]})
		}
	}
	return out, sc.Err()
}
