package servermetrics

import "crypto/tls"

func tlsConfig(insecure bool) *tls.Config {
	return &tls.Config{InsecureSkipVerify: insecure} // #nosec G402 -- only with --insecure
}
