package check

// SetUniformShortcut switches off (or on) deciding a mixed check whose
// transactions share one weak level at that level first, for tests that
// compare the mixed engine with the level's; it returns the previous
// setting.
func SetUniformShortcut(on bool) bool {
	was := uniformShortcut
	uniformShortcut = on
	return was
}
