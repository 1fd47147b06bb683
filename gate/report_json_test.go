package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// encodingJSON is what Report.WriteJSON wrote before it was hand-written,
// and must still write byte for byte.
func encodingJSON(t *testing.T, r *Report) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(r)
	return buf.Bytes(), err
}

func handJSON(r *Report) ([]byte, error) {
	var buf bytes.Buffer
	err := r.WriteJSON(&buf)
	return buf.Bytes(), err
}

var jsonStrings = []string{
	"", "plain", "a\"b\\c", "tab\tnl\nret\rbs\bff\f", "\x00\x01\x1f\x7f", "<b>&amp;</b>", "héllo ±3%",
	"bad\xffutf8\xc3", "line\u2028sep\u2029", "emoji 🚀", "`code` @mention",
}

var jsonFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.1, 119.03999999999999, 1e-6, 9.99e-7, 1e-7, -1e-9, 1e20, 1e21, -1.5e300,
	math.SmallestNonzeroFloat64, math.MaxFloat64, 123456789.125,
}

// fillValue sets every exported field reachable from v to a value chosen
// by rng (sometimes the zero value, sometimes nil, sometimes empty), so a
// field added to the report types but not to report_json.go shows up as a
// difference.
func fillValue(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(jsonStrings[rng.IntN(len(jsonStrings))])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int:
		v.SetInt(int64(rng.IntN(41) - 20))
	case reflect.Float64:
		v.SetFloat(jsonFloats[rng.IntN(len(jsonFloats))])
	case reflect.Pointer:
		if rng.IntN(4) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fillValue(rng, p.Elem(), depth)
		v.Set(p)
	case reflect.Slice:
		switch rng.IntN(5) {
		case 0:
			v.SetZero()
			return
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		n := 1 + rng.IntN(4)
		if depth > 2 {
			n = 1
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fillValue(rng, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		switch rng.IntN(4) {
		case 0:
			v.SetZero()
			return
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
			return
		}
		m := reflect.MakeMap(v.Type())
		for range 1 + rng.IntN(4) {
			k := reflect.New(v.Type().Key()).Elem()
			fillValue(rng, k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			fillValue(rng, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillValue(rng, v.Field(i), depth+1)
			}
		}
	default:
		panic("fillValue: no case for " + v.Type().String())
	}
}

func TestReportJSONMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range 2000 {
		var r Report
		fillValue(rng, reflect.ValueOf(&r).Elem(), 0)
		want, werr := encodingJSON(t, &r)
		got, gerr := handJSON(&r)
		if werr != nil {
			t.Fatalf("case %d: encoding/json failed: %v", i, werr)
		}
		if gerr != nil || !bytes.Equal(got, want) {
			t.Fatalf("case %d: WriteJSON differs from encoding/json (err %v)\n got: %s\nwant: %s", i, gerr, got, want)
		}
	}
	var r *Report
	want, _ := encodingJSON(t, r)
	if got, _ := handJSON(r); !bytes.Equal(got, want) {
		t.Errorf("nil report: got %q, want %q", got, want)
	}
}

func TestReportJSONNonFinite(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, r := range []*Report{
			{Checks: []CheckResult{{History: []Point{{Commit: "a", Value: v}}}}},
			{Checks: []CheckResult{{Z: &v}}},
		} {
			_, werr := encodingJSON(t, r)
			got, gerr := handJSON(r)
			var ue *json.UnsupportedValueError
			if !errors.As(gerr, &ue) || werr == nil || gerr.Error() != werr.Error() {
				t.Errorf("value %v: WriteJSON error %v, encoding/json %v", v, gerr, werr)
			}
			if len(got) != 0 {
				t.Errorf("value %v: WriteJSON wrote %q before failing", v, got)
			}
		}
	}
}

// TestReportJSONLarge: a report of many checks, written out in several
// buffers, is still encoding/json's bytes.
func TestReportJSONLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	r := &Report{Verdict: Fail, Head: "h"}
	for i := range 300 {
		var c CheckResult
		fillValue(rng, reflect.ValueOf(&c).Elem(), 0)
		c.History = make([]Point, 21)
		for j := range c.History {
			c.History[j] = Point{Commit: strings.Repeat("ab", 20), Value: float64(i*j) / 7}
		}
		r.Checks = append(r.Checks, c)
	}
	want, err := encodingJSON(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 4*flushAt {
		t.Fatalf("only %d bytes: not several buffers", len(want))
	}
	got, err := handJSON(r)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("WriteJSON of %d bytes differs from encoding/json (err %v)", len(want), err)
	}
	// A failing writer: its error comes back, and nothing more is written.
	fw := &failWriter{n: 2}
	if err := r.WriteJSON(fw); !errors.Is(err, errWrite) || fw.calls != 3 {
		t.Errorf("WriteJSON to a failing writer: %v after %d writes, want errWrite after 3", err, fw.calls)
	}
}

var errWrite = errors.New("disk full")

type failWriter struct{ n, calls int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.calls++
	if w.calls > w.n {
		return 0, errWrite
	}
	return len(p), nil
}
