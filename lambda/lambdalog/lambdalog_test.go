package lambdalog

import (
	"log/slog"
	"testing"
)

func TestLevelReadsLambdasNames(t *testing.T) {
	for in, want := range map[string]slog.Level{
		"TRACE": slog.LevelDebug, "debug": slog.LevelDebug, "INFO": slog.LevelInfo,
		"WARN": slog.LevelWarn, "ERROR": slog.LevelError, "FATAL": slog.LevelError, "": slog.LevelInfo,
	} {
		if got := Level(in); got != want {
			t.Errorf("Level(%q) = %v, want %v", in, got, want)
		}
	}
}
