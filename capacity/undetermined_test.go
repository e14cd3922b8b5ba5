package capacity

import "testing"

// TestUndeterminedOnlyWithoutAnAnswer: a search that answered (even "none
// meets" or "all meet") is no error; one that ran out of budget, hit
// errors or decided nothing says so with its reason.
func TestUndeterminedOnlyWithoutAnAnswer(t *testing.T) {
	for _, c := range []struct {
		outcome Outcome
		want    string
	}{
		{Found, ""},
		{NoneMeets, ""},
		{AllMeet, ""},
		{Budget, "could not determine the capacity: the reason"},
		{ErrorsHit, "could not determine the capacity: the reason"},
		{NoDecision, "could not determine the capacity: the reason"},
	} {
		got := ""
		if err := (&Result{Outcome: c.outcome, Reason: "the reason"}).Undetermined(); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.outcome, got, c.want)
		}
	}
}
