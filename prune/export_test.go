package prune

// SetReduceKnown switches the reduced version order on or off, for tests
// that compare it with the full one; it returns the previous setting.
func SetReduceKnown(on bool) bool {
	was := reduceKnown
	reduceKnown = on
	return was
}
