// Package gocheck is what the Nomad Go client programs of tests/events/nomad_go share: one output line per
// check ("OK|FAIL <name>\t<detail>", read by tests/events/nomad_go.ts) and API clients for a wharf address.
package gocheck

import (
	"fmt"
	"os"

	"github.com/hashicorp/nomad/api"
)

// Fails counts the failed checks so far.
var Fails int

// Check prints one check line and counts a failure.
func Check(name string, ok bool, detail string, args ...any) {
	s := "OK"
	if !ok {
		s = "FAIL"
		Fails++
	}
	fmt.Printf("%s %s\t%s\n", s, name, fmt.Sprintf(detail, args...))
}

// Client is an API client for addr with secret ("" for none).
func Client(addr, secret string) *api.Client {
	c, err := api.NewClient(&api.Config{Address: addr, SecretID: secret})
	if err != nil {
		panic(err)
	}
	return c
}

// Exit ends the program: status 1 when a check failed.
func Exit() {
	if Fails > 0 {
		os.Exit(1)
	}
	os.Exit(0)
}
