package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Sessions in a request log. The Qwen-Bailian traces (alibaba-edu's
// qwen-bailian-usagetraces-anon) give every row a chat_id, the chat_id of
// the turn it continues as parent_chat_id (-1 for a first turn) and the
// turn number; each row is a whole request as the service received it, so
// a follow-up's hash_ids start with its parent's when the service resent
// the conversation. Mooncake's public traces have no such fields: their
// rows stay single requests.

// BuildConfig.OrphanTurns choices.
const (
	OrphansError = "error"
	OrphansFirst = "first"
)

// maxChatID bounds a chat id's length: it becomes part of a session id,
// which is sent as an HTTP header value.
const maxChatID = 100

// chatLink is one row's session fields as read, before the chains are
// checked.
type chatLink struct {
	has    bool   // the row has a chat_id
	chat   string // its key
	parent string // "" for a first turn
	turn   int    // 0 when the row has no turn field
	line   int
}

// readChatLink reads a row's chat_id, parent_chat_id and turn. A chat id
// is a whole number (as Qwen-Bailian writes them) or a string of letters,
// digits and . _ : - (as exports of other logs do).
func readChatLink(line int, chat, parent, turn json.RawMessage) (chatLink, error) {
	l := chatLink{line: line}
	isNull := func(m json.RawMessage) bool { return len(m) == 0 || bytes.Equal(m, []byte("null")) }
	if isNull(chat) {
		if !isNull(parent) || !isNull(turn) {
			return l, fmt.Errorf("request log line %d: parent_chat_id or turn without a chat_id: give the row its chat_id", line)
		}
		return l, nil
	}
	var err error
	l.has = true
	if l.chat, err = chatKey(chat); err != nil {
		return l, fmt.Errorf("request log line %d: chat_id %s %v", line, chat, err)
	}
	if l.chat == "-1" {
		return l, fmt.Errorf("request log line %d: chat_id -1 is reserved for \"no parent\": give the row an id of its own", line)
	}
	if !isNull(parent) {
		if l.parent, err = chatKey(parent); err != nil {
			return l, fmt.Errorf("request log line %d: parent_chat_id %s %v", line, parent, err)
		}
		if l.parent == "-1" {
			l.parent = ""
		}
	}
	if !isNull(turn) {
		n, err := strconv.Atoi(string(turn))
		if err != nil || n < 1 || n > maxTurns {
			return l, fmt.Errorf("request log line %d: turn %s is not a turn number: use a whole number from 1 to %d", line, turn, maxTurns)
		}
		l.turn = n
	}
	return l, nil
}

// chatKey is a chat id's text: the digits of a whole number, or a string's
// content.
func chatKey(m json.RawMessage) (string, error) {
	if m[0] == '"' {
		var s string
		if err := json.Unmarshal(m, &s); err != nil {
			return "", fmt.Errorf("is not a string: %v", err)
		}
		if len(s) > maxChatID || !sessionIDOK(s) {
			return "", fmt.Errorf("is not an id: use up to %d letters, digits and . _ : -", maxChatID)
		}
		return s, nil
	}
	n, err := strconv.ParseInt(string(m), 10, 64)
	if err != nil {
		return "", fmt.Errorf("is not a whole number or a string id")
	}
	return strconv.FormatInt(n, 10), nil
}

// checkChains checks, in the log's line order, that every parent_chat_id
// names a chat on an earlier line (so the chains have no cycles), that no
// chat id repeats, that a turn number is its parent's plus one, and that a
// turn does not arrive before its parent. stamps are the rows' timestamps
// as written, for the messages. With orphansStart, a row whose parent is
// on no line of the log becomes a first turn (counted in orphans): a log
// cut from a longer one has such turns, whose conversations began before
// it.
func checkChains(rows []traceRow, links []chatLink, stamps []string, orphansStart bool) (orphans int, err error) {
	at := make(map[string]int, len(links)) // chat id → row index
	for i, l := range links {
		if j, dup := at[l.chat]; dup {
			return 0, fmt.Errorf("request log line %d: chat_id %s is used again (first on line %d): every request needs its own chat_id; fix or drop the repeated line", l.line, l.chat, links[j].line)
		}
		at[l.chat] = i
		if l.parent == "" {
			continue
		}
		if l.parent == l.chat {
			return 0, fmt.Errorf("request log line %d: chat_id %s names itself as its parent_chat_id: use -1 for a first turn", l.line, l.chat)
		}
		p, ok := at[l.parent]
		if !ok {
			for _, later := range links[i+1:] {
				if later.chat == l.parent {
					return 0, fmt.Errorf("request log line %d: parent_chat_id %s is on line %d, after its child: put the log's lines in arrival order (a parent that comes later makes a cycle)", l.line, l.parent, later.line)
				}
			}
			if orphansStart {
				orphans++
				rows[i].parent = ""
				continue
			}
			return 0, fmt.Errorf("request log line %d: parent_chat_id %s is on no line of the log: restore the parent's line, set parent_chat_id to -1 to start a session there, or build with --orphan-turns first (a log cut from a longer one)", l.line, l.parent)
		}
		if pt := links[p].turn; l.turn != 0 && pt != 0 && l.turn != pt+1 {
			return 0, fmt.Errorf("request log line %d: turn %d follows turn %d of its parent chat %s (line %d): a turn number is its parent's plus one; fix the turn or the parent_chat_id", l.line, l.turn, pt, l.parent, links[p].line)
		}
		if rows[i].t < rows[p].t {
			return 0, fmt.Errorf("request log line %d: chat %s at timestamp %s comes before its parent chat %s at %s (line %d): timestamps go backwards within a session; fix the timestamps or the parent_chat_id", l.line, l.chat, stamps[i], l.parent, stamps[p], links[p].line)
		}
	}
	return orphans, nil
}

// logChains is the session structure of a log's rows (sorted by time):
// each row's session and turn. A chat the log continues twice (a user who
// branched or regenerated) keeps its first continuation; each later one
// starts a session of its own, since one conversation is one line of
// turns sent one after another.
type logChains struct {
	session []int  // row → session, numbered by first turn
	turn    []int  // row → turn in its session, from 1
	first   []int  // session → its first row
	branch  []bool // row → it starts a session as a second continuation
}

// chainRows follows the parent links of rows whose chains checkChains
// accepted: every parent is a chat of an earlier or same-time row.
func chainRows(rows []traceRow) *logChains {
	c := &logChains{session: make([]int, len(rows)), turn: make([]int, len(rows)), branch: make([]bool, len(rows))}
	at := make(map[string]int, len(rows))
	continued := make([]bool, len(rows))
	for i, r := range rows {
		at[r.chat] = i
		p, ok := at[r.parent]
		if r.parent != "" && ok && !continued[p] {
			continued[p] = true
			c.session[i], c.turn[i] = c.session[p], c.turn[p]+1
			continue
		}
		c.branch[i] = r.parent != ""
		c.session[i], c.turn[i] = len(c.first), 1
		c.first = append(c.first, i)
	}
	return c
}

// note says what the workload made of the sessions of the kept rows.
func (c *logChains) note(kept []int) string {
	sessions := map[int]bool{}
	most, branches := 0, 0
	for _, i := range kept {
		sessions[c.session[i]] = true
		most = max(most, c.turn[i])
		if c.branch[i] {
			branches++
		}
	}
	n := fmt.Sprintf("%d session(s) of up to %d turns from chat_id/parent_chat_id, each turn its whole prompt as logged, sent at its time or when the answer before it ended, whichever is later", len(sessions), most)
	if branches > 0 {
		n += fmt.Sprintf("; %d continuation(s) of an already continued chat replayed as sessions of their own", branches)
	}
	return n
}
