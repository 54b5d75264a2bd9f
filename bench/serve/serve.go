// Package serve runs one bench server: 127.0.0.1:$PORT until SIGINT or
// SIGTERM. Every server of the harness starts the same way, so that only
// the MCP library differs between them.
package serve

import (
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

// ListenAndServe serves h on 127.0.0.1:$PORT (defaultPort when PORT is
// unset) and returns when a signal closes the server.
func ListenAndServe(h http.Handler, defaultPort string) {
	port := os.Getenv("PORT")
	if port == "" {
		port = defaultPort
	}
	serveDiagnostics()
	hs := &http.Server{Addr: "127.0.0.1:" + port, Handler: h}
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
