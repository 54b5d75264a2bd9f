package toolrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
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
		_, errRaw := toolrun.NewRaw(tt.name, "d", []byte(`{"type":"object"}`), echoRaw)
		_, errTyped := toolrun.New(tt.name, "d", echo)
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
		{"empty description", func() error { _, err := toolrun.NewRaw("t", "", obj, echoRaw); return err }(), "empty description"},
		{"nil raw handler", func() error { _, err := toolrun.NewRaw("t", "d", obj, nil); return err }(), "nil handler"},
		{"nil typed handler", func() error {
			_, err := toolrun.New[echoIn, echoOut]("t", "d", nil)
			return err
		}(), "nil handler"},
		{"negative deadline", func() error {
			_, err := toolrun.NewRaw("t", "d", obj, echoRaw, toolrun.WithDeadline(-time.Second))
			return err
		}(), "negative deadline"},
		{"output schema on typed", func() error {
			_, err := toolrun.New("t", "d", echo, toolrun.WithOutputSchema(obj))
			return err
		}(), "raw tools"},
		{"unencodable meta", func() error {
			_, err := toolrun.NewRaw("t", "d", obj, echoRaw, toolrun.WithMeta(map[string]any{"c": make(chan int)}))
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
	toolrun.Must(toolrun.NewRaw("", "d", nil, echoRaw))
}

func TestDefinitionAndAccessors(t *testing.T) {
	t.Parallel()
	yes := true
	icons := []protocol.Icon{{Src: "https://example.com/i.png", MimeType: "image/png"}}
	tool := toolrun.Must(toolrun.New("echo", "Echoes.", echo,
		toolrun.WithTitle("Echo"),
		toolrun.WithAnnotations(protocol.ToolAnnotations{ReadOnlyHint: &yes}),
		toolrun.WithIcons(icons...),
		toolrun.WithMeta(map[string]any{"k": "v"}),
		toolrun.WithRequiredCapabilities("sampling", "sampling", "elicitation"),
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
	if tool.Deadline() != toolrun.DefaultDeadline {
		t.Errorf("deadline %v", tool.Deadline())
	}
	if d := toolrun.Must(toolrun.New("e", "d", echo, toolrun.WithDeadline(time.Second))).Deadline(); d != time.Second {
		t.Errorf("deadline %v", d)
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	tool := toolrun.Must(toolrun.New("echo", "Echoes.", echo))
	done := make(chan string, 16)
	for i := range 16 {
		go func() {
			out := tool.Call(context.Background(), wire.RawJSON(`{"text":"`+strings.Repeat("x", i)+`"}`))
			done <- out.Kind.String()
		}()
	}
	for range 16 {
		if k := <-done; k != "ok" {
			t.Fatalf("kind %s", k)
		}
	}
}
