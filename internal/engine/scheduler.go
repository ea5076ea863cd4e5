package engine

import (
	"fmt"
	"runtime/debug"
)

// The scheduler runs a workflow's coroutines one at a time, in a fixed
// order, so that replaying the same events always produces the same calls.
// Each coroutine is a goroutine that only runs while it holds the baton; it
// hands the baton back whenever it blocks on a condition.
type scheduler struct {
	coroutines []*coroutine
	current    *coroutine
	baton      chan struct{} // a coroutine gives control back to the scheduler
	unwinding  bool
	// crash holds the first panic raised by workflow code, with its stack.
	crash error
}

type coroutine struct {
	s       *scheduler
	resume  chan struct{}
	started bool
	done    bool
	// until is the condition the coroutine is blocked on; nil means runnable.
	until func() bool
}

// unwindSignal is the panic value that unwinds a suspended coroutine. It
// runs the user's defers; any durable call made from them panics again with
// it, so no durable work happens during an unwind.
type unwindSignal struct{}

func newScheduler() *scheduler {
	return &scheduler{baton: make(chan struct{})}
}

// spawn registers a coroutine; it first runs at the next runUntilBlocked.
func (s *scheduler) spawn(fn func()) *coroutine {
	co := &coroutine{s: s, resume: make(chan struct{})}
	s.coroutines = append(s.coroutines, co)
	go co.main(fn)
	return co
}

func (co *coroutine) main(fn func()) {
	<-co.resume
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(unwindSignal); !ok && co.s.crash == nil {
				co.s.crash = fmt.Errorf("panic in workflow code: %v\n%s", r, debug.Stack())
			}
		}
		co.done = true
		co.s.baton <- struct{}{}
	}()
	if co.s.unwinding {
		return
	}
	fn()
}

// block parks the calling coroutine until cond holds. It must be called
// from the coroutine that currently runs.
func (s *scheduler) block(cond func() bool) {
	if s.unwinding {
		panic(unwindSignal{})
	}
	if cond() {
		return
	}
	co := s.current
	co.until = cond
	s.baton <- struct{}{}
	<-co.resume
	if s.unwinding {
		panic(unwindSignal{})
	}
}

// runUntilBlocked runs coroutines, in creation order, until each one is
// done or blocked on a condition that does not hold.
func (s *scheduler) runUntilBlocked() {
	for progress := true; progress && s.crash == nil; {
		progress = false
		for i := 0; i < len(s.coroutines) && s.crash == nil; i++ {
			co := s.coroutines[i]
			if co.done || (co.until != nil && !co.until()) {
				continue
			}
			co.until = nil
			s.switchTo(co)
			progress = true
		}
	}
	s.prune()
}

func (s *scheduler) switchTo(co *coroutine) {
	s.current = co
	co.started = true
	co.resume <- struct{}{}
	<-s.baton
	s.current = nil
}

func (s *scheduler) prune() {
	live := s.coroutines[:0]
	for _, co := range s.coroutines {
		if !co.done {
			live = append(live, co)
		}
	}
	clear(s.coroutines[len(live):])
	s.coroutines = live
}

// unwind ends every coroutine by panicking unwindSignal inside it, so their
// goroutines exit and their defers run. The scheduler is unusable after.
func (s *scheduler) unwind() {
	s.unwinding = true
	for _, co := range s.coroutines {
		if !co.done {
			s.switchTo(co)
		}
	}
	s.coroutines = nil
}
