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
