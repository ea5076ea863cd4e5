package aws

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/lambdaworkflow/workflow/world"
)

// A World's stream readers share one WebSocket connection to the Event API
// (https://docs.aws.amazon.com/appsync/latest/eventapi/event-api-websocket-protocol.html):
// each stream's channel is subscribed once, however many readers wait on
// it, and unsubscribed when the last one leaves. The connection is made
// for the first reader, made again with backoff when it drops (a
// subscription made again wakes its readers, since a write may have gone
// unannounced meanwhile), and closed after a minute without readers.

const (
	// subscribeWait bounds how long a reader waits for its subscription
	// before its first read; past it the reader polls, and a subscription
	// made later wakes it.
	subscribeWait = 5 * time.Second
	// ackWait bounds the wait for the connection's acknowledgement.
	ackWait = 10 * time.Second
	// unusedAfter is how long a connection without readers stays open,
	// so that readers coming one after another reuse it.
	unusedAfter = time.Minute
	// Reconnection backoff, doubled from the first to the last.
	reconnectFirst = 100 * time.Millisecond
	reconnectLast  = 30 * time.Second
)

// subscriptions is a World's connection to its Event API and the channels
// its readers wait on.
type subscriptions struct {
	e        *streamEvents
	mu       sync.Mutex
	channels map[string]*channelReaders
	running  bool // the connection's goroutine runs
	closed   bool
	// unusedFor is unusedAfter (tests shorten it); conn is the open
	// connection, nil between connections.
	unusedFor time.Duration
	conn      *websocket.Conn
	kick      chan struct{} // the channels changed; buffered
	stop      chan struct{} // closed by close
	done      sync.WaitGroup
}

// channelReaders are the readers of one channel.
type channelReaders struct {
	id      string // the subscription's id on the connection
	readers map[*subscription]struct{}
	settled bool          // subscribed once, or failed for now
	ready   chan struct{} // closed when settled
}

func newSubscriptions(e *streamEvents) *subscriptions {
	return &subscriptions{e: e, channels: map[string]*channelReaders{}, kick: make(chan struct{}, 1), stop: make(chan struct{}), unusedFor: unusedAfter}
}

// SubscribeStream implements world.StreamSubscriber if the World has an
// EventAPI; without one the subscription never fires and readers poll.
func (w *World) SubscribeStream(ctx context.Context, name string) world.StreamSubscription {
	if w.events == nil {
		return &subscription{moved: make(chan struct{})}
	}
	return w.events.subs.subscribe(ctx, name)
}

var _ world.StreamSubscriber = (*World)(nil)

func (s *subscriptions) subscribe(ctx context.Context, stream string) world.StreamSubscription {
	sub := &subscription{s: s, channel: s.e.channel(stream), moved: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return sub
	}
	c := s.channels[sub.channel]
	if c == nil {
		c = &channelReaders{id: rand.Text(), readers: map[*subscription]struct{}{}, ready: make(chan struct{})}
		s.channels[sub.channel] = c
	}
	c.readers[sub] = struct{}{}
	if !s.running {
		s.running = true
		s.done.Add(1)
		go s.run()
	}
	s.mu.Unlock()
	s.changed()
	t := time.NewTimer(subscribeWait)
	defer t.Stop()
	select {
	case <-c.ready:
	case <-t.C:
	case <-ctx.Done():
	}
	return sub
}

func (s *subscriptions) leave(sub *subscription) {
	s.mu.Lock()
	if c := s.channels[sub.channel]; c != nil {
		delete(c.readers, sub)
		if len(c.readers) == 0 {
			delete(s.channels, sub.channel)
		}
	}
	s.mu.Unlock()
	s.changed()
}

func (s *subscriptions) changed() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// close closes the connection and waits for its goroutine.
func (s *subscriptions) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
	s.mu.Unlock()
	s.done.Wait()
}

// run keeps a connection open while there are readers.
func (s *subscriptions) run() {
	defer s.done.Done()
	backoff := reconnectFirst
	for {
		connected, err := s.session()
		if err == nil {
			return // unused, or the World closed
		}
		slog.Debug("workflow: stream events connection lost; readers poll", "err", err)
		s.settleAll()
		if connected {
			backoff = reconnectFirst
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-s.stop:
			t.Stop()
		}
		backoff = min(2*backoff, reconnectLast)
		if s.unused() {
			return
		}
	}
}

// unused reports whether the connection has no reason to stay, and if so
// marks its goroutine stopped.
func (s *subscriptions) unused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.channels) == 0 {
		s.running = false
		return true
	}
	return false
}

// settleAll lets the readers waiting for their subscription go and poll.
func (s *subscriptions) settleAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.channels {
		if !c.settled {
			c.settled = true
			close(c.ready)
		}
	}
}

// frame is a message of the WebSocket protocol, either way.
type frame struct {
	Type                string            `json:"type"`
	ID                  string            `json:"id,omitempty"`
	Channel             string            `json:"channel,omitempty"`
	Authorization       map[string]string `json:"authorization,omitempty"`
	Event               json.RawMessage   `json:"event,omitempty"`
	ConnectionTimeoutMs int64             `json:"connectionTimeoutMs,omitempty"`
	Errors              json.RawMessage   `json:"errors,omitempty"`
}

// session connects, subscribes the channels and serves the connection
// until it fails (err), or ends because it is unused or the World closed
// (nil). connected reports whether it got as far as the acknowledgement.
func (s *subscriptions) session() (connected bool, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	conn, err := s.dial(ctx)
	if err != nil {
		return false, err
	}
	defer conn.CloseNow()
	s.setConn(conn)
	defer s.setConn(nil)
	frames, failed := make(chan frame), make(chan error, 1)
	go readFrames(ctx, conn, frames, failed)
	if err := writeFrame(ctx, conn, frame{Type: "connection_init"}); err != nil {
		return false, err
	}
	keepAlive, err := awaitAck(ctx, frames, failed)
	if err != nil {
		return false, err
	}
	sent := map[string]string{} // channel -> id subscribed on this connection
	silence := time.NewTimer(keepAlive)
	defer silence.Stop()
	var unused <-chan time.Time
	for {
		idle, err := s.sync(ctx, conn, sent)
		if err != nil {
			return true, err
		}
		switch {
		case idle && unused == nil:
			unused = time.After(s.unusedFor)
		case !idle:
			unused = nil
		}
		select {
		case <-s.kick:
		case f := <-frames:
			silence.Reset(keepAlive)
			if err := s.handle(f, sent); err != nil {
				return true, err
			}
		case err := <-failed:
			return true, err
		case <-silence.C:
			return true, fmt.Errorf("no keep-alive for %v", keepAlive)
		case <-unused:
			if s.unused() {
				_ = conn.Close(websocket.StatusNormalClosure, "unused")
				return true, nil
			}
			unused = nil
		case <-ctx.Done():
			_ = conn.Close(websocket.StatusNormalClosure, "closed")
			return true, nil
		}
	}
}

func (s *subscriptions) setConn(conn *websocket.Conn) {
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
}

// dial opens the WebSocket, authorized by a signed request for "{}" in
// its header subprotocol.
func (s *subscriptions) dial(ctx context.Context) (*websocket.Conn, error) {
	auth, err := s.e.authorization(ctx, []byte("{}"))
	if err != nil {
		return nil, err
	}
	header, err := json.Marshal(auth)
	if err != nil {
		return nil, err
	}
	target := "wss://" + s.e.api.RealtimeDomain + "/event/realtime"
	if u := s.e.endpoint; u != nil {
		target = strings.Replace(u.Scheme, "http", "ws", 1) + "://" + u.Host + "/event/realtime"
	}
	s.e.calls.add(callConnect)
	ctx, cancel := context.WithTimeout(ctx, ackWait)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, target, &websocket.DialOptions{
		Host:         s.e.api.RealtimeDomain,
		Subprotocols: []string{"aws-appsync-event-ws", "header-" + base64.RawURLEncoding.EncodeToString(header)},
	})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", s.e.api.RealtimeDomain, err)
	}
	return conn, nil
}

func readFrames(ctx context.Context, conn *websocket.Conn, frames chan<- frame, failed chan<- error) {
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			failed <- err
			return
		}
		var f frame
		if err := json.Unmarshal(data, &f); err != nil {
			failed <- fmt.Errorf("undecodable message %.200q: %w", data, err)
			return
		}
		select {
		case frames <- f:
		case <-ctx.Done():
			return
		}
	}
}

func writeFrame(ctx context.Context, conn *websocket.Conn, f frame) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return conn.Write(ctx, websocket.MessageText, data)
}

// awaitAck waits for the connection's acknowledgement and returns the
// longest silence it allows between keep-alives.
func awaitAck(ctx context.Context, frames <-chan frame, failed <-chan error) (time.Duration, error) {
	t := time.NewTimer(ackWait)
	defer t.Stop()
	for {
		select {
		case f := <-frames:
			switch f.Type {
			case "connection_ack":
				return max(time.Duration(f.ConnectionTimeoutMs)*time.Millisecond, 10*time.Second), nil
			case "connection_error", "error":
				return 0, fmt.Errorf("connection refused: %s", f.Errors)
			}
		case err := <-failed:
			return 0, err
		case <-t.C:
			return 0, errors.New("no connection_ack")
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// sync subscribes the channels that have readers and are not subscribed
// on the connection, and unsubscribes those that have none. It reports
// whether no channel has readers.
func (s *subscriptions) sync(ctx context.Context, conn *websocket.Conn, sent map[string]string) (idle bool, err error) {
	s.mu.Lock()
	want := make(map[string]string, len(s.channels))
	for ch, c := range s.channels {
		want[ch] = c.id
	}
	s.mu.Unlock()
	for ch, id := range sent {
		if want[ch] != id {
			delete(sent, ch)
			if err := writeFrame(ctx, conn, frame{Type: "unsubscribe", ID: id}); err != nil {
				return false, err
			}
		}
	}
	for ch, id := range want {
		if sent[ch] == id {
			continue
		}
		body, err := json.Marshal(map[string]string{"channel": ch})
		if err != nil {
			return false, err
		}
		auth, err := s.e.authorization(ctx, body)
		if err != nil {
			return false, err
		}
		s.e.calls.add(callSubscribe)
		if err := writeFrame(ctx, conn, frame{Type: "subscribe", ID: id, Channel: ch, Authorization: auth}); err != nil {
			return false, err
		}
		sent[ch] = id
	}
	return len(want) == 0, nil
}

// handle acts on a message from the API.
func (s *subscriptions) handle(f frame, sent map[string]string) error {
	switch f.Type {
	case "data":
		for ch, id := range sent {
			if id == f.ID {
				s.announce(ch, f.ID, announced(f.Event))
			}
		}
	case "subscribe_success":
		s.subscribed(f.ID, true)
	case "subscribe_error":
		slog.Debug("workflow: stream events subscription refused; its readers poll", "errors", string(f.Errors))
		s.subscribed(f.ID, false)
	case "connection_error", "error":
		return fmt.Errorf("stream events: %s: %s", f.Type, f.Errors)
	}
	return nil
}

// announced decodes the highest next index in a data message's event (a
// JSON string, or a list of them), past every index for a close; 0 if
// none decodes, which still wakes the readers to read.
func announced(raw json.RawMessage) int64 {
	var events []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		events = []string{one}
	} else {
		_ = json.Unmarshal(raw, &events)
	}
	var next int64
	for _, e := range events {
		var a announcement
		switch {
		case json.Unmarshal([]byte(e), &a) != nil:
		case a.Closed:
			next = math.MaxInt64
		default:
			next = max(next, a.Next)
		}
	}
	return next
}

// announce wakes the channel's readers whose stream's end is past where
// they read.
func (s *subscriptions) announce(channel, id string, next int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.channels[channel]; c != nil && c.id == id {
		for sub := range c.readers {
			sub.announce(next)
		}
	}
}

// subscribed settles the subscription id. One settled before (by a
// failure, or on a connection since lost) wakes its readers: a write may
// have gone unannounced while it lapsed.
func (s *subscriptions) subscribed(id string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.channels {
		if c.id != id {
			continue
		}
		if !c.settled {
			c.settled = true
			close(c.ready)
			continue
		}
		if ok {
			for sub := range c.readers {
				sub.announce(-1)
			}
		}
	}
}

// subscription is one reader's; see world.StreamSubscription.
type subscription struct {
	s       *subscriptions // nil: never fires
	channel string
	mu      sync.Mutex
	next    int64         // the highest next index announced
	lapsed  bool          // the subscription was made again since Moved
	moved   chan struct{} // closed and replaced at each announcement
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Moved implements world.StreamSubscription.
func (sub *subscription) Moved(from int64) <-chan struct{} {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.next > from || sub.lapsed {
		sub.lapsed = false
		return closedChan
	}
	return sub.moved
}

// announce wakes the reader; next < 0 says only that it may have missed
// an announcement.
func (sub *subscription) announce(next int64) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	sub.next = max(sub.next, next)
	sub.lapsed = sub.lapsed || next < 0
	close(sub.moved)
	sub.moved = make(chan struct{})
}

// Close implements world.StreamSubscription.
func (sub *subscription) Close() {
	if sub.s != nil {
		sub.s.leave(sub)
	}
}
