package tokenize

import (
	"fmt"
	"testing"
)

// TestRankIndexFindsEveryToken: every token is found at its id, bytes
// that are no token are not, and a later id with the same bytes replaces
// the earlier one (as the map it replaces did), across enough tokens to
// make probe chains.
func TestRankIndexFindsEveryToken(t *testing.T) {
	idBytes := []string{"", "a"}
	for i := range 5000 {
		idBytes = append(idBytes, fmt.Sprint("t", i))
	}
	idBytes = append(idBytes, "a") // a second id for "a"
	x, err := openVocab(string(vocabFile(idBytes, testDigest)))
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range idBytes[2 : len(idBytes)-1] {
		if got, ok := x.get(s); !ok || got != int32(id+2) {
			t.Fatalf("get(%q) = %d, %v; want %d", s, got, ok, id+2)
		}
	}
	if got, ok := x.get("a"); !ok || got != int32(len(idBytes)-1) {
		t.Errorf("get(a) = %d, %v; want the later id %d", got, ok, len(idBytes)-1)
	}
	for _, s := range []string{"", "b", "t5000", "t-1"} {
		if got, ok := x.get(s); ok {
			t.Errorf("get(%q) = %d, want not found", s, got)
		}
	}
}
