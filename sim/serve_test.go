package sim

import (
	"testing"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// TestPrepareRefusesWhatCannotServe: an unknown profile, an address that
// is not host:port and a time scale outside (0, 1] are refused by field,
// before anything listens.
func TestPrepareRefusesWhatCannotServe(t *testing.T) {
	for _, c := range []struct {
		addr, profile string
		scale         float64
		field         string
	}{
		{"127.0.0.1:0", "nosuch", 1, "Profile"},
		{"8080", "fast", 1, "Addr"},
		{"127.0.0.1:0", "fast", 2, "TimeScale"},
		{"127.0.0.1:0", "fast", 0, "TimeScale"},
	} {
		_, err := Prepare(Config{}, c.addr, c.profile, c.scale)
		if fe := fielderr.As(err); fe == nil || fe.Field != c.field {
			t.Errorf("%+v: got %v, want a %s error", c, err, c.field)
		}
	}
	s, err := Prepare(Config{}, "127.0.0.1:0", "fast", 0.5)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
