package export

import (
	"bufio"
	"encoding/csv"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/llmreplay/llmreplay/internal/safetext"
)

var nan = math.NaN()

func newTable[T any](format string, w io.Writer) table[T] {
	if format == "csv" {
		return newCSV[T](w)
	}
	// Row groups of at most rowGroup rows are flushed as they fill, so the
	// writer holds one group, not the table; snappy keeps chunks.parquet
	// small at little CPU.
	return &pq[T]{w: parquet.NewGenericWriter[T](w, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(rowGroup))}
}

const rowGroup = 128 << 10

type pq[T any] struct{ w *parquet.GenericWriter[T] }

func (p *pq[T]) Write(rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := p.w.Write(rows)
	return err
}
func (p *pq[T]) Close() error { return p.w.Close() }

// csvTable writes the same columns as the Parquet schema (names from the
// parquet tags), one row per struct; NaN is an empty cell. Text cells are
// written as analyze's CSV writes them (safetext.CSV): a CSV is opened in
// spreadsheets, where a label, model id or finish reason starting with
// = + - @ would run as a formula, and in terminals, where control
// characters act. Parquet keeps the exact strings, for programs.
type csvTable[T any] struct {
	b    *bufio.Writer
	w    *csv.Writer
	head bool
	rec  []string
}

func newCSV[T any](w io.Writer) *csvTable[T] {
	b := bufio.NewWriterSize(w, 1<<16)
	return &csvTable[T]{b: b, w: csv.NewWriter(b)}
}

func (c *csvTable[T]) Write(rows []T) error {
	var zero T
	t := reflect.TypeOf(zero)
	if !c.head {
		c.head = true
		var names []string
		for i := 0; i < t.NumField(); i++ {
			names = append(names, strings.Split(t.Field(i).Tag.Get("parquet"), ",")[0])
		}
		if err := c.w.Write(names); err != nil {
			return err
		}
	}
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		c.rec = c.rec[:0]
		for j := 0; j < v.NumField(); j++ {
			f := v.Field(j)
			switch x := f.Interface().(type) {
			case string:
				c.rec = append(c.rec, safetext.CSV(x))
			case int64:
				c.rec = append(c.rec, strconv.FormatInt(x, 10))
			case bool:
				c.rec = append(c.rec, strconv.FormatBool(x))
			case float64:
				if math.IsNaN(x) || math.IsInf(x, 0) {
					c.rec = append(c.rec, "")
				} else {
					c.rec = append(c.rec, strconv.FormatFloat(x, 'g', -1, 64))
				}
			case time.Time:
				c.rec = append(c.rec, x.Format(time.RFC3339Nano))
			}
		}
		if err := c.w.Write(c.rec); err != nil {
			return err
		}
	}
	return nil
}

func (c *csvTable[T]) Close() error {
	if !c.head {
		if err := c.Write(nil); err != nil {
			return err
		}
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return err
	}
	return c.b.Flush()
}

// asyncTable writes a table on a goroutine of its own, so encoding and
// compressing the big table (chunks) runs on the second core while the
// trace is decoded and analysed on the first. Write copies the rows (the
// caller reuses its batch); at most two batches wait.
type asyncTable[T any] struct {
	t    table[T]
	ch   chan []T
	free chan []T
	done chan error
}

func newAsync[T any](t table[T]) *asyncTable[T] {
	a := &asyncTable[T]{t: t, ch: make(chan []T, 2), free: make(chan []T, 3), done: make(chan error, 1)}
	go func() {
		var first error
		for rows := range a.ch {
			if first == nil {
				first = a.t.Write(rows)
			}
			select {
			case a.free <- rows[:0]:
			default:
			}
		}
		a.done <- first
	}()
	return a
}

func (a *asyncTable[T]) Write(rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	var buf []T
	select {
	case buf = <-a.free:
	default:
	}
	a.ch <- append(buf, rows...)
	return nil
}

// Close waits for every batch and closes the table; the first error of
// any write is returned here.
func (a *asyncTable[T]) Close() error {
	close(a.ch)
	err := <-a.done
	if cerr := a.t.Close(); err == nil {
		err = cerr
	}
	return err
}
