package durable

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/hashicorp/go-hclog"
)

// pebbleLogger routes Pebble's log lines to hclog.
type pebbleLogger struct{ log hclog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.Info(fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...))
}

// Fatalf is called by Pebble on a broken invariant; Pebble's own logger
// exits the process. Panicking keeps the stack trace.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.log.Error("fatal: " + msg)
	panic("durable: pebble: " + msg)
}

// eventListener logs the events that matter to an operator: background
// errors and detected corruption (Pebble's default for the latter is
// Fatalf; the read that found it returns an error anyway, so a log line is
// enough and the caller decides), WAL replay at open is logged by Pebble
// itself through Infof.
func eventListener(log hclog.Logger) *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) { log.Error("background error", "error", err) },
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			log.Error("data corruption", "path", info.Path, "error", info.Details)
		},
		WriteStallBegin: func(info pebble.WriteStallBeginInfo) { log.Debug("write stall begins", "reason", info.Reason) },
		WriteStallEnd:   func() { log.Debug("write stall ends") },
	}
}
