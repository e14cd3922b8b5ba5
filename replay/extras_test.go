package replay

import (
	"net/http"
	"strings"
	"testing"
)

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "X-Api-Key": true, "x-api-key": true, "X-Auth-Token": true, "api_key": true,
		"access_token": true, "apiKey": true, "client_secret": true, "Cookie": true, "X-Amz-Signature": true,
		"max_tokens": false, "top_k": false, "X-Route": false, "chat_template_kwargs": false, "enable_thinking": false,
		"keyword": false, "X-Session-Id": false, "tokenizer": false,
	} {
		if got := secretName(name); got != want {
			t.Errorf("secretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactHeadersAndBody(t *testing.T) {
	h, err := checkHeaders(http.Header{"x-route": {"a"}, "X-Api-Key": {"k-123456789"}, "X-Forwarded-Authz": {"Bearer abcdefghijk"}})
	if err != nil {
		t.Fatal(err)
	}
	got := RedactHeaders(h)
	want := map[string]string{"X-Route": "a", "X-Api-Key": "REDACTED", "X-Forwarded-Authz": "REDACTED"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("RedactHeaders[%s] = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	secrets := strings.Join(headerSecrets(h), "|")
	for _, s := range []string{"k-123456789", "Bearer abcdefghijk", "abcdefghijk"} {
		if !strings.Contains(secrets, s) {
			t.Errorf("headerSecrets lacks %q: %s", s, secrets)
		}
	}
	body := RedactBody([]byte(`{"top_k":20,"seed":12345678901234567890,"auth":{"user":"u","password":"p4ssw0rd!"},"x":["Bearer zzzzzzzzz"],"api_key":"sk-1"}`))
	if string(body) != `{"api_key":"REDACTED","auth":"REDACTED","seed":12345678901234567890,"top_k":20,"x":["REDACTED"]}` {
		t.Errorf("RedactBody = %s", body)
	}
	// The key's value is redacted wherever it is, whatever the field or
	// header is called.
	const key = "sk-proj-0123456789abcdef"
	body = RedactBody([]byte(`{"user":"`+key+`","tags":["a `+key[:12]+`"],"`+key+`":1,"n":"plain"}`), key)
	if string(body) != `{"REDACTED":1,"n":"plain","tags":["a REDACTED"],"user":"REDACTED"}` {
		t.Errorf("RedactBody with the key = %s", body)
	}
	if got := RedactHeaders(http.Header{"X-User": {"id " + key}}, key); got["X-User"] != "id REDACTED" {
		t.Errorf("RedactHeaders with the key = %v", got)
	}
	if bs := strings.Join(bodySecrets([]byte(`{"auth":{"password":"p4ssw0rd!"},"x":"Bearer zzzzzzzzz","top_k":"not-a-secret"}`)), "|"); !strings.Contains(bs, "p4ssw0rd!") || !strings.Contains(bs, "Bearer zzzzzzzzz") || strings.Contains(bs, "not-a-secret") {
		t.Errorf("bodySecrets = %s", bs)
	}
}
