// sso: drives wharf's ACL auth methods, binding rules, JWT login and OIDC login with the real Nomad Go API
// client (tests/events/nomad_go.ts builds it in GOPATH mode against the conformance kit's sources).
// usage: sso URL MANAGEMENT_SECRET_ID ISSUER CLIENT_ID CLIENT_SECRET REDIRECT_URI LOGIN PASSWORD
// Prints one line per check, "OK|FAIL <name>\t<detail>"; exits 1 on a FAIL.
package main

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"../gocheck"
)

// signJWT makes an RS256 JWT by hand (no JWT library in the kit).
func signJWT(key *rsa.PrivateKey, claims map[string]any) string {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": "go"})
	payload, _ := json.Marshal(claims)
	input := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		panic(err)
	}
	return input + "." + enc.EncodeToString(sig)
}

var formAction = regexp.MustCompile(`(?i)<form[^>]*method="post"[^>]*action="([^"]+)"`)

// browse follows authURL through the provider's login and consent forms and returns the callback URL.
func browse(authURL, login, password string) (*url.URL, error) {
	jar, _ := cookiejar.New(nil)
	start, _ := url.Parse(authURL)
	hc := &http.Client{
		Jar:     jar,
		Timeout: 20 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != start.Host {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	resp, err := hc.Get(authURL)
	for hop := 0; hop < 10; hop++ {
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			return resp.Request.URL.Parse(loc)
		}
		m := formAction.FindSubmatch(body)
		if m == nil {
			return nil, fmt.Errorf("no form at %s (%d)", resp.Request.URL, resp.StatusCode)
		}
		target, _ := resp.Request.URL.Parse(html.UnescapeString(string(m[1])))
		form := url.Values{"decision": {"approve"}}
		if strings.Contains(string(body), `name="password"`) {
			form = url.Values{"login": {login}, "password": {password}}
		}
		resp, err = hc.PostForm(target.String(), form)
	}
	return nil, fmt.Errorf("the provider flow did not end")
}

func main() {
	addr, mgmt := os.Args[1], os.Args[2]
	issuer, clientID, clientSecret, redirectURI := os.Args[3], os.Args[4], os.Args[5], os.Args[6]
	login, password := os.Args[7], os.Args[8]
	root := gocheck.Client(addr, mgmt)
	anon := gocheck.Client(addr, "")
	suffix := fmt.Sprint(time.Now().UnixNano())
	policy := "go-sso-" + suffix

	_, err := root.ACLPolicies().Upsert(&api.ACLPolicy{Name: policy, Rules: `node { policy = "read" }`}, nil)
	gocheck.Check("ACLPolicies.Upsert", err == nil, "err=%v", err)

	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pubPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))

	// --- auth methods CRUD ---
	jwtName := "go-jwt-" + suffix[len(suffix)-8:]
	m, _, err := root.ACLAuthMethods().Create(&api.ACLAuthMethod{
		Name:          jwtName,
		Type:          api.ACLAuthMethodTypeJWT,
		TokenLocality: api.ACLAuthMethodTokenLocalityLocal,
		MaxTokenTTL:   15 * time.Minute,
		Config: &api.ACLAuthMethodConfig{
			JWTValidationPubKeys: []string{pubPEM},
			BoundAudiences:       []string{"wharf-go"},
			BoundIssuer:          []string{"https://ci.go.example"},
			ClaimMappings:        map[string]string{"project": "project"},
			ListClaimMappings:    map[string]string{"groups": "groups"},
			ClockSkewLeeway:      30 * time.Second,
		},
	}, nil)
	gocheck.Check("ACLAuthMethods.Create", err == nil && m != nil && m.MaxTokenTTL == 15*time.Minute &&
		m.Config != nil && m.Config.ClockSkewLeeway == 30*time.Second,
		"err=%v method=%+v", err, m)
	_, _, err = gocheck.Client(addr, "").ACLAuthMethods().Create(&api.ACLAuthMethod{Name: "x"}, nil)
	gocheck.Check("ACLAuthMethods.Create anonymous refused", err != nil && strings.Contains(err.Error(), "403"), "err=%v", err)
	stubs, _, err := anon.ACLAuthMethods().List(nil)
	found := false
	for _, s := range stubs {
		found = found || (s.Name == jwtName && s.Type == "JWT")
	}
	gocheck.Check("ACLAuthMethods.List anonymous", err == nil && found, "err=%v stubs=%d", err, len(stubs))
	got, _, err := root.ACLAuthMethods().Get(jwtName, nil)
	gocheck.Check("ACLAuthMethods.Get", err == nil && got != nil && got.Name == jwtName &&
		len(got.Config.JWTValidationPubKeys) == 1, "err=%v", err)
	got.TokenNameFormat = "${auth_method_name}-${value.project}"
	upd, _, err := root.ACLAuthMethods().Update(got, nil)
	gocheck.Check("ACLAuthMethods.Update", err == nil && upd != nil && upd.TokenNameFormat == got.TokenNameFormat,
		"err=%v", err)

	// --- binding rules CRUD ---
	rule, _, err := root.ACLBindingRules().Create(&api.ACLBindingRule{
		AuthMethod: jwtName,
		Selector:   `"deployers" in list.groups`,
		BindType:   api.ACLBindingRuleBindTypePolicy,
		BindName:   policy,
	}, nil)
	gocheck.Check("ACLBindingRules.Create", err == nil && rule != nil && rule.ID != "", "err=%v", err)
	rule.Description = "deployers get the policy"
	rule2, _, err := root.ACLBindingRules().Update(rule, nil)
	gocheck.Check("ACLBindingRules.Update", err == nil && rule2.Description == rule.Description &&
		rule2.CreateIndex == rule.CreateIndex, "err=%v", err)
	r3, _, err := root.ACLBindingRules().Get(rule.ID, nil)
	gocheck.Check("ACLBindingRules.Get", err == nil && r3.Selector == rule.Selector, "err=%v", err)
	rules, _, err := root.ACLBindingRules().List(nil)
	gocheck.Check("ACLBindingRules.List", err == nil && len(rules) >= 1, "err=%v n=%d", err, len(rules))
	temp, _, err := root.ACLBindingRules().Create(&api.ACLBindingRule{
		AuthMethod: jwtName, BindType: api.ACLBindingRuleBindTypeManagement, Selector: `value.project == "root"`,
	}, nil)
	gocheck.Check("ACLBindingRules.Create management", err == nil, "err=%v", err)

	// --- JWT login ---
	now := time.Now().Unix()
	claims := map[string]any{
		"iss": "https://ci.go.example", "aud": "wharf-go", "iat": now, "exp": now + 120,
		"project": "web", "groups": []string{"deployers"},
	}
	tok, _, err := anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: jwtName, LoginToken: signJWT(key, claims)}, nil)
	gocheck.Check("ACLAuth.Login", err == nil && tok != nil && tok.Type == "client" && len(tok.Policies) == 1 &&
		tok.Policies[0] == policy && tok.Name == jwtName+"-web" && tok.ExpirationTime != nil &&
		tok.ExpirationTime.Sub(time.Now()) > 14*time.Minute, "err=%v token=%+v", err, tok)
	if tok != nil {
		self, _, err := gocheck.Client(addr, tok.SecretID).ACLTokens().Self(nil)
		gocheck.Check("ACLTokens.Self with the login token", err == nil && self.AccessorID == tok.AccessorID, "err=%v", err)
	}
	claims["project"] = "root"
	mt, _, err := anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: jwtName, LoginToken: signJWT(key, claims)}, nil)
	gocheck.Check("ACLAuth.Login management", err == nil && mt.Type == "management", "err=%v", err)
	claims["aud"] = "someone-else"
	_, _, err = anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: jwtName, LoginToken: signJWT(key, claims)}, nil)
	gocheck.Check("ACLAuth.Login wrong audience refused", err != nil && strings.Contains(err.Error(), "401"), "err=%v", err)
	claims["aud"], claims["project"], claims["groups"] = "wharf-go", "web", []string{"readers"}
	_, _, err = anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: jwtName, LoginToken: signJWT(key, claims)}, nil)
	gocheck.Check("ACLAuth.Login no binding refused", err != nil &&
		strings.Contains(err.Error(), "no role or policy bindings matched"), "err=%v", err)

	_, err = root.ACLBindingRules().Delete(temp.ID, nil)
	gocheck.Check("ACLBindingRules.Delete", err == nil, "err=%v", err)
	_, _, err = root.ACLBindingRules().Get(temp.ID, nil)
	gocheck.Check("ACLBindingRules.Get deleted", err != nil && strings.Contains(err.Error(), "404"), "err=%v", err)

	// --- OIDC login ---
	oidcName := "go-oidc-" + suffix[len(suffix)-8:]
	_, _, err = root.ACLAuthMethods().Create(&api.ACLAuthMethod{
		Name:          oidcName,
		Type:          api.ACLAuthMethodTypeOIDC,
		TokenLocality: api.ACLAuthMethodTokenLocalityGlobal,
		MaxTokenTTL:   time.Hour,
		Config: &api.ACLAuthMethodConfig{
			OIDCDiscoveryURL:    issuer,
			OIDCClientID:        clientID,
			OIDCClientSecret:    clientSecret,
			OIDCScopes:          []string{"email", "groups"},
			AllowedRedirectURIs: []string{redirectURI},
			ClaimMappings:       map[string]string{"email": "email"},
			ListClaimMappings:   map[string]string{"groups": "groups"},
		},
	}, nil)
	gocheck.Check("ACLAuthMethods.Create OIDC", err == nil, "err=%v", err)
	og, _, err := root.ACLAuthMethods().Get(oidcName, nil)
	gocheck.Check("ACLAuthMethods.Get OIDC secret redacted", err == nil && og.Config.OIDCClientSecret == "redacted",
		"err=%v", err)
	_, _, err = root.ACLBindingRules().Create(&api.ACLBindingRule{
		AuthMethod: oidcName, Selector: `"admins" in list.groups`, BindType: "policy", BindName: policy,
	}, nil)
	gocheck.Check("ACLBindingRules.Create OIDC", err == nil, "err=%v", err)
	nonce := "go-nonce-" + suffix
	au, _, err := anon.ACLAuth().GetAuthURL(&api.ACLOIDCAuthURLRequest{
		AuthMethodName: oidcName, RedirectURI: redirectURI, ClientNonce: nonce,
	}, nil)
	gocheck.Check("ACLAuth.GetAuthURL", err == nil && strings.HasPrefix(au.AuthURL, issuer), "err=%v", err)
	if err == nil {
		cb, err := browse(au.AuthURL, login, password)
		gocheck.Check("provider login and consent", err == nil && cb.Query().Get("code") != "", "err=%v cb=%v", err, cb)
		if err == nil {
			q := cb.Query()
			ot, _, err := anon.ACLAuth().CompleteAuth(&api.ACLOIDCCompleteAuthRequest{
				AuthMethodName: oidcName, ClientNonce: nonce, State: q.Get("state"), Code: q.Get("code"),
				Iss: q.Get("iss"), RedirectURI: redirectURI,
			}, nil)
			gocheck.Check("ACLAuth.CompleteAuth", err == nil && ot.Type == "client" && len(ot.Policies) == 1 &&
				ot.Global && strings.HasPrefix(ot.Name, "OIDC-"), "err=%v token=%+v", err, ot)
		}
	}

	_, err = root.ACLAuthMethods().Delete(oidcName, nil)
	gocheck.Check("ACLAuthMethods.Delete", err == nil, "err=%v", err)
	_, _, err = root.ACLAuthMethods().Get(oidcName, nil)
	gocheck.Check("ACLAuthMethods.Get deleted", err != nil && strings.Contains(err.Error(), "404"), "err=%v", err)

	gocheck.Exit()
}
