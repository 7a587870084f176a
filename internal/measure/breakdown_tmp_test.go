package measure

import (
	"testing"
	"time"

	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/payload"
)

func BenchmarkBreakdownTmp(b *testing.B) {
	m := defaultMeasurer(b)
	bodies, texts := benchPayloads(b, m, 1000, 20)
	tok := m.opts.Tokenizer
	var tParse, tExtract, tRender, tCount, tAppend, tTok, tTok2, tRecord time.Duration
	for i := 0; i < b.N; i++ {
		for j, body := range bodies {
			t0 := time.Now()
			obj, _ := jsonobj.Parse(body)
			t1 := time.Now()
			ex, _ := payload.ExtractObject(obj)
			t2 := time.Now()
			s, _ := m.render(chatView(ex, "", nil), ex, true)
			t3 := time.Now()
			tok.Count(texts[j])
			t3b := time.Now()
			tTok += t3b.Sub(t3)
			t3 = time.Now()
			n := tok.Count(s)
			t4 := time.Now()
			jsonobj.AppendMember(body, "isl", n)
			t5 := time.Now()
			tok.Count(texts[j])
			t6 := time.Now()
			tTok2 += t6.Sub(t5)
			m.Record(body)
			t7 := time.Now()
			tParse += t1.Sub(t0)
			tExtract += t2.Sub(t1)
			tRender += t3.Sub(t2)
			tCount += t4.Sub(t3)
			tAppend += t5.Sub(t4)
			tRecord += t7.Sub(t6)
		}
	}
	n := float64(b.N * len(bodies))
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / n }
	b.ReportMetric(us(tParse), "parse_us")
	b.ReportMetric(us(tExtract), "extract_us")
	b.ReportMetric(us(tRender), "render_us")
	b.ReportMetric(us(tCount), "countRendered_us")
	b.ReportMetric(us(tAppend), "append_us")
	b.ReportMetric(us(tTok), "countContentAfterRender_us")
	b.ReportMetric(us(tTok2), "countContentWarm_us")
	b.ReportMetric(us(tRecord), "record_us")
}

func BenchmarkRenderTmp(b *testing.B) {
	m := defaultMeasurer(b)
	bodies, _ := benchPayloads(b, m, 1000, 20)
	var exs []*payload.Extracted
	for _, body := range bodies {
		obj, _ := jsonobj.Parse(body)
		ex, _ := payload.ExtractObject(obj)
		exs = append(exs, ex)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ex := exs[i%len(exs)]
		m.render(chatView(ex, "", nil), ex, true)
	}
}

func BenchmarkParseExtractTmp(b *testing.B) {
	m := defaultMeasurer(b)
	bodies, _ := benchPayloads(b, m, 1000, 20)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		obj, _ := jsonobj.Parse(bodies[i%len(bodies)])
		payload.ExtractObject(obj)
	}
}
