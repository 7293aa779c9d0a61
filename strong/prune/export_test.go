package prune

// SetReduceKnown switches the reduced version order on or off, for tests
// that compare it with the full one; it returns the previous setting.
func SetReduceKnown(on bool) bool {
	was := reduceKnown
	reduceKnown = on
	return was
}

// SetCompactDirty limits compaction to the keys that changed (on) or not,
// for tests that compare the two; it returns the previous setting.
func SetCompactDirty(on bool) bool {
	was := compactDirty
	compactDirty = on
	return was
}

// SetIncremental switches the incremental fill of bitset rows and the
// skipping of unchanged pairs on or off, for tests that compare them with
// full fills; it returns the previous setting.
func SetIncremental(on bool) bool {
	was := incrementalRows
	incrementalRows, skipUnchanged = on, on
	return was
}

// IncrementalCounts returns how many rows incremental fills kept and how
// many pairs passWW skipped, since the process began.
func IncrementalCounts() (rows, pairs int64) { return keptRows.Load(), skippedPairs.Load() }

// SetParallelPairs sets how many pairs make passWW use a second
// goroutine, for tests that compare it with one; it returns the previous
// setting.
func SetParallelPairs(n int64) int64 {
	was := parallelPairs
	parallelPairs = n
	return was
}
