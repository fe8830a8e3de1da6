package x86

import "math"

func f32frombits(b uint32) float32 { return math.Float32frombits(b) }
func f64frombits(b uint64) float64 { return math.Float64frombits(b) }
func f32bits(f float32) uint32     { return math.Float32bits(f) }
func f64bits(f float64) uint64     { return math.Float64bits(f) }
