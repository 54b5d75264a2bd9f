package actors

import (
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/wymcp/wymcp/internal/toolrun"
)

// mailbox is the mailbox of every wymcp actor: a protoactor Mailbox that
// schedules its processing loop without allocating.
//
// protoactor's default mailbox hands its dispatcher the method value
// m.processMessages each time it goes from idle to running; a method value
// that escapes is a new closure, so every message sent to an idle actor —
// which is every request, since workers are idle between calls — cost an
// allocation, and its queues (a ring buffer behind a mutex, and a lock-free
// list for system messages) cost more work than the one message a worker
// ever holds. This one binds the loop once, in RegisterHandlers, and keeps
// both queues in slices that are reused: posting to an idle worker and
// running it on the posting goroutine (the synchronized dispatcher)
// allocates nothing.
//
// The semantics are the default mailbox's, which supervision depends on:
// system messages run before user messages; SuspendMailbox stops user
// messages until ResumeMailbox (a failing actor is suspended until its
// supervisor restarts it); a panic in the invoker is escalated with the
// message being processed; and the loop runs on one goroutine at a time.
type mailbox struct {
	invoker    actor.MessageInvoker
	dispatcher actor.Dispatcher
	loop       func() // m.process, bound once

	// running is set while one goroutine runs the loop; suspended while user
	// messages must wait for a ResumeMailbox.
	running   atomic.Bool
	suspended atomic.Bool

	mu     sync.Mutex
	user   queue
	system queue
	// pending counts the messages in both queues, readable without mu.
	pending atomic.Int32
}

var _ actor.Mailbox = (*mailbox)(nil)

// newMailbox is the actor.MailboxProducer of wymcp's actors.
func newMailbox() actor.Mailbox { return &mailbox{} }

// queue is a FIFO of messages in a slice that is reused once drained.
type queue struct {
	items []any
	head  int
}

func (q *queue) push(m any) { q.items = append(q.items, m) }

func (q *queue) pop() (any, bool) {
	if q.head == len(q.items) {
		return nil, false
	}
	m := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return m, true
}

func (q *queue) len() int { return len(q.items) - q.head }

// RegisterHandlers implements actor.Mailbox.
func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.invoker, m.dispatcher = invoker, dispatcher
	m.loop = m.process
}

// Start implements actor.Mailbox.
func (m *mailbox) Start() {}

// UserMessageCount implements actor.Mailbox.
func (m *mailbox) UserMessageCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.user.len()
}

// PostUserMessage implements actor.Mailbox.
func (m *mailbox) PostUserMessage(msg any) {
	m.mu.Lock()
	m.user.push(msg)
	m.mu.Unlock()
	m.pending.Add(1)
	m.schedule()
}

// PostSystemMessage implements actor.Mailbox.
func (m *mailbox) PostSystemMessage(msg any) {
	m.mu.Lock()
	m.system.push(msg)
	m.mu.Unlock()
	m.pending.Add(1)
	m.schedule()
}

// schedule hands the loop to the dispatcher unless it is running already.
func (m *mailbox) schedule() {
	if m.running.CompareAndSwap(false, true) {
		m.dispatcher.Schedule(m.loop)
	}
}

// process runs the loop until no message is left that it may run. A
// message posted while the loop was finishing finds running still set and
// relies on this goroutine: so, once it clears running, it looks again.
func (m *mailbox) process() {
	for {
		m.run()
		m.running.Store(false)
		if !m.runnable() || !m.running.CompareAndSwap(false, true) {
			return
		}
	}
}

// runnable reports whether a message waits that the loop may run now.
func (m *mailbox) runnable() bool {
	if m.pending.Load() == 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.system.len() > 0 || (!m.suspended.Load() && m.user.len() > 0)
}

// next returns the next message to run: a system message first, then a
// user message unless the mailbox is suspended.
func (m *mailbox) next() (msg any, system, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if msg, ok = m.system.pop(); ok {
		m.pending.Add(-1)
		return msg, true, true
	}
	if m.suspended.Load() {
		return nil, false, false
	}
	if msg, ok = m.user.pop(); ok {
		m.pending.Add(-1)
		return msg, false, true
	}
	return nil, false, false
}

// run processes messages until none may run. A panic escalates, with the
// message that caused it, to the actor's supervisor, which suspends and
// restarts the actor (containment, supervisor.go); the loop ends there, as
// the default mailbox's does, and process looks again for messages.
//
// The crash reason escalates as a *toolrun.Fault carrying debug.Stack(),
// taken here while the panicking frames are still on the stack: the
// default mailbox keeps only the value, so a receiver middleware had to
// capture the stack, at the cost of an envelope per message.
func (m *mailbox) run() {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			fault, ok := r.(*toolrun.Fault)
			if !ok {
				fault = &toolrun.Fault{Value: r, Stack: debug.Stack()}
			}
			m.invoker.EscalateFailure(fault, msg)
		}
	}()
	for {
		var system, ok bool
		if msg, system, ok = m.next(); !ok {
			return
		}
		if !system {
			m.invoker.InvokeUserMessage(msg)
			continue
		}
		switch msg.(type) {
		case *actor.SuspendMailbox:
			m.suspended.Store(true)
		case *actor.ResumeMailbox:
			m.suspended.Store(false)
		default:
			m.invoker.InvokeSystemMessage(msg)
		}
	}
}
