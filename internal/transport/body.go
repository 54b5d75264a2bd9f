package transport

import (
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/wymcp/wymcp/internal/wire"
)

// The body of a request is read before anything else can refuse it (the
// message names its caller and its tool), so the memory it takes is spent
// on a client nobody has checked yet. Two rules bound it (docs/design.md
// §3, stage 1):
//
//   - A body's buffer grows as its bytes arrive, never to the length the
//     client declared before they do: a request that declares the maximum
//     and sends nothing holds a few KiB, not the maximum.
//   - Past its first firstChunk bytes, a body's buffer comes out of one
//     byte budget shared by the requests being read, whether it grew for
//     this request or came from the pool; it is reserved before the bytes
//     are read, and a request that cannot reserve is answered 503 at once. However many clients send large bodies, slowly or not, the
//     bodies held at once stay within the budget. The first chunk is not
//     charged: it is of the order of what net/http itself holds for every
//     connection, so it is bounded as the connections are, and a flood of
//     large bodies that spends the budget never turns away the ordinary,
//     small requests of everyone else.

// inbound is a request's body and the space its message is parsed into.
// Both are done with when ServeHTTP returns: the tool ran on the request's
// goroutine and has returned, the answer is written, and every string the
// telemetry or a late answer keeps was copied out (the actors' late paths,
// the watchdog and the cut, read nothing of the request: actors.Call.Request).
// So they are pooled, and reused: they are the two largest allocations of a
// request, and the garbage collector's work follows the bytes a request
// allocates.
// Nothing that reaches a tool is a slice of them: a raw tool gets its own
// copy of its arguments (tools.RawHandler), a typed one values decoded from
// them; anything else that reads into the body copies first.
type inbound struct {
	body    []byte
	scratch wire.Scratch
	// held is what this request reserved of the body budget.
	held int64
	// abandoned: not to be reused (see abandon).
	abandoned bool
}

// abandon keeps in out of the pool. Ask returns early only when the client
// went away while it waited, and it waits only when another goroutine runs
// the method (a worker's restart raced the call); that method may still be
// reading the body, so the garbage collector, not the pool, takes it.
func (in *inbound) abandon() { in.abandoned = true }

var inbounds = sync.Pool{New: func() any { return new(inbound) }}

// maxPooledBody bounds the body buffer kept in the pool: a larger body gets
// a buffer of its own, so that one big request does not pin its memory.
const maxPooledBody = 64 << 10

// firstChunk is the largest buffer a body is given before any of its bytes
// have arrived; it doubles from there as they do. Nearly every MCP request
// fits in it, so they are read in one buffer, as before.
const firstChunk = 4 << 10

// minBodyBudget is the least body budget a server has, whatever its
// MaxBodyBytes.
const minBodyBudget = 64 << 20

// bodyBudget is the byte budget of a server whose bodies are at most
// maxBody: room for several of the largest at once, and never below
// minBodyBudget.
func bodyBudget(maxBody int64) int64 { return max(4*maxBody, minBodyBudget) }

// errBodyBudget: the body budget had no room for a request's next buffer.
var errBodyBudget = errors.New("transport: the body budget is spent")

// rejBodyBudget answers a request whose body found the budget spent. Its
// unread body is not drained: the connection closes after the answer.
var rejBodyBudget = reject(StageOverload, http.StatusServiceUnavailable,
	errBusy).with("Retry-After", retryAfterSeconds).with("Connection", "close")

// takeInbound returns a pooled inbound for a request.
func takeInbound() *inbound { return inbounds.Get().(*inbound) }

// release gives back in's share of the budget and returns in to the pool.
// The budget is given back even for an abandoned inbound: what is left of
// it is the garbage collector's, bounded by the calls in flight.
func (h *Handler) release(in *inbound) {
	if in.held != 0 {
		h.bodyHeld.Add(-in.held)
		in.held = 0
	}
	if in.abandoned {
		return
	}
	if cap(in.body) > maxPooledBody {
		in.body = nil
	}
	inbounds.Put(in)
}

// reserve takes n bytes of the budget for in, or reports false when the
// budget has no room for them.
func (h *Handler) reserve(in *inbound, n int) bool {
	if h.bodyHeld.Add(int64(n)) > h.bodyLimit {
		h.bodyHeld.Add(-int64(n))
		return false
	}
	in.held += int64(n)
	return true
}

// readBody reads the whole body within the limit. A body whose declared
// length fits the pooled buffer is read into it at once. Any other body is
// read into a buffer that grows as its bytes arrive (readGrowing), from
// the pooled one.
//
// A declared length was checked against the limit at the wire stage, and
// net/http's body reader stops at it, so only a chunked body of unknown
// length needs the MaxBytesReader.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, in *inbound) ([]byte, error) {
	h.holdPooled(in)
	if n := r.ContentLength; n >= 0 && n <= int64(cap(in.body)) {
		buf := in.body[:n]
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	if r.ContentLength < 0 {
		// One byte past the limit tells a body at the limit from a longer
		// one: the MaxBytesReader fails on it.
		return h.readGrowing(in, http.MaxBytesReader(w, r.Body, h.maxBody), h.maxBody+1, false)
	}
	return h.readGrowing(in, r.Body, r.ContentLength, true)
}

// holdPooled charges the pooled buffer in came with to the budget, as a
// buffer grown to its size would be: a request that holds it while its
// bytes trickle in holds that memory, whatever length it declared. When the
// budget has no room for it, the buffer is let go (the garbage collector
// takes it) and the request starts from nothing, as one that found the
// pool empty does.
func (h *Handler) holdPooled(in *inbound) {
	if c := charged(cap(in.body)); c > 0 && !h.reserve(in, c) {
		in.body = nil
	}
}

// readGrowing reads src to its end, or to want bytes when exact, into a
// buffer that starts at firstChunk and doubles when full, each size's
// charge reserved from the budget before a byte is read into it. A buffer
// small enough for the pool is kept in in for the next request.
func (h *Handler) readGrowing(in *inbound, src io.Reader, want int64, exact bool) ([]byte, error) {
	buf := in.body[:0]
	for {
		if len(buf) == cap(buf) {
			size := nextSize(cap(buf), want)
			if !h.reserve(in, charged(size)-charged(cap(buf))) {
				return nil, errBodyBudget
			}
			grown := make([]byte, len(buf), size)
			copy(grown, buf)
			buf = grown
			if size <= maxPooledBody {
				in.body = buf
			}
		}
		end := cap(buf)
		if exact && int64(end) > want {
			end = int(want)
		}
		k, err := src.Read(buf[len(buf):end])
		buf = buf[:len(buf)+k]
		if exact && int64(len(buf)) == want {
			return buf, nil
		}
		if err == io.EOF {
			if exact {
				return nil, io.ErrUnexpectedEOF
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// charged is what a buffer of capacity c takes from the budget: all but
// its first chunk.
func charged(c int) int { return max(c-firstChunk, 0) }

// nextSize is the capacity a full buffer of capacity c grows to on the way
// to want bytes: firstChunk first (but not under 512 bytes, so the pooled
// buffer serves the next small request too), then twice the last.
func nextSize(c int, want int64) int {
	next := int64(2 * c)
	if c == 0 {
		next = firstChunk
	}
	if next > want {
		next = max(want, 512, int64(c)+1)
	}
	return int(next)
}
