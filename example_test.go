package wymcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// A typed tool served at /mcp, here on httptest. The README's embedding
// example, a whole program with its stop, is examples/embed/main_test.go.
func ExampleNew() {
	// The input schema is inferred from GreetIn; GreetOut's JSON becomes
	// structuredContent, and the same JSON a text block.
	type GreetIn struct {
		Name string `json:"name" jsonschema:"Who to greet"`
	}
	type GreetOut struct {
		Greeting string `json:"greeting"`
	}
	greet := tools.Must(tools.New("greet", "Greets someone by name.",
		func(ctx context.Context, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		}))
	srv, err := wymcp.New(protocol.Implementation{Name: "greeter", Version: "1.0.0"}, nil, greet)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)

	ts := httptest.NewServer(mux)
	defer ts.Close()
	status, body := exampleCall(ts.URL+"/mcp", "greet", `{"name":"Ada"}`)
	fmt.Println(status)
	fmt.Println(body)
	// Output:
	// 200
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"greeting\":\"Hello, Ada!\"}"}],"structuredContent":{"greeting":"Hello, Ada!"},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}}}}
}

// exampleCall sends one tools/call with the headers MCP 2026-07-28 requires: the
// version, the method and the tool name mirror the body.
func exampleCall(url, tool, args string) (int, string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Shutdown answers every call already admitted, then stops the server's
// actors; a call that arrives afterwards is refused with 503 and
// Retry-After, never dropped. Call it after http.Server.Shutdown.
func ExampleServer_Shutdown() {
	started := make(chan struct{}, 1)
	slow := tools.Must(tools.New("slow", "Takes a moment.",
		func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case started <- struct{}{}:
			default:
			}
			time.Sleep(50 * time.Millisecond)
			return "done", nil
		}))
	srv, err := wymcp.New(protocol.Implementation{Name: "example", Version: "1.0.0"}, nil, slow)
	if err != nil {
		log.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	answered := make(chan int)
	go func() {
		status, _ := exampleCall(ts.URL, "slow", `{}`)
		answered <- status
	}()
	<-started // the call is admitted and running

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("in-flight call:", <-answered)
	late, _ := exampleCall(ts.URL, "slow", `{}`)
	fmt.Println("call after Shutdown:", late)
	// Output:
	// in-flight call: 200
	// call after Shutdown: 503
}

// Drain is the first half of a stop without loss (docs/design.md §6a): the
// server turns not ready and answers every call with "Connection: close"
// for Options.DrainDelay, while the balancer in front stops sending here.
// Then the http.Server stops accepting and waits for its handlers, and
// Shutdown stops the actors. This is the order for a balancer that routes
// by readiness (a Kubernetes Service); cmd/wymcp shows the one for nginx.
func ExampleServer_Drain() {
	echo := tools.Must(tools.New("echo", "Echoes its text.",
		func(ctx context.Context, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return in.Text, nil
		}))
	srv, err := wymcp.New(protocol.Implementation{Name: "example", Version: "1.0.0"},
		&wymcp.Options{DrainDelay: 5 * time.Second}, echo) // the window for the two requests below
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	mux.Handle("GET /readyz", srv.ReadinessHandler())
	ts := httptest.NewServer(mux)
	defer ts.Close()
	readiness := func() int {
		resp, err := http.Get(ts.URL + "/readyz")
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fmt.Println("ready:", readiness())

	// What a SIGTERM handler does.
	stopped := make(chan error)
	go func() {
		ctx := context.Background()
		_ = srv.Drain(ctx)           // the lame duck, for DrainDelay
		_ = ts.Config.Shutdown(ctx)  // stop accepting, wait for the handlers
		stopped <- srv.Shutdown(ctx) // stop the actors
	}()
	for !srv.Draining() {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("ready while draining:", readiness())
	status, _ := exampleCall(ts.URL+"/mcp", "echo", `{"text":"hi"}`)
	fmt.Println("call while draining:", status)
	fmt.Println("stopped:", <-stopped)
	// Output:
	// ready: 200
	// ready while draining: 503
	// call while draining: 200
	// stopped: <nil>
}

// A tool that asks the user for input (SEP-2322, multi-round-trip calls):
// tools.Ask's error makes the first call answer input_required with a sealed
// requestState; the client asks the user and retries with the answer and
// the state, and the handler, run again from the top, gets the answer.
// docs/tools.md's section on asking the client is this code
// (TestDocsToolsExamples).
func Example_askForInput() {
	form := protocol.ElicitRequest{
		Message:         "What is your name?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}
	greet := tools.Must(tools.NewRaw("greet", "Greets the user by the name they give.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var answer protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("user_name", form, &answer)); err != nil {
				return nil, err // tools.ErrInputRequired: the call answers input_required
			}
			var who struct {
				Name string `json:"name"`
			}
			if answer.Action != protocol.ElicitAccept || answer.DecodeContent(&who) != nil {
				return protocol.TextResult("Hello, stranger!"), nil
			}
			return protocol.TextResult("Hello, " + who.Name + "!"), nil
		},
		// A client that cannot answer a form is refused up front (-32021).
		tools.WithRequiredCapabilities("elicitation")))

	// Replicas share the key ring (32-byte keys, newest first); then any of
	// them serves any round. Load it from a secret store in production.
	ring := [][]byte{[]byte("an example key of 32 bytes......")}
	srv, err := wymcp.New(protocol.Implementation{Name: "greeter", Version: "1.0.0"}, &wymcp.Options{StateKeys: ring}, greet)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown(context.Background())

	ts := httptest.NewServer(srv)
	defer ts.Close()
	var round1 struct {
		Result struct {
			ResultType    string                             `json:"resultType"`
			InputRequests map[string]struct{ Method string } `json:"inputRequests"`
			RequestState  string                             `json:"requestState"`
		}
	}
	_, body := exampleRound(ts.URL, "greet", "")
	if err := json.Unmarshal([]byte(body), &round1); err != nil {
		log.Fatal(err)
	}
	fmt.Println(round1.Result.ResultType, round1.Result.InputRequests["user_name"].Method)

	state, _ := json.Marshal(round1.Result.RequestState)
	_, body = exampleRound(ts.URL, "greet",
		`"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}},"requestState":`+string(state))
	fmt.Println(body)
	// Output:
	// input_required elicitation/create
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, Ada!"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}}}}
}

// exampleRound sends a tools/call of tool from a client that declares the
// elicitation capability, with the params members retry adds ("" for a
// first call).
func exampleRound(url, tool, retry string) (int, string) {
	if retry != "" {
		retry += ","
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},` + retry +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
