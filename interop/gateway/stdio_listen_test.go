package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// A 2026-07-28 stdio child built with go-sdk v1.8.0 (cmd/sdkserver
// -stdio), which advertises tools.listChanged, tells a change of its
// tools on the subscriptions/listen the gateway opens on its pipe
// (docs/design.md §10d): the gateway serves its new tool though it reads
// the child's list only hourly (Refresh), and only the listen could have
// told it.
func TestStdioSDKListen(t *testing.T) {
	t.Parallel()
	o := gosdkStdio(t)
	o.Refresh = time.Hour
	url, _ := stdioGateway(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The child has the gateway's listen, and the gateway has read its
	// list at the acknowledgement (the one read it asks for until a
	// change is told): a read of the change can only be the
	// notification's.
	for {
		if n, _ := callText(t, ctx, url, "go_listening", `{}`, ""); strings.HasPrefix(n, "1 ") && n != "1 0" {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the gateway did not listen to the child")
		}
	}
	if text, isErr := callText(t, ctx, url, "go_grow", `{}`, ""); text != "grew" || isErr {
		t.Fatalf("go_grow: %q (isError %v)", text, isErr)
	}
	for !slices.Contains(toolNames(t, ctx, url), "go_grown") {
		if ctx.Err() != nil {
			t.Fatal("the gateway did not learn of the child's new tool")
		}
	}
	if text, isErr := callText(t, ctx, url, "go_grown", `{}`, ""); text != "grown" || isErr {
		t.Fatalf("go_grown: %q (isError %v)", text, isErr)
	}
}
