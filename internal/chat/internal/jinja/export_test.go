package jinja

import "time"

// Strftime formats t as strftime_now formats the clock, for tests that pin it.
func Strftime(t time.Time, format string) string { return t.Format(strftimeToGo(format)) }
