package upstream

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// TestOAuthClientSecretFile (issue 40): ClientSecretFile is read once, by
// ClientCredentials or TokenExchange, trimmed; a file that cannot be read,
// an empty one, or one given beside ClientSecret is an *OptionError naming
// ClientSecretFile, and never shows the secret.
func TestOAuthClientSecretFile(t *testing.T) {
	dir := t.TempDir()
	good, empty, none := filepath.Join(dir, "good"), filepath.Join(dir, "empty"), filepath.Join(dir, "none")
	for p, content := range map[string]string{good: " s3cr3t \n", empty: " \n\t"} {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := OAuth{TokenURL: "https://as.example/token", ClientID: "id"}
	for _, grant := range []struct {
		what string
		make func(OAuth) (Credentials, error)
	}{{"client credentials", ClientCredentials}, {"token exchange", TokenExchange}} {
		c := cfg
		c.ClientSecretFile = good
		creds, err := grant.make(c)
		if err != nil {
			t.Fatalf("%s: %v", grant.what, err)
		}
		var ep *endpoint
		switch v := creds.(type) {
		case *clientCredentials:
			ep = v.ep
		case *tokenExchange:
			ep = v.ep
			if v.gateway.ep.secret != url.QueryEscape("s3cr3t") {
				t.Errorf("%s: the gateway's own grant has secret %q", grant.what, v.gateway.ep.secret)
			}
		}
		if ep.secret != url.QueryEscape("s3cr3t") {
			t.Errorf("%s: secret %q, want the file's, trimmed", grant.what, ep.secret)
		}
		for _, tc := range []struct {
			file, secret, want string
		}{
			{none, "", "ClientSecretFile: open " + none + ": no such file or directory"},
			{empty, "", "ClientSecretFile: " + empty + " is empty"},
			{good, "s3cr3t", "ClientSecretFile: give ClientSecret or ClientSecretFile, not both"},
		} {
			c := cfg
			c.ClientSecretFile, c.ClientSecret = tc.file, tc.secret
			_, err := grant.make(c)
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Field != "ClientSecretFile" || err.Error() != "upstream: "+grant.what+": "+tc.want {
				t.Errorf("%s, %s: %v\nwant upstream: %s: %s", grant.what, tc.file, err, grant.what, tc.want)
			}
			if tc.file == none && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: %v does not wrap fs.ErrNotExist", grant.what, err)
			}
		}
	}
}
