package engine

import (
	"context"
	"errors"
	"net/url"
	"sync"

	"github.com/lambdaworkflow/workflow/world"
)

// Stream layout. A run's own streams hang under its ID, with an index of
// the namespaces its steps opened, because steps write streams without
// telling the log and the run must still close them when it ends. A reply
// hangs under the resume that asked for it, whose ID is unguessable.
//
//	runs/{runID}/stream-index       one chunk per namespace opened (repeats allowed)
//	runs/{runID}/stream/{namespace} the chunks of that namespace
//	replies/{resumeID}              the frames of one resume's reply

// RunStream names the run's stream in namespace; "" is the default one.
func RunStream(runID, namespace string) string {
	return world.RunStreamPrefix(runID) + "stream/" + url.PathEscape(namespaceOrDefault(namespace))
}

// ReplyStream names the reply stream of one resume.
func ReplyStream(resumeID string) string { return "replies/" + resumeID }

func runStreamIndex(runID string) string { return world.RunStreamPrefix(runID) + "stream-index" }

func namespaceOrDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// OpenRunStream records that a step writes to the run's stream in
// namespace, so that the stream is closed when the run ends. It fails with
// world.ErrStreamClosed once the run has ended.
func OpenRunStream(ctx context.Context, w world.Streams, runID, namespace string) error {
	return w.WriteStream(ctx, runStreamIndex(runID), [][]byte{[]byte(namespaceOrDefault(namespace))})
}

// closeStreams ends a finished run's streams: every namespace its steps
// opened, and the reply streams of the messages it received, so a caller
// still waiting learns that no reply will come. The index is closed first,
// so a step still running cannot open a namespace this pass would miss.
// It returns the names of the streams it closed.
func closeStreams(ctx context.Context, w world.Streams, unsynced world.UnsyncedReader, runID string, replies []string) ([]string, error) {
	index := runStreamIndex(runID)
	if err := w.CloseStream(ctx, index); err != nil {
		return nil, err
	}
	opened, _, err := unsynced.ReadStreamUnsynced(ctx, index, 0)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, ns := range opened {
		names[RunStream(runID, string(ns))] = true
	}
	for _, r := range replies {
		names[ReplyStream(r)] = true
	}
	closed := []string{index}
	for name := range names {
		closed = append(closed, name)
	}
	return closed, closeAll(ctx, w, closed[1:])
}

// closingAtOnce bounds how many streams closeAll closes at once: a run
// that answered a hundred callers has a hundred reply streams, each a
// round trip or two on a remote World.
const closingAtOnce = 8

// closeAll closes names, closingAtOnce at a time, and returns every
// failure.
func closeAll(ctx context.Context, w world.Streams, names []string) error {
	errs := make([]error, len(names))
	sem := make(chan struct{}, closingAtOnce)
	var wg sync.WaitGroup
	for i, name := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = w.CloseStream(ctx, name)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
