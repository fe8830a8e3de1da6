package flows

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// Profile is a flow's composite profile (§4.1 of the paper): for each
// call path, the fraction of the flow's instructions spent with it on
// top (the time profile), and the fraction of the flow's bytes it sent
// (the communication profile), concatenated.
type Profile map[string]float64

// ProfileOf computes f's profile.
func ProfileOf(f *Flow) Profile {
	p := Profile{}
	for _, ps := range f.Paths {
		k := strings.Join(ps.Path, " → ")
		if f.Instructions > 0 && ps.Self > 0 {
			p["time "+k] += float64(ps.Self) / float64(f.Instructions)
		}
		if f.BytesSent > 0 && ps.Sent > 0 {
			p["sent "+k] += float64(ps.Sent) / float64(f.BytesSent)
		}
	}
	return p
}

// CoverageOf is f's coverage profile (§4.1's alternative): 1 for each
// call path the flow ran in or called, whatever the time it took; the
// distance between two is the number of paths only one of them ran.
func CoverageOf(f *Flow) Profile {
	p := Profile{}
	for _, ps := range f.Paths {
		if ps.Self > 0 || ps.Count > 0 {
			p["ran "+strings.Join(ps.Path, " → ")] = 1
		}
	}
	return p
}

// RankOptions configure RankWith.
type RankOptions struct {
	// Coverage compares coverage profiles (CoverageOf) instead of the
	// time and communication profiles.
	Coverage bool
}

// Distance is the Manhattan distance between two profiles.
func Distance(a, b Profile) float64 {
	d := 0.0
	for k, v := range a {
		d += math.Abs(v - b[k])
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			d += math.Abs(v)
		}
	}
	return d
}

// Candidate is a flow of some recording, to rank.
type Candidate struct {
	Trace string
	Flow  *Flow
}

// Suspect is a ranked flow.
type Suspect struct {
	Trace string  `json:"trace"`
	Flow  *Flow   `json:"flow"`
	Score float64 `json:"score"`
	// Nearest is the flow it is closest to ("trace#id").
	Nearest  string  `json:"nearest"`
	Distance float64 `json:"nearest_distance"`
	// Top is the call path whose share differs most from the reference
	// (the common behaviour, or the nearest normal flow).
	Top string `json:"top_difference"`
}

// Rank scores every candidate and orders them most suspect first. With
// normal flows, a flow's score is its distance to the nearest of them
// (known-normal behaviour); without, it is the median of its distances
// to the other candidates (common behaviour: a flow unlike most others
// scores high even when two anomalies resemble each other).
func Rank(cands, normals []Candidate) []Suspect {
	return RankWith(cands, normals, RankOptions{})
}

// RankWith is Rank with a choice of profile.
func RankWith(cands, normals []Candidate, opts RankOptions) []Suspect {
	profile := ProfileOf
	if opts.Coverage {
		profile = CoverageOf
	}
	profs := make([]Profile, len(cands))
	for i, c := range cands {
		profs[i] = profile(c.Flow)
	}
	nprofs := make([]Profile, len(normals))
	for i, c := range normals {
		nprofs[i] = profile(c.Flow)
	}
	out := make([]Suspect, len(cands))
	for i, c := range cands {
		s := Suspect{Trace: c.Trace, Flow: c.Flow, Distance: math.Inf(1)}
		var ds []float64
		var ref Profile
		consider := func(p Profile, name string) {
			d := Distance(profs[i], p)
			ds = append(ds, d)
			if d < s.Distance {
				s.Distance, s.Nearest, ref = d, name, p
			}
		}
		if len(normals) > 0 {
			for j, n := range normals {
				consider(nprofs[j], flowName(n))
			}
			s.Score = s.Distance
		} else {
			for j, o := range cands {
				if j != i {
					consider(profs[j], flowName(o))
				}
			}
			sort.Float64s(ds)
			if len(ds) > 0 {
				s.Score = ds[len(ds)/2]
				if len(ds)%2 == 0 {
					s.Score = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
				}
			}
		}
		if math.IsInf(s.Distance, 1) {
			s.Distance = 0
		}
		s.Top = topDifference(profs[i], ref)
		out[i] = s
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

func flowName(c Candidate) string {
	return c.Trace + "#" + strconv.Itoa(c.Flow.ID)
}

// topDifference names the profile component that differs most.
func topDifference(p, ref Profile) string {
	best, bk := 0.0, ""
	for k, v := range p {
		if d := math.Abs(v - ref[k]); d > best || d == best && better(k, bk, ref) {
			best, bk = d, k
		}
	}
	// On a tie, what the flow did over what it did not do: the path it
	// ran that the reference lacks (coverage profiles tie often).
	for k, v := range ref {
		if _, ok := p[k]; !ok && (v > best || v == best && bk == "") {
			best, bk = v, k
		}
	}
	return bk
}

// better orders tied profile components: those the reference lacks
// first, then by name.
func better(k, bk string, ref Profile) bool {
	_, kin := ref[k]
	_, bin := ref[bk]
	if kin != bin {
		return !kin
	}
	return k < bk
}
