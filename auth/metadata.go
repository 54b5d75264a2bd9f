package auth

import (
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/strictjson"
)

// wellKnownPath is the well-known URI suffix of RFC 9728 §3.
const wellKnownPath = "/.well-known/oauth-protected-resource"

// ResourceMetadata is the Protected Resource Metadata of an MCP server
// (RFC 9728 §2): how a client finds the authorization server that issues
// tokens for it. MCP requires it of every server that uses authorization.
type ResourceMetadata struct {
	// Resource is the server's canonical resource URI (RFC 8707), the
	// audience its tokens must name, e.g. "https://mcp.example.com/mcp".
	// Required: an absolute http(s) URL without a fragment or query.
	Resource string
	// AuthorizationServers are the issuer identifiers of the authorization
	// servers that issue tokens for Resource. Required: at least one.
	AuthorizationServers []string
	// ScopesSupported are the scopes a client may ask for to use the
	// server; MCP says not to list offline_access.
	ScopesSupported []string
	// ResourceName is a human-readable name for the server, optional.
	ResourceName string
	// ResourceDocumentation is the URL of documentation for developers,
	// optional.
	ResourceDocumentation string
}

// MetadataHandler serves a [ResourceMetadata] document. It is an
// http.Handler that does not care where it is mounted;
// [MetadataHandler.Routes] names the paths clients look for it at, under
// the well-known path /.well-known/oauth-protected-resource (RFC 9728
// §3). It answers GET and HEAD with the document, readable from any
// origin (Access-Control-Allow-Origin: *: the document is public, and
// browser-based MCP clients fetch it cross-origin), an OPTIONS preflight
// with the allowed methods, and any other method with 405 and Allow. It
// is safe for concurrent use.
type MetadataHandler struct {
	doc      []byte
	length   string
	url      string
	patterns []string
}

// metadataDocument is the encoded document: the members of RFC 9728 §2 in
// their order, bearer_methods_supported always ["header"] (RFC 9728 §2;
// MCP: tokens never in the query string).
type metadataDocument struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

// NewMetadataHandler checks md and encodes its document once, so that a
// request only writes bytes: nothing is encoded, or can fail, per request.
func NewMetadataHandler(md ResourceMetadata) (*MetadataHandler, error) {
	u, err := url.Parse(md.Resource)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("auth: ResourceMetadata.Resource %q must be an absolute http(s) URL without user info, query or fragment", md.Resource)
	}
	// The path becomes a ServeMux pattern: keep it to characters that mean
	// nothing to one.
	if strings.ContainsAny(u.Path, "{}\\ \t") || strings.Contains(u.Path, "//") || u.RawPath != "" {
		return nil, fmt.Errorf("auth: ResourceMetadata.Resource %q has a path this handler cannot be mounted for", md.Resource)
	}
	if len(md.AuthorizationServers) == 0 {
		return nil, errors.New("auth: ResourceMetadata needs at least one authorization server (RFC 9728 §2; MCP)")
	}
	for _, as := range md.AuthorizationServers {
		if a, err := url.Parse(as); err != nil || (a.Scheme != "https" && a.Scheme != "http") || a.Host == "" {
			return nil, fmt.Errorf("auth: authorization server %q is not an absolute http(s) URL", as)
		}
	}
	for _, s := range md.ScopesSupported {
		if !caller.ValidScope(s) {
			return nil, fmt.Errorf("auth: ScopesSupported: invalid scope %q (RFC 6749 §3.3)", s)
		}
	}
	doc, err := strictjson.Marshal(metadataDocument{
		Resource:               md.Resource,
		AuthorizationServers:   md.AuthorizationServers,
		ScopesSupported:        md.ScopesSupported,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           md.ResourceName,
		ResourceDocumentation:  md.ResourceDocumentation,
	})
	if err != nil {
		return nil, fmt.Errorf("auth: encoding the resource metadata: %w", err)
	}
	// RFC 9728 §3.1: the well-known suffix goes between the host and the
	// path, with the path's terminating slash after the host removed.
	path := strings.TrimSuffix(u.Path, "/")
	if u.Path != "/" && strings.HasSuffix(u.Path, "/") {
		path = u.Path // a path of its own that ends in a slash keeps it
	}
	inserted := wellKnownPath + path
	h := &MetadataHandler{
		doc:    doc,
		length: strconv.Itoa(len(doc)),
		url:    u.Scheme + "://" + u.Host + inserted,
	}
	h.patterns = append(h.patterns, pattern(inserted))
	if inserted != wellKnownPath {
		h.patterns = append(h.patterns, pattern(wellKnownPath))
	}
	return h, nil
}

// pattern is the ServeMux pattern matching exactly path.
func pattern(path string) string {
	if strings.HasSuffix(path, "/") {
		return path + "{$}"
	}
	return path
}

// URL returns the document's URL: the path-inserted well-known URI of the
// resource (RFC 9728 §3.1), e.g.
// "https://mcp.example.com/.well-known/oauth-protected-resource/mcp". It is
// the resource_metadata every challenge names (wymcp.AuthOptions).
func (h *MetadataHandler) URL() string { return h.url }

// Routes yields the (pattern, handler) pairs to mount on the server's
// mux (the embedder's router decides where and how they are served), for
//
//	for pattern, handler := range prm.Routes() {
//		mux.Handle(pattern, handler)
//	}
//
// The patterns are the path-inserted well-known URI for the resource's
// path (/.well-known/oauth-protected-resource/mcp), which a client tries
// first, and the root one (/.well-known/oauth-protected-resource), which
// it tries next (MCP authorization: PRM discovery). A host that serves
// several protected resources should mount only the first.
func (h *MetadataHandler) Routes() iter.Seq2[string, http.Handler] {
	return func(yield func(string, http.Handler) bool) {
		for _, p := range h.patterns {
			if !yield(p, h) {
				return
			}
		}
	}
}

const metadataMethods = "GET, HEAD, OPTIONS"

// ServeHTTP answers one request for the document.
func (h *MetadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		hdr.Set("Content-Type", "application/json")
		hdr.Set("Content-Length", h.length)
		// The document changes with a deploy, not a request.
		hdr.Set("Cache-Control", "public, max-age=300")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(h.doc)
		}
	case http.MethodOptions:
		// A CORS preflight: a browser client asking whether it may GET the
		// document with its headers (MCP-Protocol-Version, say). The
		// document is public and no credentials are involved, so any
		// header may come.
		hdr.Set("Allow", metadataMethods)
		hdr.Set("Access-Control-Allow-Methods", metadataMethods)
		hdr.Set("Access-Control-Allow-Headers", "*")
		hdr.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	default:
		hdr.Set("Allow", metadataMethods)
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}
