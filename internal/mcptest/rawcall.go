package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// CallText is a tools/call of name with no arguments and the given id,
// made with hc from any goroutine (it takes no testing.TB): the result's
// first text and isError, or what went wrong (a status, an answer that is
// no result, or one with another id: a crossed answer).
func CallText(ctx context.Context, hc *http.Client, url, name string, id int) (text string, isErr bool, err error) {
	req, err := ToolCall(name, `{}`).WithID(id).Request(ctx, url)
	if err != nil {
		return "", false, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", false, err
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &msg) != nil || msg.Result == nil || len(msg.Result.Content) == 0 {
		return "", false, fmt.Errorf("HTTP %d %s", resp.StatusCode, body)
	}
	if string(msg.ID) != fmt.Sprint(id) {
		return "", false, fmt.Errorf("crossed: id %s for request %d", msg.ID, id)
	}
	return msg.Result.Content[0].Text, msg.Result.IsError, nil
}
