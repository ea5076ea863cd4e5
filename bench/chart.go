package bench

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// chartRows are the overview's rows, top to bottom: the metrics with
// targets, as in the overview chart of
// https://useworkflow.dev/docs/performance, and the fan-out's first start.
var chartRows = []struct{ key, label string }{
	{"ttfs", "Time to first step"},
	{"stso", "Step-to-step (5 steps)"},
	{"long_stso_1001_1020", "Step-to-step, steps 1,001–1,020"},
	{"long_overhead", "1,020 steps, less in-step time"},
	{"fan_first", "Fan-out 64: first start"},
	{"fan_last", "Fan-out 64: last start"},
	{"fan_join", "Fan-out 64: join"},
	{"ttr", "Time to resume"},
	{"ctt", "Chunk trip time"},
}

var worldColors = map[string]color.Color{
	"memory":         color.RGBA{0x88, 0x88, 0x88, 0xff},
	"local":          color.RGBA{0x1f, 0x77, 0xb4, 0xff},
	"local-fullsync": color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	"aws":            color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	"aws-inregion":   color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	"dbos":           color.Black,
	"go-workflows":   color.RGBA{0x94, 0x67, 0xbd, 0xff},
}

// WriteChart draws the overview: each World's p75 (dots) and each peer's
// (rings) on every metric with a target, and the target (red bar), on a
// log scale. path's extension picks the format (.png, .svg).
func WriteChart(path string, results []*Result, title string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "p75, milliseconds (log scale); 1,020 steps: median run"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	n := len(chartRows)
	var ticks []plot.Tick
	for i, r := range chartRows {
		ticks = append(ticks, plot.Tick{Value: float64(n - 1 - i), Label: r.label})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.7, float64(n)-0.3
	lo, hi := math.Inf(1), math.Inf(-1)
	track := func(v float64) float64 {
		v = math.Max(v, 0.001)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		return v
	}

	var ran []*Result
	for _, r := range results {
		if r.Skipped == "" {
			ran = append(ran, r)
		}
	}
	for wi, r := range ran {
		var xys plotter.XYs
		for i, row := range chartRows {
			v, ok := chartValue(r, row.key)
			if !ok {
				continue
			}
			offset := (float64(wi) - float64(len(ran)-1)/2) * 0.12
			xys = append(xys, plotter.XY{X: track(v), Y: float64(n-1-i) + offset})
		}
		if len(xys) == 0 {
			continue
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		var shape draw.GlyphDrawer = draw.CircleGlyph{}
		if r.Peer {
			shape = draw.RingGlyph{}
		}
		s.GlyphStyle = draw.GlyphStyle{Color: colorOf(r.World), Radius: vg.Points(4), Shape: shape}
		p.Add(s)
		p.Legend.Add(r.World, s)
	}
	var targets plotter.XYs
	for i, row := range chartRows {
		for _, t := range Targets {
			if t.Metric == row.key && t.Stat != "ratio" {
				targets = append(targets, plotter.XY{X: track(t.Max), Y: float64(n - 1 - i)})
			}
		}
	}
	if len(targets) > 0 {
		s, err := plotter.NewScatter(targets)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{0xd6, 0x27, 0x28, 0xff}, Radius: vg.Points(7), Shape: barGlyph{}}
		p.Add(s)
		p.Legend.Add("target", s)
	}
	if !math.IsInf(lo, 0) {
		p.X.Min, p.X.Max = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	}
	p.Legend.Top = false // bottom right: the slow end of the fast rows
	p.Legend.Left = false
	p.Title.Padding = vg.Points(8)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	if err := p.Save(9*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// chartValue is the number a row plots for a result: p75, or the median
// run for the 1,020-step run.
func chartValue(r *Result, key string) (float64, bool) {
	m, ok := r.Metric(key)
	if !ok {
		return 0, false
	}
	if key == "long_overhead" {
		return m.Stats.P50, true
	}
	return m.Stats.P75, true
}

func colorOf(world string) color.Color {
	if c, ok := worldColors[world]; ok {
		return c
	}
	return color.RGBA{0x94, 0x67, 0xbd, 0xff}
}

// barGlyph is a vertical bar: a target's threshold.
type barGlyph struct{}

func (barGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(2)})
	var path vg.Path
	path.Move(vg.Point{X: pt.X, Y: pt.Y - sty.Radius})
	path.Line(vg.Point{X: pt.X, Y: pt.Y + sty.Radius})
	c.Stroke(path)
}
