package main

import (
	"fmt"
	"math"
	"strings"
)

func find(sums []summary, server string, c int) (summary, bool) {
	for _, s := range sums {
		if s.Server == server && s.Conc == c {
			return s, true
		}
	}
	return summary{}, false
}

func comma(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func ms(us float64) string {
	switch {
	case us >= 10000:
		return fmt.Sprintf("%.0f", us/1000)
	case us >= 1000:
		return fmt.Sprintf("%.1f", us/1000)
	}
	return fmt.Sprintf("%.2f", us/1000)
}

// markdown renders the medians: throughput and latency per level, server
// CPU per request, peak RSS, ratios to bare and wymcp's ratio to each peer.
func markdown(specs []spec, levels []int, sums []summary, meta map[string]any) string {
	var b strings.Builder
	order := "each server's points in a row, servers in alternation"
	if meta["interleaved"] == true {
		order = "every server up at once, the points taken in turn"
	}
	fmt.Fprintf(&b, "## tools/call echo, medians of %v reps (%v warm-up + %v measured per point; %s)\n\n", meta["reps"], meta["warmup"], meta["duration"], order)
	model := fmt.Sprint(meta["cpu_model"])
	if c, _ := meta["caches"].(string); c != "" {
		model += " (" + c + ")"
	}
	fmt.Fprintf(&b, "%s, %v CPUs, %v, node %v; server on core %q, loader on core %q; Go servers GOMAXPROCS=1; request shape %v.\n\n",
		model, meta["cpus"], meta["go"], meta["node"], meta["server_core"], meta["loader_core"], meta["request_shape"])
	b.WriteString("Each cell: req/s (p50 / p99 / p99.9 latency, ms).\n\n| server | revision spoken |")
	for _, c := range levels {
		fmt.Fprintf(&b, " c=%d |", c)
	}
	b.WriteString(" server CPU µs/req (per c) | peak RSS MiB | errors |\n|---|---|")
	for range levels {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|---:|\n")
	for _, sp := range specs {
		fmt.Fprintf(&b, "| **%s** %s | %s |", sp.Name, sp.Desc, rev(sums, sp.Name))
		var cpu []string
		var rss float64
		var errs uint64
		for _, c := range levels {
			s, ok := find(sums, sp.Name, c)
			if !ok {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %s (%s / %s / %s) |", comma(s.RPS), ms(s.P50us), ms(s.P99us), ms(s.P999us))
			cpu = append(cpu, fmt.Sprintf("%.0f", s.ServerCPUus))
			rss = max(rss, s.RSSMiB)
			errs += s.Errors
		}
		fmt.Fprintf(&b, " %s | %.0f | %d |\n", strings.Join(cpu, "/"), rss, errs)
	}

	// Ratios to bare (throughput, then the tail), and wymcp against each peer.
	ratioTable(&b, "Throughput ÷ bare (p99 ÷ bare's p99 in brackets)", "server", "bare", specs, levels, sums,
		func(s, bare summary) (string, bool) {
			if bare.RPS == 0 || bare.P99us == 0 {
				return "", false
			}
			return fmt.Sprintf("%.2fx (%.2fx)", s.RPS/bare.RPS, s.P99us/bare.P99us), true
		})
	ratioTable(&b, "Tail ÷ bare's: p99 / p99.9 latency, and server CPU per request", "server", "bare", specs, levels, sums,
		func(s, bare summary) (string, bool) {
			if bare.P99us == 0 || bare.P999us == 0 || bare.ServerCPUus == 0 {
				return "", false
			}
			return fmt.Sprintf("%.2fx / %.2fx, CPU %.2fx", s.P99us/bare.P99us, s.P999us/bare.P999us, s.ServerCPUus/bare.ServerCPUus), true
		})
	ratioTable(&b, "Rep by rep, each rep's ratio to bare's in the same rep: throughput / p99 / server CPU per request, median [min–max]", "server", "bare", specs, levels, sums,
		func(s, _ summary) (string, bool) {
			if s.RPSPerRep == nil {
				return "", false
			}
			return s.RPSPerRep.String() + " / " + s.P99PerRep.String() + " / " + s.CPUPerRep.String(), true
		})
	ratioTable(&b, "wymcp throughput ÷ each server's", "vs", "wymcp", specs, levels, sums,
		func(s, w summary) (string, bool) {
			if s.RPS == 0 {
				return "", false
			}
			return fmt.Sprintf("%.2fx", w.RPS/s.RPS), true
		})
	b.WriteString("\nLoader CPU % of its core (median; near 100 means loader-bound) / other processes' CPU % during the point:\n\n")
	levelHeader(&b, "server", levels)
	for _, sp := range specs {
		fmt.Fprintf(&b, "| %s |", sp.Name)
		for _, c := range levels {
			s, ok := find(sums, sp.Name, c)
			if !ok {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %.0f / %.0f |", s.LoaderCPU, s.OtherCPU)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func rev(sums []summary, server string) string {
	for _, s := range sums {
		if s.Server == server {
			return s.Revision
		}
	}
	return "?"
}

var colors = map[string]string{
	"wymcp": "#d62728", "wymcp-auth": "#ff7f0e", "bare": "#555555", "gosdk": "#1f77b4", "mcpgo": "#2ca02c", "ts": "#9467bd",
	// -hop: the upstream alone, and the servers in front of it.
	"direct": "#555555", "gateway": "#d62728", "gateway-lean": "#ff7f0e", "gosdk-forward": "#1f77b4", "revproxy": "#2ca02c",
}

// chart draws throughput by concurrency per server: one panel, log y axis.
func chart(specs []spec, levels []int, sums []summary, meta map[string]any) string {
	const W, H = 760, 440
	var b strings.Builder
	svgOpen(&b, W, H)
	fmt.Fprintf(&b, `<text x="70" y="22" font-size="14" font-weight="bold">tools/call echo throughput (req/s, log scale), server on 1 core — medians of %v reps</text>`+"\n", meta["reps"])
	p := panel{left: 70, top: 40, w: W - 70 - 170, h: H - 40 - 50, levels: levels, format: comma}
	p.draw(&b, specs, sums, func(s summary) float64 { return s.RPS })
	legend(&b, specs, W-170+15, 50)
	b.WriteString("</svg>\n")
	return b.String()
}

// latencyChart draws latency under load by concurrency per server, in three
// panels side by side — p50, p99 and p99.9, in ms on a log axis — so that a
// tail that grows faster than its median shows.
func latencyChart(specs []spec, levels []int, sums []summary, meta map[string]any) string {
	const W, H, pw = 1130, 420, 270
	var b strings.Builder
	svgOpen(&b, W, H)
	fmt.Fprintf(&b, `<text x="60" y="22" font-size="14" font-weight="bold">tools/call echo latency under load (ms, log scale), server on 1 core — medians of %v reps</text>`+"\n", meta["reps"])
	for k, q := range []struct {
		name string
		v    func(summary) float64
	}{
		{"p50", func(s summary) float64 { return s.P50us / 1000 }},
		{"p99", func(s summary) float64 { return s.P99us / 1000 }},
		{"p99.9", func(s summary) float64 { return s.P999us / 1000 }},
	} {
		p := panel{left: 60 + k*(pw+50), top: 60, w: pw, h: H - 60 - 50, levels: levels, format: msLabel}
		fmt.Fprintf(&b, `<text x="%d" y="48" font-weight="bold">%s</text>`+"\n", p.left, q.name)
		p.draw(&b, specs, sums, q.v)
	}
	legend(&b, specs, W-140, 70)
	b.WriteString("</svg>\n")
	return b.String()
}

func msLabel(v float64) string {
	if v < 1 {
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
	}
	return comma(v)
}

func svgOpen(b *strings.Builder, w, h int) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
}

// panel is one plot: a value per server by concurrency level, evenly
// spaced levels on x, a log10 y axis fitted to the values (and to marks).
type panel struct {
	left, top, w, h int
	levels          []int
	format          func(float64) string
	// marks are horizontal reference lines (a goal, a published figure),
	// drawn dashed under the series and labelled at the right.
	marks []mark
}

// mark is a labelled horizontal line at value v.
type mark struct {
	v     float64
	label string
}

// series is one line of a panel: a value per level, 0 where there is none.
type series struct {
	name   string
	values []float64
}

func (p panel) draw(b *strings.Builder, specs []spec, sums []summary, value func(summary) float64) {
	var ss []series
	for _, sp := range specs {
		s := series{name: sp.Name, values: make([]float64, len(p.levels))}
		for i, c := range p.levels {
			if sm, ok := find(sums, sp.Name, c); ok {
				s.values[i] = value(sm)
			}
		}
		ss = append(ss, s)
	}
	p.drawSeries(b, ss)
}

func (p panel) drawSeries(b *strings.Builder, ss []series) {
	pw, ph := float64(p.w), float64(p.h)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, v := range s.values {
			if v > 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	for _, m := range p.marks {
		lo, hi = min(lo, m.v), max(hi, m.v)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 1, 10
	}
	ylo, yhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if yhi == ylo {
		yhi++
	}
	left, top := float64(p.left), float64(p.top)
	y := func(v float64) float64 { return top + ph*(1-(math.Log10(v)-ylo)/(yhi-ylo)) }
	x := func(i int) float64 {
		if len(p.levels) == 1 {
			return left + pw/2
		}
		return left + pw*float64(i)/float64(len(p.levels)-1)
	}
	for e := ylo; e <= yhi; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if math.Log10(v) > yhi+1e-9 {
				continue
			}
			yy := y(v)
			stroke := "#eeeeee"
			if m == 1 {
				stroke = "#cccccc"
			}
			fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="%s"/>`+"\n", left, left+pw, yy, yy, stroke)
			fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, yy+4, p.format(v))
		}
	}
	for i, c := range p.levels {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#eeeeee"/>`+"\n", x(i), x(i), top, top+ph)
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">c=%d</text>`+"\n", x(i), top+ph+18, c)
	}
	for _, m := range p.marks {
		yy := y(m.v)
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#000000" stroke-width="1" stroke-dasharray="2 3"/>`+"\n", left, left+pw, yy, yy)
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end" font-size="10">%s</text>`+"\n", left+pw, yy-3, m.label)
	}
	for _, s := range ss {
		col, dash := style(s.name)
		var pts []string
		for i, c := range p.levels {
			if v := s.values[i]; v > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s c=%d: %s</title></circle>`+"\n", x(i), y(v), col, s.name, c, p.format(v))
			}
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), col, dash)
	}
}

// style is a server's line colour and dash (the bare handler, the ceiling,
// is dashed).
func style(name string) (col, dash string) {
	col = colors[name]
	if col == "" {
		col = "#ff7f0e"
	}
	if name == "bare" || name == "direct" {
		dash = ` stroke-dasharray="6 4"`
	}
	return col, dash
}

func legend(b *strings.Builder, specs []spec, x, y int) {
	names := make([]string, len(specs))
	for k, sp := range specs {
		names[k] = sp.Name
	}
	legendNames(b, names, x, y)
}

func legendNames(b *strings.Builder, names []string, x, y int) {
	for k, name := range names {
		col, dash := style(name)
		ly := y + 22*k
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"%s/>`+"\n", x, x+25, ly, ly, col, dash)
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", x+31, ly+4, name)
	}
}

// levelHeader writes the header and alignment rows of a table with one
// column per concurrency level.
// ratioTable writes a table of every server but ref against ref, a column
// per concurrency level: each cell is cell(the server's point, ref's point),
// "–" where a point is missing or cell has no ratio (a zero divisor). It
// writes nothing when ref was not measured.
func ratioTable(b *strings.Builder, title, corner, ref string, specs []spec, levels []int, sums []summary, cell func(s, ref summary) (string, bool)) {
	if _, ok := find(sums, ref, levels[0]); !ok {
		return
	}
	fmt.Fprintf(b, "\n%s:\n\n", title)
	levelHeader(b, corner, levels)
	for _, sp := range specs {
		if sp.Name == ref {
			continue
		}
		fmt.Fprintf(b, "| %s |", sp.Name)
		for _, c := range levels {
			s, ok1 := find(sums, sp.Name, c)
			base, ok2 := find(sums, ref, c)
			text, ok3 := "", false
			if ok1 && ok2 {
				text, ok3 = cell(s, base)
			}
			if !ok3 {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(b, " %s |", text)
		}
		b.WriteString("\n")
	}
}

// String is the spread as the rep-by-rep table shows it: "0.95x [0.90–1.16]".
func (s *spread) String() string {
	return fmt.Sprintf("%.2fx [%.2f–%.2f]", s.Median, s.Min, s.Max)
}

func levelHeader(b *strings.Builder, first string, levels []int) {
	fmt.Fprintf(b, "| %s |", first)
	for _, c := range levels {
		fmt.Fprintf(b, " c=%d |", c)
	}
	b.WriteString("\n|---|")
	for range levels {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
}
