package tools_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

func TestNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"get_weather.v2-beta", true},
		{strings.Repeat("x", 128), true},
		{"", false},
		{strings.Repeat("x", 129), false},
		{"has space", false},
		{"slash/name", false},
		{"ünïcode", false},
		{"colon:name", false},
	}
	for _, tt := range tests {
		_, errRaw := tools.NewRaw(tt.name, "d", []byte(`{"type":"object"}`), echoRaw)
		_, errTyped := tools.New(tt.name, "d", echo)
		if (errRaw == nil) != tt.ok || (errTyped == nil) != tt.ok {
			t.Errorf("name %.20q: raw err %v, typed err %v, want ok=%v (docs/design.md §6: ^[A-Za-z0-9_.-]{1,128}$)", tt.name, errRaw, errTyped, tt.ok)
		}
	}
}

func TestConstructionRefused(t *testing.T) {
	t.Parallel()
	obj := []byte(`{"type":"object"}`)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"empty description", func() error { _, err := tools.NewRaw("t", "", obj, echoRaw); return err }(), "empty description"},
		{"nil raw handler", func() error { _, err := tools.NewRaw("t", "d", obj, nil); return err }(), "nil handler"},
		{"nil typed handler", func() error {
			_, err := tools.New[echoIn, echoOut]("t", "d", nil)
			return err
		}(), "nil handler"},
		{"negative deadline", func() error {
			_, err := tools.NewRaw("t", "d", obj, echoRaw, tools.WithDeadline(-time.Second))
			return err
		}(), "negative deadline"},
		{"output schema on typed", func() error {
			_, err := tools.New("t", "d", echo, tools.WithOutputSchema(obj))
			return err
		}(), "raw tools"},
		{"unencodable meta", func() error {
			_, err := tools.NewRaw("t", "d", obj, echoRaw, tools.WithMeta(map[string]any{"c": make(chan int)}))
			return err
		}(), "does not encode"},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%s: err %v, want it to mention %q", tt.name, tt.err, tt.want)
		}
	}
}

func TestMustPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("Must did not panic on an error")
		}
	}()
	tools.Must(tools.NewRaw("", "d", nil, echoRaw))
}

func TestDefinitionAndAccessors(t *testing.T) {
	t.Parallel()
	yes := true
	icons := []protocol.Icon{{Src: "https://example.com/i.png", MimeType: "image/png"}}
	tool := tools.Must(tools.New("echo", "Echoes.", echo,
		tools.WithTitle("Echo"),
		tools.WithAnnotations(protocol.ToolAnnotations{ReadOnlyHint: &yes}),
		tools.WithIcons(icons...),
		tools.WithMeta(map[string]any{"k": "v"}),
		tools.WithRequiredCapabilities("sampling", "sampling", "elicitation"),
	))
	icons[0].Src = "changed" // options copy their input
	def := tool.Definition()
	if def.Name != "echo" || def.Title != "Echo" || def.Description != "Echoes." || tool.Name() != "echo" {
		t.Errorf("definition %+v", def)
	}
	if def.Annotations == nil || def.Annotations.ReadOnlyHint == nil || !*def.Annotations.ReadOnlyHint {
		t.Errorf("annotations %+v", def.Annotations)
	}
	if len(def.Icons) != 1 || def.Icons[0].Src != "https://example.com/i.png" || def.Meta["k"] != "v" {
		t.Errorf("icons %+v meta %v", def.Icons, def.Meta)
	}
	if got := strings.Join(tool.RequiredCapabilities(), ","); got != "sampling,elicitation" {
		t.Errorf("capabilities %q", got)
	}
	if tool.Deadline() != tools.DefaultDeadline {
		t.Errorf("deadline %v", tool.Deadline())
	}
	if d := tools.Must(tools.New("e", "d", echo, tools.WithDeadline(time.Second))).Deadline(); d != time.Second {
		t.Errorf("deadline %v", d)
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	tool := tools.Must(tools.New("echo", "Echoes.", echo))
	done := make(chan string, 16)
	for i := range 16 {
		go func() {
			out := tool.Call(context.Background(), protocol.RawJSON(`{"text":"`+strings.Repeat("x", i)+`"}`))
			done <- out.Kind.String()
		}()
	}
	for range 16 {
		if k := <-done; k != "ok" {
			t.Fatalf("kind %s", k)
		}
	}
}
