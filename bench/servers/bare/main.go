// Command bare serves the bench's ceiling handler (package bareh) on
// 127.0.0.1:$PORT/mcp.
package main

import (
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/wymcp/wymcp/bench/bareh"
)

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", bareh.Handler)
	port := os.Getenv("PORT")
	if port == "" {
		port = "38183"
	}
	hs := &http.Server{Addr: "127.0.0.1:" + port, Handler: mux}
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		<-c
		hs.Close()
	}()
	if err := hs.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
