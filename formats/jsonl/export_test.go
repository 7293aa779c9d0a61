package jsonl

// SetReading makes Parse read sequentially (seq) or in parallel in chunks
// of chunk bytes, and returns what restores the defaults: for the tests of
// package jsonl_test, which read other formats to make JSONL.
func SetReading(seq bool, chunk int) (restore func()) {
	s, c := forceSequential, chunkSize
	forceSequential, chunkSize = seq, chunk
	return func() { forceSequential, chunkSize = s, c }
}
