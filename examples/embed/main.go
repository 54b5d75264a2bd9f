// Command greeter serves one typed MCP tool at http://127.0.0.1:8080/mcp
// until SIGINT or SIGTERM, then stops without dropping a call.
package main

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// GreetIn is the tool's input: its JSON Schema is inferred from the type.
type GreetIn struct {
	Name string `json:"name" jsonschema:"Who to greet"`
}

// GreetOut is its output: the JSON becomes structuredContent, and the same
// JSON a text block.
type GreetOut struct {
	Greeting string `json:"greeting"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", "127.0.0.1:8080")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving MCP at http://%s/mcp", ln.Addr())
	if err := serve(ctx, ln); err != nil {
		log.Fatal(err)
	}
}

// serve answers MCP at /mcp on ln until ctx ends, then stops in order: the
// HTTP server stops accepting and waits for its handlers, then wymcp stops,
// answering every call it admitted.
func serve(ctx context.Context, ln net.Listener) error {
	greet := tools.Must(tools.New("greet", "Greets someone by name.",
		func(ctx context.Context, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		}))
	srv, err := wymcp.New(protocol.Implementation{Name: "greeter", Version: "1.0.0"}, nil, greet)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var serveErr error
	select {
	case serveErr = <-served: // the listener failed
	case <-ctx.Done():
	}

	// Longer than a tool's default deadline (a minute, tools.WithDeadline). Past it,
	// srv.Shutdown answers the calls still running with an isError result
	// saying the server is shutting down, and hs.Close then closes the
	// connections that tools ignoring their context still hold.
	stopCtx, cancel := context.WithTimeout(context.Background(), 65*time.Second)
	defer cancel()
	httpErr := hs.Shutdown(stopCtx)
	mcpErr := srv.Shutdown(stopCtx)
	if httpErr != nil {
		hs.Close()
	}
	return errors.Join(serveErr, httpErr, mcpErr)
}
