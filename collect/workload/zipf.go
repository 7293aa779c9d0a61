package workload

import (
	"math"
	"math/rand/v2"
	"sort"
)

// zipf draws values 1…n with probability proportional to 1/i^theta. Unlike
// math/rand's Zipf it accepts any theta ≥ 0 (the paper's default is 0.5;
// theta 0 is uniform).
type zipf struct {
	cdf []float64 // cdf[i] = Σ_{j≤i+1} 1/j^theta
}

func newZipf(theta float64, n int64) *zipf {
	z := &zipf{cdf: make([]float64, n)}
	sum := 0.0
	for i := range z.cdf {
		sum += 1 / math.Pow(float64(i+1), theta)
		z.cdf[i] = sum
	}
	return z
}

func (z *zipf) draw(r *rand.Rand) int64 {
	u := r.Float64() * z.cdf[len(z.cdf)-1]
	i := sort.SearchFloat64s(z.cdf, u)
	if i == len(z.cdf) {
		i--
	}
	return int64(i) + 1
}
