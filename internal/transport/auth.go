package transport

import (
	"context"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/tools"
)

// authRetryAfterSeconds is the Retry-After of a 503 for a credential that
// could not be checked: an authorization server that is down is rarely
// back within the second an overloaded server asks for.
const authRetryAfterSeconds = "5"

// authStage is stage 3 of docs/design.md §3: the embedder's
// authenticator, then the scopes the request needs. Everything it
// compares against is built once, in New.
type authStage struct {
	run      func(context.Context, *http.Request) (*caller.Identity, *config.AuthRefusal)
	metadata string   // resource_metadata for the challenges; "" for none
	required []string // needed by every request
	// needs holds, for each tool that has scopes of its own, every scope a
	// call of it needs: the required ones and the tool's.
	needs  map[*tools.Tool][]string
	record bool
}

func newAuthStage(a *config.Auth, set *tools.Set) *authStage {
	s := &authStage{
		run:      a.Authenticate,
		metadata: a.ResourceMetadata,
		required: a.RequiredScopes,
		needs:    map[*tools.Tool][]string{},
		record:   a.RecordSubject,
	}
	for _, t := range set.Tools() {
		if scopes := t.Scopes(); len(scopes) > 0 {
			s.needs[t] = union(s.required, scopes)
		}
	}
	return s
}

// need returns every scope the request needs: the required ones, and a
// scoped tool's when it calls one.
func (s *authStage) need(tool *tools.Tool) []string {
	if n, ok := s.needs[tool]; ok {
		return n
	}
	return s.required
}

var (
	errUnauthorized = wire.Errorf(wire.CodeInvalidRequest, "Unauthorized: a valid bearer token is required (see WWW-Authenticate)")
	errForbidden    = wire.Errorf(wire.CodeInvalidRequest, "Forbidden: the token lacks a scope this request needs (see WWW-Authenticate)")
	errAuthRequest  = wire.Errorf(wire.CodeInvalidRequest, "Bad Request: the credential was not sent as this server accepts it (see WWW-Authenticate)")
	errAuthDown     = wire.Errorf(wire.CodeInternalError, "Service unavailable: the token cannot be checked now; retry later")
	// An authenticator's fault is answered as a fault past a method is:
	// the fixed message, the detail on the span and in the log.
	rejAuthFault = reject(StageAuth, http.StatusOK, wire.NewError(wire.CodeInternalError))
)

// authenticate runs stage 3 for a classified message: req is nil for a
// notification or a request whose params stage 5 will refuse, tool is the
// tool a tools/call names (nil when none). It returns the context the rest
// of the request runs under, carrying the caller, or the rejection to
// answer; gone reports a client that left while its credential was being
// checked (nothing is to be written).
func (h *Handler) authenticate(ctx context.Context, r *http.Request, tool *tools.Tool, op *telemetry.Op) (_ context.Context, _ *rejection, gone bool) {
	s := h.auth
	id, ref, fault := s.call(ctx, r)
	if fault != nil {
		op.Fault(context.WithoutCancel(ctx), "authenticator", fault.Value, fault.Stack)
		return ctx, rejAuthFault, false
	}
	if ref != nil {
		if ctx.Err() != nil {
			return ctx, nil, true
		}
		return ctx, s.refuse(ctx, op, ref, tool), false
	}
	if need := s.need(tool); !id.Grants(need) {
		op.SetAuthRefusal("insufficient_scope")
		return ctx, s.forbidden(need, nil), false
	}
	if s.record {
		op.SetSubject(id.Subject)
	}
	ctx = caller.WithSubject(ctx, id.Subject)
	return caller.WithIdentity(ctx, id), nil, false
}

// call runs the authenticator with any panic contained, as tools.Tool.Call
// contains a tool's. http.ErrAbortHandler is net/http's way to abort the
// response on purpose, and is let through, as connect-go's recover does.
func (s *authStage) call(ctx context.Context, r *http.Request) (id *caller.Identity, ref *config.AuthRefusal, fault *tools.Fault) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			id, ref = nil, nil
			fault = &tools.Fault{Value: v, Stack: debug.Stack()}
		}
	}()
	id, ref = s.run(ctx, r)
	if id == nil && ref == nil {
		ref = &config.AuthRefusal{Kind: config.RefuseInvalidToken}
	}
	return id, ref, nil
}

// refuse is the answer to an authenticator's refusal (docs/design.md §5).
//
// Only a caller the authenticator accepted learns the scopes of the tool it
// names (the 403). The challenges of a request refused before that (401,
// 400) name the scopes every request needs and nothing else, whatever tool
// the request names: otherwise an unauthenticated caller could tell which
// tools exist, and which are scoped, from the challenge alone.
func (s *authStage) refuse(ctx context.Context, op *telemetry.Op, ref *config.AuthRefusal, tool *tools.Tool) *rejection {
	switch ref.Kind {
	case config.RefuseNoToken:
		op.SetAuthRefusal("no_token")
		return reject(StageAuth, http.StatusUnauthorized, errUnauthorized).
			with("WWW-Authenticate", s.challenge("", "", s.required))
	case config.RefuseInvalidRequest:
		op.SetAuthRefusal("invalid_request")
		return reject(StageAuth, http.StatusBadRequest, errAuthRequest).
			with("WWW-Authenticate", s.challenge("invalid_request", ref.Description, s.required))
	case config.RefuseInsufficientScope:
		op.SetAuthRefusal("insufficient_scope")
		return s.forbidden(s.need(tool), ref)
	case config.RefuseUnavailable:
		op.SetAuthRefusal("unavailable")
		op.Unavailable(context.WithoutCancel(ctx), "authenticator", ref.Cause)
		return reject(StageAuth, http.StatusServiceUnavailable, errAuthDown).
			with("Retry-After", authRetryAfterSeconds)
	default: // RefuseInvalidToken
		op.SetAuthRefusal("invalid_token")
		return reject(StageAuth, http.StatusUnauthorized, errUnauthorized).
			with("WWW-Authenticate", s.challenge("invalid_token", ref.Description, s.required))
	}
}

// forbidden is the 403 of a valid token without every scope the request
// needs. The challenge names them all at once (spec: emit every required
// scope in one challenge, so a client asks for them in one step), with any
// the authenticator itself found missing.
func (s *authStage) forbidden(need []string, ref *config.AuthRefusal) *rejection {
	desc := ""
	if ref != nil {
		need = union(need, ref.Scopes)
		desc = ref.Description
	}
	return reject(StageAuth, http.StatusForbidden, errForbidden).
		with("WWW-Authenticate", s.challenge("insufficient_scope", desc, need))
}

// challenge builds a Bearer challenge (RFC 6750 §3; MCP authorization):
// error and error_description when given, then resource_metadata (RFC 9728
// §5.1) and scope when there are any. Parameter values are quoted strings;
// the description is cut to RFC 6750's allowed characters, and scopes and
// the metadata URL were checked when the server was built.
func (s *authStage) challenge(code, desc string, scopes []string) string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	param := func(key, value string) {
		b.WriteString(sep)
		b.WriteString(key)
		b.WriteString(`="`)
		b.WriteString(value)
		b.WriteByte('"')
		sep = ", "
	}
	if code != "" {
		param("error", code)
	}
	if desc = cleanDescription(desc); desc != "" {
		param("error_description", desc)
	}
	if s.metadata != "" {
		param("resource_metadata", s.metadata)
	}
	if len(scopes) > 0 {
		param("scope", strings.Join(scopes, " "))
	}
	return b.String()
}

// maxDescription bounds an error_description: a hint, not a document.
const maxDescription = 200

// cleanDescription keeps the characters RFC 6750 §3 allows in
// error_description (%x20-21 / %x23-5B / %x5D-7E), so that an
// authenticator's text can neither end the quoted string nor smuggle a
// header line.
func cleanDescription(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			ok = false
			break
		}
	}
	if !ok {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' {
				b.WriteByte(c)
			}
		}
		s = b.String()
	}
	if len(s) > maxDescription {
		s = s[:maxDescription]
	}
	return s
}

// union returns a followed by the members of b not in a (a new slice).
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
