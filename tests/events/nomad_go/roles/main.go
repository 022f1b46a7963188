// roles: drives wharf's ACL roles, one-time tokens and policy/self with the real Nomad Go API client
// (tests/events/nomad_go.ts builds it in GOPATH mode against the conformance kit's sources).
// usage: roles URL MANAGEMENT_SECRET_ID. Prints one line per check, "OK|FAIL <name>\t<detail>"; exits 1 on a FAIL.
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"../gocheck"
)

func policyNames(stubs []*api.ACLPolicyListStub) []string {
	names := []string{}
	for _, p := range stubs {
		names = append(names, p.Name)
	}
	return names
}

func contains(list []string, want string) bool {
	for _, x := range list {
		if x == want {
			return true
		}
	}
	return false
}

func main() {
	addr, mgmt := os.Args[1], os.Args[2]
	root := gocheck.Client(addr, mgmt)
	suffix := fmt.Sprint(time.Now().UnixNano())
	policy, roleName := "go-nodes-"+suffix, "go-role-"+suffix

	_, err := root.ACLPolicies().Upsert(&api.ACLPolicy{Name: policy, Rules: `node { policy = "read" }`}, nil)
	gocheck.Check("ACLPolicies.Upsert", err == nil, "err=%v", err)

	// --- roles CRUD ---
	role, wm, err := root.ACLRoles().Create(&api.ACLRole{Name: roleName, Description: "made by Go",
		Policies: []*api.ACLRolePolicyLink{{Name: policy}}}, nil)
	ok := err == nil && role != nil && len(role.ID) == 36 && role.Name == roleName && len(role.Policies) == 1 &&
		role.Policies[0].Name == policy && role.CreateIndex == role.ModifyIndex && wm != nil && wm.LastIndex == role.ModifyIndex
	gocheck.Check("ACLRoles.Create", ok, "err=%v role=%+v", err, role)
	if role == nil {
		fmt.Println("FAIL no role to go on with")
		os.Exit(1)
	}
	_, _, err = root.ACLRoles().Create(&api.ACLRole{Name: roleName, Policies: []*api.ACLRolePolicyLink{{Name: policy}}}, nil)
	gocheck.Check("ACLRoles.Create duplicate name refused", err != nil && strings.Contains(err.Error(), "400") &&
		strings.Contains(err.Error(), "role with name "+roleName+" already exists"), "err=%v", err)
	_, _, err = root.ACLRoles().Create(&api.ACLRole{Name: "go-missing-" + suffix,
		Policies: []*api.ACLRolePolicyLink{{Name: "no-such-policy"}}}, nil)
	gocheck.Check("ACLRoles.Create unknown policy refused", err != nil && strings.Contains(err.Error(), "cannot find policy no-such-policy"), "err=%v", err)

	got, qm, err := root.ACLRoles().Get(role.ID, nil)
	gocheck.Check("ACLRoles.Get", err == nil && got.ID == role.ID && got.Description == "made by Go" && qm.LastIndex == role.ModifyIndex,
		"err=%v got=%+v", err, got)
	byName, _, err := root.ACLRoles().GetByName(roleName, nil)
	gocheck.Check("ACLRoles.GetByName", err == nil && byName.ID == role.ID, "err=%v", err)
	_, _, err = root.ACLRoles().GetByName("go-nobody-"+suffix, nil)
	gocheck.Check("ACLRoles.GetByName unknown is 404", err != nil && strings.Contains(err.Error(), "404"), "err=%v", err)

	list, _, err := root.ACLRoles().List(nil)
	found := false
	for _, r := range list {
		found = found || r.ID == role.ID
	}
	gocheck.Check("ACLRoles.List", err == nil && found, "err=%v n=%d", err, len(list))
	prefixed, _, err := root.ACLRoles().List(&api.QueryOptions{Prefix: role.ID[:8]})
	gocheck.Check("ACLRoles.List by ID prefix", err == nil && len(prefixed) >= 1 && prefixed[0].ID[:8] == role.ID[:8], "err=%v n=%d", err, len(prefixed))

	updated, _, err := root.ACLRoles().Update(&api.ACLRole{ID: role.ID, Name: roleName, Description: "changed",
		Policies: []*api.ACLRolePolicyLink{{Name: policy}}}, nil)
	gocheck.Check("ACLRoles.Update", err == nil && updated.Description == "changed" && updated.CreateIndex == role.CreateIndex &&
		updated.ModifyIndex > role.ModifyIndex, "err=%v updated=%+v", err, updated)

	// --- a token that carries the role ---
	tok, _, err := root.ACLTokens().Create(&api.ACLToken{Name: "go-role-token", Type: "client",
		Roles: []*api.ACLTokenRoleLink{{Name: roleName}}}, nil)
	ok = err == nil && tok != nil && len(tok.Roles) == 1 && tok.Roles[0].ID == role.ID && tok.Roles[0].Name == roleName
	gocheck.Check("ACLTokens.Create with a role link", ok, "err=%v", err)
	if tok == nil {
		os.Exit(1)
	}
	holder := gocheck.Client(addr, tok.SecretID)
	self, _, err := holder.ACLPolicies().Self(nil)
	gocheck.Check("ACLPolicies.Self (via role)", err == nil && len(self) == 1 && self[0].Name == policy, "err=%v names=%v", err, policyNames(self))
	all, _, err := root.ACLPolicies().Self(nil)
	gocheck.Check("ACLPolicies.Self (management: all)", err == nil && contains(policyNames(all), policy), "err=%v names=%v", err, policyNames(all))
	_, _, err = holder.ACLRoles().Get(role.ID, nil)
	gocheck.Check("ACLRoles.Get by a token carrying it", err == nil, "err=%v", err)
	_, _, err = holder.ACLRoles().GetByName(roleName, nil)
	gocheck.Check("ACLRoles.GetByName by a token carrying it", err == nil, "err=%v", err)
	mine, _, err := holder.ACLRoles().List(nil)
	gocheck.Check("ACLRoles.List by a token: its roles only", err == nil && len(mine) == 1 && mine[0].ID == role.ID, "err=%v n=%d", err, len(mine))
	_, err = holder.ACLRoles().Delete(role.ID, nil)
	gocheck.Check("ACLRoles.Delete needs management", err != nil && strings.Contains(err.Error(), "403"), "err=%v", err)

	// --- one-time tokens ---
	ott, _, err := holder.ACLTokens().UpsertOneTimeToken(nil)
	ok = err == nil && ott != nil && len(ott.OneTimeSecretID) == 36 && ott.AccessorID == tok.AccessorID &&
		ott.ExpiresAt.After(time.Now().Add(9*time.Minute)) && ott.ExpiresAt.Before(time.Now().Add(11*time.Minute))
	gocheck.Check("ACLTokens.UpsertOneTimeToken", ok, "err=%v ott=%+v", err, ott)
	if ott != nil {
		anon := gocheck.Client(addr, "")
		exchanged, _, err := anon.ACLTokens().ExchangeOneTimeToken(ott.OneTimeSecretID, nil)
		gocheck.Check("ACLTokens.ExchangeOneTimeToken", err == nil && exchanged.AccessorID == tok.AccessorID &&
			exchanged.SecretID == tok.SecretID, "err=%v", err)
		_, _, err = anon.ACLTokens().ExchangeOneTimeToken(ott.OneTimeSecretID, nil)
		gocheck.Check("ACLTokens.ExchangeOneTimeToken twice refused", err != nil && strings.Contains(err.Error(), "403"), "err=%v", err)
	}

	// --- deleting the role takes its rights at once ---
	_, err = root.ACLRoles().Delete(role.ID, nil)
	gocheck.Check("ACLRoles.Delete", err == nil, "err=%v", err)
	_, _, err = root.ACLRoles().Get(role.ID, nil)
	gocheck.Check("ACLRoles.Get after delete is 404", err != nil && strings.Contains(err.Error(), "404"), "err=%v", err)
	after, _, err := holder.ACLTokens().Self(nil)
	gocheck.Check("ACLTokens.Self drops the deleted role", err == nil && len(after.Roles) == 0, "err=%v", err)
	self, _, err = holder.ACLPolicies().Self(nil)
	gocheck.Check("ACLPolicies.Self after the role is gone", err == nil && len(self) == 0, "err=%v names=%v", err, policyNames(self))

	_, err = root.ACLTokens().Delete(tok.AccessorID, nil)
	gocheck.Check("cleanup token", err == nil, "err=%v", err)
	_, err = root.ACLPolicies().Delete(policy, nil)
	gocheck.Check("cleanup policy", err == nil, "err=%v", err)
	gocheck.Exit()
}
