// filter: lists wharf's ACL tokens and jobs with QueryOptions.Filter through the real Nomad Go API client
// (tests/events/nomad_go.ts builds it in GOPATH mode against the conformance kit's sources).
// usage: filter URL MANAGEMENT_SECRET_ID. Prints one line per check, "OK|FAIL <name>\t<detail>"; exits 1 on a FAIL.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"../gocheck"
)

// tokenNames is the stubs' names, sorted and joined by commas.
func tokenNames(stubs []*api.ACLTokenListStub) string {
	names := make([]string, len(stubs))
	for i, t := range stubs {
		names[i] = t.Name
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func main() {
	addr, mgmt := os.Args[1], os.Args[2]
	root := gocheck.Client(addr, mgmt)
	suffix := fmt.Sprint(time.Now().UnixNano())
	policy := "go-filter-" + suffix

	_, err := root.ACLPolicies().Upsert(&api.ACLPolicy{Name: policy, Rules: `node { policy = "read" }`}, nil)
	gocheck.Check("ACLPolicies.Upsert", err == nil, "err=%v", err)
	for _, name := range []string{"go-ci-" + suffix, "go-web-" + suffix} {
		_, _, err = root.ACLTokens().Create(&api.ACLToken{Name: name, Type: "client", Policies: []string{policy}}, nil)
		gocheck.Check("ACLTokens.Create "+name[:6], err == nil, "err=%v", err)
	}

	all, _, err := root.ACLTokens().List(nil)
	gocheck.Check("ACLTokens.List unfiltered", err == nil && len(all) >= 3, "err=%v n=%d", err, len(all))
	mine, _, err := root.ACLTokens().List(&api.QueryOptions{Filter: fmt.Sprintf("Policies contains %q", policy)})
	gocheck.Check("ACLTokens.List Filter contains", err == nil && tokenNames(mine) == "go-ci-"+suffix+",go-web-"+suffix,
		"err=%v names=%v", err, tokenNames(mine))
	one, _, err := root.ACLTokens().List(&api.QueryOptions{Filter: fmt.Sprintf(`Name matches "^go-web-" and Policies contains %q`, policy)})
	gocheck.Check("ACLTokens.List Filter and", err == nil && tokenNames(one) == "go-web-"+suffix,
		"err=%v names=%v", err, tokenNames(one))
	mgmtOnly, _, err := root.ACLTokens().List(&api.QueryOptions{Filter: `Type == "management"`})
	allMgmt := len(mgmtOnly) >= 1
	for _, t := range mgmtOnly {
		allMgmt = allMgmt && t.Type == "management"
	}
	gocheck.Check("ACLTokens.List Filter management", err == nil && allMgmt && len(mgmtOnly) < len(all),
		"err=%v n=%d of %d", err, len(mgmtOnly), len(all))

	_, _, err = root.ACLTokens().List(&api.QueryOptions{Filter: "((("})
	gocheck.Check("ACLTokens.List bad Filter refused", err != nil && strings.Contains(err.Error(), "400") &&
		strings.Contains(err.Error(), "failed to read filter expression"), "err=%v", err)

	prefix := "go-filter-" + suffix + "-"
	for _, typ := range []string{"service", "batch"} {
		id, group := prefix+typ, "g"
		job := &api.Job{ID: &id, Name: &id, Type: &typ, TaskGroups: []*api.TaskGroup{{Name: &group}}}
		_, _, err = root.Jobs().Register(job, nil)
		gocheck.Check("Jobs.Register "+typ, err == nil, "err=%v", err)
	}
	jobs, _, err := root.Jobs().List(&api.QueryOptions{Prefix: prefix, Filter: `Type == "batch"`})
	ok := err == nil && len(jobs) == 1 && jobs[0].ID == prefix+"batch"
	gocheck.Check("Jobs.List Prefix and Filter", ok, "err=%v n=%d", err, len(jobs))
	_, _, err = root.Jobs().List(&api.QueryOptions{Filter: `Type ==`})
	gocheck.Check("Jobs.List bad Filter refused", err != nil && strings.Contains(err.Error(), "400") &&
		strings.Contains(err.Error(), "failed to read filter expression"), "err=%v", err)

	gocheck.Exit()
}
